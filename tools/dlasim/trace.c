/*
 * `dlasim trace`: run NVDLA register traces (one case, or a suite folder of
 * case folders <DIR>/<case>/<case>.cfg), each on a fresh device.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "dlasim/trace.h"
#include "shard.h"
#include "trace_print.h"

struct trace_args {
    struct cli_common common;
    const char *suite;     /* --suite DIR */
    const char *match;     /* --match GLOB */
    const char *single;    /* CASE.cfg */
    int table;             /* --table: readable table for people */
    const char *exclude[16]; /* --exclude GLOB (repeatable) */
    size_t nexclude;
    const char *expect;    /* --expect FILE: per-case CRC the RTL produces */
    int skip_missing;      /* --skip-missing-data: cases whose surface files are absent */
    int verbose;           /* print each check (single case default) */
    const char *json;      /* --json FILE (timing) */
    const char *timeline;  /* --timeline FILE.json (timing) */
    const char *plot;      /* --plot FILE.png (timing) */
    const char *rtl_csv;   /* --rtl FILE: RTL cycles per case to compare (suite, timing) */
    double max_median, max_worst; /* --max-median/--max-worst PCT: fail beyond */
    struct shard shard;    /* --shard I/N: cases [I*n/N, (I+1)*n/N) of the suite */
    const char *shard_out; /* --shard-out FILE: their JSON lines for `dlasim merge` */
    int argc;              /* the command line (the shard's job identity) */
    char **argv;
};

/* A check_crc outcome judged against the CRC an expectations file gives for
 * the case (e.g. what the nv_small RTL writes for programming it cannot run
 * as the trace's reference model did). */
struct crc_override {
    int active;
    uint32_t crc;
    unsigned passed, failed;
    int verbose;
};

struct case_outcome {
    int status;
    int expect_file;       /* judged against the --expect file's CRC */
    struct dlasim_trace_result res;
    double seconds;
    char err[1024];
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void print_check(void *opaque, const struct dlasim_trace_check *c)
{
    struct crc_override *ov = opaque;
    if (ov && ov->active && c->is_crc) {
        int ok = c->actual == ov->crc;
        if (ok) {
            ov->passed++;
        } else {
            ov->failed++;
        }
        if (ov->verbose) {
            printf("  %s %s:%u check_crc(%s, 0x%llx+0x%llx): expected 0x%08x (expectations file; "
                   "trace says 0x%08x), got 0x%08x\n",
                   ok ? "PASS" : "FAIL", c->file, c->line, c->sync_id,
                   (unsigned long long)c->addr, (unsigned long long)c->size, ov->crc,
                   c->expected, c->actual);
        }
        return;
    }
    if (ov && !ov->verbose) {
        return;
    }
    if (c->is_crc) {
        printf("  %s %s:%u check_crc(%s, 0x%llx+0x%llx): expected 0x%08x, got 0x%08x\n",
               c->passed ? "PASS" : "FAIL", c->file, c->line, c->sync_id,
               (unsigned long long)c->addr, (unsigned long long)c->size, c->expected, c->actual);
    } else {
        printf("  %s %s:%u check_nothing(%s): event happened\n", c->passed ? "PASS" : "FAIL",
               c->file, c->line, c->sync_id);
    }
}

/* CRC the expectations file gives for case `name`: lines "CASE 0xCRC  # why". */
static int lookup_expect(const char *file, const char *name, uint32_t *crc)
{
    FILE *f = file ? fopen(file, "r") : NULL;
    char line[512], cname[256];
    unsigned long v;
    int found = 0;
    if (!f) {
        return 0;
    }
    while (!found && fgets(line, sizeof(line), f)) {
        if (line[0] != '#' && sscanf(line, "%255s %lx", cname, &v) == 2 && !strcmp(cname, name)) {
            *crc = (uint32_t)v;
            found = 1;
        }
    }
    fclose(f);
    return found;
}

static const char *case_name(const char *cfg, char *buf, size_t len)
{
    const char *base = strrchr(cfg, '/');
    snprintf(buf, len, "%s", base ? base + 1 : cfg);
    char *dot = strrchr(buf, '.');
    if (dot) {
        *dot = '\0';
    }
    return buf;
}

/* --timing on one case: the modelled cycles on a line of their own, the
 * per-layer table, and the files asked for; -1 when a file could not be
 * written (printed), so the command fails rather than exit 0 without it. */
static int timing_reports(const struct trace_args *a, struct dlasim_dev *dev, const char *name,
                          const struct dlasim_trace_result *res)
{
    double mhz = a->common.clock_mhz > 0 ? a->common.clock_mhz : 1000.0;
    int rc = 0;
    printf("cycles_to_last_intr %llu\n", (unsigned long long)res->cycles_to_last_intr);
    timing_print_layers(dev, stdout, mhz);
    if (a->json && timing_write_json(dev, a->json, name, res->cycles_to_last_intr, mhz)) {
        rc = -1;
    }
    if (a->timeline && timing_write_timeline(dev, a->timeline, name, mhz)) {
        rc = -1;
    }
    if (a->plot) {
        char tmp[4096];
        const char *src = a->json;
        if (!src) {
            snprintf(tmp, sizeof(tmp), "%s.json", a->plot);
            src = tmp;
            if (timing_write_json(dev, src, name, res->cycles_to_last_intr, mhz)) {
                return -1;
            }
        }
        if (timing_plot(src, a->plot)) {
            rc = -1;
        }
    }
    return rc;
}

/* --expect FILE must be an expectations file: every line blank, a comment,
 * or "CASE 0xCRC ..."; anything else (a wrong file named) is refused with
 * the line, rather than read as "no expectation" for every case. */
static int check_expect_file(const char *file)
{
    FILE *f = fopen(file, "r");
    char line[512], cname[256];
    unsigned long v;
    unsigned lineno = 0;
    if (!f) {
        fprintf(stderr, "dlasim trace: --expect %s: %s\n", file, strerror(errno));
        return -1;
    }
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        const char *p = line + strspn(line, " \t\r\n");
        if (*p && *p != '#' && (sscanf(p, "%255s 0x%lx", cname, &v) != 2 || v > 0xffffffffu)) {
            fprintf(stderr, "dlasim trace: --expect %s:%u: not an expectations line "
                            "(CASE 0xCRC  # why)\n", file, lineno);
            fclose(f);
            return -1;
        }
    }
    fclose(f);
    return 0;
}

static void run_case(const struct trace_args *a, const char *cfg, int verbose,
                     struct case_outcome *o)
{
    struct crc_override ov = {0};
    char name[256];
    struct dlasim_trace *t = NULL;
    struct dlasim_trace_play_options po = {0};
    memset(o, 0, sizeof(*o));
    double t0 = now();
    o->status = dlasim_trace_parse_file_max(cfg, cli_max_mem(&a->common), &t, o->err,
                                            sizeof(o->err));
    if (!o->status) {
        struct dlasim_dev *dev = cli_create_device(&a->common);
        if (!dev) {
            o->status = DLASIM_ERR_INVAL;
            snprintf(o->err, sizeof(o->err), "cannot create the device");
        } else {
            ov.active = lookup_expect(a->expect, case_name(cfg, name, sizeof(name)), &ov.crc);
            ov.verbose = verbose;
            po.on_check = print_check;
            po.opaque = &ov;
            o->status = dlasim_trace_play(dev, t, &po, &o->res, o->err, sizeof(o->err));
            if (a->common.timing && verbose && (o->status == 0 || o->status == DLASIM_ERR_CHECK)) {
                if (timing_reports(a, dev, case_name(cfg, name, sizeof(name)), &o->res)) {
                    o->status = DLASIM_ERR_IO;
                    snprintf(o->err, sizeof(o->err), "%s: a timing output could not be written",
                             cfg);
                }
            }
            o->expect_file = ov.active;
            if (ov.active && (o->status == 0 || o->status == DLASIM_ERR_CHECK)) {
                /* judge the CRC checks against the expectations file instead */
                o->status = ov.failed ? DLASIM_ERR_CHECK : 0;
                snprintf(o->err, sizeof(o->err), "%s: CRC differs from the expectations file %s",
                         cfg, a->expect);
                o->res.checks_passed = ov.passed;
                o->res.checks_failed = ov.failed;
            }
            if (!o->status && o->res.checks_passed == 0 && o->res.polls_passed == 0) {
                o->status = DLASIM_ERR_CHECK;
                snprintf(o->err, sizeof(o->err), "%s: the trace has no check", cfg);
            }
            dlasim_destroy(dev);
        }
    }
    dlasim_trace_free(t);
    o->seconds = now() - t0;
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

static int excluded(const struct trace_args *a, const char *name)
{
    for (size_t i = 0; i < a->nexclude; i++) {
        if (!fnmatch(a->exclude[i], name, 0)) {
            return 1;
        }
    }
    return 0;
}

/* Case names of a suite folder, sorted. */
static char **list_cases(const struct trace_args *a, const char *dir, size_t *n)
{
    DIR *d = opendir(dir);
    char **names = NULL;
    size_t cap = 0;
    *n = 0;
    if (!d) {
        return NULL;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        char path[4096];
        struct stat st;
        if (e->d_name[0] == '.' || (a->match && fnmatch(a->match, e->d_name, 0)) ||
            excluded(a, e->d_name)) {
            continue;
        }
        snprintf(path, sizeof(path), "%s/%s/%s.cfg", dir, e->d_name, e->d_name);
        if (stat(path, &st) || !S_ISREG(st.st_mode)) {
            continue;
        }
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nn = realloc(names, cap * sizeof(*nn));
            if (!nn) {
                break;
            }
            names = nn;
        }
        names[(*n)++] = strdup(e->d_name);
    }
    closedir(d);
    if (names) {
        qsort(names, *n, sizeof(*names), cmp_str);
    } else {
        names = calloc(1, sizeof(*names));
    }
    return names;
}

/* RTL cycles_to_last_intr of `name` from the reference CSV
 * (case,rtl_result,cycles_total,cycles_trace,cycles_to_last_intr), or 0. */
static uint64_t rtl_cycles(const char *csv, const char *name)
{
    FILE *f = fopen(csv, "r");
    char line[1024];
    uint64_t v = 0;
    if (!f) {
        return 0;
    }
    while (!v && fgets(line, sizeof(line), f)) {
        char *comma = strchr(line, ',');
        if (!comma || (size_t)(comma - line) != strlen(name) || strncmp(line, name, strlen(name))) {
            continue;
        }
        char *last = strrchr(line, ',');
        v = strtoull(last + 1, NULL, 10);
    }
    fclose(f);
    return v;
}

/* The printer's view of the options (trace_print.h). */
static void print_options(const struct trace_args *a, struct suite_print *p)
{
    memset(p, 0, sizeof(*p));
    p->config = a->common.config, p->suite = a->suite, p->match = a->match;
    p->expect = a->expect, p->table = a->table;
    p->rtl_compare = a->common.timing && a->rtl_csv;
    p->rtl_csv = a->rtl_csv;
    p->max_median = a->max_median, p->max_worst = a->max_worst;
}

static void make_row(const struct trace_args *a, const char *name, const struct case_outcome *o,
                     struct suite_row *r)
{
    memset(r, 0, sizeof(*r));
    r->name = name;
    r->status = o->status;
    r->expect_file = o->expect_file;
    r->skipped = o->status == DLASIM_ERR_IO && a->skip_missing;
    r->checks_passed = o->res.checks_passed;
    r->checks_failed = o->res.checks_failed;
    r->layers = o->res.layers;
    r->cycles = o->res.cycles_to_last_intr;
    r->rtl = a->common.timing && a->rtl_csv ? rtl_cycles(a->rtl_csv, name) : 0;
    r->seconds = o->seconds;
    r->err = o->err;
}

static int run_suite(const struct trace_args *a)
{
    size_t n, first, end;
    char **names = list_cases(a, a->suite, &n);
    if (!names) {
        fprintf(stderr, "dlasim: cannot read suite folder '%s'\n", a->suite);
        return 2;
    }
    struct suite_print p;
    print_options(a, &p);
    shard_range(&a->shard, n, &first, &end);
    FILE *sf = a->shard.count ? trace_shard_open(a->shard_out, &a->shard, a->argc, a->argv,
                                                 (const char *const *)names, n, &p) : NULL;
    int rc = a->shard.count ? (sf ? 0 : 2) : (suite_print_begin(&p, n) ? 2 : 0);
    for (size_t i = first; i < end && !rc; i++) {
        char cfg[4096];
        struct case_outcome o;
        struct suite_row row;
        snprintf(cfg, sizeof(cfg), "%s/%s/%s.cfg", a->suite, names[i], names[i]);
        run_case(a, cfg, 0, &o);
        make_row(a, names[i], &o, &row);
        if (sf) {
            suite_row_write(sf, &row);
            printf("%s %s (%.3f s)\n", row.skipped ? "SKIP" : o.status ? "FAIL" : "PASS", names[i],
                   o.seconds);
        } else {
            suite_print_row(&p, &row);
        }
    }
    for (size_t i = 0; i < n; i++) {
        free(names[i]);
    }
    free(names);
    if (sf) { /* the cases' verdicts are the merge's to give: a shard succeeds when written */
        rc = shard_finish(sf, a->shard_out, &a->shard, end - first) ? 2 : 0;
        if (!rc) {
            printf("shard %u/%u: %zu cases (from case %zu) of %zu written to %s\n", a->shard.index,
                   a->shard.count, end - first, first, n, a->shard_out);
        }
        return rc;
    }
    return rc ? rc : suite_print_end(&p);
}

static int run_single(const struct trace_args *a)
{
    struct case_outcome o;
    run_case(a, a->single, 1, &o);
    if (o.status) {
        printf("FAIL %s: %s\n", a->single, o.err);
        return 1;
    }
    printf("PASS %s: %u checks, %u register reads, %u layers, %.3f s\n", a->single,
           o.res.checks_passed, o.res.polls_passed, o.res.layers, o.seconds);
    return 0;
}

int cmd_trace(int argc, char **argv)
{
    struct trace_args a;
    memset(&a, 0, sizeof(a));
    for (int i = 1; i < argc; i++) {
        int c = cli_common_option(&a.common, argc, argv, &i);
        if (c < 0) {
            return 2;
        }
        if (c) {
            continue;
        }
        if (!strcmp(argv[i], "--suite") && i + 1 < argc) {
            a.suite = argv[++i];
        } else if (!strcmp(argv[i], "--match") && i + 1 < argc) {
            a.match = argv[++i];
        } else if (!strcmp(argv[i], "--exclude") && i + 1 < argc && a.nexclude < 16) {
            a.exclude[a.nexclude++] = argv[++i];
        } else if (!strcmp(argv[i], "--expect") && i + 1 < argc) {
            a.expect = argv[++i];
        } else if (!strcmp(argv[i], "--skip-missing-data")) {
            a.skip_missing = 1;
        } else if (!strcmp(argv[i], "--table")) {
            a.table = 1;
        } else if (!strcmp(argv[i], "--json") && i + 1 < argc) {
            a.json = argv[++i];
        } else if (!strcmp(argv[i], "--timeline") && i + 1 < argc) {
            a.timeline = argv[++i];
        } else if (!strcmp(argv[i], "--plot") && i + 1 < argc) {
            a.plot = argv[++i];
        } else if (!strcmp(argv[i], "--rtl") && i + 1 < argc) {
            a.rtl_csv = argv[++i];
        } else if (!strcmp(argv[i], "--max-median") && i + 1 < argc) {
            if (cli_parse_double("--max-median", argv[++i], 0, 1e6, &a.max_median)) {
                return 2;
            }
        } else if (!strcmp(argv[i], "--max-worst") && i + 1 < argc) {
            if (cli_parse_double("--max-worst", argv[++i], 0, 1e6, &a.max_worst)) {
                return 2;
            }
        } else if (!strcmp(argv[i], "--shard") && i + 1 < argc) {
            if (shard_parse("--shard", argv[++i], &a.shard)) {
                return 2;
            }
        } else if (!strcmp(argv[i], "--shard-out") && i + 1 < argc) {
            a.shard_out = argv[++i];
        } else if (argv[i][0] != '-' && !a.single) {
            a.single = argv[i];
        } else {
            fprintf(stderr, "dlasim trace: unexpected argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if ((a.json || a.timeline || a.plot || a.rtl_csv) && !a.common.timing) {
        a.common.timing = 1; /* the timing outputs imply the model */
    }
    if (a.expect && check_expect_file(a.expect)) {
        return 2;
    }
    if (!a.suite == !a.single) {
        fprintf(stderr, "usage: dlasim trace [options] CASE.cfg | --suite DIR [--match GLOB]\n");
        return 2;
    }
    if (!a.shard.count != !a.shard_out || (a.shard.count && !a.suite)) {
        fprintf(stderr, "dlasim trace: --shard I/N and --shard-out FILE go together, with --suite\n");
        return 2;
    }
    a.argc = argc, a.argv = argv;
    return a.suite ? run_suite(&a) : run_single(&a);
}

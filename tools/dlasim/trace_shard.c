/* `dlasim trace --suite DIR --shard I/N --shard-out FILE` and the merge of
 * such shards: one {"case": ...} line per case (trace_print.c), printed back
 * in suite order through the printer a single process uses. */
#include <stdlib.h>
#include <string.h>

#include "merge.h"
#include "shard.h"
#include "trace_print.h"

FILE *trace_shard_open(const char *path, const struct shard *sh, int argc, char **argv,
                       const char *const *names, size_t n, const struct suite_print *p)
{
    static const struct shard_drop drop[] = {
        { "--shard", 1 }, { "--shard-out", 1 }, { "--threads", 1 },
    };
    char *args = shard_args(argc, argv, drop, sizeof drop / sizeof drop[0]);
    if (!args) {
        return NULL;
    }
    uint64_t job = shard_hash_str(SHARD_HASH_INIT, "trace");
    job = shard_hash_str(job, args);
    for (size_t i = 0; i < n; i++) {
        job = shard_hash_str(job, names[i]);
    }
    size_t first, end;
    shard_range(sh, n, &first, &end);
    FILE *f = shard_begin(path, "trace", job, args, sh, n, first, end);
    free(args);
    if (f) {
        suite_print_write_options(f, p);
        fprintf(f, "}\n");
        fflush(f);
    }
    return f;
}

static const char *str_or_null(const struct jval *h, const char *key)
{
    return json_get_str(h, key);
}

static int read_options(const struct jval *h, struct suite_print *p)
{
    double table, rtl;
    memset(p, 0, sizeof(*p));
    if (json_get_num(h, "table", &table) || json_get_num(h, "rtl_compare", &rtl) ||
        json_get_num(h, "max_median", &p->max_median) || json_get_num(h, "max_worst", &p->max_worst)) {
        return -1;
    }
    p->table = table != 0, p->rtl_compare = rtl != 0;
    p->config = str_or_null(h, "config");
    p->suite = str_or_null(h, "suite");
    p->match = str_or_null(h, "match");
    p->expect = str_or_null(h, "expect");
    p->rtl_csv = str_or_null(h, "rtl_csv");
    return 0;
}

static int read_row(const struct jval *v, struct suite_row *r)
{
    double x[9];
    static const char *const keys[] = { "status", "expect_file", "skipped", "checks_passed",
                                        "checks_failed", "layers", "cycles", "rtl", "seconds" };
    memset(r, 0, sizeof(*r));
    for (int i = 0; i < 9; i++) {
        if (json_get_num(v, keys[i], &x[i])) {
            return -1;
        }
    }
    r->name = json_get_str(v, "case");
    r->err = json_get_str(v, "err");
    if (!r->name || !r->err) {
        return -1;
    }
    r->status = (int)x[0], r->expect_file = x[1] != 0, r->skipped = x[2] != 0;
    r->checks_passed = (unsigned)x[3], r->checks_failed = (unsigned)x[4];
    r->layers = (unsigned)x[5];
    /* cycle counts are written as integers; strtoull keeps all 64 bits */
    r->cycles = strtoull(json_get(v, "cycles")->s, NULL, 10);
    r->rtl = strtoull(json_get(v, "rtl")->s, NULL, 10);
    r->seconds = x[8];
    return 0;
}

/* The case records of one file, checked; printed when p is given. */
static int merge_rows(const struct merge_file *file, struct suite_print *p)
{
    size_t rows = 0;
    for (size_t l = 1; l + 1 < file->nlines; l++) {
        struct jval v;
        struct suite_row r;
        char err[128];
        if (json_parse(file->lines[l], strlen(file->lines[l]), &v, err, sizeof err) ||
            read_row(&v, &r)) {
            fprintf(stderr, "dlasim merge: %s:%zu: malformed case record\n", file->path, l + 1);
            json_free(&v);
            return -1;
        }
        if (p) {
            suite_print_row(p, &r);
        }
        rows++;
        json_free(&v);
    }
    if (rows != file->end - file->first) {
        fprintf(stderr, "dlasim merge: %s has %zu cases, its header says %zu\n", file->path, rows,
                file->end - file->first);
        return -1;
    }
    return 0;
}

int merge_trace(const struct merge_file *files, size_t n)
{
    struct suite_print p;
    if (read_options(&files[0].head, &p)) {
        fprintf(stderr, "dlasim merge: %s: the header lacks what `trace` shards carry\n",
                files[0].path);
        return -1;
    }
    if (suite_print_begin(&p, files[0].total)) {
        return -1;
    }
    int rc = 0;
    /* pass 0 checks every record, pass 1 prints: a bad set prints no table */
    for (int pass = 0; pass < 2 && !rc; pass++) {
        for (size_t f = 0; f < n && !rc; f++) {
            rc = merge_rows(&files[f], pass ? &p : NULL);
        }
    }
    if (rc) {
        free(p.errs);
        return rc;
    }
    return suite_print_end(&p);
}

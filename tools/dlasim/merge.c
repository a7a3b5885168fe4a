/*
 * `dlasim merge [--json FILE] SHARD.jsonl...`: the shards of one job
 * (`--shard I/N`, shard.h, docs/cluster.md) back into exactly what one
 * process prints, through the same printer.  A set that is not one whole job
 * is refused, naming each missing, failed or foreign shard, so that
 * re-running only those completes it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jsonl.h"
#include "merge.h"
#include "run_results.h"
#include "shard.h"

static void free_file(struct merge_file *f)
{
    json_free(&f->head);
    free(f->lines);
    free(f->text);
}

/* Splits the text into lines (in place) and parses the header. */
static int read_header(struct merge_file *f)
{
    size_t len = strlen(f->text);
    for (char *p = f->text; p < f->text + len;) {
        char *nl = strchr(p, '\n');
        char **nn = realloc(f->lines, (f->nlines + 1) * sizeof *nn);
        if (!nn) {
            return -1;
        }
        f->lines = nn;
        f->lines[f->nlines++] = p;
        if (!nl) {
            f->last_unterminated = 1; /* cut short while writing */
            break;
        }
        *nl = 0;
        p = nl + 1;
    }
    char err[128];
    double v[6];
    if (!f->nlines || json_parse(f->lines[0], strlen(f->lines[0]), &f->head, err, sizeof err) ||
        json_get_num(&f->head, "dlasim_shard", &v[0]) || v[0] != 1 ||
        json_get_num(&f->head, "shard", &v[1]) || json_get_num(&f->head, "of", &v[2]) ||
        json_get_num(&f->head, "total", &v[3]) || json_get_num(&f->head, "first", &v[4]) ||
        json_get_num(&f->head, "end", &v[5]) || !json_get_str(&f->head, "command") ||
        !json_get_str(&f->head, "job") || !json_get_str(&f->head, "args") || v[2] < 1 ||
        v[1] < 0 || v[1] >= v[2] || v[2] > SHARD_MAX || v[3] < 0 || v[3] > 1e15 || v[4] < 0 ||
        v[4] > v[5] || v[5] > v[3]) {
        return -1;
    }
    for (int i = 1; i < 6; i++) {
        if (v[i] != (double)(uint64_t)v[i]) {
            return -1; /* counts are whole numbers */
        }
    }
    f->sh.index = (unsigned)v[1];
    f->sh.count = (unsigned)v[2];
    f->total = (size_t)v[3];
    f->first = (size_t)v[4];
    f->end = (size_t)v[5];
    f->head_ok = 1;
    return 0;
}

/* The end line {"shard_end": I, "items": K} is there and agrees. */
static int is_complete(const struct merge_file *f)
{
    if (f->nlines < 2 || f->last_unterminated) {
        return 0;
    }
    struct jval e;
    char err[128];
    const char *l = f->lines[f->nlines - 1];
    if (json_parse(l, strlen(l), &e, err, sizeof err)) {
        return 0;
    }
    double idx, items;
    int ok = !json_get_num(&e, "shard_end", &idx) && !json_get_num(&e, "items", &items) &&
             idx == f->sh.index && items == (double)(f->end - f->first);
    json_free(&e);
    return ok;
}

/* The first file's job, against which the others are judged. */
static int same_job(const struct merge_file *a, const struct merge_file *b)
{
    if (strcmp(json_get_str(&a->head, "command"), json_get_str(&b->head, "command"))) {
        fprintf(stderr, "dlasim merge: %s is a shard of `dlasim %s`, %s of `dlasim %s`\n", b->path,
                json_get_str(&b->head, "command"), a->path, json_get_str(&a->head, "command"));
        return 0;
    }
    if (a->sh.count != b->sh.count) {
        fprintf(stderr, "dlasim merge: %s is shard %u of %u, %s one of %u: a set is split one way\n",
                b->path, b->sh.index, b->sh.count, a->path, a->sh.count);
        return 0;
    }
    if (strcmp(json_get_str(&a->head, "job"), json_get_str(&b->head, "job")) ||
        a->total != b->total) {
        fprintf(stderr, "dlasim merge: %s and %s are shards of different jobs (job %s, %zu items: "
                        "`%s`; job %s, %zu items: `%s`): the model, inputs, configuration or "
                        "options differ\n", a->path, b->path, json_get_str(&a->head, "job"),
                a->total, json_get_str(&a->head, "args"), json_get_str(&b->head, "job"), b->total,
                json_get_str(&b->head, "args"));
        return 0;
    }
    return 1;
}

/* Loads and checks one file; 0 = a whole shard, 1 = readable header but
 * incomplete (reported), -1 = not a shard file (reported). */
static int load_file(const char *path, struct merge_file *f)
{
    uint8_t *buf;
    size_t len;
    memset(f, 0, sizeof *f);
    f->path = path;
    if (cli_read_file(path, &buf, &len)) {
        return -1;
    }
    f->text = realloc(buf, len + 1);
    if (!f->text) {
        free(buf);
        return -1;
    }
    f->text[len] = 0;
    if (len == 0) {
        fprintf(stderr, "dlasim merge: %s is empty: its shard failed before it began (see the "
                        "task's log)\n", path);
        return -1;
    }
    if (memchr(f->text, 0, len) || read_header(f)) {
        fprintf(stderr, "dlasim merge: %s is not a dlasim shard file (its first line is not a "
                        "--shard header)\n", path);
        return -1;
    }
    size_t want_first, want_end;
    shard_range(&f->sh, f->total, &want_first, &want_end);
    if (f->first != want_first || f->end != want_end) {
        fprintf(stderr, "dlasim merge: %s: shard %u/%u covers items %zu to %zu; the split of %zu "
                        "gives it %zu to %zu\n", path, f->sh.index, f->sh.count, f->first, f->end,
                f->total, want_first, want_end);
        return -1;
    }
    if (!is_complete(f)) {
        fprintf(stderr, "dlasim merge: shard %u/%u (%s) is incomplete: %zu of %zu items and no end "
                        "line: the task failed or was stopped; re-run it with --shard %u/%u\n",
                f->sh.index, f->sh.count, path, f->nlines > 1 ? f->nlines - 1 : 0, f->end - f->first,
                f->sh.index, f->sh.count);
        return 1;
    }
    return 0;
}

/* Names the shards no file has: each when few, else the first ones and a count. */
static int report_missing(const struct merge_file **by, unsigned of)
{
    unsigned missing = 0;
    for (unsigned s = 0; s < of; s++) {
        if (by[s]) {
            continue;
        }
        if (++missing <= 10) {
            fprintf(stderr, "dlasim merge: shard %u/%u is missing (no file given has it): its task "
                            "failed or its output is elsewhere; re-run it with --shard %u/%u\n",
                    s, of, s, of);
        }
    }
    if (missing > 10) {
        fprintf(stderr, "dlasim merge: ... %u shards of %u are missing in all\n", missing, of);
    }
    return missing != 0;
}

/* Every shard 0..N-1 exactly once; names the missing and duplicated ones. */
static int check_set(struct merge_file *files, size_t n, const int *whole)
{
    if (n == 0) {
        return -1;
    }
    unsigned of = files[0].sh.count;
    const struct merge_file **by = calloc(of, sizeof *by);
    int bad = 0;
    if (!by) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const struct merge_file **slot = &by[files[i].sh.index];
        if (*slot) {
            fprintf(stderr, "dlasim merge: shard %u/%u is given twice: %s and %s\n",
                    files[i].sh.index, of, (*slot)->path, files[i].path);
            bad = 1;
        }
        *slot = &files[i];
        bad |= !whole[i];
    }
    bad |= report_missing(by, of);
    free(by);
    return bad ? -1 : 0;
}

/* Loads every file and checks they are the whole of one job, sorted by shard. */
static int load_set(char **paths, size_t n, struct merge_file *files)
{
    int *whole = calloc(n, sizeof *whole), bad = 0;
    size_t first_ok = n;
    if (!whole) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        int rc = load_file(paths[i], &files[i]);
        whole[i] = rc == 0;
        bad |= rc != 0;
        if (rc >= 0 && first_ok == n) {
            first_ok = i;
        }
    }
    for (size_t i = 0; first_ok < n && i < n; i++) {
        if (files[i].head_ok && i != first_ok &&
            !same_job(&files[first_ok], &files[i])) {
            bad = 1;
            first_ok = n; /* one mismatch says it all */
        }
    }
    if (first_ok < n) {
        /* the readable files, for naming what is missing or twice */
        struct merge_file *ok = malloc(n * sizeof *ok);
        int *okw = malloc(n * sizeof *okw);
        size_t k = 0;
        for (size_t i = 0; ok && okw && i < n; i++) {
            if (files[i].head_ok) {
                okw[k] = whole[i];
                ok[k++] = files[i];
            }
        }
        bad |= !ok || !okw || check_set(ok, k, okw) != 0;
        free(ok);
        free(okw);
    }
    free(whole);
    return bad ? -1 : 0;
}

static int by_shard(const void *x, const void *y)
{
    const struct merge_file *a = x, *b = y;
    return (a->sh.index > b->sh.index) - (a->sh.index < b->sh.index);
}

int cmd_merge(int argc, char **argv)
{
    const char *json = NULL;
    char **paths = calloc((size_t)argc, sizeof *paths);
    size_t n = 0;
    if (!paths) {
        return 1;
    }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json") && i + 1 < argc) {
            json = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "dlasim merge: unknown option %s (usage: dlasim merge [--json FILE] "
                            "SHARD.jsonl...)\n", argv[i]);
            free(paths);
            return 2;
        } else {
            paths[n++] = argv[i];
        }
    }
    if (n == 0) {
        fprintf(stderr, "usage: dlasim merge [--json FILE] SHARD.jsonl...\n");
        free(paths);
        return 2;
    }
    struct merge_file *files = calloc(n, sizeof *files);
    int rc = files ? load_set(paths, n, files) : -1;
    if (!rc) {
        qsort(files, n, sizeof *files, by_shard);
        const char *cmd = json_get_str(&files[0].head, "command");
        if (!strcmp(cmd, "run")) {
            rc = merge_run(files, n, json);
        } else if (!strcmp(cmd, "trace") && !json) {
            rc = merge_trace(files, n);
        } else if (!strcmp(cmd, "each") && !json) {
            rc = merge_each(files, n);
        } else if (!strcmp(cmd, "trace") || !strcmp(cmd, "each")) {
            fprintf(stderr, "dlasim merge: --json is for `dlasim run` shards\n");
            rc = -1;
        } else {
            fprintf(stderr, "dlasim merge: shards of `dlasim %s` cannot be merged by this dlasim\n",
                    cmd);
            rc = -1;
        }
    } else {
        fprintf(stderr, "dlasim merge: not merged: the set is not the whole of one job\n");
    }
    for (size_t i = 0; files && i < n; i++) {
        free_file(&files[i]);
    }
    free(files);
    free(paths);
    return rc < 0 ? 2 : rc;
}

/* `dlasim merge` of `dlasim run --shard I/N` files: every input's outputs,
 * label, float class and drawing back in place, then the one printer of
 * run_results.h, after the compile report a single process prints first. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "merge.h"
#include "run_results.h"

struct run_merge {
    struct run_results r;
    float *out, *fout;
    uint8_t *labels;
    int *fpred;
    char **names, **drawings;
    const char *report;
    unsigned char *seen;     /* per input: its record was read */
};

static int bad_line(const struct merge_file *f, size_t line, const char *why)
{
    fprintf(stderr, "dlasim merge: %s:%zu: %s\n", f->path, line + 1, why);
    return -1;
}

/* Header fields every shard carries (equal in all: the job hash covers them). */
static int read_run_header(const struct jval *h, struct run_merge *m, size_t total)
{
    double out_n, top, draw, labels, fcmp;
    const struct jval *names = json_get(h, "names");
    if (json_get_num(h, "out_n", &out_n) || json_get_num(h, "top", &top) ||
        json_get_num(h, "draw", &draw) || json_get_num(h, "labels", &labels) ||
        json_get_num(h, "compare_float", &fcmp) || !json_get_str(h, "config") || !names ||
        names->t != J_ARR || out_n < 1 || out_n > 1e8 || draw < 0 || draw > 100 || top < 0 ||
        top > 100 || !json_get_str(h, "compile_report")) {
        return -1;
    }
    if (total > ((size_t)1 << 40) || (size_t)out_n > SIZE_MAX / sizeof(float) / (total + 1)) {
        return -1; /* more outputs than memory can hold: not a shard this dlasim wrote */
    }
    struct run_results *r = &m->r;
    r->config = json_get_str(h, "config");
    r->count = total;
    r->out_n = (size_t)out_n;
    r->top = (int)top;
    r->draw = (int)draw;
    m->out = calloc(total * r->out_n + 1, sizeof(float));
    m->labels = labels ? calloc(total + 1, 1) : NULL;
    m->fpred = fcmp ? calloc(total + 1, sizeof(int)) : NULL;
    m->fout = fcmp ? calloc(total * r->out_n + 1, sizeof(float)) : NULL;
    m->names = calloc(names->n + 1, sizeof(char *));
    m->drawings = calloc((size_t)r->draw + 1, sizeof(char *));
    m->seen = calloc(total + 1, 1);
    if (!m->out || (labels && !m->labels) || (fcmp && (!m->fpred || !m->fout)) || !m->names || !m->drawings ||
        !m->seen) {
        return -1;
    }
    for (size_t i = 0; i < names->n; i++) {
        m->names[i] = names->v[i].t == J_STR ? names->v[i].s : "";
    }
    r->n_names = (int)names->n;
    return 0;
}

static int read_outputs(const struct jval *a, float *out, size_t out_n)
{
    if (!a || a->t != J_ARR || a->n != out_n) {
        return -1;
    }
    for (size_t k = 0; k < out_n; k++) {
        char *end;
        if (a->v[k].t != J_NUM) {
            return -1;
        }
        out[k] = strtof(a->v[k].s, &end); /* 9 digits: the very float written */
        if (*end) {
            return -1;
        }
    }
    return 0;
}

/* One {"i": K, "out": [...], "label": L, "fpred": P, "draw": "..."} record. */
static int read_record(const struct merge_file *f, size_t line, const struct jval *v,
                       struct run_merge *m)
{
    struct run_results *r = &m->r;
    double i, label = 0, fpred = 0;
    if (json_get_num(v, "i", &i) || i < (double)f->first || i >= (double)f->end ||
        i != (double)(size_t)i) {
        return bad_line(f, line, "a record of an input outside the shard");
    }
    size_t k = (size_t)i;
    if (m->seen[k]) {
        return bad_line(f, line, "a second record of the same input");
    }
    if (read_outputs(json_get(v, "out"), m->out + k * r->out_n, r->out_n) ||
        (m->labels && (json_get_num(v, "label", &label) || label < 0 || label > 255)) ||
        (m->fpred && (json_get_num(v, "fpred", &fpred) || fpred < 0 || fpred >= (double)r->out_n)) ||
        (m->fout && read_outputs(json_get(v, "fout"), m->fout + k * r->out_n, r->out_n))) {
        return bad_line(f, line, "malformed input record");
    }
    if (m->labels) {
        m->labels[k] = (uint8_t)label;
    }
    if (m->fpred) {
        m->fpred[k] = (int)fpred;
    }
    const char *pic = json_get_str(v, "draw");
    for (int d = 0; pic && d < r->draw && (size_t)d < r->count; d++) {
        if (run_draw_index((size_t)d, r->count, r->draw) == k) {
            m->drawings[d] = (char *)pic;
        }
    }
    m->seen[k] = 1;
    return 0;
}

/* Records of one file (parsed values kept in vals: the strings are used). */
static int read_records(const struct merge_file *f, struct run_merge *m, struct jval *vals)
{
    for (size_t l = 1; l + 1 < f->nlines; l++) {
        char err[128];
        struct jval *v = &vals[l];
        if (json_parse(f->lines[l], strlen(f->lines[l]), v, err, sizeof err)) {
            return bad_line(f, l, err);
        }
        if (json_get(v, "report")) {
            m->report = json_get_str(v, "report");
        } else if (read_record(f, l, v, m)) {
            return -1;
        }
    }
    return 0;
}

static int check_all_seen(const struct merge_file *files, size_t n, const struct run_merge *m,
                          int want_report)
{
    for (size_t f = 0; f < n; f++) {
        for (size_t i = files[f].first; i < files[f].end; i++) {
            if (!m->seen[i]) {
                fprintf(stderr, "dlasim merge: %s: no record of input %zu; re-run shard %u/%u\n",
                        files[f].path, i, files[f].sh.index, files[f].sh.count);
                return -1;
            }
        }
    }
    if (want_report && !m->report) {
        fprintf(stderr, "dlasim merge: %s has no layer report (--report: shard 0 writes it); "
                        "re-run shard 0/%u\n", files[0].path, files[0].sh.count);
        return -1;
    }
    return 0;
}

int merge_run(const struct merge_file *files, size_t n, const char *json)
{
    struct run_merge m;
    memset(&m, 0, sizeof m);
    struct jval **vals = calloc(n, sizeof *vals);
    double want_report = 0;
    int rc = vals ? 0 : -1;
    if (!rc && (read_run_header(&files[0].head, &m, files[0].total) ||
                json_get_num(&files[0].head, "report", &want_report))) {
        fprintf(stderr, "dlasim merge: %s: the header lacks what `run` shards carry\n", files[0].path);
        rc = -1;
    }
    for (size_t f = 0; !rc && f < n; f++) {
        vals[f] = calloc(files[f].nlines, sizeof **vals);
        rc = vals[f] ? read_records(&files[f], &m, vals[f]) : -1;
    }
    rc = rc ? rc : check_all_seen(files, n, &m, want_report != 0);
    if (!rc) {
        m.r.out = m.out, m.r.labels = m.labels, m.r.fpred = m.fpred, m.r.fout = m.fout;
        m.r.names = m.names, m.r.drawings = m.drawings, m.r.report = m.report;
        fputs(json_get_str(&files[0].head, "compile_report"), stdout);
        run_results_print(&m.r, stdout);
        rc = json ? run_results_write_json(&m.r, json) : 0;
    }
    for (size_t f = 0; vals && f < n; f++) {
        for (size_t l = 0; vals[f] && l < files[f].nlines; l++) {
            json_free(&vals[f][l]);
        }
        free(vals[f]);
    }
    free(vals);
    free(m.out);
    free(m.labels);
    free(m.fpred);
    free(m.fout);
    free(m.names);
    free(m.drawings);
    free(m.seen);
    return rc;
}

/* The printer of `dlasim run` results, shared by a single process and by
 * `dlasim merge` (run_results.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#include "run_results.h"

int run_argmax(const float *v, size_t n)
{
    size_t b = 0;
    for (size_t i = 1; i < n; i++) {
        b = v[i] > v[b] ? i : b;
    }
    return (int)b;
}

static const char *name_of(char *const *names, int n, int k, char *buf, size_t len)
{
    if (k >= 0 && k < n) {
        return names[k];
    }
    snprintf(buf, len, "class %d", k);
    return buf;
}

void run_print_top(FILE *f, const float *v, size_t n, int top, char *const *names, int n_names)
{
    char buf[32];
    int used[100] = { 0 };
    for (int t = 0; t < top && t < (int)n && t < 100; t++) {
        int b = -1;
        for (size_t i = 0; i < n; i++) {
            int taken = 0;
            for (int u = 0; u < t; u++) {
                taken |= used[u] == (int)i;
            }
            if (!taken && (b < 0 || v[i] > v[b])) {
                b = (int)i;
            }
        }
        used[t] = b;
        fprintf(f, "%s%s %.3f", t ? ", " : " ", name_of(names, n_names, b, buf, sizeof buf), v[b]);
    }
    fprintf(f, "\n");
}

size_t run_draw_index(size_t d, size_t count, int draw)
{
    return d * (count / (size_t)draw);
}

char *run_draw(const float *x, uint32_t h, uint32_t w)
{
    static const char ramp[] = " .:-=+*#%@";
    /* each line: "    |" + w pixels + "|\n" */
    size_t line = (size_t)w + 7, n = 0;
    char *s = malloc(((size_t)h / 2 + 1) * line + 1);
    if (!s) {
        return NULL;
    }
    float lo = x[0], hi = x[0];
    for (uint32_t i = 0; i < h * w; i++) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    for (uint32_t y = 0; y < h; y += 2) {
        memcpy(s + n, "    |", 5);
        n += 5;
        for (uint32_t xx = 0; xx < w; xx++) {
            float v = x[y * w + xx];
            if (y + 1 < h) {
                v = (v + x[(y + 1) * w + xx]) / 2;
            }
            int k = hi > lo ? (int)((v - lo) / (hi - lo) * 9.99f) : 0;
            s[n++] = ramp[k < 0 ? 0 : k > 9 ? 9 : k];
        }
        s[n++] = '|';
        s[n++] = '\n';
    }
    s[n] = 0;
    return s;
}

static void print_drawings(const struct run_results *r, FILE *f)
{
    for (int i = 0; i < r->draw && (size_t)i < r->count; i++) {
        char b1[32], b2[32];
        size_t k = run_draw_index((size_t)i, r->count, r->draw);
        int p = run_argmax(r->out + k * r->out_n, r->out_n);
        fprintf(f, "test image %zu: predicted %s", k, name_of(r->names, r->n_names, p, b1, sizeof b1));
        if (r->labels) {
            fprintf(f, ", true %s %s", name_of(r->names, r->n_names, r->labels[k], b2, sizeof b2),
                    p == r->labels[k] ? "(correct)" : "(WRONG)");
        }
        fprintf(f, "\n%s", r->drawings[i] ? r->drawings[i] : "");
    }
}

static size_t count_correct(const struct run_results *r)
{
    size_t correct = 0;
    for (size_t i = 0; r->labels && i < r->count; i++) {
        correct += run_argmax(r->out + i * r->out_n, r->out_n) == r->labels[i];
    }
    return correct;
}

static void print_float_comparison(const struct run_results *r, FILE *f)
{
    size_t fcorrect = 0, agree = 0;
    for (size_t i = 0; i < r->count; i++) {
        agree += r->fpred[i] == run_argmax(r->out + i * r->out_n, r->out_n);
        fcorrect += r->labels && r->fpred[i] == r->labels[i];
    }
    if (r->labels) {
        fprintf(f, "top-1 accuracy float:           %.2f %% (%zu / %zu)\n",
                100.0 * (double)fcorrect / (double)r->count, fcorrect, r->count);
    }
    fprintf(f, "top-1 agreement INT8 vs float:  %.2f %% (%zu / %zu)\n",
            100.0 * (double)agree / (double)r->count, agree, r->count);
}

/* Cosine similarity of two vectors (1 when both are zero). */
static double cosine(const float *a, const float *b, size_t n)
{
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < n; i++) {
        ab += (double)a[i] * b[i], aa += (double)a[i] * a[i], bb += (double)b[i] * b[i];
    }
    return aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : aa == bb ? 1.0 : 0.0;
}

void run_results_print(const struct run_results *r, FILE *f)
{
    for (size_t i = 0; i < r->count && i < 10 && !r->draw; i++) {
        fprintf(f, "input %zu:", i);
        run_print_top(f, r->out + i * r->out_n, r->out_n, r->top, r->names, r->n_names);
    }
    print_drawings(r, f);
    if (r->labels) {
        size_t correct = count_correct(r);
        double acc = (double)correct / (double)r->count;
        fprintf(f, "top-1 accuracy INT8 (%s): %.2f %% (%zu / %zu)\n", r->config, 100 * acc,
                correct, r->count);
    }
    if (r->fpred) {
        print_float_comparison(r, f);
    }
    if (r->fout) {
        fprintf(f, "INT8 vs float: cosine %.6f over all outputs\n",
                cosine(r->out, r->fout, r->count * r->out_n));
    }
    if (r->report) {
        fputs(r->report, f);
    }
}

int run_write_json(const char *path, int have_acc, double acc, size_t n, const float *out,
                   size_t out_n)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "dlasim: %s: cannot write: %s\n", path, strerror(errno));
        return -1;
    }
    fprintf(f, "{");
    if (have_acc) {
        fprintf(f, "\"top1_accuracy\": %.6f, ", acc);
    }
    fprintf(f, "\"images\": %zu, \"outputs\": [", n);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s[", i ? ",\n" : "\n");
        for (size_t k = 0; k < out_n; k++) {
            fprintf(f, "%s%.6g", k ? ", " : "", out[i * out_n + k]);
        }
        fprintf(f, "]");
    }
    fprintf(f, "\n]}\n");
    return cli_close_output(f, path);
}

int run_results_write_json(const struct run_results *r, const char *path)
{
    double acc = r->labels ? (double)count_correct(r) / (double)r->count : 0;
    return run_write_json(path, r->labels != NULL, acc, r->count, r->out, r->out_n);
}

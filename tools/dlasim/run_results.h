/*
 * The results of `dlasim run` over a set of inputs, and their one printer:
 * a single process and `dlasim merge` of its shards both print through
 * run_results_print / run_results_write_json, so the two cannot differ.
 */
#ifndef DLASIM_TOOLS_RUN_RESULTS_H
#define DLASIM_TOOLS_RUN_RESULTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct run_results {
    const char *config;      /* device configuration, for the accuracy line */
    size_t count, out_n;     /* inputs; floats per output */
    const float *out;        /* count x out_n model outputs */
    const uint8_t *labels;   /* count labels, or NULL */
    const int *fpred;        /* float reference's class per input (--compare-float), or NULL */
    const float *fout;       /* count x out_n float reference outputs (--compare-float), or NULL */
    int top;                 /* classes shown per input */
    char *const *names;      /* class names (--names), n_names of them */
    int n_names;
    int draw;                /* inputs drawn (--draw N) */
    char *const *drawings;   /* picture d of input run_draw_index(d), draw of them */
    const char *report;      /* per-layer quantization report (--report), or NULL */
};

/* Index of the largest of v[0..n) (the first on ties). */
int run_argmax(const float *v, size_t n);
/* The k best classes of v with their values, after a space each, then "\n". */
void run_print_top(FILE *f, const float *v, size_t n, int top, char *const *names, int n_names);
/* Input picked as drawing d of `draw` among `count` inputs. */
size_t run_draw_index(size_t d, size_t count, int draw);
/* The first channel of an h x w input as text, two pixel rows a line (malloc'd). */
char *run_draw(const float *x, uint32_t h, uint32_t w);

/* Per-input lines, drawings, accuracies, agreement and the layer report. */
void run_results_print(const struct run_results *r, FILE *f);
/* {"top1_accuracy": A, "images": N, "outputs": [...]} (accuracy only when
 * have_acc); -1 after printing on failure. */
int run_write_json(const char *path, int have_acc, double acc, size_t n, const float *out,
                   size_t out_n);
/* run_write_json of these results. */
int run_results_write_json(const struct run_results *r, const char *path);

#endif

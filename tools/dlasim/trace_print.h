/*
 * The printer of `dlasim trace --suite` (trace_print.c): header, one line
 * per case, totals and the timing summary.  A single process prints each
 * case as it ends; `dlasim merge` prints the cases of its shards in order
 * through the very same functions.
 */
#ifndef DLASIM_TOOLS_TRACE_PRINT_H
#define DLASIM_TOOLS_TRACE_PRINT_H

#include <stddef.h>
#include <stdint.h>

/* What the printer takes from the options, and its running totals. */
struct suite_print {
    const char *config;      /* device configuration (table title) */
    const char *suite;       /* --suite DIR, --match GLOB (the "no case" message) */
    const char *match;
    const char *expect;      /* --expect FILE (table footnote) */
    int table;               /* --table */
    int rtl_compare;         /* --timing with --rtl FILE: model vs RTL rows */
    const char *rtl_csv;     /* that FILE */
    double max_median, max_worst;
    /* totals */
    unsigned passed, failed, skipped;
    double seconds;
    double *errs;            /* |model/RTL - 1| per case compared */
    size_t nerr, ncases;
};

/* One case's outcome. */
struct suite_row {
    const char *name;
    int status;              /* 0 or a negative dlasim_status */
    int expect_file;         /* judged against the --expect file's CRC */
    int skipped;             /* --skip-missing-data: its data files are absent */
    unsigned checks_passed, checks_failed, layers;
    uint64_t cycles;         /* modelled cycles_to_last_intr */
    uint64_t rtl;            /* RTL cycles to compare (0: none) */
    double seconds;
    const char *err;         /* why it failed or was skipped */
};

/* Headers; -1 when out of memory. */
int suite_print_begin(struct suite_print *p, size_t ncases);
void suite_print_row(struct suite_print *p, const struct suite_row *r);
/* Totals; returns the command's exit status (1: a case failed, none ran, or
 * the timing is beyond the limits). */
int suite_print_end(struct suite_print *p);

/* A row as one JSON line of a shard file, and the printer's options as
 * header fields (", \"table\": 1, ..."; trace_shard.c reads them back). */
#include <stdio.h>
void suite_row_write(FILE *f, const struct suite_row *r);
void suite_print_write_options(FILE *f, const struct suite_print *p);

struct shard;
/* The shard file of `trace --suite DIR --shard I/N` with its header (job:
 * the command line and the case list); NULL after printing (trace_shard.c). */
FILE *trace_shard_open(const char *path, const struct shard *sh, int argc, char **argv,
                       const char *const *names, size_t n, const struct suite_print *p);

#endif

/* The `dlasim trace --suite` printer shared by a single process and by
 * `dlasim merge` (trace_print.h). */
#include <stdio.h>
#include <stdlib.h>

#include "dlasim/dlasim.h"
#include "shard.h"
#include "trace_print.h"

int suite_print_begin(struct suite_print *p, size_t ncases)
{
    p->passed = p->failed = p->skipped = 0;
    p->seconds = 0;
    p->nerr = 0;
    p->ncases = ncases;
    p->errs = calloc(ncases ? ncases : 1, sizeof(*p->errs));
    if (!p->errs) {
        return -1;
    }
    if (p->rtl_compare) {
        printf("| %-42s | %10s | %10s | %8s |\n", "case", "model", "RTL", "model/RTL");
        printf("|%.44s|%.12s|%.12s|%.10s|\n", "--------------------------------------------",
               "------------", "------------", "----------");
    }
    if (p->table) {
        printf("NVDLA conformance traces, config %s (expected CRCs from NVIDIA's RTL)\n\n",
               p->config ? p->config : "nv_small");
        printf("| %-42s | %-5s | %7s | %6s | %8s |\n", "case", "", "checks", "layers", "seconds");
        printf("|%.44s|%.7s|%.9s|%.8s|%.10s|\n", "--------------------------------------------",
               "-------", "---------", "--------", "----------");
    }
    return 0;
}

static void print_table_row(const struct suite_row *r)
{
    char checks[32];
    snprintf(checks, sizeof(checks), "%u/%u", r->checks_passed, r->checks_passed + r->checks_failed);
    printf("| %-42s | %-5s | %7s | %6u | %8.3f |\n", r->name,
           r->status ? (r->expect_file ? "FAIL*" : "FAIL") : (r->expect_file ? "PASS*" : "PASS"),
           checks, r->layers, r->seconds);
}

void suite_print_row(struct suite_print *p, const struct suite_row *r)
{
    p->seconds += r->seconds;
    if (r->skipped) {
        p->skipped++;
        printf("SKIP %s (%s)\n", r->name, r->err);
        return;
    }
    if (r->status) {
        p->failed++;
    } else {
        p->passed++;
    }
    if (r->rtl && (r->status == 0 || r->status == DLASIM_ERR_CHECK)) {
        double q = (double)r->cycles / (double)r->rtl;
        p->errs[p->nerr++] = q > 1 ? q - 1 : 1 - q;
        printf("| %-42s | %10llu | %10llu | %9.3f |\n", r->name, (unsigned long long)r->cycles,
               (unsigned long long)r->rtl, q);
    } else if (p->rtl_compare) {
        printf("| %-42s | %10llu | %10s | %9s |\n", r->name, (unsigned long long)r->cycles, "-",
               "-");
    } else if (p->table) {
        print_table_row(r);
    } else {
        printf("%s %s (%.3f s)\n", r->status ? "FAIL" : "PASS", r->name, r->seconds);
    }
    if (r->status) {
        printf("    %s\n", r->err);
    }
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* Model vs RTL over the cases compared; returns 1 when a threshold is exceeded. */
static int timing_summary(const struct suite_print *p)
{
    size_t n = p->nerr;
    double *err = p->errs;
    if (!n) {
        printf("timing: no case had an RTL figure in %s\n", p->rtl_csv);
        return 1;
    }
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        worst = err[i] > worst ? err[i] : worst;
    }
    qsort(err, n, sizeof(*err), cmp_double);
    double median = n % 2 ? err[n / 2] : (err[n / 2 - 1] + err[n / 2]) / 2;
    printf("timing: %zu cases vs RTL: median |model/RTL - 1| = %.2f %%, worst = %.2f %%\n", n,
           100 * median, 100 * worst);
    int bad = (p->max_median > 0 && 100 * median > p->max_median) ||
              (p->max_worst > 0 && 100 * worst > p->max_worst);
    if (bad) {
        printf("timing: FAIL: limits are median %.1f %%, worst %.1f %%\n", p->max_median, p->max_worst);
    }
    return bad;
}

int suite_print_end(struct suite_print *p)
{
    if (p->ncases == 0) {
        fprintf(stderr, "dlasim: no case folder in '%s'%s%s\n", p->suite,
                p->match ? " matching " : "", p->match ? p->match : "");
    }
    if (p->table) {
        printf("\n%.1f s in all.", p->seconds);
        if (p->expect) {
            printf("  * CRC from %s instead of the trace (see the file for why)", p->expect);
        }
        printf("\n");
    }
    int timing_bad = p->rtl_compare ? timing_summary(p) : 0;
    free(p->errs);
    p->errs = NULL;
    if (p->skipped) {
        printf("%u passed, %u failed, %u skipped\n", p->passed, p->failed, p->skipped);
    } else {
        printf("%u passed, %u failed\n", p->passed, p->failed);
    }
    return (p->failed || p->ncases == 0 || timing_bad) ? 1 : 0;
}

static void opt_str(FILE *f, const char *key, const char *v)
{
    fprintf(f, ", \"%s\": ", key);
    if (v) {
        shard_json_str(f, v);
    } else {
        fputs("null", f);
    }
}

void suite_print_write_options(FILE *f, const struct suite_print *p)
{
    opt_str(f, "config", p->config);
    opt_str(f, "suite", p->suite);
    opt_str(f, "match", p->match);
    opt_str(f, "expect", p->expect);
    opt_str(f, "rtl_csv", p->rtl_csv);
    fprintf(f, ", \"table\": %d, \"rtl_compare\": %d, \"max_median\": %.17g, "
               "\"max_worst\": %.17g", p->table, p->rtl_compare, p->max_median, p->max_worst);
}

void suite_row_write(FILE *f, const struct suite_row *r)
{
    fprintf(f, "{\"case\": ");
    shard_json_str(f, r->name);
    fprintf(f, ", \"status\": %d, \"expect_file\": %d, \"skipped\": %d, \"checks_passed\": %u, "
               "\"checks_failed\": %u, \"layers\": %u, \"cycles\": %llu, \"rtl\": %llu, "
               "\"seconds\": %.17g, \"err\": ",
            r->status, r->expect_file, r->skipped, r->checks_passed, r->checks_failed, r->layers,
            (unsigned long long)r->cycles, (unsigned long long)r->rtl, r->seconds);
    shard_json_str(f, r->err ? r->err : "");
    fprintf(f, "}\n");
}

/* `dlasim loadable`: run an NVDLA loadable and dump its outputs as .dimg. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "dlasim/runtime.h"
#include <md5.h> /* libmd (Debian libmd-dev) */

#define MAX_INPUTS 16

static int write_file(const char *path, const uint8_t *d, size_t n)
{
    return cli_write_file(path, d, n);
}

struct args {
    struct cli_common c;
    const char *file, *out_dir, *expect_md5, *record;
    const char *inputs[MAX_INPUTS];
    unsigned n_inputs;
};

static int parse_args(int argc, char **argv, struct args *a)
{
    for (int i = 1; i < argc; i++) {
        int r = cli_common_option(&a->c, argc, argv, &i);
        if (r < 0) {
            return -1;
        }
        if (r) {
            continue;
        }
        const char *o = argv[i];
        int has = i + 1 < argc;
        if ((!strcmp(o, "--input") || !strcmp(o, "--output") || !strcmp(o, "--expect-md5") ||
             !strcmp(o, "--record-trace")) && !has) {
            fprintf(stderr, "dlasim loadable: %s needs a value\n", o);
            return -1;
        }
        if (!strcmp(o, "--input")) {
            if (a->n_inputs == MAX_INPUTS) {
                fprintf(stderr, "dlasim loadable: at most %d --input options (one per input "
                                "tensor of the loadable)\n", MAX_INPUTS);
                return -1;
            }
            a->inputs[a->n_inputs++] = argv[++i];
        } else if (!strcmp(o, "--output") && has) {
            a->out_dir = argv[++i];
        } else if (!strcmp(o, "--expect-md5") && has) {
            a->expect_md5 = argv[++i];
            if (strlen(a->expect_md5) != 32 || strspn(a->expect_md5, "0123456789abcdefABCDEF") != 32) {
                fprintf(stderr, "dlasim loadable: --expect-md5 takes 32 hex digits, got '%s'\n",
                        a->expect_md5);
                return -1;
            }
        } else if (!strcmp(o, "--record-trace") && has) {
            a->record = argv[++i];
        } else if (o[0] != '-' && !a->file) {
            a->file = o;
        } else {
            fprintf(stderr, "dlasim loadable: unexpected argument '%s'\n", o);
            return -1;
        }
    }
    if ((a->record && cli_check_output_dir("--record-trace", a->record)) ||
        (a->out_dir && cli_check_output_dir("--output", a->out_dir))) {
        return -1;
    }
    if (!a->file) {
        fprintf(stderr, "usage: dlasim loadable [options] FILE [--input FILE ...] [--output DIR] "
                        "[--expect-md5 MD5] [--record-trace DIR]\n");
        return -1;
    }
    return 0;
}

/* Write every output as DIR/o_NNNNNN.dimg; print the md5 of each. */
static int dump(struct dlasim_loadable *ld, const struct args *a, int *mismatch)
{
    unsigned n = dlasim_loadable_num_outputs(ld);
    for (unsigned i = 0; i < n; i++) {
        const uint8_t *d;
        size_t len;
        char hex[33], path[4096];
        if (dlasim_loadable_output_dimg(ld, i, &d, &len)) {
            continue;
        }
        MD5Data(d, len, hex);
        snprintf(path, sizeof path, "%s/o_%06u.dimg", a->out_dir ? a->out_dir : ".", i);
        if (a->out_dir && write_file(path, d, len)) {
            return -1;
        }
        if (i == 0 && a->expect_md5) {
            int ok = strncmp(hex, a->expect_md5, 32) == 0 && strlen(a->expect_md5) >= 32;
            *mismatch = !ok;
            printf("%s  o_%06u.dimg  %s (expected %.32s)\n", hex, i, ok ? "MATCH" : "MISMATCH",
                   a->expect_md5);
        } else {
            printf("%s  o_%06u.dimg\n", hex, i);
        }
    }
    return 0;
}

int cmd_loadable(int argc, char **argv)
{
    struct args a;
    memset(&a, 0, sizeof a);
    a.c.overlap = 1; /* the runtime drives the device (--no-overlap: stepped) */
    if (parse_args(argc, argv, &a)) {
        return 2;
    }
    if (a.out_dir && mkdir(a.out_dir, 0777) && errno != EEXIST) {
        fprintf(stderr, "dlasim loadable: %s: %s\n", a.out_dir, strerror(errno));
        return 1;
    }
    uint8_t *buf = NULL, *in_bufs[MAX_INPUTS] = { 0 };
    struct dlasim_loadable_input ins[MAX_INPUTS];
    size_t len;
    char err[1024] = "";
    int rc = 1, mismatch = 0;
    struct dlasim_loadable *ld = NULL;
    struct dlasim_dev *dev = NULL;
    if (cli_read_file(a.file, &buf, &len)) {
        return 1;
    }
    for (unsigned i = 0; i < a.n_inputs; i++) {
        if (cli_read_file(a.inputs[i], &in_bufs[i], &ins[i].len)) {
            goto out;
        }
        ins[i].data = in_bufs[i];
    }
    if (dlasim_loadable_open(buf, len, &ld, err, sizeof err)) {
        fprintf(stderr, "dlasim loadable: %s: %s\n", a.file, err);
        goto out;
    }
    dev = cli_create_device(&a.c);
    if (!dev) {
        goto out;
    }
    struct dlasim_rt_options opt = { .record_trace_dir = a.record };
    if (dlasim_loadable_run(dev, ld, ins, a.n_inputs, &opt, err, sizeof err)) {
        fprintf(stderr, "dlasim loadable: %s: %s\n", a.file, err);
        goto out;
    }
    if (dump(ld, &a, &mismatch)) {
        goto out;
    }
    if (a.c.timing) { /* --timing: the cycle model of the whole run, layer by layer */
        double mhz = a.c.clock_mhz > 0 ? a.c.clock_mhz : 1000.0;
        timing_print_layers(dev, stdout, mhz);
        timing_print_network(dev, stdout, mhz, 1);
    }
    rc = mismatch ? 3 : 0;
out:
    dlasim_destroy(dev);
    dlasim_loadable_close(ld);
    for (unsigned i = 0; i < MAX_INPUTS; i++) {
        free(in_bufs[i]);
    }
    free(buf);
    return rc;
}

/*
 * Standalone speed measurement of the int8 convolution kernel
 * (src/kernels/conv_s8.c): GMAC/s of the ResNet-18 3x3 layers at 224x224
 * (and a few awkward shapes) for the fast kernel on every instruction set
 * this CPU runs, against the plain reference; every result is compared
 * with the reference.
 *
 * Public API only (include/dlasim/kernel.h); make bench builds and runs it:
 *   build/conv_kernel_bench [threads (2)] [repeats (5)] [--no-ref]
 *
 * Columns: the plain reference, the public dlasim_conv_s8() (ISA and thread
 * count chosen by the library), then each ISA forced with all threads.
 * The ResNet-18 layers run twice: on random int8 inputs and on inputs
 * through a ReLU (no negative code: AVX2 then runs vpmaddubsw).
 * Times are the best of the repeats (the reference runs once).  Exits 1 if
 * any result differs from the reference.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dlasim/dlasim.h"
#include "dlasim/kernel.h"

struct layer {
    const char *name;
    uint32_t hw, c, k, stride; /* output-side sizes come from the input */
    uint32_t kh, kw, dil, count; /* count = occurrences in ResNet-18 */
};

static const struct layer resnet[] = {
    {"conv2_x 56x56x64->64 s1", 56, 64, 64, 1, 3, 3, 1, 4},
    {"conv3_1 56x56x64->128 s2", 56, 64, 128, 2, 3, 3, 1, 1},
    {"conv3_x 28x28x128->128 s1", 28, 128, 128, 1, 3, 3, 1, 3},
    {"conv4_1 28x28x128->256 s2", 28, 128, 256, 2, 3, 3, 1, 1},
    {"conv4_x 14x14x256->256 s1", 14, 256, 256, 1, 3, 3, 1, 3},
    {"conv5_1 14x14x256->512 s2", 14, 256, 512, 2, 3, 3, 1, 1},
    {"conv5_x 7x7x512->512 s1", 7, 512, 512, 1, 3, 3, 1, 3},
};

static const struct layer awkward[] = {
    {"1x1 7x7x8192->256", 7, 8192, 256, 1, 1, 1, 1, 1},
    {"1x1 14x14x8192->64", 14, 8192, 64, 1, 1, 1, 1, 1},
    {"6x3 30x30x37->29 d2", 30, 37, 29, 1, 6, 3, 2, 1},
    {"3x3 56x56x3->1 s3", 56, 3, 1, 3, 3, 3, 1, 1},
    {"7x7 224x224x3->64 s2", 224, 3, 64, 2, 7, 7, 1, 1},
    {"3x3 5x5x5->7", 5, 5, 7, 1, 3, 3, 1, 1},
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int8_t rnd8(uint64_t *rng)
{
    *rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
    return (int8_t)(uint8_t)(*rng >> 56);
}

/* Geometry with "same" padding (pad = (k-1)*dil/2) already in the input. */
static struct dlasim_conv_geom geom_of(const struct layer *l)
{
    struct dlasim_conv_geom g;
    uint32_t ph = (l->kh - 1) * l->dil / 2, pw = (l->kw - 1) * l->dil / 2;
    memset(&g, 0, sizeof g);
    g.in_c = l->c;
    g.out_k = l->k;
    g.k_h = l->kh;
    g.k_w = l->kw;
    g.stride_x = g.stride_y = l->stride;
    g.dil_x = g.dil_y = l->dil;
    g.out_h = (l->hw + 2 * ph - (l->kh - 1) * l->dil - 1) / l->stride + 1;
    g.out_w = (l->hw + 2 * pw - (l->kw - 1) * l->dil - 1) / l->stride + 1;
    g.in_h = l->hw + 2 * ph;
    g.in_w = l->hw + 2 * pw;
    return g;
}

#define MAX_ISA 8 /* instruction sets shown (dlasim_conv_s8_isa_name) */

static unsigned isa_count(void)
{
    unsigned n = 0;
    while (n < MAX_ISA && dlasim_conv_s8_isa_name(n)) {
        n++;
    }
    return n;
}

struct result { double ref_s, pub_s, fast_s[MAX_ISA]; double macs; };

/* relu: the input's negative codes set to 0, as after a ReLU (on AVX2 the
 * kernel then takes its vpmaddubsw path) */
static int run(const struct layer *l, unsigned threads, int reps, int do_ref, int relu,
               struct result *r)
{
    struct dlasim_conv_geom g = geom_of(l);
    size_t nin = (size_t)g.in_c * g.in_h * g.in_w;
    size_t nwt = (size_t)g.out_k * g.in_c * g.k_h * g.k_w;
    size_t nout = (size_t)g.out_k * g.out_h * g.out_w;
    int8_t *in = malloc(nin), *wt = malloc(nwt);
    int32_t *ref = malloc(nout * 4), *out = malloc(nout * 4);
    uint64_t rng = 0x1234567887654321ull;
    int bad = 0;

    for (size_t i = 0; i < nin; i++) {
        in[i] = rnd8(&rng);
        in[i] = relu && in[i] < 0 ? 0 : in[i];
    }
    for (size_t i = 0; i < nwt; i++) {
        wt[i] = rnd8(&rng);
    }
    r->macs = (double)nout * g.in_c * g.k_h * g.k_w;
    r->ref_s = 0;
    if (do_ref) {
        double t0 = now();
        dlasim_conv_s8_ref(&g, in, wt, ref);
        r->ref_s = now() - t0;
    } else {
        dlasim_conv_s8_on_isa(0, &g, in, wt, ref, threads); /* 0: generic C */
    }
    r->pub_s = 1e30;
    for (int i = 0; i < reps; i++) {
        memset(out, 0x55, nout * 4);
        double t0 = now();
        int rc = dlasim_conv_s8(&g, in, wt, out, threads);
        double t = now() - t0;
        if (rc != 0 || memcmp(out, ref, nout * 4) != 0) {
            printf("MISMATCH %s dlasim_conv_s8 rc %d\n", l->name, rc);
            bad = 1;
        }
        r->pub_s = t < r->pub_s ? t : r->pub_s;
    }
    for (unsigned isa = 0; isa < isa_count(); isa++) {
        r->fast_s[isa] = 0;
        double best = 1e30;
        for (int i = 0; i < reps; i++) {
            memset(out, 0x55, nout * 4);
            double t0 = now();
            int rc = dlasim_conv_s8_on_isa(isa, &g, in, wt, out, threads);
            double t = now() - t0;
            if (rc == DLASIM_ERR_UNSUPPORTED) {
                best = 0; /* this CPU cannot run it */
                break;
            }
            if (rc != 0 || memcmp(out, ref, nout * 4) != 0) {
                printf("MISMATCH %s isa %s rc %d\n", l->name, dlasim_conv_s8_isa_name(isa), rc);
                bad = 1;
            }
            best = t < best ? t : best;
        }
        r->fast_s[isa] = best;
    }
    free(in);
    free(wt);
    free(ref);
    free(out);
    return bad;
}

static void table(const char *title, const struct layer *ls, size_t n, unsigned threads,
                  int reps, int do_ref, int weighted, int relu)
{
    double tot_macs = 0, tot_ref = 0, tot_pub = 0, tot_fast[MAX_ISA] = {0};
    int bad = 0;

    printf("\n%s (threads=%u, best of %d)\n", title, threads, reps);
    printf("%-28s %8s %9s %11s", "layer", "MMAC", "ref", "dlasim_conv_s8");
    for (unsigned isa = 0; isa < isa_count(); isa++) {
        printf(" %11s", dlasim_conv_s8_isa_name(isa));
    }
    printf("   (GMAC/s; dlasim_conv_s8 = %s, others: that ISA, all threads)  speed-up\n",
           dlasim_conv_s8_isa());
    for (size_t i = 0; i < n; i++) {
        struct result r;
        double w = weighted ? ls[i].count : 1;
        bad |= run(&ls[i], threads, reps, do_ref, relu, &r);
        printf("%-28s %8.3f %9.2f %11.2f", ls[i].name, r.macs / 1e6,
               do_ref ? r.macs / r.ref_s / 1e9 : 0.0, r.macs / r.pub_s / 1e9);
        tot_pub += w * r.pub_s;
        for (unsigned isa = 0; isa < isa_count(); isa++) {
            printf(" %11.2f", r.fast_s[isa] > 0 ? r.macs / r.fast_s[isa] / 1e9 : 0.0);
            tot_fast[isa] += w * r.fast_s[isa];
        }
        printf("   %8.1fx\n", do_ref ? r.ref_s / r.pub_s : 0.0);
        tot_macs += w * r.macs;
        tot_ref += w * r.ref_s;
    }
    printf("%-28s %8.1f %9.2f %11.2f", weighted ? "total (ResNet-18 x count)" : "total",
           tot_macs / 1e6, do_ref ? tot_macs / tot_ref / 1e9 : 0.0, tot_macs / tot_pub / 1e9);
    for (unsigned isa = 0; isa < isa_count(); isa++) {
        printf(" %11.2f", tot_fast[isa] > 0 ? tot_macs / tot_fast[isa] / 1e9 : 0.0);
    }
    printf("   %8.1fx\n", do_ref ? tot_ref / tot_pub : 0.0);
    if (bad) {
        printf("RESULT MISMATCH\n");
        exit(1);
    }
}

int main(int argc, char **argv)
{
    unsigned threads = argc > 1 ? (unsigned)atoi(argv[1]) : 2;
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    int do_ref = !(argc > 3 && strcmp(argv[3], "--no-ref") == 0);

    printf("conv_s8 kernel: selected ISA %s\n", dlasim_conv_s8_isa());
    table("ResNet-18 3x3 layers, 224x224 input", resnet, sizeof resnet / sizeof resnet[0],
          threads, reps, do_ref, 1, 0);
    table("ResNet-18 3x3 layers, input after a ReLU (no negative code)", resnet,
          sizeof resnet / sizeof resnet[0], threads, reps, do_ref, 1, 1);
    table("awkward shapes", awkward, sizeof awkward / sizeof awkward[0], threads, reps, do_ref, 0,
          0);
    return 0;
}

/*
 * `make bench`: the int8 multiply-accumulate peak of this CPU and the
 * convolution kernel (src/kernels/conv_s8.c) on ResNet-50's layer shapes,
 * in the same run, so the kernel's share of the peak is measured, not
 * assumed.
 *
 *   kernel_peak [threads (all online cores)] [--peak-only]
 *
 * Peak: a tight loop of independent multiply-accumulates of the
 * instruction the kernel uses here, on every thread: AVX-512 VNNI vpdpbusd
 * (64 int8 MACs per instruction) where the CPU has it, else AVX2 vpmaddwd
 * + vpaddd (16 MACs of int16 pairs: the path for any input, see
 * conv_s8_x86.c), and next to it vpmaddubsw + vpmaddwd(ones) + vpaddd (32
 * MACs: AVX2's path for inputs with no negative code), on all threads and
 * on one; the best of three runs before the layers and of three after them
 * (on this VM the first runs of a process often reach half the peak the
 * same loop reaches a few seconds later).
 * Shares of the peak: in wall time (moves with the machine's load) and in
 * CPU time (the packed kernel's MACs per CPU second over the peak loop's).
 * Kernel: dlasim_conv_s8 (include/dlasim/kernel.h) on random data, the best of 3 runs per layer, two
 * ways: weights packed at every call (as before the simulator cached them:
 * "gmacs") and packed once, threads kept in a pool (as CSC runs a network
 * now: "packed_gmacs"), then packed once on the input through a ReLU
 * ("relu_in_packed_gmacs": how CSC's layers after a ReLU run; on AVX2 the
 * vpmaddubsw path, where the random signed input of "packed_gmacs" takes
 * the vpmaddwd path with its weights converted from the U8 pack per call),
 * then that with a network's bell-shaped weights instead of uniform ones
 * ("relu_in_net_wt_gmacs": on AVX2 most pairs of reduction steps then
 * share one widening, conv_s8_x86.c);
 * the ResNet-50 totals are MAC-weighted over its convolution layers (each
 * shape with its count in the network).  One JSON object on stdout;
 * --peak-only prints the peaks alone.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dlasim/kernel.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define PEAK_ITERS 2000000L
#define PEAK_REPEATS 3 /* best of: other processes share the cores */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

#if defined(__x86_64__)
/* 8 independent accumulators hide the instruction's latency. */
__attribute__((target("avx512f,avx512vnni"))) static long peak_vnni(long iters)
{
    __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(5);
    __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
    for (long i = 0; i < iters; i++) {
        c0 = _mm512_dpbusd_epi32(c0, a, b); c1 = _mm512_dpbusd_epi32(c1, a, b);
        c2 = _mm512_dpbusd_epi32(c2, a, b); c3 = _mm512_dpbusd_epi32(c3, a, b);
        c4 = _mm512_dpbusd_epi32(c4, a, b); c5 = _mm512_dpbusd_epi32(c5, a, b);
        c6 = _mm512_dpbusd_epi32(c6, a, b); c7 = _mm512_dpbusd_epi32(c7, a, b);
        __asm__ volatile("" : "+v"(a));
    }
    __m512i s = _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(c0, c1), _mm512_add_epi32(c2, c3)),
                                 _mm512_add_epi32(_mm512_add_epi32(c4, c5), _mm512_add_epi32(c6, c7)));
    return _mm512_reduce_add_epi32(s);
}

/* Written in assembly: with one (a, b) pair in C the compiler computes
 * vpmaddwd once per iteration (8 vpaddd remain: a peak several times too
 * high), and with several pairs it spills accumulators to the stack.  Here:
 * 8 independent vpmaddwd + vpaddd per iteration, 8 accumulators in
 * registers, 4 inputs x 2 weights. */
__attribute__((target("avx2"))) static long peak_avx2(long iters)
{
    __m256i a0 = _mm256_set1_epi16(3), a1 = _mm256_set1_epi16(7), a2 = _mm256_set1_epi16(11);
    __m256i a3 = _mm256_set1_epi16(13), b0 = _mm256_set1_epi16(5), b1 = _mm256_set1_epi16(9);
    __m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
    __m256i t0, t1;
    for (long i = 0; i < iters; i++) {
        __asm__ volatile(
            "vpmaddwd %[a0], %[b0], %[t0]\n\tvpaddd %[t0], %[c0], %[c0]\n\t"
            "vpmaddwd %[a1], %[b0], %[t1]\n\tvpaddd %[t1], %[c1], %[c1]\n\t"
            "vpmaddwd %[a2], %[b0], %[t0]\n\tvpaddd %[t0], %[c2], %[c2]\n\t"
            "vpmaddwd %[a3], %[b0], %[t1]\n\tvpaddd %[t1], %[c3], %[c3]\n\t"
            "vpmaddwd %[a0], %[b1], %[t0]\n\tvpaddd %[t0], %[c4], %[c4]\n\t"
            "vpmaddwd %[a1], %[b1], %[t1]\n\tvpaddd %[t1], %[c5], %[c5]\n\t"
            "vpmaddwd %[a2], %[b1], %[t0]\n\tvpaddd %[t0], %[c6], %[c6]\n\t"
            "vpmaddwd %[a3], %[b1], %[t1]\n\tvpaddd %[t1], %[c7], %[c7]\n\t"
            : [c0] "+x"(c0), [c1] "+x"(c1), [c2] "+x"(c2), [c3] "+x"(c3), [c4] "+x"(c4),
              [c5] "+x"(c5), [c6] "+x"(c6), [c7] "+x"(c7), [t0] "=&x"(t0), [t1] "=&x"(t1)
            : [a0] "x"(a0), [a1] "x"(a1), [a2] "x"(a2), [a3] "x"(a3), [b0] "x"(b0), [b1] "x"(b1));
    }
    __m256i s = _mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(c0, c1), _mm256_add_epi32(c2, c3)),
                                 _mm256_add_epi32(_mm256_add_epi32(c4, c5), _mm256_add_epi32(c6, c7)));
    return _mm256_extract_epi32(s, 0);
}

/* The u8 x s8 way (what ONNX Runtime's AVX2 int8 kernels use): vpmaddubsw
 * (32 MACs: unsigned bytes x signed bytes, pairs summed into int16, exact
 * while the unsigned side is <= 127), then vpmaddwd with int16 ones to
 * widen the pair sums to int32 (two int16 pair sums of up to 32,512 each
 * cannot be added in int16), then vpaddd.  8 independent chains per
 * iteration, written in assembly for the reasons above (5 byte operands,
 * paired 8 ways: 16 ymm registers in all). */
__attribute__((target("avx2"))) static long peak_avx2_u8(long iters)
{
    __m256i a0 = _mm256_set1_epi8(3), a1 = _mm256_set1_epi8(7), a2 = _mm256_set1_epi8(11);
    __m256i a3 = _mm256_set1_epi8(13), b0 = _mm256_set1_epi8(5);
    __m256i one = _mm256_set1_epi16(1);
    __m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
    __m256i t0, t1;
    for (long i = 0; i < iters; i++) {
#define U8_MAC(a, b, t, c)                                                      \
    "vpmaddubsw %[" b "], %[" a "], %[" t "]\n\t"                             \
    "vpmaddwd %[one], %[" t "], %[" t "]\n\t"                                  \
    "vpaddd %[" t "], %[" c "], %[" c "]\n\t"
        __asm__ volatile(
            U8_MAC("a0", "b0", "t0", "c0") U8_MAC("a1", "b0", "t1", "c1")
            U8_MAC("a2", "b0", "t0", "c2") U8_MAC("a3", "b0", "t1", "c3")
            U8_MAC("a0", "a1", "t0", "c4") U8_MAC("a1", "a2", "t1", "c5")
            U8_MAC("a2", "a3", "t0", "c6") U8_MAC("a3", "a0", "t1", "c7")
            : [c0] "+x"(c0), [c1] "+x"(c1), [c2] "+x"(c2), [c3] "+x"(c3), [c4] "+x"(c4),
              [c5] "+x"(c5), [c6] "+x"(c6), [c7] "+x"(c7), [t0] "=&x"(t0), [t1] "=&x"(t1)
            : [a0] "x"(a0), [a1] "x"(a1), [a2] "x"(a2), [a3] "x"(a3), [b0] "x"(b0), [one] "x"(one));
#undef U8_MAC
    }
    __m256i s = _mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(c0, c1), _mm256_add_epi32(c2, c3)),
                                 _mm256_add_epi32(_mm256_add_epi32(c4, c5), _mm256_add_epi32(c6, c7)));
    return _mm256_extract_epi32(s, 0);
}
#endif

static int use_vnni(void)
{
#if defined(__x86_64__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vnni");
#else
    return 0;
#endif
}

static double cpu_s(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* The peak loops: the instruction the kernel uses (PEAK_KERNEL) and, on
 * AVX2, the u8 x s8 way next to it (PEAK_U8). */
enum peak_kind { PEAK_KERNEL, PEAK_U8 };

struct peak_job {
    enum peak_kind kind;
    double sink, cpu; /* loop result (0: no such loop here), thread CPU seconds */
};

static double peak_macs_per_iter(enum peak_kind kind)
{
    return kind == PEAK_U8 ? 8.0 * 32 : use_vnni() ? 8.0 * 64 : 8.0 * 16;
}

/* One thread's peak loop; its CPU seconds (time on a core, whatever else
 * shares the machine) go to job->cpu. */
static void *peak_thread(void *arg)
{
    struct peak_job *job = arg;
    double c0 = cpu_s(CLOCK_THREAD_CPUTIME_ID);
    job->sink = 0;
#if defined(__x86_64__)
    if (job->kind == PEAK_U8) {
        job->sink = __builtin_cpu_supports("avx2") ? peak_avx2_u8(PEAK_ITERS) | 1 : 0;
    } else {
        job->sink = use_vnni() ? peak_vnni(PEAK_ITERS) | 1
                    : __builtin_cpu_supports("avx2") ? peak_avx2(PEAK_ITERS) | 1 : 0;
    }
#endif
    job->cpu = cpu_s(CLOCK_THREAD_CPUTIME_ID) - c0;
    return NULL;
}

/* GMAC/s of a peak loop on n threads (0 without that SIMD path), and
 * *per_cpu the GMAC per CPU second of one thread (what one core does when
 * it runs this thread); the best of PEAK_REPEATS runs each. */
static double peak_gmacs(enum peak_kind kind, unsigned n, double *per_cpu)
{
    double best = 0;
    double macs_per_iter = peak_macs_per_iter(kind);
    *per_cpu = 0;
    for (int r = 0; r < PEAK_REPEATS; r++) {
        pthread_t tid[64];
        struct peak_job job[64];
        double t0 = now_s();
        for (unsigned i = 0; i < n; i++) {
            job[i].kind = kind;
        }
        for (unsigned i = 1; i < n; i++) {
            pthread_create(&tid[i], NULL, peak_thread, &job[i]);
        }
        peak_thread(&job[0]);
        for (unsigned i = 1; i < n; i++) {
            pthread_join(tid[i], NULL);
        }
        double t = now_s() - t0;
        if (job[0].sink == 0) {
            return 0;
        }
        double p = n * PEAK_ITERS * macs_per_iter / t / 1e9;
        best = p > best ? p : best;
        for (unsigned i = 0; i < n; i++) {
            double c = PEAK_ITERS * macs_per_iter / job[i].cpu / 1e9;
            *per_cpu = job[i].cpu > 0 && c > *per_cpu ? c : *per_cpu;
        }
    }
    return best;
}

struct layer {
    uint32_t hw, c, k, kern, stride, count; /* input hw x hw x c -> k, kern x kern / stride */
};

/* ResNet-50's convolutions (torchvision v1.5 layout: stride on the 3x3). */
static const struct layer resnet50[] = {
    {224, 3, 64, 7, 2, 1},
    {56, 64, 64, 1, 1, 1},   {56, 64, 64, 3, 1, 3},  {56, 64, 256, 1, 1, 4}, {56, 256, 64, 1, 1, 2},
    {56, 256, 128, 1, 1, 1}, {56, 128, 128, 3, 2, 1}, {28, 128, 512, 1, 1, 4}, {56, 256, 512, 1, 2, 1},
    {28, 512, 128, 1, 1, 3}, {28, 128, 128, 3, 1, 3},
    {28, 512, 256, 1, 1, 1}, {28, 256, 256, 3, 2, 1}, {14, 256, 1024, 1, 1, 6}, {28, 512, 1024, 1, 2, 1},
    {14, 1024, 256, 1, 1, 5}, {14, 256, 256, 3, 1, 5},
    {14, 1024, 512, 1, 1, 1}, {14, 512, 512, 3, 2, 1}, {7, 512, 2048, 1, 1, 3}, {14, 1024, 2048, 1, 2, 1},
    {7, 2048, 512, 1, 1, 2},  {7, 512, 512, 3, 1, 2},
};

static void fill(int8_t *p, size_t n, uint64_t *s)
{
    for (size_t i = 0; i < n; i++) {
        *s = *s * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = (int8_t)(*s >> 56);
    }
}

/* A network's int8 weights, bell-shaped as per-channel quantization
 * leaves them (sum of four uniforms 0..63, minus 126: sigma 37, at most
 * +-126): on AVX2 most pairs of reduction steps then share an int16 sum
 * (conv_s8_x86.c, paired steps), as in ResNet-50 as the compiler
 * quantizes it (95-100 % of the pairs of each 6-row block). */
static void fill_bell(int8_t *p, size_t n, uint64_t *s)
{
    for (size_t i = 0; i < n; i++) {
        *s = *s * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t r = *s >> 32;
        p[i] = (int8_t)((int)(r & 63) + (int)((r >> 6) & 63) + (int)((r >> 12) & 63) +
                        (int)((r >> 18) & 63) - 126);
    }
}

/* A post-ReLU activation: the negative codes of p become 0 (about half). */
static void relu(int8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        p[i] = p[i] < 0 ? 0 : p[i];
    }
}

/* Best-of-3 seconds of one layer (input already padded), weights packed
 * per call (t[0]) and packed once with a thread pool (t[1]), and the
 * process CPU seconds of the packed way (*cpu, best of 3); then the packed
 * way on the input through a ReLU (t[2], cpu[1]: on AVX2 the vpmaddubsw
 * path, which needs inputs with no negative code); then that with the
 * bell-shaped weights of fill_bell (t[3], cpu[2]); -1 on error. */
static int time_layer(const struct layer *L, unsigned threads, struct dlasim_conv_pool *pool,
                      uint64_t *macs, double t[4], double cpu[3])
{
    uint32_t pad = L->kern / 2, out = (L->hw + 2 * pad - L->kern) / L->stride + 1;
    struct dlasim_conv_geom g = {
        .in_w = L->hw + 2 * pad, .in_h = L->hw + 2 * pad, .in_c = L->c, .out_w = out, .out_h = out,
        .out_k = L->k, .k_w = L->kern, .k_h = L->kern, .stride_x = L->stride, .stride_y = L->stride,
        .dil_x = 1, .dil_y = 1,
    };
    size_t nin = (size_t)g.in_w * g.in_h * g.in_c, nw = (size_t)g.out_k * g.in_c * g.k_w * g.k_h;
    int8_t *in = malloc(nin), *wt = malloc(nw);
    int32_t *o = malloc((size_t)out * out * g.out_k * sizeof(int32_t));
    struct dlasim_conv_wpack *w = NULL;
    int rc = -1;
    uint64_t s = 42;
    t[0] = t[1] = t[2] = t[3] = cpu[0] = cpu[1] = cpu[2] = -1;
    if (in && wt && o) {
        fill(in, nin, &s);
        fill(wt, nw, &s);
        rc = dlasim_conv_wpack_build(&g, wt, &w);
        for (int way = 0; way < 4 && rc == 0; way++) {
            if (way == 2) {
                relu(in, nin);
            }
            if (way == 3) {
                fill_bell(wt, nw, &s);
                dlasim_conv_wpack_free(w);
                w = NULL;
                rc = dlasim_conv_wpack_build(&g, wt, &w);
            }
            for (int r = 0; r < 3 && rc == 0; r++) {
                double t0 = now_s(), c0 = cpu_s(CLOCK_PROCESS_CPUTIME_ID);
                rc = way ? dlasim_conv_s8_packed(&g, in, w, o, threads, pool)
                         : dlasim_conv_s8(&g, in, wt, o, threads);
                double dt = now_s() - t0, dc = cpu_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
                t[way] = t[way] < 0 || dt < t[way] ? dt : t[way];
                if (way) {
                    cpu[way - 1] = cpu[way - 1] < 0 || dc < cpu[way - 1] ? dc : cpu[way - 1];
                }
            }
        }
    }
    *macs = (uint64_t)out * out * g.out_k * g.in_c * g.k_w * g.k_h;
    dlasim_conv_wpack_free(w);
    free(in);
    free(wt);
    free(o);
    return rc == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned threads = argc > 1 ? (unsigned)atoi(argv[1]) : (unsigned)(online > 0 ? online : 1);
    threads = threads < 1 ? 1 : threads > 64 ? 64 : threads;
    /* On a shared machine wall times move with the load; CPU seconds much
     * less.  The share of the peak is therefore taken in CPU time: the
     * packed kernel's MACs per CPU second of the process (all its threads,
     * spinning included) over the peak loop's per CPU second of a thread. */
    double per_cpu = 0, u8_per_cpu = 0, u8_1 = 0, k_1 = 0;
    double peak = peak_gmacs(PEAK_KERNEL, threads, &per_cpu);
    double u8_peak = use_vnni() ? 0 : peak_gmacs(PEAK_U8, threads, &u8_per_cpu);
    if (threads > 1 && u8_peak > 0) { /* one thread alone too: the per-core figure */
        double dummy;
        k_1 = peak_gmacs(PEAK_KERNEL, 1, &dummy);
        u8_1 = peak_gmacs(PEAK_U8, 1, &dummy);
    }
    if (argc > 2 && strcmp(argv[2], "--peak-only") == 0) {
        printf("{\"threads\": %u, \"peak_gmacs\": %.1f, \"peak_gmacs_per_cpu_s\": %.1f, "
               "\"u8_peak_gmacs\": %.1f, \"u8_peak_gmacs_per_cpu_s\": %.1f, "
               "\"peak_gmacs_1thread\": %.1f, \"u8_peak_gmacs_1thread\": %.1f}\n",
               threads, peak, per_cpu, u8_peak, u8_per_cpu, k_1, u8_1);
        return 0;
    }
    /* ways: weights packed per call, packed once, packed once on a ReLU'd input */
    double total_s[4] = {0, 0, 0, 0}, total_macs = 0, worst[4] = {1e30, 1e30, 1e30, 1e30};
    double total_cpu[3] = {0, 0, 0};
    struct dlasim_conv_pool *pool = NULL;
    if (dlasim_conv_pool_create(threads, &pool)) {
        fprintf(stderr, "kernel_peak: no thread pool\n");
        return 1;
    }
    printf("{\"isa\": \"%s\", \"threads\": %u, \"layers\": [", dlasim_conv_s8_isa(), threads);
    fflush(stdout);
    for (size_t i = 0; i < sizeof resnet50 / sizeof resnet50[0]; i++) {
        uint64_t macs;
        double t[4], cpu[3];
        if (time_layer(&resnet50[i], threads, pool, &macs, t, cpu)) {
            fprintf(stderr, "kernel_peak: layer %zu failed\n", i);
            dlasim_conv_pool_destroy(pool);
            return 1;
        }
        double gm[4];
        for (int way = 0; way < 4; way++) {
            gm[way] = macs / t[way] / 1e9;
            worst[way] = gm[way] < worst[way] ? gm[way] : worst[way];
            total_s[way] += t[way] * resnet50[i].count;
        }
        total_macs += (double)macs * resnet50[i].count;
        total_cpu[0] += cpu[0] * resnet50[i].count;
        total_cpu[1] += cpu[1] * resnet50[i].count;
        total_cpu[2] += cpu[2] * resnet50[i].count;
        printf("%s{\"in\": \"%ux%ux%u\", \"k\": %u, \"kernel\": %u, \"stride\": %u, \"gmacs\": %.1f, "
               "\"packed_gmacs\": %.1f, \"packed_gmacs_per_cpu_s\": %.1f, "
               "\"relu_in_packed_gmacs\": %.1f, \"relu_in_packed_gmacs_per_cpu_s\": %.1f, "
               "\"relu_in_net_wt_gmacs\": %.1f, \"relu_in_net_wt_gmacs_per_cpu_s\": %.1f}",
               i ? ", " : "", resnet50[i].hw, resnet50[i].hw, resnet50[i].c, resnet50[i].k,
               resnet50[i].kern, resnet50[i].stride, gm[0], gm[1], macs / cpu[0] / 1e9, gm[2],
               macs / cpu[1] / 1e9, gm[3], macs / cpu[2] / 1e9);
        fflush(stdout);
    }
    dlasim_conv_pool_destroy(pool);
    /* the peak loops again after the layers, the better of the two runs
     * kept: a peak taken while the machine was busy (a 530 against ~1,000
     * GMAC/s, once) made the kernel's share of it read 129 % */
    double per_cpu_after = 0, u8_per_cpu_after = 0;
    double peak_after = peak_gmacs(PEAK_KERNEL, threads, &per_cpu_after);
    peak = peak_after > peak ? peak_after : peak;
    per_cpu = per_cpu_after > per_cpu ? per_cpu_after : per_cpu;
    if (u8_peak > 0) {
        double u8_after = peak_gmacs(PEAK_U8, threads, &u8_per_cpu_after);
        u8_peak = u8_after > u8_peak ? u8_after : u8_peak;
        u8_per_cpu = u8_per_cpu_after > u8_per_cpu ? u8_per_cpu_after : u8_per_cpu;
    }
    double all = total_macs / total_s[0] / 1e9, packed = total_macs / total_s[1] / 1e9;
    double relu = total_macs / total_s[2] / 1e9;
    double cpu_gm = total_macs / total_cpu[0] / 1e9, relu_cpu_gm = total_macs / total_cpu[1] / 1e9;
    double net = total_macs / total_s[3] / 1e9, net_cpu_gm = total_macs / total_cpu[2] / 1e9;
    /* the ReLU'd input runs on vpmaddubsw where there is one: its share is of that peak */
    double relu_peak = u8_peak > 0 ? u8_peak : peak, relu_per_cpu = u8_peak > 0 ? u8_per_cpu : per_cpu;
    printf("], \"u8_peak_gmacs\": %.1f, \"u8_peak_gmacs_per_cpu_s\": %.1f, "
           "\"peak_gmacs_1thread\": %.1f, \"u8_peak_gmacs_1thread\": %.1f, "
           "\"resnet50_relu_in_packed_gmacs\": %.1f, \"resnet50_relu_in_packed_ms\": %.2f, "
           "\"resnet50_relu_in_packed_gmacs_per_cpu_s\": %.1f, \"relu_in_share_of_peak\": %.3f, "
           "\"relu_in_cpu_share_of_peak\": %.3f, \"slowest_layer_relu_in_packed_gmacs\": %.1f, "
           "\"resnet50_relu_in_net_wt_gmacs\": %.1f, \"resnet50_relu_in_net_wt_ms\": %.2f, "
           "\"resnet50_relu_in_net_wt_gmacs_per_cpu_s\": %.1f, \"net_wt_cpu_share_of_peak\": %.3f, "
           "\"slowest_layer_relu_in_net_wt_gmacs\": %.1f, ",
           u8_peak, u8_per_cpu, k_1, u8_1, relu, total_s[2] * 1e3, relu_cpu_gm,
           relu_peak > 0 ? relu / relu_peak : 0, relu_per_cpu > 0 ? relu_cpu_gm / relu_per_cpu : 0,
           worst[2], net, total_s[3] * 1e3, net_cpu_gm,
           relu_per_cpu > 0 ? net_cpu_gm / relu_per_cpu : 0, worst[3]);
    printf("\"peak_gmacs\": %.1f, \"peak_gmacs_per_cpu_s\": %.1f, "
           "\"resnet50_packed_gmacs_per_cpu_s\": %.1f, \"cpu_share_of_peak\": %.3f, "
           "\"resnet50_gmacs\": %.1f, \"resnet50_ms\": %.2f, \"slowest_layer_gmacs\": %.1f, "
           "\"share_of_peak\": %.3f, \"resnet50_packed_gmacs\": %.1f, \"resnet50_packed_ms\": %.2f, "
           "\"slowest_layer_packed_gmacs\": %.1f, \"packed_share_of_peak\": %.3f}\n",
           peak, per_cpu, cpu_gm, per_cpu > 0 ? cpu_gm / per_cpu : 0, all, total_s[0] * 1e3, worst[0],
           peak > 0 ? all / peak : 0, packed, total_s[1] * 1e3, worst[1], peak > 0 ? packed / peak : 0);
    return 0;
}

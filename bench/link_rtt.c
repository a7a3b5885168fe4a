/*
 * `make bench`: how long a cache line takes from one core to another and
 * back on this host right now, printed next to the peer table so that a
 * run's figures can be read against the host's state.  The 2-vCPU AMD
 * host of rounds 30-40 passed one in 70-130 ns most of the time and in
 * 380-490 ns for minutes at a time (the Intel host of round 41: 100-210
 * ns); in such spells a device shares no work between its threads
 * (src/common/team.c, "the link between the cores"), and every figure of
 * a two-thread peer moves.
 *
 *   link_rtt [round trips (200000)]
 *
 * Two threads pass one atomic word back and forth; the mean round trip in
 * ns as one JSON object on stdout.  A single-core host (or a thread that
 * cannot start) prints "rtt_ns": null.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct pingpong {
    _Atomic int flag;
    long trips;
};

static void *answer(void *arg)
{
    struct pingpong *p = arg;
    for (long i = 0; i < p->trips; i++) {
        while (atomic_load_explicit(&p->flag, memory_order_acquire) != 1) {
        }
        atomic_store_explicit(&p->flag, 0, memory_order_release);
    }
    return NULL;
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    struct pingpong p = { 0, argc > 1 ? atol(argv[1]) : 200000 };
    pthread_t other;
    if (p.trips <= 0 || pthread_create(&other, NULL, answer, &p) != 0) {
        printf("{\"rtt_ns\": null}\n");
        return 0;
    }
    const double t0 = now_ns();
    for (long i = 0; i < p.trips; i++) {
        atomic_store_explicit(&p.flag, 1, memory_order_release);
        while (atomic_load_explicit(&p.flag, memory_order_acquire) != 0) {
        }
    }
    const double t = now_ns() - t0;
    pthread_join(other, NULL);
    printf("{\"rtt_ns\": %.0f, \"trips\": %ld}\n", t / (double)p.trips, p.trips);
    return 0;
}

/*
 * Team of worker threads (see team.h).  A worker joins only an open job,
 * under the mutex, taking a seat and counting itself in `active`; the
 * caller closes the job under the mutex and then waits for `active` to
 * drop to zero, so no worker ever sees a job's context after
 * dla_team_join returned.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "common/team.h"

#define TEAM_MAX_THREADS 64

struct dla_team {
    pthread_mutex_t mu;
    pthread_cond_t wake;
    atomic_ulong gen;  /* jobs published so far (read unlocked by spinners) */
    unsigned sleepers; /* workers in pthread_cond_wait */
    int open, stop;
    size_t seats;      /* workers the open job may still take */
    void (*body)(void *);
    void *ctx;
    atomic_uint active; /* workers inside a job */
    unsigned nthreads;
    pthread_t tid[TEAM_MAX_THREADS];
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Spin up to TEAM_SPIN_S for a job newer than `seen` before sleeping: a
 * network's layers come every few microseconds, and a futex wake on a
 * virtual machine costs 5-40 us, more than most layers' whole share. */
#define TEAM_SPIN_S 200e-6

static void spin_for_job(struct dla_team *t, unsigned long seen)
{
    double until = 0.0;
    for (unsigned i = 0;; i++) {
        if (atomic_load_explicit(&t->gen, memory_order_acquire) != seen) {
            return;
        }
        cpu_relax();
        if ((i & 63) == 63) {
            double n = now_s();
            if (until == 0.0) {
                until = n + TEAM_SPIN_S;
            } else if (n > until) {
                return;
            }
        }
    }
}

static void *worker_main(void *arg)
{
    struct dla_team *t = arg;
    unsigned long seen = 0;
    pthread_mutex_lock(&t->mu);
    for (;;) {
        while (!t->stop && (atomic_load_explicit(&t->gen, memory_order_relaxed) == seen ||
                            !t->open || t->seats == 0)) {
            pthread_mutex_unlock(&t->mu);
            spin_for_job(t, seen);
            pthread_mutex_lock(&t->mu);
            if (t->stop || (atomic_load_explicit(&t->gen, memory_order_relaxed) != seen &&
                            t->open && t->seats != 0)) {
                break;
            }
            /* nothing new, or a job already closed: sleep until the next */
            seen = atomic_load_explicit(&t->gen, memory_order_relaxed);
            t->sleepers++;
            pthread_cond_wait(&t->wake, &t->mu);
            t->sleepers--;
        }
        if (t->stop) {
            break;
        }
        seen = atomic_load_explicit(&t->gen, memory_order_relaxed);
        t->seats--;
        void (*body)(void *) = t->body;
        void *ctx = t->ctx;
        atomic_fetch_add_explicit(&t->active, 1, memory_order_relaxed);
        pthread_mutex_unlock(&t->mu);
        body(ctx);
        atomic_fetch_sub_explicit(&t->active, 1, memory_order_release);
        pthread_mutex_lock(&t->mu);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

struct dla_team *dla_team_create(unsigned threads)
{
    if (threads <= 1) {
        return NULL;
    }
    struct dla_team *t = calloc(1, sizeof(*t));
    if (!t) {
        return NULL;
    }
    if (pthread_mutex_init(&t->mu, NULL)) {
        free(t);
        return NULL;
    }
    if (pthread_cond_init(&t->wake, NULL)) {
        pthread_mutex_destroy(&t->mu);
        free(t);
        return NULL;
    }
    atomic_init(&t->active, 0);
    atomic_init(&t->gen, 0);
    unsigned want = threads - 1 < TEAM_MAX_THREADS ? threads - 1 : TEAM_MAX_THREADS;
    while (t->nthreads < want && !pthread_create(&t->tid[t->nthreads], NULL, worker_main, t)) {
        t->nthreads++;
    }
    if (t->nthreads == 0) {
        dla_team_destroy(t);
        return NULL;
    }
    return t;
}

void dla_team_destroy(struct dla_team *t)
{
    if (!t) {
        return;
    }
    pthread_mutex_lock(&t->mu);
    t->stop = 1;
    pthread_cond_broadcast(&t->wake);
    pthread_mutex_unlock(&t->mu);
    for (unsigned i = 0; i < t->nthreads; i++) {
        pthread_join(t->tid[i], NULL);
    }
    pthread_cond_destroy(&t->wake);
    pthread_mutex_destroy(&t->mu);
    free(t);
}

unsigned dla_team_threads(const struct dla_team *t)
{
    return t ? t->nthreads + 1 : 1;
}

void dla_team_join(struct dla_team *t, size_t helpers, void (*body)(void *ctx), void *ctx)
{
    if (!t || helpers == 0) {
        body(ctx);
        return;
    }
    pthread_mutex_lock(&t->mu);
    t->body = body;
    t->ctx = ctx;
    t->seats = helpers < t->nthreads ? helpers : t->nthreads;
    t->open = 1;
    atomic_fetch_add_explicit(&t->gen, 1, memory_order_release);
    if (t->sleepers) {
        pthread_cond_broadcast(&t->wake);
    }
    pthread_mutex_unlock(&t->mu);

    body(ctx);

    pthread_mutex_lock(&t->mu);
    t->open = 0; /* late workers stay asleep */
    t->seats = 0;
    pthread_mutex_unlock(&t->mu);
    /* the workers inside the job finish their share */
    unsigned spins = 0;
    while (atomic_load_explicit(&t->active, memory_order_acquire) != 0) {
        if (++spins > 1000) {
            sched_yield();
        }
    }
}

/* dla_team_run's job: items from one counter. */
struct item_job {
    void (*fn)(void *, size_t);
    void *ctx;
    size_t n;
    atomic_size_t next;
};

static void take_items(void *arg)
{
    struct item_job *j = arg;
    for (;;) {
        size_t i = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
        if (i >= j->n) {
            return;
        }
        j->fn(j->ctx, i);
    }
}

void dla_team_run(struct dla_team *t, size_t n, void (*fn)(void *ctx, size_t i), void *ctx)
{
    struct item_job j = { fn, ctx, n, 0 };
    atomic_init(&j.next, 0);
    dla_team_join(n > 1 ? t : NULL, n - (n > 0), take_items, &j);
}

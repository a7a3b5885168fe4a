/*
 * Team of worker threads (see team.h).  A job is open from its publication
 * until the caller has run out of items; a worker joins only an open job
 * (under the mutex) and counts itself in `active`, and the caller returns
 * only when the job is closed and no worker is left in it, so no worker
 * ever sees a job's counter or context after dla_team_run returned.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "sim/core/team.h"

#define TEAM_MAX_THREADS 64

struct dla_team {
    pthread_mutex_t mu;
    pthread_cond_t wake;
    unsigned long gen; /* jobs published so far */
    int open, stop;
    void (*fn)(void *, size_t);
    void *ctx;
    size_t n;
    atomic_size_t next;
    atomic_uint active;
    unsigned nthreads;
    pthread_t tid[TEAM_MAX_THREADS];
};

static void take_items(struct dla_team *t, void (*fn)(void *, size_t), void *ctx, size_t n)
{
    for (;;) {
        size_t i = atomic_fetch_add_explicit(&t->next, 1, memory_order_relaxed);
        if (i >= n) {
            return;
        }
        fn(ctx, i);
    }
}

static void *worker_main(void *arg)
{
    struct dla_team *t = arg;
    unsigned long seen = 0;
    pthread_mutex_lock(&t->mu);
    for (;;) {
        while (!t->stop && (t->gen == seen || !t->open)) {
            pthread_cond_wait(&t->wake, &t->mu);
        }
        if (t->stop) {
            break;
        }
        seen = t->gen;
        void (*fn)(void *, size_t) = t->fn;
        void *ctx = t->ctx;
        size_t n = t->n;
        atomic_fetch_add_explicit(&t->active, 1, memory_order_relaxed);
        pthread_mutex_unlock(&t->mu);
        take_items(t, fn, ctx, n);
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
    atomic_init(&t->next, 0);
    atomic_init(&t->active, 0);
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

void dla_team_run(struct dla_team *t, size_t n, void (*fn)(void *ctx, size_t i), void *ctx)
{
    if (!t || n <= 1) {
        for (size_t i = 0; i < n; i++) {
            fn(ctx, i);
        }
        return;
    }
    pthread_mutex_lock(&t->mu);
    t->fn = fn;
    t->ctx = ctx;
    t->n = n;
    atomic_store_explicit(&t->next, 0, memory_order_relaxed);
    t->gen++;
    t->open = 1;
    pthread_cond_broadcast(&t->wake);
    pthread_mutex_unlock(&t->mu);

    take_items(t, fn, ctx, n);

    pthread_mutex_lock(&t->mu);
    t->open = 0;
    pthread_mutex_unlock(&t->mu);
    /* the workers still in the job finish their last items */
    unsigned spins = 0;
    while (atomic_load_explicit(&t->active, memory_order_acquire) != 0) {
        if (++spins > 1000) {
            sched_yield();
        }
    }
}

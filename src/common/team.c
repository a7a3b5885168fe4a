/*
 * Team of worker threads (see team.h).  A job is one atomic word, `state`:
 * its generation (high bits) and the seats still free (low 16 bits).  The
 * caller publishes a job by storing a new generation with its seats; a
 * worker joins by taking a seat with a compare-and-swap on that word; the
 * caller closes the job by clearing the seats, which tells it how many
 * workers joined, and waits until that many have counted themselves out in
 * `done`.  So the running network's path takes no lock and makes no system
 * call: with a mutex around the job (before round 15) a worker that saw
 * the job while the caller still held the mutex blocked on it and paid a
 * futex wake (5-40 us on a virtual machine) to join a job of 2-20 us.  The
 * mutex and condition variable are only for a worker that has spun out
 * (TEAM_SPIN_S without a job) and sleeps: `sleepers` is read by the caller
 * after it published, written by the worker before it looks for a job a
 * last time (both sequentially consistent), so either the caller sees the
 * sleeper and wakes it under the mutex or the sleeper sees the job.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/team.h"

#define TEAM_MAX_THREADS 64
enum { TASK_NONE = 0, TASK_POSTED = 1, TASK_RUNNING = 2 };
#define SEAT_BITS 16
#define SEAT_MASK ((uint64_t)((1u << SEAT_BITS) - 1))

struct dla_team {
    _Atomic uint64_t state; /* generation << SEAT_BITS | free seats */
    atomic_uint done;       /* workers that finished the current job */
    void (*body)(void *);   /* the current job: written before its state */
    void *ctx;
    atomic_uint task;       /* dla_team_spawn's task: TASK_NONE, _POSTED, _RUNNING */
    void (*task_fn)(void *); /* written before task is TASK_POSTED */
    void *task_ctx;
    /* Read at every job and task the owner hands out, written only when a
     * worker goes to sleep or the team stops: a line apart from the one
     * above, which the workers write at every job (on it, the owner's read
     * of `sleepers` in dla_team_spawn waited for the line, ~1 % of a
     * depthwise model's samples). */
    _Alignas(64) atomic_uint sleepers; /* workers asleep, or about to be, on `wake` */
    atomic_int stop;
    pthread_mutex_t mu;     /* for sleeping only */
    pthread_cond_t wake;
    unsigned nthreads;
    pthread_t tid[TEAM_MAX_THREADS];
    /* The link between the cores (dla_team_coupled): `ping` on a line of its
     * own (odd: the owner asks, a worker answers with the next even value);
     * the rest is the owner's alone. */
    _Alignas(64) atomic_uint ping;
    _Alignas(64) unsigned link_calls; /* coupling checks since the clock was read */
    double link_next;                 /* when the link is measured again (s) */
    unsigned link_ns;                 /* its last round trip, ns (0: not measured) */
    int link_slow;                    /* work stays on the owner's thread */
    unsigned link_strikes;            /* slow measurements in a row while not slow */
    unsigned link_busy;               /* measurements in a row of a worker without a core */
    unsigned link_asked;              /* an open question to sleeping workers, or 0 */
    double link_asked_at;
    enum dla_link_policy link_policy; /* dla_team_set_link_policy */
    void *scratch;                    /* dla_team_scratch's buffer, the owner's */
    size_t scratch_cap;
    void (*prologue)(void *ctx);      /* dla_team_prologue's, the owner's */
    void *prologue_ctx;
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

void dla_spin_wait(unsigned *spins)
{
    if (++*spins > DLA_SPIN_YIELD_AFTER) {
        sched_yield();
    } else {
        cpu_relax();
    }
}

/* Spin up to TEAM_SPIN_S for a job newer than `seen` before sleeping
 * (team.h).  200 us (round 14) let the worker sleep in ~16 gaps an image of
 * MobileNetV2 and wake too late for the job that ended each.  After
 * TEAM_HOT_S the spin yields the core every 64 pauses (a few us): on an
 * idle host sched_yield returns at once, on a busy one (more runnable
 * threads than cores, the caller's among them) the wait stops taking a
 * core from threads with work. */
#define TEAM_SPIN_S 1e-3
#define TEAM_HOT_S 50e-6

static uint64_t gen_of(uint64_t s)
{
    return s >> SEAT_BITS;
}

/* A job the worker that last saw generation `seen` can still join. */
static int joinable(uint64_t s, uint64_t seen)
{
    return gen_of(s) != seen && (s & SEAT_MASK) != 0;
}

/* Sleep until a job newer than `seen` is published or the team stops.
 * Any new job ends the sleep, not only one still open: a woken worker
 * that went back to sleep because the job had closed during its 5-40 us
 * wake would sleep through every short job after it; awake, it spins and
 * joins the next one. */
static void sleep_for_job(struct dla_team *t, uint64_t seen)
{
    pthread_mutex_lock(&t->mu);
    atomic_fetch_add(&t->sleepers, 1);
    while (!atomic_load(&t->stop) && gen_of(atomic_load(&t->state)) == seen &&
           atomic_load(&t->task) != TASK_POSTED && !(atomic_load(&t->ping) & 1u)) {
        pthread_cond_wait(&t->wake, &t->mu);
    }
    atomic_fetch_sub(&t->sleepers, 1);
    pthread_mutex_unlock(&t->mu);
}

/* After publishing work (a job, a task, a question on the link) with a
 * sequentially consistent store: a worker asleep, or about to be, is woken
 * (sleep_for_job increments `sleepers` before it looks a last time, so
 * either it sees the work or this sees it). */
static void wake_sleepers(struct dla_team *t)
{
    if (atomic_load(&t->sleepers) != 0) {
        pthread_mutex_lock(&t->mu);
        pthread_cond_broadcast(&t->wake);
        pthread_mutex_unlock(&t->mu);
    }
}

/* A waiting worker's answer to the owner's question on the link (ask_link). */
static inline void answer_ping(struct dla_team *t)
{
    unsigned p = atomic_load_explicit(&t->ping, memory_order_relaxed);
    if (p & 1u) {
        atomic_compare_exchange_strong_explicit(&t->ping, &p, p + 1, memory_order_relaxed,
                                                memory_order_relaxed);
    }
}

/* The state of a joinable job, 1 for a posted task (a job's state has
 * seats: never 1 with a generation), 0 when the team stops.  Jobs that
 * closed before this worker could join (their caller did all the work)
 * move `seen` on and restart the spin: the network is running. */
#define WORK_TASK 1u
static uint64_t wait_for_job(struct dla_team *t, uint64_t *seen)
{
    double since = 0.0; /* the spin's start, 0 until taken */
    for (unsigned i = 0;; i++) {
        uint64_t s = atomic_load_explicit(&t->state, memory_order_acquire);
        if (joinable(s, *seen)) {
            return s;
        }
        answer_ping(t);
        if (atomic_load_explicit(&t->task, memory_order_relaxed) == TASK_POSTED) {
            return WORK_TASK;
        }
        if (atomic_load_explicit(&t->stop, memory_order_relaxed)) {
            return 0;
        }
        if (gen_of(s) != *seen) {
            *seen = gen_of(s);
            since = 0.0;
        }
        cpu_relax();
        if ((i & 63) == 63) {
            double n = now_s();
            if (since == 0.0) {
                since = n;
            } else if (n - since > TEAM_SPIN_S) {
                sleep_for_job(t, *seen);
                since = 0.0;
            } else if (n - since > TEAM_HOT_S) {
                sched_yield();
            }
        }
    }
}

/* A seat of job state s (taken with the CAS worker_main uses): 1 when taken. */
static int take_seat(struct dla_team *t, uint64_t *s)
{
    while ((*s & SEAT_MASK) != 0 &&
           !atomic_compare_exchange_weak_explicit(&t->state, s, *s - 1, memory_order_acquire,
                                                  memory_order_acquire)) {
    }
    return (*s & SEAT_MASK) != 0;
}

/* The posted task, if this worker is the one that takes it. */
static void run_task(struct dla_team *t)
{
    unsigned posted = TASK_POSTED;
    if (atomic_compare_exchange_strong_explicit(&t->task, &posted, TASK_RUNNING,
                                                memory_order_acquire, memory_order_relaxed)) {
        t->task_fn(t->task_ctx);
        atomic_store_explicit(&t->task, TASK_NONE, memory_order_release);
    }
}

static void *worker_main(void *arg)
{
    struct dla_team *t = arg;
    uint64_t seen = 0;
    for (;;) {
        uint64_t s = wait_for_job(t, &seen);
        if (s == 0) {
            return NULL;
        }
        if (s == WORK_TASK) {
            run_task(t);
            continue;
        }
        /* take a seat of s's job (or of a newer one, if the CAS finds it) */
        const int seated = take_seat(t, &s);
        seen = gen_of(s);
        if (!seated) {
            continue; /* closed or full before we got a seat */
        }
        t->body(t->ctx);
        atomic_fetch_add_explicit(&t->done, 1, memory_order_release);
    }
}

struct dla_team *dla_team_create(unsigned threads)
{
    if (threads <= 1) {
        return NULL;
    }
    /* aligned: `ping` has a cache line of its own */
    struct dla_team *t = aligned_alloc(64, (sizeof(*t) + 63) / 64 * 64);
    if (!t) {
        return NULL;
    }
    memset(t, 0, sizeof(*t));
    if (pthread_mutex_init(&t->mu, NULL)) {
        free(t);
        return NULL;
    }
    if (pthread_cond_init(&t->wake, NULL)) {
        pthread_mutex_destroy(&t->mu);
        free(t);
        return NULL;
    }
    atomic_init(&t->state, 0);
    atomic_init(&t->done, 0);
    atomic_init(&t->sleepers, 0);
    atomic_init(&t->stop, 0);
    atomic_init(&t->task, TASK_NONE);
    atomic_init(&t->ping, 0);
    t->link_policy = DLA_LINK_SHARE;
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
    atomic_store(&t->stop, 1);
    pthread_mutex_lock(&t->mu);
    pthread_cond_broadcast(&t->wake);
    pthread_mutex_unlock(&t->mu);
    for (unsigned i = 0; i < t->nthreads; i++) {
        pthread_join(t->tid[i], NULL);
    }
    pthread_cond_destroy(&t->wake);
    pthread_mutex_destroy(&t->mu);
    free(t->scratch);
    free(t);
}

unsigned dla_team_threads(const struct dla_team *t)
{
    return t ? t->nthreads + 1 : 1;
}

void *dla_team_scratch(struct dla_team *t, size_t bytes)
{
    if (!t) {
        return NULL;
    }
    if (bytes > t->scratch_cap) {
        const size_t rounded = (bytes + 63u) & ~(size_t)63u;
        void *p = rounded >= bytes ? aligned_alloc(64, rounded) : NULL;
        if (!p) {
            return NULL;
        }
        free(t->scratch);
        t->scratch = p;
        t->scratch_cap = rounded;
    }
    return t->scratch;
}

static int solid_job(const struct dla_team *t, double work_s);

/* Whether the job a spawned task's worker publishes stays on that worker:
 * all but the solid ones (team.h dla_team_spawn).  Its only helper is the
 * spawning thread, which joins from dla_team_help_until, and a small job
 * shared moves the layer's data to the other core and back for the next
 * one (MobileNetV2's chained depthwise blocks, their fetches and SDP).
 * Measured on an AVX-512 host, model_bench --threads 2, three alternated
 * pairs: MobileNetV2 5.80-5.87 -> 5.48-5.55 ms; ResNet-18 and ResNet-50
 * unchanged (their large layers' tiles are solid jobs). */
static int task_keeps(const struct dla_team *t, double work_s, int local)
{
    return !local && dla_team_seat(t) != 0 && !(work_s >= DLA_TEAM_SOLID_JOB_S);
}

/* dla_team_join's job (work_s: dla_team_join_work's, 0 = not known;
 * local: dla_team_join_local's). */
static void team_job(struct dla_team *t, size_t helpers, void (*body)(void *ctx), void *ctx,
                     double work_s, int local)
{
    if (!t || helpers == 0 || t->nthreads == 0 || task_keeps(t, work_s, local) ||
        !(dla_team_coupled(t) || solid_job(t, work_s))) {
        body(ctx);
        return;
    }
    const uint64_t seats = helpers < t->nthreads ? helpers : t->nthreads;
    /* every worker of the last job has counted itself out: nobody reads these */
    t->body = body;
    t->ctx = ctx;
    atomic_store_explicit(&t->done, 0, memory_order_relaxed);
    uint64_t gen = gen_of(atomic_load_explicit(&t->state, memory_order_relaxed)) + 1;
    atomic_store(&t->state, gen << SEAT_BITS | seats);
    wake_sleepers(t);
    if (t->prologue && dla_team_seat(t) == 0) {
        void (*fn)(void *) = t->prologue;
        t->prologue = NULL;
        fn(t->prologue_ctx); /* while the workers take the job's items */
    }

    body(ctx);

    /* close the job: the seats not taken are the workers that did not join */
    uint64_t left = atomic_fetch_and_explicit(&t->state, ~SEAT_MASK, memory_order_acq_rel);
    unsigned joined = (unsigned)(seats - (left & SEAT_MASK)), spins = 0;
    while (atomic_load_explicit(&t->done, memory_order_acquire) != joined) {
        dla_spin_wait(&spins);
    }
}

void dla_team_prologue(struct dla_team *t, void (*fn)(void *ctx), void *ctx)
{
    if (t && dla_team_seat(t) == 0) {
        t->prologue = fn;
        t->prologue_ctx = ctx;
    }
}

void dla_team_join(struct dla_team *t, size_t helpers, void (*body)(void *ctx), void *ctx)
{
    team_job(t, helpers, body, ctx, 0, 0);
}

void dla_team_join_local(struct dla_team *t, size_t helpers, void (*body)(void *ctx),
                         void *ctx)
{
    team_job(t, helpers, body, ctx, 0, 1);
}

void dla_team_join_work(struct dla_team *t, size_t helpers, double work_s,
                        void (*body)(void *ctx), void *ctx)
{
    team_job(t, helpers, body, ctx, work_s, 0);
}

unsigned dla_team_seat(const struct dla_team *t)
{
    if (t) {
        const pthread_t me = pthread_self();
        for (unsigned i = 0; i < t->nthreads; i++) {
            if (pthread_equal(me, t->tid[i])) {
                return i + 1;
            }
        }
    }
    return 0;
}

/* dla_team_run's job: each seat's home share of the items, [next, end) on a
 * line of its own (a take is a fetch-and-add on the share's line). */
#define RUN_HOMES_MAX 8
struct run_home {
    _Alignas(64) atomic_size_t next;
    size_t end;
};
struct item_job {
    void (*fn)(void *, size_t);
    void *ctx;
    const struct dla_team *team;
    unsigned homes;
    struct run_home home[RUN_HOMES_MAX];
};

static void take_items(void *arg)
{
    struct item_job *j = arg;
    const unsigned first = dla_team_seat(j->team) % j->homes;
    for (unsigned k = 0; k < j->homes; k++) {
        struct run_home *h = &j->home[(first + k) % j->homes];
        for (;;) {
            size_t i = atomic_fetch_add_explicit(&h->next, 1, memory_order_relaxed);
            if (i >= h->end) {
                break;
            }
            j->fn(j->ctx, i);
        }
    }
}

static void run_items(struct dla_team *t, size_t n, void (*fn)(void *ctx, size_t i), void *ctx,
                      int local);

void dla_team_run(struct dla_team *t, size_t n, void (*fn)(void *ctx, size_t i), void *ctx)
{
    run_items(t, n, fn, ctx, 0);
}

void dla_team_run_local(struct dla_team *t, size_t n, void (*fn)(void *ctx, size_t i),
                        void *ctx)
{
    run_items(t, n, fn, ctx, 1);
}

static void run_items(struct dla_team *t, size_t n, void (*fn)(void *ctx, size_t i), void *ctx,
                      int local)
{
    struct item_job j;
    const unsigned seats = dla_team_threads(t);
    j.fn = fn;
    j.ctx = ctx;
    j.team = t;
    j.homes = seats < RUN_HOMES_MAX ? seats : RUN_HOMES_MAX;
    if (n < j.homes) {
        j.homes = n ? (unsigned)n : 1;
    }
    for (unsigned h = 0; h < j.homes; h++) {
        atomic_init(&j.home[h].next, n * h / j.homes);
        j.home[h].end = n * (h + 1) / j.homes;
    }
    team_job(n > 1 ? t : NULL, n - (n > 0), take_items, &j, 0, local);
}

size_t dla_team_units_per_item(const struct dla_team *t, size_t n, size_t unit_bytes,
                               size_t bytes_each)
{
    if (unit_bytes == 0 || unit_bytes >= bytes_each) {
        return 1;
    }
    const size_t fit = bytes_each / unit_bytes, spread = n / (4 * (size_t)dla_team_threads(t));
    const size_t per = fit < spread ? fit : spread;
    return per ? per : 1;
}

/* dla_team_run_grouped's job: item i runs units [i per, (i + 1) per). */
struct group_job {
    void (*fn)(void *, size_t);
    void *ctx;
    size_t n, per;
};

static void group_item(void *arg, size_t i)
{
    const struct group_job *g = arg;
    const size_t end = (i + 1) * g->per < g->n ? (i + 1) * g->per : g->n;
    for (size_t k = i * g->per; k < end; k++) {
        g->fn(g->ctx, k);
    }
}

void dla_team_run_grouped(struct dla_team *t, size_t n, size_t per,
                          void (*fn)(void *ctx, size_t i), void *ctx)
{
    if (per <= 1) {
        dla_team_run(t, n, fn, ctx);
        return;
    }
    struct group_job g = { fn, ctx, n, per };
    dla_team_run(t, (n + per - 1) / per, group_item, &g);
}

/* ---- a worker's task (dla_team_spawn) ---------------------------------------- */

int dla_team_spawn(struct dla_team *t, void (*fn)(void *ctx), void *ctx)
{
    if (!t || atomic_load_explicit(&t->task, memory_order_acquire) != TASK_NONE ||
        !dla_team_coupled(t)) {
        return -1;
    }
    t->task_fn = fn;
    t->task_ctx = ctx;
    atomic_store(&t->task, TASK_POSTED);
    wake_sleepers(t);
    return 0;
}

int dla_team_spawned_done(struct dla_team *t)
{
    return !t || atomic_load_explicit(&t->task, memory_order_acquire) == TASK_NONE;
}

/* Join the jobs the task's worker publishes until the task has ended or,
 * with a count, *count >= want (acquire). */
static void help_until(struct dla_team *t, const atomic_uint *count, unsigned want)
{
    /* no generation yet: any open job is one this thread has not served */
    uint64_t seen = UINT64_MAX;
    unsigned spins = 0; /* (a host with more threads than cores: yield after a while) */
    while (!dla_team_spawned_done(t) &&
           !(count && atomic_load_explicit(count, memory_order_acquire) >= want)) {
        uint64_t s = atomic_load_explicit(&t->state, memory_order_acquire);
        if (!joinable(s, seen)) {
            dla_spin_wait(&spins);
            continue;
        }
        const int seated = take_seat(t, &s);
        seen = gen_of(s);
        if (seated) {
            t->body(t->ctx);
            atomic_fetch_add_explicit(&t->done, 1, memory_order_release);
            spins = 0;
        }
    }
}

void dla_team_help_until_done(struct dla_team *t)
{
    help_until(t, NULL, 0);
}

void dla_team_help_until_count(struct dla_team *t, const atomic_uint *count, unsigned want)
{
    help_until(t, count, want);
}

/* ---- the link between the cores (dla_team_coupled) ------------------------------ */

/*
 * Why: this host's two vCPUs pass a cache line back and forth in 70-130 ns
 * a round trip most of the time and in 380-490 ns for minutes at a time
 * (a two-thread ping-pong; steal time ~0: the vCPUs then sit on cores
 * that share no cache).  In those spells every line one thread writes and
 * the other reads costs that much, and MobileNetV2 ran 7.1-7.8 ms an image
 * on two threads against 4.4-4.6 on one (the same spell, minutes apart).
 * So the owner measures the round trip now and then, and above
 * LINK_SLOW_NS keeps the team's work on its own thread until a later
 * measurement is below LINK_FAST_NS.  A measurement needs a worker awake:
 * one asleep (no job for 1 ms, as while the work stays on the owner) is
 * woken first and measured at a later check once it answered, since a
 * wake can take milliseconds on a virtual machine and the owner is in the
 * middle of a network.
 */
#define LINK_SLOW_NS 250u
#define LINK_FAST_NS 200u
#define LINK_CHECK_EVERY 16u    /* coupling checks between clock readings */
#define LINK_PERIOD_S 2e-3      /* between measurements while coupled */
#define LINK_PERIOD_SLOW_S 8e-3 /* ... and while not (a measurement wakes a worker) */
#define LINK_TRIPS 8u
/* For an awake worker to answer a trip: past LINK_BUSY_NS it has no core
 * of its own anyway, and a longer wait only costs the owner.  With 2 ms,
 * and no spacing by cost (LINK_COST_SHARE), while another program kept a
 * core busy (a callgrind run) MobileNetV2's owner spent 0.30-0.68 s of its
 * ~3 s for 150 images measuring (630-950 measurements, most of them trips
 * answered only when the owner yielded; scratch counters); 0.016 s now. */
#define LINK_TIMEOUT_S 50e-6
/* A measurement is followed by at least this many times its own cost
 * before the next: measuring takes at most ~5 % of the owner's time (a
 * trip timed out every LINK_PERIOD_BUSY_S, the worst case). */
#define LINK_COST_SHARE 20.0
#define LINK_WAKE_S 50e-3       /* for a sleeping one to wake and answer */
#define LINK_NO_ANSWER_NS 1000000u
#define LINK_BUSY_NS 10000u
#define LINK_BUSY_TRIES 4u
#define LINK_PERIOD_BUSY_S 1e-3

/* Ask the workers: `ping` odd, a sleeping worker woken (as team_job: it
 * sees the ping or is woken).  Returns the value asked with. */
static unsigned ask_link(struct dla_team *t)
{
    const unsigned p = atomic_load_explicit(&t->ping, memory_order_relaxed) + 1u;
    atomic_store(&t->ping, p);
    wake_sleepers(t);
    return p;
}

/* Whether the question `asked` was answered; after `limit` seconds from
 * `since` the owner takes it back itself (then no answer can come late)
 * and it counts as unanswered. */
static int answered(struct dla_team *t, unsigned asked, double since, double limit, int *gave_up)
{
    unsigned v = asked;
    if (atomic_load_explicit(&t->ping, memory_order_acquire) != asked) {
        return 1;
    }
    if (now_s() - since > limit && atomic_compare_exchange_strong(&t->ping, &v, asked + 1)) {
        *gave_up = 1;
    }
    return 0;
}

/* One round trip with an awake worker: 0 when none answered in `limit` s. */
static int ping_once(struct dla_team *t, double limit)
{
    const unsigned asked = ask_link(t);
    const double since = now_s();
    int gave_up = 0;
    /* (yielding after a while: a woken worker may have been put on this
     * core, and a spin that never yields would keep it off it) */
    for (unsigned i = 1, spins = 0; !gave_up; i++) {
        if (atomic_load_explicit(&t->ping, memory_order_acquire) != asked) {
            return 1;
        }
        dla_spin_wait(&spins);
        if ((i & 63u) == 0) {
            (void)answered(t, asked, since, limit, &gave_up);
        }
    }
    return 0;
}

/* The round trip now, ns, with a worker that is awake (one trip, then the
 * mean of LINK_TRIPS; a first trip of LINK_BUSY_NS or more is the answer:
 * the worker has no core of its own, and more trips would say no more). */
static unsigned measure_link(struct dla_team *t)
{
    const double first = now_s();
    if (!ping_once(t, LINK_TIMEOUT_S)) {
        return LINK_NO_ANSWER_NS;
    }
    const double t0 = now_s();
    if ((t0 - first) * 1e9 >= LINK_BUSY_NS) {
        return (unsigned)((t0 - first) * 1e9);
    }
    for (unsigned k = 0; k < LINK_TRIPS; k++) {
        if (!ping_once(t, LINK_TIMEOUT_S)) {
            return LINK_NO_ANSWER_NS;
        }
    }
    return (unsigned)((now_s() - t0) * 1e9 / LINK_TRIPS);
}

/* Slow after two measurements in a row above LINK_SLOW_NS, fast again
 * after one below LINK_FAST_NS.  A round trip of LINK_BUSY_NS or more is
 * not the link: the worker shares the owner's core (a wake can put it
 * there; it answers only when the owner's spin yields, ~30 us) or has none
 * (another program's): measured again after LINK_PERIOD_BUSY_S, and only
 * LINK_BUSY_TRIES of those in a row count as one slow measurement. */
static void link_measured(struct dla_team *t, unsigned ns, double now)
{
    t->link_ns = ns;
    if (ns >= LINK_BUSY_NS && ++t->link_busy < LINK_BUSY_TRIES) {
        t->link_next = now + LINK_PERIOD_BUSY_S;
        return;
    }
    t->link_busy = 0;
    if (t->link_slow) {
        t->link_slow = ns >= LINK_FAST_NS;
    } else {
        t->link_strikes = ns > LINK_SLOW_NS ? t->link_strikes + 1 : 0;
        t->link_slow = t->link_strikes >= 2;
        t->link_strikes = t->link_slow ? 0 : t->link_strikes;
    }
    t->link_next = now + (t->link_slow ? LINK_PERIOD_SLOW_S : LINK_PERIOD_S);
}

/* A measurement with an awake worker, and the next one no sooner than
 * LINK_COST_SHARE times what this one cost. */
static void link_measure_now(struct dla_team *t)
{
    const double start = now_s();
    const unsigned ns = measure_link(t);
    const double end = now_s();
    link_measured(t, ns, end);
    const double spaced = end + LINK_COST_SHARE * (end - start);
    t->link_next = t->link_next > spaced ? t->link_next : spaced;
}

/* A measurement that is due: at once with a worker awake, else the
 * sleeping workers are asked (woken) and a later check measures. */
static void link_due(struct dla_team *t, double now)
{
    if (t->link_asked) {
        int gave_up = 0;
        if (answered(t, t->link_asked, t->link_asked_at, LINK_WAKE_S, &gave_up)) {
            t->link_asked = 0;
            link_measure_now(t);
        } else if (gave_up) {
            t->link_asked = 0;
            link_measured(t, LINK_NO_ANSWER_NS, now);
        }
        return;
    }
    if (atomic_load(&t->sleepers) != 0) {
        t->link_asked = ask_link(t);
        t->link_asked_at = now;
        return;
    }
    link_measure_now(t);
}

int dla_team_coupled(struct dla_team *t)
{
    if (!t) {
        return 0;
    }
    if (t->link_policy != DLA_LINK_MEASURE) {
        return t->link_policy == DLA_LINK_SHARE;
    }
    /* the owner's call alone: a task's worker drives jobs while TASK_RUNNING */
    if (++t->link_calls >= LINK_CHECK_EVERY &&
        atomic_load_explicit(&t->task, memory_order_relaxed) == TASK_NONE) {
        t->link_calls = 0;
        const double n = now_s();
        if (n >= t->link_next) {
            link_due(t, n);
        }
    }
    return !t->link_slow;
}

/* A job large enough to share in a slow spell (dla_team_join_work): the
 * link measured, slow, and still under LINK_BUSY_NS (a worker that has a
 * core of its own). */
static int solid_job(const struct dla_team *t, double work_s)
{
    const int slow = t->link_policy == DLA_LINK_SLOW ||
                     (t->link_policy == DLA_LINK_MEASURE && t->link_slow &&
                      t->link_ns < LINK_BUSY_NS);
    return slow && work_s >= DLA_TEAM_SOLID_JOB_S;
}

unsigned dla_team_link_ns(const struct dla_team *t)
{
    return t ? t->link_ns : 0;
}

void dla_team_set_link_policy(struct dla_team *t, enum dla_link_policy p)
{
    if (t) {
        t->link_policy = p;
        t->link_ns = 0;
        t->link_slow = 0;
        t->link_strikes = 0;
        t->link_busy = 0;
        /* not at once: a new worker may start on the owner's core, and the
         * scheduler takes a few ms to move it (two measurements of ~30 us) */
        t->link_next = now_s() + LINK_PERIOD_SLOW_S;
    }
}

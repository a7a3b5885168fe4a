/*
 * The worker team (src/common/team.h) that a device's engines and the
 * convolution kernel share: every item of a job runs exactly once, a job
 * never has more threads than its seats, and nothing of a job runs after
 * dla_team_run / dla_team_join returned (many short jobs in a row, as a
 * network's ~1,000 small layers make them).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/team.h"

struct count_job {
    atomic_uint *hits;
};

static void count_item(void *ctx, size_t i)
{
    struct count_job *j = ctx;
    atomic_fetch_add(&j->hits[i], 1);
}

/* Items of job after job: each exactly once, and all done at return. */
static void test_run_every_item_once(void **state)
{
    (void)state;
    struct dla_team *t = dla_team_create(4);
    assert_non_null(t);
    assert_int_equal(dla_team_threads(t), 4);
    enum { N = 257 };
    atomic_uint hits[N];
    struct count_job j = { hits };
    for (int job = 0; job < 2000; job++) {
        size_t n = (size_t)(job % N) + 1;
        for (size_t i = 0; i < N; i++) {
            atomic_init(&hits[i], 0);
        }
        dla_team_run(t, n, count_item, &j);
        for (size_t i = 0; i < N; i++) {
            assert_int_equal(atomic_load(&hits[i]), i < n ? 1u : 0u);
        }
    }
    dla_team_destroy(t);
}

/* Each thread's home share: seat s takes the items of home s front to
 * back, then those of the homes after it, never going back to a home it
 * left (as each thread ran its items: two threads' items of one home may
 * run in either order); the homes are the contiguous runs
 * n*h/H..n*(h+1)/H (team.h).  Holds whatever the timing (which thread
 * joins, and when). */
struct home_job {
    struct dla_team *t;
    atomic_uint stamp;
    unsigned order[64], seat[64];
};

static void home_item(void *ctx, size_t i)
{
    struct home_job *j = ctx;
    j->seat[i] = dla_team_seat(j->t);
    j->order[i] = atomic_fetch_add(&j->stamp, 1);
}

static size_t home_of(size_t i, size_t n, size_t homes)
{
    size_t h = 0;
    while (i >= n * (h + 1) / homes) {
        h++;
    }
    return h;
}

static void test_run_home_shares(void **state)
{
    (void)state;
    struct dla_team *t = dla_team_create(3);
    assert_non_null(t);
    assert_int_equal(dla_team_seat(t), 0); /* the owner */
    assert_int_equal(dla_team_seat(NULL), 0);
    static struct home_job j;
    j.t = t;
    for (int job = 0; job < 3000; job++) {
        const size_t n = (size_t)(job % 64) + 1, homes = n < 3 ? n : 3;
        atomic_init(&j.stamp, 0);
        for (size_t i = 0; i < n; i++) {
            j.seat[i] = j.order[i] = UINT32_MAX;
        }
        dla_team_run(t, n, home_item, &j);
        assert_int_equal(atomic_load(&j.stamp), n);
        for (size_t i = 0; i < n; i++) {
            assert_true(j.seat[i] < 3);
            for (size_t k = 0; k < n; k++) {
                if (j.seat[k] != j.seat[i] || j.order[k] <= j.order[i]) {
                    continue;
                }
                /* one thread's items: front to back within a home ... */
                if (home_of(k, n, homes) == home_of(i, n, homes)) {
                    assert_true(k > i);
                }
                /* ... and never again in a home it had left */
                const size_t s = j.seat[i] % homes;
                const size_t from = (home_of(i, n, homes) + homes - s) % homes;
                const size_t to = (home_of(k, n, homes) + homes - s) % homes;
                assert_true(to >= from);
            }
        }
    }
    dla_team_destroy(t);
}

/* Grouped items: every unit once for any group size (past n too), and the
 * group size keeps about the bytes asked while leaving four items a
 * thread. */
static void test_run_grouped(void **state)
{
    (void)state;
    struct dla_team *t = dla_team_create(2);
    assert_non_null(t);
    enum { N = 131 };
    atomic_uint hits[N];
    struct count_job j = { hits };
    for (size_t per = 0; per <= N + 2; per++) {
        for (size_t n = 0; n <= N; n += 13) {
            for (size_t i = 0; i < N; i++) {
                atomic_init(&hits[i], 0);
            }
            dla_team_run_grouped(t, n, per, count_item, &j);
            for (size_t i = 0; i < N; i++) {
                assert_int_equal(atomic_load(&hits[i]), i < n ? 1u : 0u);
            }
        }
    }
    /* 120 units of 392 bytes: 20 fit 8 KiB, 120 / (4 * 2) = 15 keep the spread */
    assert_int_equal(dla_team_units_per_item(t, 120, 392, 8192), 15);
    assert_int_equal(dla_team_units_per_item(t, 1000, 392, 8192), 20);
    assert_int_equal(dla_team_units_per_item(t, 5, 392, 8192), 1);
    assert_int_equal(dla_team_units_per_item(t, 1000, 9000, 8192), 1);
    assert_int_equal(dla_team_units_per_item(NULL, 1000, 392, 8192), 20);
    dla_team_destroy(t);
}

struct seat_job {
    atomic_uint inside, most, bodies;
};

static void seat_body(void *ctx)
{
    struct seat_job *j = ctx;
    unsigned now = atomic_fetch_add(&j->inside, 1) + 1;
    unsigned most = atomic_load(&j->most);
    while (now > most && !atomic_compare_exchange_weak(&j->most, &most, now)) {
    }
    for (volatile int spin = 0; spin < 20000; spin++) {
    }
    atomic_fetch_add(&j->bodies, 1);
    atomic_fetch_sub(&j->inside, 1);
}

/* A job with h helpers runs its body on at most h + 1 threads, always on
 * the caller, and no body is still running when the join returns. */
static void test_join_seats(void **state)
{
    (void)state;
    struct dla_team *t = dla_team_create(4);
    assert_non_null(t);
    for (size_t helpers = 0; helpers <= 5; helpers++) {
        for (int rep = 0; rep < 50; rep++) {
            struct seat_job j;
            atomic_init(&j.inside, 0);
            atomic_init(&j.most, 0);
            atomic_init(&j.bodies, 0);
            dla_team_join(t, helpers, seat_body, &j);
            assert_int_equal(atomic_load(&j.inside), 0);
            unsigned cap = (unsigned)(helpers < 3 ? helpers : 3) + 1;
            assert_true(atomic_load(&j.most) <= cap);
            assert_true(atomic_load(&j.bodies) >= 1 && atomic_load(&j.bodies) <= cap);
        }
    }
    dla_team_destroy(t);
}

struct quick_job {
    unsigned id;
    atomic_uint *current; /* the id of the job whose join is running */
    atomic_uint *stale;   /* bodies that ran outside their job's join */
    atomic_uint inside;
};

static void quick_body(void *ctx)
{
    struct quick_job *j = ctx;
    atomic_fetch_add(&j->inside, 1);
    if (atomic_load(j->current) != j->id) {
        atomic_fetch_add(j->stale, 1);
    }
    atomic_fetch_sub(&j->inside, 1);
}

/* Jobs the caller ends at once race the workers taking their seats with
 * the close (team.c: one atomic word): no worker body of a job runs after
 * its join returned, or with another job's context. */
static void test_close_race(void **state)
{
    (void)state;
    struct dla_team *t = dla_team_create(4);
    assert_non_null(t);
    atomic_uint current, stale;
    atomic_init(&current, 0);
    atomic_init(&stale, 0);
    for (unsigned id = 1; id <= 20000; id++) {
        struct quick_job j = { id, &current, &stale, 0 };
        atomic_init(&j.inside, 0);
        atomic_store(&current, id);
        dla_team_join(t, 1 + id % 3, quick_body, &j);
        atomic_store(&current, 0);
        assert_int_equal(atomic_load(&j.inside), 0);
    }
    assert_int_equal(atomic_load(&stale), 0);
    dla_team_destroy(t);
}

struct wait_job {
    pthread_t caller;
    atomic_uint workers;
};

/* The caller's part waits (up to 10 s) until a worker has joined. */
static void wait_body(void *ctx)
{
    struct wait_job *j = ctx;
    if (!pthread_equal(pthread_self(), j->caller)) {
        atomic_fetch_add(&j->workers, 1);
        return;
    }
    for (int ms = 0; ms < 10000 && atomic_load(&j->workers) == 0; ms++) {
        nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
    }
}

/* Workers that spun out and sleep (team.h: after 1 ms without a job) are
 * woken by the next job, also when jobs that closed before they woke came
 * first (a woken worker that found its job closed slept on, round 14). */
static void test_sleepers_wake(void **state)
{
    (void)state;
    struct dla_team *t = dla_team_create(3);
    assert_non_null(t);
    atomic_uint none, stale;
    atomic_init(&none, 0);
    atomic_init(&stale, 0);
    for (int rep = 0; rep < 3; rep++) {
        nanosleep(&(struct timespec){ 0, 20000000 }, NULL); /* 20 ms: workers asleep */
        for (unsigned q = 0; q < (unsigned)rep * 5; q++) { /* jobs closed at once */
            struct quick_job j = { 0, &none, &stale, 0 };
            atomic_init(&j.inside, 0);
            dla_team_join(t, 2, quick_body, &j);
        }
        struct wait_job w;
        w.caller = pthread_self();
        atomic_init(&w.workers, 0);
        dla_team_join(t, 2, wait_body, &w);
        assert_true(atomic_load(&w.workers) >= 1 && atomic_load(&w.workers) <= 2);
    }
    assert_int_equal(atomic_load(&stale), 0);
    dla_team_destroy(t);
}

/* dla_spin_wait counts its steps (it yields only after many). */
static void test_spin_wait(void **state)
{
    (void)state;
    unsigned spins = 0;
    for (unsigned i = 0; i < DLA_SPIN_YIELD_AFTER + 3; i++) {
        dla_spin_wait(&spins);
    }
    assert_int_equal(spins, DLA_SPIN_YIELD_AFTER + 3);
}

/* One thread, or no team: the caller does everything. */
static void test_no_team(void **state)
{
    (void)state;
    assert_null(dla_team_create(1));
    assert_null(dla_team_create(0));
    assert_int_equal(dla_team_threads(NULL), 1);
    atomic_uint hits[3];
    for (int i = 0; i < 3; i++) {
        atomic_init(&hits[i], 0);
    }
    struct count_job j = { hits };
    dla_team_run(NULL, 3, count_item, &j);
    dla_team_run(NULL, 0, count_item, &j);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(atomic_load(&hits[i]), 1u);
    }
    dla_team_destroy(NULL);
}

/* A spawned task: it runs on a worker (another thread than the spawner),
 * drives jobs of its own, and every item of them runs exactly once; the
 * jobs of unknown size (dla_team_run) stay on the task's thread, the
 * solid ones (dla_team_join_work) and the local ones (dla_team_run_local)
 * the spawner may join while it waits; a second spawn while one is open,
 * or on no team, is refused. */
struct task_ctx {
    struct dla_team *t;
    pthread_t spawner;
    int on_other_thread;
    int jobs;
    atomic_uint *hits;
    size_t n;
    pthread_t task_thread;
    atomic_uint elsewhere; /* dla_team_run items not on the task's thread */
    atomic_size_t next;    /* the solid job's items */
};

static void task_item(void *ctx, size_t i)
{
    struct task_ctx *c = ctx;
    atomic_fetch_add(&c->hits[i], 1);
    if (!pthread_equal(pthread_self(), c->task_thread)) {
        atomic_fetch_add(&c->elsewhere, 1);
    }
}

static void task_local_item(void *ctx, size_t i)
{
    struct task_ctx *c = ctx;
    atomic_fetch_add(&c->hits[i], 1);
}

static void task_solid_body(void *ctx)
{
    struct task_ctx *c = ctx;
    for (size_t i; (i = atomic_fetch_add(&c->next, 1)) < c->n;) {
        atomic_fetch_add(&c->hits[i], 1);
    }
}

static void task_body(void *ctx)
{
    struct task_ctx *c = ctx;
    c->task_thread = pthread_self();
    c->on_other_thread = !pthread_equal(pthread_self(), c->spawner);
    for (int k = 0; k < c->jobs; k++) {
        if (k % 2) {
            atomic_store(&c->next, 0);
            dla_team_join_work(c->t, 1, DLA_TEAM_SOLID_JOB_S, task_solid_body, c);
        } else if (k % 4 == 2) {
            dla_team_run_local(c->t, c->n, task_local_item, c);
        } else {
            dla_team_run(c->t, c->n, task_item, c);
        }
    }
}

static void test_spawned_task(void **state)
{
    (void)state;
    for (unsigned threads = 2; threads <= 3; threads++) {
        struct dla_team *t = dla_team_create(threads);
        assert_non_null(t);
        enum { N = 64, JOBS = 50 };
        atomic_uint hits[N];
        for (int round = 0; round < 200; round++) {
            for (size_t i = 0; i < N; i++) {
                atomic_init(&hits[i], 0);
            }
            struct task_ctx c = { t, pthread_self(), 0, JOBS, hits, (size_t)(round % N) + 1,
                                  pthread_self(), 0, 0 };
            atomic_init(&c.elsewhere, 0);
            atomic_init(&c.next, 0);
            assert_int_equal(dla_team_spawn(t, task_body, &c), 0);
            if (round % 2) { /* the spawner busy elsewhere: the worker does all */
                while (!dla_team_spawned_done(t)) {
                }
            }
            dla_team_help_until_done(t);
            assert_true(dla_team_spawned_done(t));
            assert_true(c.on_other_thread);
            assert_int_equal(atomic_load(&c.elsewhere), 0);
            for (size_t i = 0; i < N; i++) {
                assert_int_equal(atomic_load(&hits[i]), i < c.n ? (unsigned)JOBS : 0u);
            }
        }
        /* one task at a time */
        struct task_ctx slow = { t, pthread_self(), 0, 2000, hits, N, pthread_self(), 0, 0 };
        atomic_init(&slow.elsewhere, 0);
        atomic_init(&slow.next, 0);
        assert_int_equal(dla_team_spawn(t, task_body, &slow), 0);
        assert_int_equal(dla_team_spawn(t, task_body, &slow), -1);
        dla_team_help_until_done(t);
        dla_team_destroy(t);
    }
    assert_int_equal(dla_team_spawn(NULL, task_body, NULL), -1);
    assert_true(dla_team_spawned_done(NULL));
}

/* dla_team_run's items on the threads that ran them. */
struct where_job {
    pthread_t caller;
    atomic_uint elsewhere;
};

static void where_item(void *ctx, size_t i)
{
    (void)i;
    struct where_job *j = ctx;
    if (!pthread_equal(pthread_self(), j->caller)) {
        atomic_fetch_add(&j->elsewhere, 1);
    }
    for (volatile int k = 0; k < 2000; k++) {
    }
}

static void idle_task(void *ctx)
{
    (void)ctx;
}

/* A team that must not share (the policy a slow link gives a device):
 * every item on the caller, no task handed out; sharing again after. */
static void test_link_policy(void **state)
{
    (void)state;
    struct dla_team *t = dla_team_create(2);
    assert_non_null(t);
    assert_true(dla_team_coupled(t)); /* a new team shares */
    dla_team_set_link_policy(t, DLA_LINK_ALONE);
    assert_false(dla_team_coupled(t));
    struct where_job j = { pthread_self(), 0 };
    for (int k = 0; k < 200; k++) {
        dla_team_run(t, 64, where_item, &j);
    }
    assert_int_equal(atomic_load(&j.elsewhere), 0);
    assert_int_equal(dla_team_spawn(t, idle_task, NULL), -1);
    dla_team_set_link_policy(t, DLA_LINK_SHARE);
    assert_true(dla_team_coupled(t));
    assert_int_equal(dla_team_spawn(t, idle_task, NULL), 0);
    dla_team_help_until_done(t);
    dla_team_destroy(t);
    assert_false(dla_team_coupled(NULL));
    assert_int_equal(dla_team_link_ns(NULL), 0);
}

/* dla_team_prologue's function: where and when it ran. */
struct prologue_probe {
    pthread_t caller;
    atomic_uint runs, elsewhere, bodies_before; /* bodies_before: the caller's ran first */
    atomic_uint caller_bodies;
};

static void prologue_fn(void *ctx)
{
    struct prologue_probe *p = ctx;
    atomic_fetch_add(&p->runs, 1);
    if (!pthread_equal(pthread_self(), p->caller)) {
        atomic_fetch_add(&p->elsewhere, 1);
    }
    atomic_fetch_add(&p->bodies_before, atomic_load(&p->caller_bodies));
}

static void prologue_body(void *ctx)
{
    struct prologue_probe *p = ctx;
    if (pthread_equal(pthread_self(), p->caller)) {
        atomic_fetch_add(&p->caller_bodies, 1);
    }
}

/* A prologue runs once, on the owner's thread, in the next job it shares
 * and before its own share of it; a job run on the caller alone (no team)
 * leaves it armed; cleared, it runs no more. */
static void test_prologue(void **state)
{
    (void)state;
    struct dla_team *t = dla_team_create(2);
    assert_non_null(t);
    dla_team_set_link_policy(t, DLA_LINK_SHARE); /* (every job shared, however slow the link) */
    for (int rep = 0; rep < 100; rep++) {
        struct prologue_probe p = { pthread_self(), 0, 0, 0, 0 };
        dla_team_prologue(t, prologue_fn, &p);
        dla_team_join(NULL, 1, prologue_body, &p); /* no team: not a shared job */
        assert_int_equal(atomic_load(&p.runs), 0);
        dla_team_join(t, 1, prologue_body, &p);
        dla_team_join(t, 1, prologue_body, &p);
        assert_int_equal(atomic_load(&p.runs), 1);
        assert_int_equal(atomic_load(&p.elsewhere), 0);
        assert_int_equal(atomic_load(&p.bodies_before), 1); /* the no-team job's body only */
        dla_team_prologue(t, prologue_fn, &p);
        dla_team_prologue(t, NULL, NULL);
        dla_team_join(t, 1, prologue_body, &p);
        assert_int_equal(atomic_load(&p.runs), 1);
    }
    dla_team_prologue(NULL, prologue_fn, NULL); /* (no team: nothing) */
    dla_team_destroy(t);
}

static double secs(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* dla_team_join_work's job: which threads ran it. */
struct solid_job {
    pthread_t caller;
    atomic_uint runs, elsewhere;
};

static void solid_body(void *ctx)
{
    struct solid_job *j = ctx;
    atomic_fetch_add(&j->runs, 1);
    if (!pthread_equal(pthread_self(), j->caller)) {
        atomic_fetch_add(&j->elsewhere, 1);
    }
    for (volatile int k = 0; k < 20000; k++) { /* long enough for a worker to join */
    }
}

/* A slow link (DLA_LINK_SLOW holds what a slow measurement gives): small
 * jobs and tasks stay on the caller, a job of DLA_TEAM_SOLID_JOB_S or more
 * is shared (a worker joins one within 5 s); never under
 * DLA_LINK_ALONE. */
static void test_link_slow_solid_jobs(void **state)
{
    (void)state;
    struct dla_team *t = dla_team_create(2);
    assert_non_null(t);
    dla_team_set_link_policy(t, DLA_LINK_SLOW);
    assert_false(dla_team_coupled(t));
    assert_int_equal(dla_team_spawn(t, idle_task, NULL), -1);
    struct solid_job small = { pthread_self(), 0, 0 }, solid = { pthread_self(), 0, 0 };
    for (int k = 0; k < 200; k++) {
        dla_team_join_work(t, 1, DLA_TEAM_SOLID_JOB_S / 2, solid_body, &small);
    }
    assert_int_equal(atomic_load(&small.runs), 200u);
    assert_int_equal(atomic_load(&small.elsewhere), 0);
    const double t0 = secs(); /* (a loaded host may keep the worker off a core a while) */
    while (atomic_load(&solid.elsewhere) == 0 && secs() - t0 < 5.0) {
        dla_team_join_work(t, 1, DLA_TEAM_SOLID_JOB_S, solid_body, &solid);
    }
    assert_true(atomic_load(&solid.elsewhere) > 0);
    dla_team_set_link_policy(t, DLA_LINK_ALONE);
    struct solid_job alone = { pthread_self(), 0, 0 };
    for (int k = 0; k < 200; k++) {
        dla_team_join_work(t, 1, 1.0, solid_body, &alone);
    }
    assert_int_equal(atomic_load(&alone.elsewhere), 0);
    dla_team_destroy(t);
}

/* A measuring team: jobs run to the end whatever it decides, and it
 * measures the link between the cores, also when the only worker has gone
 * to sleep (1 ms without a job) and the owner's checks alone must wake
 * it.  A loaded host may keep the worker off a core for a while (then a
 * measurement says "no answer", 1,000,000 ns), so each part waits up to 5
 * s for a worker's answer. */
static void test_link_measured(void **state)
{
    (void)state;
    struct dla_team *t = dla_team_create(2);
    assert_non_null(t);
    dla_team_set_link_policy(t, DLA_LINK_MEASURE);
    assert_int_equal(dla_team_link_ns(t), 0); /* none yet */
    enum { N = 97 };
    atomic_uint hits[N];
    struct count_job c = { hits };
    const double t0 = secs();
    unsigned ns = 0;
    while ((ns == 0 || ns >= 1000000u) && secs() - t0 < 5.0) {
        for (size_t i = 0; i < N; i++) {
            atomic_init(&hits[i], 0);
        }
        dla_team_run(t, N, count_item, &c);
        for (size_t i = 0; i < N; i++) {
            assert_int_equal(atomic_load(&hits[i]), 1u);
        }
        ns = dla_team_link_ns(t);
    }
    assert_true(ns > 0 && ns < 1000000u);

    struct timespec nap = { 0, 5000000 }; /* 5 ms: the worker sleeps */
    nanosleep(&nap, NULL);
    dla_team_set_link_policy(t, DLA_LINK_MEASURE); /* a new measurement */
    const double t1 = secs();
    ns = 0;
    while ((ns == 0 || ns >= 1000000u) && secs() - t1 < 5.0) {
        (void)dla_team_coupled(t);
        ns = dla_team_link_ns(t);
    }
    assert_true(ns > 0 && ns < 1000000u);
    dla_team_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_every_item_once),
        cmocka_unit_test(test_run_grouped),
        cmocka_unit_test(test_run_home_shares),
        cmocka_unit_test(test_join_seats),
        cmocka_unit_test(test_prologue),
        cmocka_unit_test(test_close_race),
        cmocka_unit_test(test_sleepers_wake),
        cmocka_unit_test(test_spin_wait),
        cmocka_unit_test(test_no_team),
        cmocka_unit_test(test_spawned_task),
        cmocka_unit_test(test_link_policy),
        cmocka_unit_test(test_link_measured),
        cmocka_unit_test(test_link_slow_solid_jobs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

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

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_every_item_once),
        cmocka_unit_test(test_join_seats),
        cmocka_unit_test(test_no_team),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

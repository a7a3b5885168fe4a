/*
 * Views over several pages of the built-in memory (src/sim/core/mem.h
 * dla_mem_port_view_span), which let a convolution read its input where the
 * memory keeps it: a view is the range's own bytes or NULL, never another
 * range's; pages of one 2 MiB region of addresses follow each other in the
 * host's memory whatever order they were written in; a range over two
 * regions, an absent page or a page of zeros only gets NULL; memory written
 * at scattered addresses, past the regions mem.c maps for it (it carves
 * those pages instead, which these tests cannot see), keeps its bytes.  Under AddressSanitizer every page is an allocation of its
 * own (mem.c MEM_SLABS): every view over two pages is NULL there, and the
 * tests check only that.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "sim/core/mem.h"

#define PAGE DLA_MEM_PAGE_BYTES
#define REGION (32ull * PAGE)  /* mem.c SLAB_BYTES */
#define BASE 0x40000000ull     /* a region's start */

#if defined(__SANITIZE_ADDRESS__)
#define PAGE_ALLOCS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PAGE_ALLOCS 1
#endif
#endif
#ifndef PAGE_ALLOCS
#define PAGE_ALLOCS 0
#endif

static struct dla_mem_port open_port(void)
{
    struct dla_mem_port p;
    memset(&p, 0, sizeof(p));
    p.sparse = dla_sparse_mem_create(0, NULL);
    assert_non_null(p.sparse);
    p.limit = 1ull << 40;
    p.present = 1;
    return p;
}

/* Byte i of the test pattern at address a. */
static uint8_t pattern(uint64_t a)
{
    return (uint8_t)(1u + (a * 2654435761u >> 24) % 251u);
}

static void write_pattern(struct dla_mem_port *p, uint64_t addr, size_t len)
{
    uint8_t *buf = malloc(len);
    assert_non_null(buf);
    for (size_t i = 0; i < len; i++) {
        buf[i] = pattern(addr + i);
    }
    assert_int_equal(dla_mem_port_write(p, addr, buf, len, NULL, 0), 0);
    free(buf);
}

/* The view of [addr, addr + len), checked byte by byte when not NULL. */
static const uint8_t *checked_view(const struct dla_mem_port *p, uint64_t addr, size_t len)
{
    const uint8_t *v = dla_mem_port_view_span(p, addr, len);
    for (size_t i = 0; v != NULL && i < len; i++) {
        if (v[i] != pattern(addr + i)) {
            fail_msg("view of 0x%llx: byte %zu is %u, not %u", (unsigned long long)addr, i,
                     v[i], pattern(addr + i));
        }
    }
    return v;
}

/* The pages of a region written out of order (the last first, then every
 * other one) still make one range of the host's memory. */
static void test_region_pages_in_order(void **state)
{
    (void)state;
    struct dla_mem_port p = open_port();
    const unsigned order[] = { 31, 0, 2, 4, 1, 3, 30, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
                               15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29 };
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        write_pattern(&p, BASE + order[k] * PAGE, PAGE);
    }
    const int joined = !PAGE_ALLOCS;
    /* inside one page: a view as dla_mem_port_view's */
    assert_non_null(checked_view(&p, BASE + 5 * PAGE + 100, 4000));
    assert_int_equal(checked_view(&p, BASE + 100, 3 * PAGE) != NULL, joined);
    assert_int_equal(checked_view(&p, BASE + 29 * PAGE + 7, 3 * PAGE - 7) != NULL, joined);
    assert_int_equal(checked_view(&p, BASE, REGION) != NULL, joined);
    dla_sparse_mem_destroy(p.sparse);
}

/* NULL over two regions, over a page never written, over a page of zeros
 * (it holds no data) and past the port's limit. */
static void test_span_refused(void **state)
{
    (void)state;
    struct dla_mem_port p = open_port();
    write_pattern(&p, BASE + REGION - 2 * PAGE, 4 * PAGE); /* two regions' pages */
    assert_null(checked_view(&p, BASE + REGION - PAGE, 2 * PAGE));
    assert_int_equal(checked_view(&p, BASE + REGION - 2 * PAGE, 2 * PAGE) != NULL,
                     !PAGE_ALLOCS);
    assert_int_equal(checked_view(&p, BASE + REGION, 2 * PAGE) != NULL, !PAGE_ALLOCS);
    /* a hole: page 3 of the next region never written */
    assert_null(checked_view(&p, BASE + REGION + PAGE, 3 * PAGE));
    /* zeros: the page holds no data, the range reads as zeros */
    uint8_t *zeros = calloc(PAGE, 1);
    assert_non_null(zeros);
    assert_int_equal(dla_mem_port_write(&p, BASE + REGION + 2 * PAGE, zeros, PAGE, NULL, 0), 0);
    assert_null(checked_view(&p, BASE + REGION + PAGE, 2 * PAGE));
    free(zeros);
    assert_null(checked_view(&p, BASE, 0));
    p.limit = BASE + REGION;
    assert_null(checked_view(&p, BASE + REGION - 2 * PAGE, 2 * PAGE + 1));
    dla_sparse_mem_destroy(p.sparse);
}

/* A page a region, at many scattered addresses (past mem.c's first
 * REGION_FREE regions, pages carved in the order they come): every byte
 * written is still there, and views inside one page are still given. */
static void test_scattered_pages(void **state)
{
    (void)state;
    struct dla_mem_port p = open_port();
    enum { N = 200 };
    for (uint64_t k = 0; k < N; k++) {
        write_pattern(&p, BASE + k * 7 * REGION + (k % 32) * PAGE + 64, 256);
    }
    for (uint64_t k = 0; k < N; k++) {
        assert_non_null(checked_view(&p, BASE + k * 7 * REGION + (k % 32) * PAGE + 64, 256));
        uint8_t back[256];
        assert_int_equal(dla_mem_port_read(&p, BASE + k * 7 * REGION + (k % 32) * PAGE + 64,
                                           back, sizeof back, NULL, 0),
                         0);
        for (size_t i = 0; i < sizeof back; i++) {
            assert_int_equal(back[i], pattern(BASE + k * 7 * REGION + (k % 32) * PAGE + 64 + i));
        }
    }
    dla_sparse_mem_destroy(p.sparse);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_region_pages_in_order),
        cmocka_unit_test(test_span_refused),
        cmocka_unit_test(test_scattered_pages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

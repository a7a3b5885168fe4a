/*
 * The built-in memory's write generations (src/sim/core/mem.h
 * dla_mem_port_generation / dla_mem_port_unchanged), which let CSC's packed
 * weight cache skip comparing a weight stream with its copy: a range is
 * "unchanged since G" only if no write after G reached any of its bytes, so
 * every write into it, of any size, zeros included, must be seen; writes
 * next to it may not matter; memory behind callbacks is never vouched for.
 * Also the in-place write (dla_mem_port_write_view / dla_mem_port_wrote):
 * lent only where a write could neither fail nor allocate, and seen as a
 * write once made.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "sim/core/mem.h"

#define BASE 0x80004a00ull /* a range that starts and ends inside pages */
#define LEN 5000u

struct mem {
    struct dla_mem_port port;
};

static void mem_open(struct mem *m)
{
    memset(m, 0, sizeof(*m));
    m->port.sparse = dla_sparse_mem_create(0, NULL);
    assert_non_null(m->port.sparse);
    m->port.limit = 1ull << 32;
    m->port.present = 1;
}

static void wr(struct mem *m, uint64_t addr, const void *p, size_t n)
{
    assert_int_equal(dla_mem_port_write(&m->port, addr, p, n, NULL, 0), 0);
}

static void wr_byte(struct mem *m, uint64_t addr, uint8_t v)
{
    wr(m, addr, &v, 1);
}

/* A range full of non-zero bytes, and the generation after writing it. */
static uint64_t fill(struct mem *m)
{
    uint8_t *buf = malloc(LEN);
    assert_non_null(buf);
    for (size_t i = 0; i < LEN; i++) {
        buf[i] = (uint8_t)(1 + i % 251);
    }
    wr(m, BASE, buf, LEN);
    free(buf);
    uint64_t g = dla_mem_port_generation(&m->port);
    assert_true(g != 0);
    return g;
}

static int unchanged(struct mem *m, uint64_t g)
{
    return dla_mem_port_unchanged(&m->port, BASE, LEN, g);
}

/* Every single byte of the range, and each end, written alone (with the
 * value it holds, with another, with zero) must be seen. */
static void test_every_byte_write_seen(void **state)
{
    (void)state;
    struct mem m;
    mem_open(&m);
    for (size_t i = 0; i < LEN; i += (i < 300 || i > LEN - 300) ? 1 : 97) {
        uint64_t g = fill(&m);
        assert_true(unchanged(&m, g));
        wr_byte(&m, BASE + i, (uint8_t)(i % 3 == 0 ? 0 : i % 3 == 1 ? 1 + i % 251 : 0x5a));
        if (unchanged(&m, g)) {
            fail_msg("a 1-byte write at offset %zu of the range was not seen", i);
        }
    }
    dla_sparse_mem_destroy(m.port.sparse);
}

/* Writes outside the range's blocks leave it unchanged; one reaching into
 * it (crossing its start or end) does not; neither does a later look
 * forget an earlier write. */
static void test_writes_around(void **state)
{
    (void)state;
    struct mem m;
    mem_open(&m);
    uint64_t g = fill(&m);
    uint8_t junk[600];
    memset(junk, 0x77, sizeof(junk));
    wr(&m, BASE - 0x1000, junk, sizeof(junk));  /* another page */
    wr(&m, BASE + LEN + 0x200, junk, sizeof(junk)); /* past its last block */
    wr(&m, 0x90000000ull, junk, sizeof(junk));
    assert_true(unchanged(&m, g));
    wr(&m, BASE - 10, junk, 11); /* its first byte */
    assert_false(unchanged(&m, g));
    assert_false(unchanged(&m, g)); /* still */
    g = fill(&m);
    wr(&m, BASE + LEN - 1, junk, 100); /* its last byte */
    assert_false(unchanged(&m, g));
    g = fill(&m);
    assert_false(dla_mem_port_unchanged(&m.port, BASE, LEN, g - 1)); /* the fill itself */
    assert_true(dla_mem_port_unchanged(&m.port, BASE, 0, g));
    dla_sparse_mem_destroy(m.port.sparse);
}

/* A range over several pages and over several of the regions inside each
 * (mem.c's regions are smaller than its pages): a one-byte write in any
 * region of it, at a region's first or last byte or inside, is seen; one
 * just outside it is not. */
static void test_regions_inside_pages(void **state)
{
    (void)state;
    struct mem m;
    mem_open(&m);
    const uint64_t a = 0x8000c100ull, n = 0x2c000u; /* three pages, a dozen regions */
    uint8_t *buf = malloc(n);
    assert_non_null(buf);
    memset(buf, 0x33, n);
    for (uint64_t off = 0; off < n; off += 0x1f00u) {
        wr(&m, a, buf, n);
        uint64_t g = dla_mem_port_generation(&m.port);
        assert_true(dla_mem_port_unchanged(&m.port, a, n, g));
        wr_byte(&m, a + off, 0x44);
        if (dla_mem_port_unchanged(&m.port, a, n, g)) {
            fail_msg("a 1-byte write at offset 0x%llx of the range was not seen",
                     (unsigned long long)off);
        }
        /* the rest of the range after the byte's 256-byte block */
        const uint64_t after = ((a + off) | 0xffu) + 1u;
        assert_true(dla_mem_port_unchanged(&m.port, after, a + n - after, g));
    }
    for (uint64_t r = (a | 0x3fffu) + 1u; r < a + n; r += 0x4000u) { /* each region's ends */
        wr(&m, a, buf, n);
        uint64_t g = dla_mem_port_generation(&m.port);
        wr_byte(&m, r - 1u, 0x55);
        assert_false(dla_mem_port_unchanged(&m.port, a, n, g));
        g = dla_mem_port_generation(&m.port);
        wr_byte(&m, r, 0x55);
        assert_false(dla_mem_port_unchanged(&m.port, a, n, g));
    }
    wr(&m, a, buf, n);
    uint64_t g = dla_mem_port_generation(&m.port);
    wr_byte(&m, a - 1u, 0x66);
    wr_byte(&m, a + n + 0x100u, 0x66);
    assert_true(dla_mem_port_unchanged(&m.port, a, n, g));
    free(buf);
    dla_sparse_mem_destroy(m.port.sparse);
}

/* A write of a whole 64 KiB page, through dla_mem_port_write or in place
 * (mem.c stamps the page once, not its blocks): seen by every part of the
 * page, over the blocks' older stamps of smaller writes made before it, and
 * no longer once checked from its own generation on; a smaller write after
 * it is seen in its block alone. */
static void test_whole_page_writes(void **state)
{
    (void)state;
    struct mem m;
    mem_open(&m);
    const uint64_t page = 0x80020000ull, P = 0x10000u;
    uint8_t *buf = malloc(P);
    assert_non_null(buf);
    memset(buf, 0x21, P);
    for (int in_place = 0; in_place < 2; in_place++) {
        wr(&m, page + 0x300u, buf, 0x200u); /* blocks stamped one by one first */
        const uint64_t before = dla_mem_port_generation(&m.port);
        if (in_place) {
            uint8_t *v = dla_mem_port_write_view(&m.port, page, P);
            assert_non_null(v);
            memset(v, 0x43, P);
            dla_mem_port_wrote(&m.port, page, P);
        } else {
            wr(&m, page, buf, P);
        }
        const uint64_t g = dla_mem_port_generation(&m.port);
        assert_true(g > before);
        for (uint64_t off = 0; off < P; off += 0x1f40u) { /* ranges all over the page */
            const uint64_t n = P - off < 0x180u ? P - off : 0x180u;
            if (dla_mem_port_unchanged(&m.port, page + off, n, before)) {
                fail_msg("a whole-page write (in place: %d) was not seen at offset 0x%llx",
                         in_place, (unsigned long long)off);
            }
            assert_true(dla_mem_port_unchanged(&m.port, page + off, n, g));
        }
        assert_false(dla_mem_port_unchanged(&m.port, page + 0x300u, 0x10u, before));
        wr_byte(&m, page + 0x8000u, 0x65);
        assert_false(dla_mem_port_unchanged(&m.port, page + 0x8000u, 1, g));
        assert_true(dla_mem_port_unchanged(&m.port, page + 0x8100u, 0x100u, g));
        assert_true(dla_mem_port_unchanged(&m.port, page, 0x8000u, g));
    }
    free(buf);
    dla_sparse_mem_destroy(m.port.sparse);
}

/* Zeros over never-written memory change nothing it reads; a first
 * non-zero byte there does. */
static void test_zero_pages(void **state)
{
    (void)state;
    struct mem m;
    mem_open(&m);
    uint64_t g = dla_mem_port_generation(&m.port);
    uint8_t zeros[64] = {0};
    wr(&m, BASE, zeros, sizeof(zeros));
    assert_true(unchanged(&m, g));
    wr_byte(&m, BASE + LEN - 1, 3);
    assert_false(unchanged(&m, g));
    dla_sparse_mem_destroy(m.port.sparse);
}

static int refuse(void *opaque, uint64_t addr, void *dst, size_t len)
{
    (void)opaque, (void)addr, (void)dst, (void)len;
    return DLASIM_ERR_MEM;
}

static int refuse_w(void *opaque, uint64_t addr, const void *src, size_t len)
{
    (void)opaque, (void)addr, (void)src, (void)len;
    return DLASIM_ERR_MEM;
}

/* Memory behind callbacks, an absent port, a range past the address space:
 * no generation, never unchanged, never a sure read. */
static void test_untracked(void **state)
{
    (void)state;
    struct dlasim_mem_ops ops;
    memset(&ops, 0, sizeof(ops));
    ops.read = refuse;
    ops.write = refuse_w;
    struct dla_mem_port cb = {&ops, NULL, NULL, 1ull << 32, 1};
    assert_int_equal(dla_mem_port_generation(&cb), 0);
    assert_false(dla_mem_port_unchanged(&cb, BASE, LEN, 1));
    assert_false(dla_mem_port_can_read(&cb, BASE, LEN));
    struct dla_mem_port none = {NULL, NULL, NULL, 1ull << 32, 0};
    assert_int_equal(dla_mem_port_generation(&none), 0);
    assert_false(dla_mem_port_can_read(&none, BASE, LEN));
    struct mem m;
    mem_open(&m);
    uint64_t g = fill(&m);
    assert_true(dla_mem_port_can_read(&m.port, BASE, LEN));
    assert_false(dla_mem_port_can_read(&m.port, (1ull << 32) - 4, 8));
    assert_false(dla_mem_port_unchanged(&m.port, (1ull << 32) - 4, 8, g));
    assert_false(dla_mem_port_unchanged(&m.port, BASE, LEN, 0));
    dla_sparse_mem_destroy(m.port.sparse);
    /* strict memory: a read may find a never-written byte */
    m.port.sparse = dla_sparse_mem_create(1, NULL);
    assert_non_null(m.port.sparse);
    assert_false(dla_mem_port_can_read(&m.port, BASE, LEN));
    dla_sparse_mem_destroy(m.port.sparse);
}

/* The in-place write: a page's own bytes where it holds data (a range in
 * one page, plain memory, in range), the bytes then read back, the write
 * seen by the generations; NULL and nothing changed elsewhere: a range
 * across pages, an empty one, a page never written or written only with
 * zeros (a write there may allocate: the budget's), past the address
 * space, strict memory, callbacks. */
static void test_write_view(void **state)
{
    (void)state;
    struct mem m;
    mem_open(&m);
    uint64_t g = fill(&m);
    const uint64_t a = BASE + 0x100; /* inside the range's first page */
    uint8_t *v = dla_mem_port_write_view(&m.port, a, 64);
    assert_non_null(v);
    assert_int_equal(v[0], (uint8_t)(1 + 0x100 % 251)); /* the page's own bytes */
    assert_true(unchanged(&m, g)); /* a view alone writes nothing */
    memset(v, 0xa5, 64);
    dla_mem_port_wrote(&m.port, a, 64);
    assert_false(unchanged(&m, g));
    uint8_t back[64], want[64];
    memset(want, 0xa5, sizeof(want));
    assert_int_equal(dla_mem_port_read(&m.port, a, back, sizeof(back), NULL, 0), 0);
    assert_memory_equal(back, want, sizeof(want));
    /* the last byte of a page, not the next page's first */
    const uint64_t end = (BASE | (DLA_MEM_PAGE_BYTES - 1ull)) - 7;
    assert_non_null(dla_mem_port_write_view(&m.port, end, 8));
    assert_null(dla_mem_port_write_view(&m.port, end, 9));
    assert_null(dla_mem_port_write_view(&m.port, a, 0));
    g = dla_mem_port_generation(&m.port);
    assert_null(dla_mem_port_write_view(&m.port, 0x90000000ull, 16)); /* never written */
    uint8_t zeros[64] = {0};
    wr(&m, 0x90001000ull, zeros, sizeof(zeros)); /* zeros keep no data */
    assert_null(dla_mem_port_write_view(&m.port, 0x90001000ull, 16));
    dla_mem_port_wrote(&m.port, 0x90000000ull, 16); /* no view: no write */
    assert_int_equal(dla_mem_port_generation(&m.port), g + 1); /* (the zeros' write) */
    assert_null(dla_mem_port_write_view(&m.port, (1ull << 32) - 4, 8));
    dla_sparse_mem_destroy(m.port.sparse);
    m.port.sparse = dla_sparse_mem_create(1, NULL); /* strict */
    assert_non_null(m.port.sparse);
    fill(&m);
    assert_null(dla_mem_port_write_view(&m.port, a, 64));
    dla_sparse_mem_destroy(m.port.sparse);
    struct dlasim_mem_ops ops;
    memset(&ops, 0, sizeof(ops));
    ops.read = refuse;
    ops.write = refuse_w;
    struct dla_mem_port cb = {&ops, NULL, NULL, 1ull << 32, 1};
    assert_null(dla_mem_port_write_view(&cb, a, 64));
}

/* A range of several MiB (a network's weights): a write in a region it
 * does not cover but whose summary it shares (1 GiB away), or before and
 * after it, leaves it unchanged; a write into its middle or its last
 * region's last byte is seen. */
static void test_large_ranges(void **state)
{
    (void)state;
    struct mem m;
    mem_open(&m);
    const uint64_t base = 0x10080000ull, len = 3u << 20; /* 3 MiB, not 1 MiB-aligned */
    uint8_t *buf = malloc(len);
    assert_non_null(buf);
    memset(buf, 0x5a, len);
    wr(&m, base, buf, len);
    free(buf);
    uint64_t g = dla_mem_port_generation(&m.port);
    assert_true(dla_mem_port_unchanged(&m.port, base, len, g));
    wr_byte(&m, base + (1ull << 30), 1); /* the same summary slot, not the range */
    wr_byte(&m, base - 1, 2);
    wr_byte(&m, base + len, 3);
    assert_true(dla_mem_port_unchanged(&m.port, base, len, g));
    wr_byte(&m, base + len / 2, 0x5a); /* the byte it held: still a write */
    assert_false(dla_mem_port_unchanged(&m.port, base, len, g));
    g = dla_mem_port_generation(&m.port);
    assert_true(dla_mem_port_unchanged(&m.port, base, len, g));
    wr_byte(&m, base + len - 1, 0);
    assert_false(dla_mem_port_unchanged(&m.port, base, len, g));
    assert_true(dla_mem_port_unchanged(&m.port, base, len - 256, g)); /* (blocks of 256 bytes) */
    dla_sparse_mem_destroy(m.port.sparse);
}


/* The pages a look-up found last (find_page's recent pages, 16 entries)
 * after the hash grows and moves every page, and among 600 pages, so that
 * many share an entry: every view shows its own page's bytes, every stamp
 * lands on its own page (a stale or aliased entry would show another page's
 * bytes, or freed memory under ASan). */
static void test_recent_pages(void **state)
{
    (void)state;
    struct mem m;
    mem_open(&m);
    const uint64_t stride = DLA_MEM_PAGE_BYTES; /* (page after page) */
    for (uint32_t k = 0; k < 600; k++) { /* the hash grows several times meanwhile */
        const uint64_t a = 0x40000000ull + k * stride;
        const uint8_t v = (uint8_t)(1 + k % 251);
        wr_byte(&m, a + 7, v);
        for (uint32_t j = k > 3 ? k - 3 : 0; j <= k; j++) { /* this page and the last few */
            const uint8_t *p = dla_mem_port_view(&m.port, 0x40000000ull + j * stride + 7, 1);
            assert_non_null(p);
            assert_int_equal(*p, (uint8_t)(1 + j % 251));
        }
    }
    /* a stamp through a recent page: seen on that page, not on its neighbours */
    const uint64_t a = 0x40000000ull + 5 * stride;
    uint64_t g = dla_mem_port_generation(&m.port);
    uint8_t *w = dla_mem_port_write_view(&m.port, a + 7, 1);
    assert_non_null(w);
    *w = 0x77;
    dla_mem_port_wrote(&m.port, a + 7, 1);
    assert_false(dla_mem_port_unchanged(&m.port, a, 4096, g));
    assert_true(dla_mem_port_unchanged(&m.port, a - stride, 4096, g));
    assert_true(dla_mem_port_unchanged(&m.port, a + stride, 4096, g));
    assert_int_equal(*dla_mem_port_view(&m.port, a + 7, 1), 0x77);
    assert_int_equal(*dla_mem_port_view(&m.port, a + stride + 7, 1), (uint8_t)(1 + 6 % 251));
    dla_sparse_mem_destroy(m.port.sparse);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_byte_write_seen),
        cmocka_unit_test(test_writes_around),
        cmocka_unit_test(test_zero_pages),
        cmocka_unit_test(test_untracked),
        cmocka_unit_test(test_large_ranges),
        cmocka_unit_test(test_write_view),
        cmocka_unit_test(test_recent_pages),
        cmocka_unit_test(test_regions_inside_pages),
        cmocka_unit_test(test_whole_page_writes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Memory interface: port routing, bounds checks and the built-in sparse
 * memory (see mem.h).
 *
 * The sparse memory is an open-addressing hash table of 4 KiB pages keyed
 * by page number, so a 32-bit or 64-bit address space costs only the pages a
 * program touches.  Accesses are split at page boundaries and copied with
 * memcpy: there is no per-byte call anywhere on this path.
 */
#include "sim/mem.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE_SHIFT 12u
#define PAGE_SIZE (1u << PAGE_SHIFT)
#define PAGE_MASK ((uint64_t)PAGE_SIZE - 1u)

struct page {
    uint64_t number;        /* address >> PAGE_SHIFT */
    uint8_t *data;          /* PAGE_SIZE bytes */
    uint8_t *written;       /* one bit per byte, only in strict mode */
};

struct dla_sparse_mem {
    struct page *slots;     /* hash table, slots[i].data == NULL: empty */
    size_t capacity;        /* power of two */
    size_t used;
    int track_written;      /* keep `written` bitmaps (strict mode) */
};

struct dla_sparse_mem *dla_sparse_mem_create(int track_written)
{
    struct dla_sparse_mem *m = calloc(1, sizeof(*m));
    if (!m) {
        return NULL;
    }
    m->capacity = 64;
    m->slots = calloc(m->capacity, sizeof(*m->slots));
    if (!m->slots) {
        free(m);
        return NULL;
    }
    m->track_written = track_written;
    return m;
}

void dla_sparse_mem_destroy(struct dla_sparse_mem *m)
{
    if (!m) {
        return;
    }
    for (size_t i = 0; i < m->capacity; i++) {
        free(m->slots[i].data);
        free(m->slots[i].written);
    }
    free(m->slots);
    free(m);
}

static size_t page_hash(uint64_t number, size_t capacity)
{
    /* Fibonacci hashing spreads consecutive page numbers. */
    return (size_t)((number * 0x9e3779b97f4a7c15ull) >> 20) & (capacity - 1);
}

static struct page *find_page(const struct dla_sparse_mem *m, uint64_t number)
{
    size_t i = page_hash(number, m->capacity);
    while (m->slots[i].data) {
        if (m->slots[i].number == number) {
            return &m->slots[i];
        }
        i = (i + 1) & (m->capacity - 1);
    }
    return NULL;
}

static int grow(struct dla_sparse_mem *m)
{
    size_t cap = m->capacity * 2;
    struct page *slots = calloc(cap, sizeof(*slots));
    if (!slots) {
        return DLASIM_ERR_NOMEM;
    }
    for (size_t i = 0; i < m->capacity; i++) {
        if (m->slots[i].data) {
            size_t j = page_hash(m->slots[i].number, cap);
            while (slots[j].data) {
                j = (j + 1) & (cap - 1);
            }
            slots[j] = m->slots[i];
        }
    }
    free(m->slots);
    m->slots = slots;
    m->capacity = cap;
    return 0;
}

static struct page *get_page(struct dla_sparse_mem *m, uint64_t number)
{
    struct page *p = find_page(m, number);
    if (p) {
        return p;
    }
    if ((m->used + 1) * 4 > m->capacity * 3 && grow(m) != 0) {
        return NULL;
    }
    size_t i = page_hash(number, m->capacity);
    while (m->slots[i].data) {
        i = (i + 1) & (m->capacity - 1);
    }
    uint8_t *data = calloc(1, PAGE_SIZE);
    uint8_t *written = m->track_written ? calloc(1, PAGE_SIZE / 8) : NULL;
    if (!data || (m->track_written && !written)) {
        free(data);
        free(written);
        return NULL;
    }
    m->slots[i].number = number;
    m->slots[i].data = data;
    m->slots[i].written = written;
    m->used++;
    return &m->slots[i];
}

static void mark_written(uint8_t *bits, size_t off, size_t len)
{
    for (; len && (off & 7u); off++, len--) {
        bits[off >> 3] |= (uint8_t)(1u << (off & 7u));
    }
    memset(bits + (off >> 3), 0xff, len >> 3);
    off += len & ~(size_t)7;
    for (len &= 7u; len; off++, len--) {
        bits[off >> 3] |= (uint8_t)(1u << (off & 7u));
    }
}

/* First never-written byte in [off, off+len) of a page, or -1. */
static long first_unwritten(const struct page *p, size_t off, size_t len)
{
    for (size_t i = off; i < off + len; i++) {
        if (!(p->written[i >> 3] & (1u << (i & 7u)))) {
            return (long)i;
        }
    }
    return -1;
}

static int sparse_read(struct dla_sparse_mem *m, uint64_t addr, uint8_t *dst, size_t len,
                       char *why, size_t whylen)
{
    while (len) {
        size_t off = (size_t)(addr & PAGE_MASK);
        size_t n = PAGE_SIZE - off < len ? PAGE_SIZE - off : len;
        const struct page *p = find_page(m, addr >> PAGE_SHIFT);
        if (m->track_written) {
            long bad = p ? first_unwritten(p, off, n) : (long)off;
            if (bad >= 0) {
                if (why) {
                    snprintf(why, whylen, "read of never-written byte at 0x%" PRIx64,
                             (addr & ~PAGE_MASK) + (uint64_t)bad);
                }
                return DLASIM_ERR_MEM;
            }
        }
        if (p) {
            memcpy(dst, p->data + off, n);
        } else {
            memset(dst, 0, n);
        }
        dst += n;
        addr += n;
        len -= n;
    }
    return 0;
}

static int sparse_write(struct dla_sparse_mem *m, uint64_t addr, const uint8_t *src, size_t len)
{
    while (len) {
        size_t off = (size_t)(addr & PAGE_MASK);
        size_t n = PAGE_SIZE - off < len ? PAGE_SIZE - off : len;
        struct page *p = get_page(m, addr >> PAGE_SHIFT);
        if (!p) {
            return DLASIM_ERR_NOMEM;
        }
        memcpy(p->data + off, src, n);
        if (p->written) {
            mark_written(p->written, off, n);
        }
        src += n;
        addr += n;
        len -= n;
    }
    return 0;
}

static int check_range(const struct dla_mem_port *p, uint64_t addr, size_t len,
                       char *why, size_t whylen)
{
    if (!p->present) {
        if (why) {
            snprintf(why, whylen, "the configuration has no such memory port");
        }
        return DLASIM_ERR_MEM;
    }
    if (addr > p->limit || len > p->limit - addr) {
        if (why) {
            snprintf(why, whylen,
                     "range 0x%" PRIx64 "+0x%zx is beyond the %s address space (end 0x%" PRIx64 ")",
                     addr, len, p->limit > 0xffffffffull + 1 ? "64-bit" : "32-bit", p->limit);
        }
        return DLASIM_ERR_MEM;
    }
    return 0;
}

int dla_mem_port_read(struct dla_mem_port *p, uint64_t addr, void *dst, size_t len,
                      char *why, size_t whylen)
{
    int rc = check_range(p, addr, len, why, whylen);
    if (rc || len == 0) {
        return rc;
    }
    if (p->ops) {
        rc = p->ops->read(p->opaque, addr, dst, len);
        if (rc && why) {
            snprintf(why, whylen, "the memory callback refused 0x%" PRIx64 "+0x%zx (%s)",
                     addr, len, dlasim_status_name(rc));
        }
        return rc ? (rc < 0 ? rc : DLASIM_ERR_MEM) : 0;
    }
    return sparse_read(p->sparse, addr, dst, len, why, whylen);
}

int dla_mem_port_write(struct dla_mem_port *p, uint64_t addr, const void *src, size_t len,
                       char *why, size_t whylen)
{
    int rc = check_range(p, addr, len, why, whylen);
    if (rc || len == 0) {
        return rc;
    }
    if (p->ops) {
        rc = p->ops->write(p->opaque, addr, src, len);
        if (rc && why) {
            snprintf(why, whylen, "the memory callback refused 0x%" PRIx64 "+0x%zx (%s)",
                     addr, len, dlasim_status_name(rc));
        }
        return rc ? (rc < 0 ? rc : DLASIM_ERR_MEM) : 0;
    }
    rc = sparse_write(p->sparse, addr, src, len);
    if (rc && why) {
        snprintf(why, whylen, "out of host memory for device memory");
    }
    return rc;
}

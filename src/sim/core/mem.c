/*
 * Memory interface: port routing, bounds checks and the built-in sparse
 * memory (see mem.h).
 *
 * The sparse memory is an open-addressing hash table of 64 KiB pages keyed
 * by page number, so a 32-bit or 64-bit address space costs only the pages a
 * program touches.  64 KiB, not 4: the engines take views of a cube's lines
 * and surfaces and write their output in place a page at a time, and at
 * 4 KiB a ResNet-50 image made ~46,000 page look-ups (~1 ms of the host's
 * serial time, perf) and fell back to copies wherever a line crossed a
 * page; 11.83 -> 10.74 ms an image (alternated over eight argv lengths),
 * 256 KiB no faster.  Accesses are split at page boundaries and copied with
 * memcpy: there is no per-byte call anywhere on this path.
 */
#define _DEFAULT_SOURCE 1 /* mmap's MAP_ANONYMOUS, madvise */
#include "sim/core/mem.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define PAGE_SHIFT 16u
#define PAGE_SIZE (1u << PAGE_SHIFT)
#define PAGE_MASK ((uint64_t)PAGE_SIZE - 1u)
_Static_assert(PAGE_SIZE == DLA_MEM_PAGE_BYTES, "mem.h's page size is the pages'");
/* Write generations are kept per block of a page: a network's weights share
 * pages with buffers written at every inference, and its buffers are
 * aligned to at least this much. */
#define GEN_SHIFT 8u
#define GEN_BLOCKS (PAGE_SIZE >> GEN_SHIFT)
/* And per region of 16 KiB, direct-mapped onto REGION_SLOTS slots (1 GiB
 * before two regions share one): a slot holds the latest generation stamped
 * in any region mapped to it (regions sharing a slot only make each other
 * look written), so a check of a network's weights (dla_mem_port_unchanged,
 * at every layer) skips whole regions instead of visiting each page's slot
 * in the hash table.  1 MiB regions before: the compiler's buffers lie
 * between the weights, every region held one written at each inference,
 * and ResNet-50's checks visited ~6,100 pages an image; at 16 KiB ~320
 * (conv_execute's serial time 374 -> 146 us an image). */
#define REGION_SHIFT 14u
#define REGION_MASK (((uint64_t)1 << REGION_SHIFT) - 1u)
#define REGION_SLOTS 65536u
_Static_assert(GEN_SHIFT <= REGION_SHIFT && REGION_SHIFT <= PAGE_SHIFT,
               "a region lies inside one page, a block inside one region");
#define RECENT_BITS 4u
#define RECENT_PAGES (1u << RECENT_BITS)
/* Pages' data come from slabs of 2 MiB, aligned and marked MADV_HUGEPAGE,
 * so that the host can back them with huge pages: a network's cubes and
 * weights spread over thousands of 4 KiB host pages missed the TLB
 * (ResNet-50 9.44 -> 9.19 ms an image with glibc's heap on huge pages,
 * GLIBC_TUNABLES=glibc.malloc.hugetlb=1).  A slab is mapped zeroed and
 * carved in order; only the memory's destruction returns it. */
#define SLAB_BYTES ((size_t)2 << 20)
_Static_assert(SLAB_BYTES % PAGE_SIZE == 0, "a slab holds whole pages");
/* A page's data is its place in the slab of its 2 MiB region of addresses
 * (the region's pages follow each other in the host's memory as in the
 * device's: a cube that lies inside one region is one range of the host's
 * memory, which a layer then reads in place, mem.h
 * dla_mem_port_view_span); carved in the order the pages come (as before
 * region slabs) only where regions would hold too few pages: more than
 * REGION_SPARSE_FACTOR times the bytes of the pages with data, past the
 * first REGION_FREE slabs (memory written at scattered addresses, as a
 * fuzzer's, would otherwise take a slab a page). */
#define SLAB_PAGES (SLAB_BYTES / PAGE_SIZE)
#define REGION_SPARSE_FACTOR 4u
#define REGION_FREE 32u
/* Under AddressSanitizer every page is an allocation of its own, so that
 * an access past a page (views and in-place writes never cross one) is
 * caught. */
#if defined(__SANITIZE_ADDRESS__)
#define MEM_SLABS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MEM_SLABS 0
#endif
#endif
#ifndef MEM_SLABS
#define MEM_SLABS 1
#endif

/* A page exists once some write made it necessary: its data once a
 * non-zero byte was written (never-allocated data reads as zero), its
 * `written` bitmap (strict mode only) once any byte was written, zeros
 * included.  So zero-filling memory allocates nothing in normal mode and
 * only the bitmaps (1/8 of the bytes) in strict mode. */
struct page {
    uint64_t number;        /* address >> PAGE_SHIFT */
    uint8_t *data;          /* PAGE_SIZE bytes, or NULL: all zero */
    uint8_t *written;       /* one bit per byte, only in strict mode */
    uint64_t gen[GEN_BLOCKS]; /* the memory's `gen` at the last write to each block */
    /* ... and at the last write of the whole page, which leaves gen[] as it
     * was (a block's stamp is the larger of the two): a write of a whole
     * page stamps one word, not 256 (ResNet-50's in-place outputs, their
     * stamps on the host while the other threads wait: 1,640 -> 1,520
     * cycles a layer, rdtsc, with sdp.c wrote_pieces) */
    uint64_t all_gen;
};

struct dla_sparse_mem {
    struct page *slots;     /* hash table; a slot is empty when it has neither
                             * data nor written */
    size_t capacity;        /* power of two */
    size_t used;
    int track_written;      /* keep `written` bitmaps (strict mode) */
    struct dla_mem_budget *budget; /* shared by the device's ports, or NULL */
    int over_budget;        /* the last failed allocation was refused by it */
    uint64_t gen;           /* writes so far + 1 (dla_mem_port_generation) */
    uint64_t region_gen[REGION_SLOTS]; /* see REGION_SHIFT */
    /* The pages find_page found last, RECENT_PAGES of them, direct-mapped
     * by a multiplicative hash of the page number (the low bits would put
     * the pages of cubes that start at the same offset into one entry),
     * NULL after a grow (which moves the slots): a layer's look-ups come a
     * page's surfaces or lines at a time, then its stamps, and an
     * element-wise layer alternates between the pages of its two inputs and
     * its output (ResNet-50: ~46,000 look-ups an image, ~40 % of the page
     * found just before).  The memory is used by one thread at a time (a
     * layer's engines, or the host between layers), as the slots. */
    struct page *recent[RECENT_PAGES];
    uint8_t **slabs;        /* every slab mapped, the last one being carved */
    size_t n_slabs, slabs_cap;
    size_t slab_used;       /* bytes of the last slab given to pages */
    /* region slabs: region r's at reg_slab[i] where reg_key[i] == r + 1
     * (0: a free slot), open addressing over reg_cap (a power of two) */
    uint64_t *reg_key;
    uint8_t **reg_slab;
    size_t n_regs, reg_cap;
    size_t data_pages;      /* pages given data */
};

static uint64_t *region_slot(struct dla_sparse_mem *m, uint64_t addr)
{
    return &m->region_gen[(addr >> REGION_SHIFT) & (REGION_SLOTS - 1u)];
}

static int slot_used(const struct page *p)
{
    return p->data != NULL || p->written != NULL;
}

struct dla_sparse_mem *dla_sparse_mem_create(int track_written, struct dla_mem_budget *budget)
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
    m->budget = budget;
    m->gen = 1;
    return m;
}

void dla_sparse_mem_destroy(struct dla_sparse_mem *m)
{
    if (!m) {
        return;
    }
    for (size_t i = 0; i < m->capacity; i++) {
        if (!MEM_SLABS) {
            free(m->slots[i].data); /* (else the slabs') */
        }
        free(m->slots[i].written);
    }
    for (size_t i = 0; i < m->n_slabs; i++) {
        munmap(m->slabs[i], SLAB_BYTES);
    }
    for (size_t i = 0; i < m->reg_cap; i++) {
        if (m->reg_key[i] != 0) {
            munmap(m->reg_slab[i], SLAB_BYTES);
        }
    }
    free(m->reg_key);
    free(m->reg_slab);
    free(m->slabs);
    free(m->slots);
    free(m);
}

static size_t page_hash(uint64_t number, size_t capacity)
{
    /* Fibonacci hashing spreads consecutive page numbers. */
    return (size_t)((number * 0x9e3779b97f4a7c15ull) >> 20) & (capacity - 1);
}

static struct page *find_page(struct dla_sparse_mem *m, uint64_t number)
{
    struct page **r = &m->recent[(number * 0x9e3779b97f4a7c15ull) >> (64u - RECENT_BITS)];
    if (*r != NULL && (*r)->number == number) {
        return *r;
    }
    size_t i = page_hash(number, m->capacity);
    while (slot_used(&m->slots[i])) {
        if (m->slots[i].number == number) {
            *r = &m->slots[i];
            return *r;
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
        if (slot_used(&m->slots[i])) {
            size_t j = page_hash(m->slots[i].number, cap);
            while (slot_used(&slots[j])) {
                j = (j + 1) & (cap - 1);
            }
            slots[j] = m->slots[i];
        }
    }
    free(m->slots);
    m->slots = slots;
    m->capacity = cap;
    memset(m->recent, 0, sizeof(m->recent));
    return 0;
}

/* Take `bytes` from the budget; 0 or DLASIM_ERR_NOMEM when it is spent. */
static int charge(struct dla_sparse_mem *m, size_t bytes)
{
    struct dla_mem_budget *b = m->budget;
    m->over_budget = b && b->max && (b->used > b->max || bytes > b->max - b->used);
    if (m->over_budget) {
        return DLASIM_ERR_NOMEM;
    }
    if (b) {
        b->used += bytes;
    }
    return 0;
}

static void refund(struct dla_sparse_mem *m, size_t bytes)
{
    if (m->budget) {
        m->budget->used -= bytes;
    }
}

/* Zeroed host buffer of `bytes`, charged to the budget. */
static uint8_t *page_alloc(struct dla_sparse_mem *m, size_t bytes, int *rc)
{
    if ((*rc = charge(m, bytes)) != 0) {
        return NULL;
    }
    uint8_t *p = calloc(1, bytes);
    if (!p) {
        refund(m, bytes);
        m->over_budget = 0;
        *rc = DLASIM_ERR_NOMEM;
    }
    return p;
}

/* A zeroed mapping of SLAB_BYTES aligned to SLAB_BYTES, marked for huge
 * pages where the host has them; NULL when out of memory. */
static uint8_t *slab_map(void)
{
    const size_t len = 2 * SLAB_BYTES;
    uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        return NULL;
    }
    const size_t head = (SLAB_BYTES - (uintptr_t)p % SLAB_BYTES) % SLAB_BYTES;
    if (head) {
        munmap(p, head);
    }
    munmap(p + head + SLAB_BYTES, SLAB_BYTES - head);
#if defined(MADV_HUGEPAGE)
    (void)madvise(p + head, SLAB_BYTES, MADV_HUGEPAGE); /* a hint: refused, 4 KiB pages */
#endif
    return p + head;
}

/* Region r's slot in the region table: its own, or the free one where it
 * goes. */
static size_t region_slot_of(const struct dla_sparse_mem *m, uint64_t r)
{
    size_t i = page_hash(r, m->reg_cap);
    while (m->reg_key[i] != 0 && m->reg_key[i] != r + 1) {
        i = (i + 1) & (m->reg_cap - 1);
    }
    return i;
}

static int region_grow(struct dla_sparse_mem *m)
{
    const size_t cap = m->reg_cap ? 2 * m->reg_cap : 64;
    uint64_t *key = calloc(cap, sizeof(*key));
    uint8_t **slab = calloc(cap, sizeof(*slab));
    if (!key || !slab) {
        free(key);
        free(slab);
        return DLASIM_ERR_NOMEM;
    }
    for (size_t i = 0; i < m->reg_cap; i++) {
        if (m->reg_key[i] != 0) {
            size_t j = page_hash(m->reg_key[i] - 1, cap);
            while (key[j] != 0) {
                j = (j + 1) & (cap - 1);
            }
            key[j] = m->reg_key[i];
            slab[j] = m->reg_slab[i];
        }
    }
    free(m->reg_key);
    free(m->reg_slab);
    m->reg_key = key;
    m->reg_slab = slab;
    m->reg_cap = cap;
    return 0;
}

/* Page `number`'s place in its region's slab, the slab mapped if needed;
 * NULL where a new region would be too sparse (or out of memory): the
 * caller carves the page instead. */
static uint8_t *region_page(struct dla_sparse_mem *m, uint64_t number)
{
    const uint64_t r = number / SLAB_PAGES;
    if (m->reg_cap) {
        const size_t i = region_slot_of(m, r);
        if (m->reg_key[i] != 0) {
            return m->reg_slab[i] + (number % SLAB_PAGES) * PAGE_SIZE;
        }
    }
    if (m->n_regs >= REGION_FREE &&
        (m->n_regs + 1) * SLAB_PAGES > REGION_SPARSE_FACTOR * (m->data_pages + 1)) {
        return NULL;
    }
    if ((m->n_regs + 1) * 4 > m->reg_cap * 3 && region_grow(m) != 0) {
        return NULL;
    }
    uint8_t *slab = slab_map();
    if (!slab) {
        return NULL;
    }
    const size_t i = region_slot_of(m, r);
    m->reg_key[i] = r + 1;
    m->reg_slab[i] = slab;
    m->n_regs++;
    return slab + (number % SLAB_PAGES) * PAGE_SIZE;
}

/* Page `number`'s zeroed data (PAGE_SIZE bytes) from the slabs, charged to
 * the budget. */
static uint8_t *page_data_alloc(struct dla_sparse_mem *m, uint64_t number, int *rc)
{
    if (!MEM_SLABS) {
        return page_alloc(m, PAGE_SIZE, rc);
    }
    if ((*rc = charge(m, PAGE_SIZE)) != 0) {
        return NULL;
    }
    uint8_t *in_region = region_page(m, number);
    if (in_region) {
        m->data_pages++;
        return in_region;
    }
    if (m->n_slabs == 0 || m->slab_used == SLAB_BYTES) {
        uint8_t *slab = NULL;
        if (m->n_slabs == m->slabs_cap) {
            size_t cap = m->slabs_cap ? 2 * m->slabs_cap : 8;
            uint8_t **more = realloc(m->slabs, cap * sizeof(*more));
            if (more) {
                m->slabs = more;
                m->slabs_cap = cap;
            }
        }
        if (m->n_slabs < m->slabs_cap) {
            slab = slab_map();
        }
        if (!slab) {
            refund(m, PAGE_SIZE);
            m->over_budget = 0;
            *rc = DLASIM_ERR_NOMEM;
            return NULL;
        }
        m->slabs[m->n_slabs++] = slab;
        m->slab_used = 0;
    }
    uint8_t *p = m->slabs[m->n_slabs - 1] + m->slab_used;
    m->slab_used += PAGE_SIZE;
    m->data_pages++;
    return p;
}

/*
 * The page `number` for a write, created if needed; its data is allocated
 * only when `need_data` (a non-zero byte is written).  NULL with *rc set
 * when host memory or the budget is exhausted.
 */
static struct page *get_page(struct dla_sparse_mem *m, uint64_t number, int need_data, int *rc)
{
    struct page *p = find_page(m, number);
    *rc = 0;
    if (!p) {
        if (!need_data && !m->track_written) {
            return NULL; /* zeros over a page that reads as zero: nothing to keep */
        }
        if ((m->used + 1) * 4 > m->capacity * 3 && grow(m) != 0) {
            m->over_budget = 0;
            *rc = DLASIM_ERR_NOMEM;
            return NULL;
        }
        size_t i = page_hash(number, m->capacity);
        while (slot_used(&m->slots[i])) {
            i = (i + 1) & (m->capacity - 1);
        }
        p = &m->slots[i];
        uint8_t *written = NULL;
        if (m->track_written && !(written = page_alloc(m, PAGE_SIZE / 8, rc))) {
            return NULL;
        }
        uint8_t *data = NULL;
        if (need_data && !(data = page_data_alloc(m, number, rc))) {
            if (written) {
                free(written);
                refund(m, PAGE_SIZE / 8);
            }
            return NULL;
        }
        p->number = number;
        p->data = data;
        p->written = written;
        m->used++;
        return p;
    }
    if (need_data && !p->data && !(p->data = page_data_alloc(m, number, rc))) {
        return NULL;
    }
    return p;
}

static int all_zero(const uint8_t *src, size_t n)
{
    return n == 0 || (src[0] == 0 && memcmp(src, src + 1, n - 1) == 0);
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
        if (p && p->data) {
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

/* The write generation's stamp on blocks [off, off+n) of page pg (n > 0)
 * and on the regions they lie in. */
static void stamp_blocks(struct dla_sparse_mem *m, struct page *pg, size_t off, size_t n)
{
    const uint64_t base = pg->number << PAGE_SHIFT;
    for (size_t r = off >> REGION_SHIFT; r <= (off + n - 1) >> REGION_SHIFT; r++) {
        *region_slot(m, base + ((uint64_t)r << REGION_SHIFT)) = m->gen;
    }
    if (off == 0 && n == PAGE_SIZE) {
        pg->all_gen = m->gen;
        return;
    }
    for (size_t b = off >> GEN_SHIFT; b <= (off + n - 1) >> GEN_SHIFT; b++) {
        pg->gen[b] = m->gen;
    }
}

static int sparse_write(struct dla_sparse_mem *m, uint64_t addr, const uint8_t *src, size_t len,
                        char *why, size_t whylen)
{
    /* every page this write reaches is stamped with the new generation (a
     * page that stays absent still reads as zero: nothing changed there) */
    m->gen++;
    while (len) {
        size_t off = (size_t)(addr & PAGE_MASK);
        size_t n = PAGE_SIZE - off < len ? PAGE_SIZE - off : len;
        int rc;
        struct page *p = get_page(m, addr >> PAGE_SHIFT, !all_zero(src, n), &rc);
        if (rc) {
            if (why && m->over_budget) {
                snprintf(why, whylen,
                         "the host memory budget for device memory is spent at 0x%" PRIx64
                         ": %" PRIu64 " bytes of pages in use, max_host_mem=%" PRIu64,
                         addr, m->budget->used, m->budget->max);
            } else if (why) {
                snprintf(why, whylen, "out of host memory for device memory at 0x%" PRIx64,
                         addr);
            }
            return rc;
        }
        if (p) {
            stamp_blocks(m, p, off, n);
        }
        if (p && p->data) {
            memcpy(p->data + off, src, n);
        }
        if (p && p->written) {
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

int dla_mem_port_can_read(const struct dla_mem_port *p, uint64_t addr, size_t len)
{
    /* Callbacks may refuse any range and strict mode may find a never-written
     * byte: neither is known without the read itself, so only the plain
     * built-in memory inside the port's address space answers yes. */
    return p->present && !p->ops && p->sparse && !p->sparse->track_written &&
           addr <= p->limit && len <= p->limit - addr;
}

uint64_t dla_mem_port_generation(const struct dla_mem_port *p)
{
    return p->present && !p->ops && p->sparse ? p->sparse->gen : 0;
}

const uint8_t *dla_mem_port_view(const struct dla_mem_port *p, uint64_t addr, size_t len)
{
    if (len == 0 || !dla_mem_port_can_read(p, addr, len) ||
        (addr >> PAGE_SHIFT) != ((addr + len - 1) >> PAGE_SHIFT)) {
        return NULL;
    }
    const struct page *pg = find_page(p->sparse, addr >> PAGE_SHIFT);
    return pg && pg->data ? pg->data + (addr & PAGE_MASK) : NULL;
}

const uint8_t *dla_mem_port_view_span(const struct dla_mem_port *p, uint64_t addr, size_t len)
{
    if (len == 0 || !dla_mem_port_can_read(p, addr, len)) {
        return NULL;
    }
    const uint64_t first = addr >> PAGE_SHIFT, last = (addr + len - 1) >> PAGE_SHIFT;
    const struct page *pg = find_page(p->sparse, first);
    if (!pg || !pg->data) {
        return NULL;
    }
    const uint8_t *base = pg->data;
    for (uint64_t n = first + 1; n <= last; n++) {
        pg = find_page(p->sparse, n);
        if (!pg || pg->data != base + (n - first) * PAGE_SIZE) {
            return NULL;
        }
    }
    return base + (addr & PAGE_MASK);
}

/* The page holding data that a write of [addr, addr+len) made in place
 * reaches (see dla_mem_port_write_view), or NULL. */
static struct page *in_place_page(const struct dla_mem_port *p, uint64_t addr, size_t len)
{
    if (len == 0 || !dla_mem_port_can_read(p, addr, len) ||
        (addr >> PAGE_SHIFT) != ((addr + len - 1) >> PAGE_SHIFT)) {
        return NULL;
    }
    struct page *pg = find_page(p->sparse, addr >> PAGE_SHIFT);
    /* no data: the write may allocate (or keep nothing), dla_mem_port_write's */
    return pg && pg->data ? pg : NULL;
}

uint8_t *dla_mem_port_write_view(const struct dla_mem_port *p, uint64_t addr, size_t len)
{
    struct page *pg = in_place_page(p, addr, len);
    return pg ? pg->data + (addr & PAGE_MASK) : NULL;
}

void dla_mem_port_wrote(struct dla_mem_port *p, uint64_t addr, size_t len)
{
    struct page *pg = in_place_page(p, addr, len);
    if (pg) {
        p->sparse->gen++; /* one write, as sparse_write counts it */
        stamp_blocks(p->sparse, pg, (size_t)(addr & PAGE_MASK), len);
    }
}

int dla_mem_port_unchanged(const struct dla_mem_port *p, uint64_t addr, size_t len, uint64_t since)
{
    if (since == 0 || dla_mem_port_generation(p) == 0 || addr > p->limit ||
        len > p->limit - addr) {
        return 0;
    }
    if (len == 0) {
        return 1;
    }
    const uint64_t last = addr + len - 1;
    for (uint64_t a = addr;; a = (a | REGION_MASK) + 1) { /* region by region (inside a page) */
        const uint64_t end = (a | REGION_MASK) < last ? (a | REGION_MASK) : last;
        if (*region_slot(p->sparse, a) > since) { /* written in a's region since: its blocks */
            const struct page *pg = find_page(p->sparse, a >> PAGE_SHIFT);
            if (pg && pg->all_gen > since) {
                return 0;
            }
            const size_t b1 = (size_t)(end & PAGE_MASK) >> GEN_SHIFT;
            for (size_t b = (size_t)(a & PAGE_MASK) >> GEN_SHIFT; pg && b <= b1; b++) {
                if (pg->gen[b] > since) {
                    return 0;
                }
            }
        }
        if (end >= last) {
            return 1;
        }
    }
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
    return sparse_write(p->sparse, addr, src, len, why, whylen);
}

/*
 * Memory interface of the device: the primary (DBB, through MCIF) and the
 * secondary (CVIF/SRAMIF) ports.  Each port is either the built-in sparse
 * memory or caller-supplied callbacks (struct dlasim_mem_ops).
 *
 * The built-in memory allocates a 4 KiB page on the first write of a
 * non-zero byte to it; reads of never-written bytes return zero (and, in
 * strict mode, are reported: there a write of zeros allocates only the
 * page's 512-byte "written" bitmap).  The pages of a device's ports share
 * one budget (dlasim_options.max_host_mem).
 * Every access is bounds-checked against the configuration's address width
 * and never wraps (ref: spec 004 NVDLA_MEMIF_ADDRESS_WIDTH).
 */
#ifndef DLASIM_SIM_MEM_H
#define DLASIM_SIM_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "dlasim/dlasim.h"

struct dla_sparse_mem;

struct dla_mem_port {
    const struct dlasim_mem_ops *ops; /* callbacks, or NULL for `sparse` */
    void *opaque;
    struct dla_sparse_mem *sparse;    /* built-in memory when ops == NULL */
    uint64_t limit;                   /* first unreachable address (2^width) */
    int present;                      /* the configuration has this port */
};

/* Bytes of pages (data and strict-mode bitmaps) the built-in memories of a
 * device may allocate: max 0 = unlimited. */
struct dla_mem_budget {
    uint64_t max;
    uint64_t used;
};

struct dla_sparse_mem *dla_sparse_mem_create(int track_written, struct dla_mem_budget *budget);
void dla_sparse_mem_destroy(struct dla_sparse_mem *m);

/* Access through a port.  Returns 0 or a negative status; on error `why`
 * (if given, size >= 128) describes the failure. */
int dla_mem_port_read(struct dla_mem_port *p, uint64_t addr, void *dst, size_t len,
                      char *why, size_t whylen);
/* 1 when a read of [addr, addr+len) through the port cannot fail (the
 * built-in memory, not strict, in range), else 0; no side effects. */
int dla_mem_port_can_read(const struct dla_mem_port *p, uint64_t addr, size_t len);
/* Write generations, for caches of what a range held (exact: every write
 * through dla_mem_port_write stamps the pages it reaches).  The generation
 * is a number that grows with every write to the built-in memory; 0 when the
 * port has callbacks (their memory changes unseen) or is absent.
 * dla_mem_port_unchanged: 1 when no write since generation `since` (taken
 * from dla_mem_port_generation) reached [addr, addr+len), so a read then and
 * a read now give the same bytes; 0 when one did or it cannot be told. */
uint64_t dla_mem_port_generation(const struct dla_mem_port *p);
/* The bytes of [addr, addr+len) where the built-in memory keeps them, for a
 * read that cannot fail (dla_mem_port_can_read) of a non-empty range inside
 * one page that holds data; else NULL.  Valid until the next write. */
const uint8_t *dla_mem_port_view(const struct dla_mem_port *p, uint64_t addr, size_t len);
int dla_mem_port_unchanged(const struct dla_mem_port *p, uint64_t addr, size_t len, uint64_t since);
/* dla_mem_port_view for a range over any number of pages: where each of
 * them holds data and the next one's bytes follow its own in the host's
 * memory (pages carved from one slab in the order of their addresses, as
 * a buffer written front to back gets them), else NULL.  Valid until the
 * next write. */
const uint8_t *dla_mem_port_view_span(const struct dla_mem_port *p, uint64_t addr, size_t len);
/* A write of [addr, addr+len) made in place.  dla_mem_port_write_view:
 * where the write cannot fail and allocates nothing (the built-in memory,
 * not strict, in range, a non-empty range inside one page that holds
 * data), the address of the bytes in the memory; else NULL.  No side
 * effects: the caller that fills the bytes there calls dla_mem_port_wrote,
 * which stamps the generation as dla_mem_port_write would (nothing where
 * the view is NULL).  Views stay valid while the memory exists (a page's
 * bytes never move) and never cross DLA_MEM_PAGE_BYTES boundaries. */
#define DLA_MEM_PAGE_BYTES 65536u
uint8_t *dla_mem_port_write_view(const struct dla_mem_port *p, uint64_t addr, size_t len);
void dla_mem_port_wrote(struct dla_mem_port *p, uint64_t addr, size_t len);
int dla_mem_port_write(struct dla_mem_port *p, uint64_t addr, const void *src, size_t len,
                       char *why, size_t whylen);

#endif

/*
 * Work budget of a layer: what it really moves and computes, counted from
 * its decoded configuration before anything runs (dlasim_options.
 * max_layer_work), and the address extent of every strided cube it moves.
 *
 * Every engine describes each cube its DMA walks as one `struct
 * dla_strided` (a line of `line_bytes` bytes, repeated over lines, surfaces
 * and batches with their strides) and adds it to a `struct dla_work` with
 * the elements or MACs its datapath computes; dla_work_check() then refuses
 * the layer when bytes read + bytes written + operations exceed the limit.
 * Strides and repeats are part of the count, so a layer cannot write
 * gigabytes while counting as a few thousand elements.
 */
#ifndef DLASIM_SIM_BUDGET_H
#define DLASIM_SIM_BUDGET_H

#include <stdint.h>

struct dla_exec;

/* A cube of lines as a DMA walks it: line l of surface s of batch b starts
 * at base + b * batch_stride + s * surf_stride + l * line_stride and is
 * line_bytes long.  Counts of 0 mean nothing is moved. */
struct dla_strided {
    int port;                 /* DLASIM_PORT_DBB / DLASIM_PORT_CVIF */
    uint64_t base;
    uint64_t line_bytes;
    uint64_t lines, line_stride;
    uint64_t surfaces, surf_stride;
    uint64_t batches, batch_stride; /* 1 and 0 where there are no batches */
};

/* Bytes the DMA moves: line_bytes * lines * surfaces * batches (saturates
 * at UINT64_MAX). */
uint64_t dla_strided_bytes(const struct dla_strided *s);
/* One past the last byte offset it touches, relative to base (saturates). */
uint64_t dla_strided_span(const struct dla_strided *s);

/* What one layer moves and computes. */
struct dla_work {
    const char *unit;        /* for messages: "RUBIK", "SDP", ... */
    uint64_t read, written;  /* bytes of memory (and CBUF) read / written */
    uint64_t ops;            /* elements or MACs computed */
};

void dla_work_init(struct dla_work *w, const char *unit);
void dla_work_read(struct dla_work *w, const struct dla_strided *s);
void dla_work_write(struct dla_work *w, const struct dla_strided *s);
void dla_work_ops(struct dla_work *w, uint64_t n);
/* read + written + ops, saturating. */
uint64_t dla_work_total(const struct dla_work *w);

/* Refuse (DLASIM_ERR_UNSUPPORTED) a layer whose total work exceeds the
 * caller's dlasim_options.max_layer_work; the message gives the unit, the
 * layer and the three parts of the count. */
int dla_exec_work_check(struct dla_exec *x, const struct dla_work *w);

/* Refuse (DLASIM_ERR_MEM) a strided cube whose extent, strides included,
 * leaves its port's address space, before the layer moves any byte; `what`
 * names the cube ("output cube", "input cube of transfer 3", ...).  For
 * engines whose DMA addresses do not wrap.  A refusal is a DMA fault (the
 * exec's `fault` hook hears it). */
int dla_exec_extent_check(struct dla_exec *x, const char *unit, const char *what, int is_write,
                          const struct dla_strided *s);

#endif

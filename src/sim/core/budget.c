/*
 * Work budget and DMA extents of a layer (see budget.h).  Saturating
 * arithmetic throughout: register values of up to 32 bits multiplied
 * together overflow 64 bits easily, and an overflowed count must never look
 * small.
 */
#include "sim/core/budget.h"

#include <inttypes.h>
#include <string.h>

#include "sim/core/dma.h"

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    return (a && b > UINT64_MAX / a) ? UINT64_MAX : a * b;
}

uint64_t dla_strided_bytes(const struct dla_strided *s)
{
    return sat_mul(sat_mul(sat_mul(s->line_bytes, s->lines), s->surfaces), s->batches);
}

uint64_t dla_strided_span(const struct dla_strided *s)
{
    if (!s->line_bytes || !s->lines || !s->surfaces || !s->batches) {
        return 0;
    }
    uint64_t last = sat_add(sat_add(sat_mul(s->lines - 1, s->line_stride),
                                    sat_mul(s->surfaces - 1, s->surf_stride)),
                            sat_mul(s->batches - 1, s->batch_stride));
    return sat_add(last, s->line_bytes);
}

void dla_work_init(struct dla_work *w, const char *unit)
{
    memset(w, 0, sizeof(*w));
    w->unit = unit;
}

void dla_work_read(struct dla_work *w, const struct dla_strided *s)
{
    w->read = sat_add(w->read, dla_strided_bytes(s));
}

void dla_work_write(struct dla_work *w, const struct dla_strided *s)
{
    w->written = sat_add(w->written, dla_strided_bytes(s));
}

void dla_work_ops(struct dla_work *w, uint64_t n)
{
    w->ops = sat_add(w->ops, n);
}

uint64_t dla_work_total(const struct dla_work *w)
{
    return sat_add(sat_add(w->read, w->written), w->ops);
}

int dla_exec_work_check(struct dla_exec *x, const struct dla_work *w)
{
    uint64_t limit = x->host->max_layer_work;
    uint64_t total = dla_work_total(w);
    if (!limit || total <= limit) {
        return 0;
    }
    return dla_exec_error(x, DLASIM_ERR_UNSUPPORTED,
                     "%s: the layer's work of %" PRIu64 " (%" PRIu64 " bytes read, %" PRIu64
                     " bytes written, %" PRIu64 " elements computed) exceeds the caller's "
                     "limit of %" PRIu64 " (max_layer_work)",
                     w->unit, total, w->read, w->written, w->ops, limit);
}

int dla_exec_extent_check(struct dla_exec *x, const char *unit, const char *what, int is_write,
                          const struct dla_strided *s)
{
    uint64_t span = dla_strided_span(s);
    uint64_t limit = dla_host_port_limit(x->host, s->port);
    if (!span || (s->base <= limit && span <= limit - s->base)) {
        return 0;
    }
    if (x->fault) {
        x->fault(x->owner, is_write);
    }
    if (!limit) {
        return dla_exec_error(x, DLASIM_ERR_MEM, "%s: DMA %s of the %s on CVIF: this configuration "
                         "has no secondary memory port", unit, is_write ? "write" : "read", what);
    }
    unsigned bits = 0;
    while (bits < 64 && (UINT64_C(1) << bits) < limit) {
        bits++;
    }
    return dla_exec_error(x, DLASIM_ERR_MEM,
                     "%s: DMA %s of the %s, 0x%" PRIx64 "+0x%" PRIx64 " (%" PRIu64
                     " line(s) of %" PRIu64 " bytes, line stride 0x%" PRIx64 ", %" PRIu64
                     " surface(s), surface stride 0x%" PRIx64 ", %" PRIu64
                     " batch(es), batch stride 0x%" PRIx64 ") on %s is beyond the %u-bit "
                     "address space (end 0x%" PRIx64 ")",
                     unit, is_write ? "write" : "read", what, s->base, span, s->lines,
                     s->line_bytes, s->line_stride, s->surfaces, s->surf_stride, s->batches,
                     s->batch_stride, s->port == DLASIM_PORT_CVIF ? "CVIF" : "DBB", bits, limit);
}

/*
 * The DMA path and errors of what runs on a device (see dma.h).
 */
#include "sim/core/dma.h"

#include <inttypes.h>
#include <stdio.h>

int dla_exec_verror(struct dla_exec *x, int status, const char *fmt, va_list ap)
{
    char where[64] = "";
    x->where(x->owner, where, sizeof(where));
    return dla_host_guest_error(x->host, status, where, fmt, ap);
}

int dla_exec_error(struct dla_exec *x, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dla_exec_verror(x, status, fmt, ap);
    va_end(ap);
    return status;
}

/* After a burst: the traffic it made, or the fault and the message. */
static int burst_done(struct dla_exec *x, const char *unit, int port, int write, uint64_t addr,
                      size_t len, int rc, const char *why)
{
    if (rc) {
        if (x->fault) {
            x->fault(x->owner, write);
        }
        return dla_exec_error(x, rc, "%s: DMA %s of 0x%" PRIx64 "+0x%zx on %s failed: %s",
                              unit ? unit : "?", write ? "write" : "read", addr, len,
                              dla_port_name(port), why);
    }
    if (x->traffic) {
        x->traffic(x->owner, write, len);
    }
    return 0;
}

int dla_exec_dma_read(struct dla_exec *x, const char *unit, int port, uint64_t addr, void *dst,
                      size_t len)
{
    char why[256];
    int rc = dla_mem_port_read(&x->host->port[port & 1], addr, dst, len, why, sizeof(why));
    return burst_done(x, unit, port, 0, addr, len, rc, why);
}

int dla_exec_dma_write(struct dla_exec *x, const char *unit, int port, uint64_t addr,
                       const void *src, size_t len)
{
    char why[256];
    int rc = dla_mem_port_write(&x->host->port[port & 1], addr, src, len, why, sizeof(why));
    return burst_done(x, unit, port, 1, addr, len, rc, why);
}

static int contiguous(const struct dla_lines *l)
{
    return l->rows == 1 || l->stride == l->line_bytes;
}

static uint64_t line_addr(const struct dla_lines *l, uint32_t y)
{
    return (l->base + (uint64_t)y * l->stride) & l->wrap_mask;
}

int dla_exec_dma_read_lines(struct dla_exec *x, const char *unit, const struct dla_lines *l,
                            void *dst)
{
    uint8_t *p = dst;
    if (contiguous(l)) {
        return dla_exec_dma_read(x, unit, l->port, line_addr(l, 0), p, l->line_bytes * l->rows);
    }
    for (uint32_t y = 0; y < l->rows; y++) {
        int rc = dla_exec_dma_read(x, unit, l->port, line_addr(l, y), p + (size_t)y * l->line_bytes,
                                   l->line_bytes);
        if (rc) {
            return rc;
        }
    }
    return 0;
}

int dla_exec_dma_write_lines(struct dla_exec *x, const char *unit, const struct dla_lines *l,
                             const void *src)
{
    const uint8_t *p = src;
    if (contiguous(l)) {
        return dla_exec_dma_write(x, unit, l->port, line_addr(l, 0), p, l->line_bytes * l->rows);
    }
    for (uint32_t y = 0; y < l->rows; y++) {
        int rc = dla_exec_dma_write(x, unit, l->port, line_addr(l, y),
                                    p + (size_t)y * l->line_bytes, l->line_bytes);
        if (rc) {
            return rc;
        }
    }
    return 0;
}

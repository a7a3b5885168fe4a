/*
 * Host services shared by every device personality (see host.h).
 */
#include "sim/core/host.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned online_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1u;
}

void dla_host_init(struct dla_host *h, const struct dlasim_options *opt)
{
    memset(h, 0, sizeof(*h));
    h->irq_cb = opt->irq_cb;
    h->irq_opaque = opt->irq_opaque;
    h->log_mask = opt->log_mask;
    h->log_cb = opt->log_cb;
    h->log_opaque = opt->log_opaque;
    h->threads = opt->threads ? opt->threads : online_cores();
    h->threads_always = opt->threads_always;
    h->max_layer_work = opt->max_layer_work;
    h->strict_mem = opt->strict_mem;
    h->mem_budget.max = opt->max_host_mem;
}

const char *dla_port_name(int port)
{
    return port == DLASIM_PORT_CVIF ? "CVIF" : "DBB";
}

int dla_host_port_init(struct dla_host *h, enum dlasim_port port, int present, uint64_t limit,
                       const struct dlasim_mem_ops *ops, void *opaque, char *err,
                       size_t errlen)
{
    struct dla_mem_port *p = &h->port[port & 1];
    p->present = present;
    p->limit = limit;
    if (ops) {
        if (!ops->read || !ops->write) {
            snprintf(err, errlen, "dlasim_create: %s memory ops without a %s callback",
                     dla_port_name(port), ops->read ? "write" : "read");
            return DLASIM_ERR_INVAL;
        }
        p->ops = ops;
        p->opaque = opaque;
        return 0;
    }
    if (!present) {
        return 0;
    }
    p->sparse = dla_sparse_mem_create(h->strict_mem, &h->mem_budget);
    if (!p->sparse) {
        snprintf(err, errlen, "dlasim_create: out of host memory for the %s memory",
                 dla_port_name(port));
        return DLASIM_ERR_NOMEM;
    }
    return 0;
}

void dla_host_free(struct dla_host *h)
{
    for (unsigned i = 0; i < 2; i++) {
        dla_sparse_mem_destroy(h->port[i].sparse);
        h->port[i].sparse = NULL;
    }
}

uint64_t dla_host_port_limit(const struct dla_host *h, int port)
{
    const struct dla_mem_port *p = &h->port[port & 1];
    return p->present ? p->limit : 0;
}

void dla_host_vlog(const struct dla_host *h, unsigned category, const char *fmt, va_list ap)
{
    if (!(h->log_mask & category) || !h->log_cb) {
        return;
    }
    char msg[DLA_HOST_ERR_LEN];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    h->log_cb(h->log_opaque, category, msg);
}

void dla_host_log(const struct dla_host *h, unsigned category, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dla_host_vlog(h, category, fmt, ap);
    va_end(ap);
}

int dla_host_api_error(struct dla_host *h, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->err, sizeof(h->err), fmt, ap);
    va_end(ap);
    return status;
}

int dla_host_guest_error(struct dla_host *h, int status, const char *where, const char *fmt,
                         va_list ap)
{
    char msg[768];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    snprintf(h->err, sizeof(h->err), "%s: %s", where, msg);
    dla_host_log(h, DLASIM_LOG_GUEST_ERROR, "%s", h->err);
    return status;
}

/* A port the API may name (whether the device has it is the port's to say). */
static int check_api_port(struct dla_host *h, enum dlasim_port port)
{
    if ((unsigned)port > DLASIM_PORT_CVIF) {
        return dla_host_api_error(h, DLASIM_ERR_INVAL, "memory port %d does not exist",
                                  (int)port);
    }
    return 0;
}

int dla_host_mem_read(struct dla_host *h, enum dlasim_port port, uint64_t addr, void *dst,
                      size_t len)
{
    char why[256];
    int rc = check_api_port(h, port);
    if (!rc && !dst && len) {
        rc = dla_host_api_error(h, DLASIM_ERR_INVAL, "dlasim_mem_read: dst is NULL (len %zu)",
                                len);
    }
    if (!rc) {
        rc = dla_mem_port_read(&h->port[port], addr, dst, len, why, sizeof(why));
        if (rc) {
            dla_host_api_error(h, rc, "%s read 0x%" PRIx64 "+0x%zx: %s", dla_port_name(port),
                               addr, len, why);
        }
    }
    return rc;
}

int dla_host_mem_write(struct dla_host *h, enum dlasim_port port, uint64_t addr,
                       const void *src, size_t len)
{
    char why[256];
    int rc = check_api_port(h, port);
    if (!rc && !src && len) {
        rc = dla_host_api_error(h, DLASIM_ERR_INVAL, "dlasim_mem_write: src is NULL (len %zu)",
                                len);
    }
    if (!rc) {
        rc = dla_mem_port_write(&h->port[port], addr, src, len, why, sizeof(why));
        if (rc) {
            dla_host_api_error(h, rc, "%s write 0x%" PRIx64 "+0x%zx: %s", dla_port_name(port),
                               addr, len, why);
        }
    }
    return rc;
}

void dla_irq_line_set(struct dla_host *h, struct dla_irq_line *line, int level)
{
    level = level != 0;
    if (level == line->level) {
        return;
    }
    line->level = level;
    if (line->reports && h->irq_cb) {
        h->irq_cb(h->irq_opaque, level);
    }
}

void *dla_scratch_get(struct dla_scratch *s, unsigned slot, size_t size)
{
    if (slot >= DLA_SCRATCH_SLOTS) {
        return NULL;
    }
    return dla_scratch_grow(&s->buf[slot], &s->size[slot], size ? size : 1) ? NULL
                                                                            : s->buf[slot];
}

int dla_scratch_grow(void **buf, size_t *cap, size_t bytes)
{
    if (bytes <= *cap) {
        return 0;
    }
    void *p = malloc(bytes);
    if (!p) {
        return DLASIM_ERR_NOMEM;
    }
    free(*buf);
    *buf = p;
    *cap = bytes;
    return 0;
}

void dla_scratch_free(struct dla_scratch *s)
{
    for (unsigned i = 0; i < DLA_SCRATCH_SLOTS; i++) {
        free(s->buf[i]);
        s->buf[i] = NULL;
        s->size[i] = 0;
    }
}

/*
 * The CSB access path every device shares (see csb.h).
 */
#include "sim/core/csb.h"

#include <stdarg.h>
#include <stdio.h>

int dla_csb_unaligned_write(struct dla_host *h, uint32_t addr)
{
    return dla_host_api_error(h, DLASIM_ERR_INVAL, "CSB write to unaligned address 0x%x", addr);
}

int dla_csb_check_read(struct dla_host *h, uint32_t addr, uint32_t *val)
{
    if (!val) {
        return dla_host_api_error(h, DLASIM_ERR_INVAL, "dlasim_csb_read of 0x%x: val is NULL",
                                  addr);
    }
    *val = 0;
    if (addr & 3u) {
        return dla_host_api_error(h, DLASIM_ERR_INVAL, "CSB read of unaligned address 0x%x",
                                  addr);
    }
    return 0;
}

void dla_csb_log_write_line(const struct dla_host *h, const struct regdb *db, uint32_t addr,
                            uint32_t val, const char *note)
{
    char name[96];
    dla_host_log(h, DLASIM_LOG_REG, "reg_write(%s, 0x%x);%s",
                 regdb_reg_name(db, addr, name, sizeof(name)), val, note);
}

void dla_csb_log_store(struct dla_host *h, struct dla_regfile *rf, uint32_t addr, uint32_t val,
                       const char *where, enum dla_write_effect effect)
{
    char name[96];
    switch (effect) {
    case DLA_WRITE_UNMAPPED:
        dla_host_log(h, DLASIM_LOG_GUEST_ERROR, "%sCSB write 0x%x to unmapped address 0x%x "
                     "ignored", where, val, addr);
        break;
    case DLA_WRITE_DROPPED_ENABLED:
        dla_host_log(h, DLASIM_LOG_GUEST_ERROR,
                     "%sCSB write 0x%x to %s dropped: its group is enabled (spec 001 ping-pong)",
                     where, val, regdb_reg_name(rf->db, addr, name, sizeof(name)));
        break;
    default:
        break;
    }
}

void dla_desc_init(struct dla_desc *d, char *buf, size_t len)
{
    d->buf = buf;
    d->len = buf ? len : 0;
    d->used = 0;
    if (d->len) {
        buf[0] = '\0';
    }
}

void dla_desc_add(struct dla_desc *d, const char *fmt, ...)
{
    if (d->used + 2 >= d->len) {
        return;
    }
    if (d->used) {
        d->used += (size_t)snprintf(d->buf + d->used, d->len - d->used, "; ");
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(d->buf + d->used, d->len - d->used, fmt, ap);
    va_end(ap);
    d->used += n > 0 ? (size_t)n : 0;
    if (d->used > d->len) {
        d->used = d->len;
    }
}

unsigned dla_csb_describe_enabled(const struct dla_regfile *rf, const char *prefix,
                                  struct dla_desc *d)
{
    unsigned n = 0;
    for (unsigned u = 0; u < rf->db->n_units && u < DLA_REGFILE_MAX_UNITS; u++) {
        for (unsigned g = 0; g < 2; g++) {
            if (rf->unit[u].present && dla_regfile_op_en(rf, u, g)) {
                dla_desc_add(d, "%s%s group %u enabled", prefix, rf->db->units[u].name, g);
                n++;
            }
        }
    }
    return n;
}

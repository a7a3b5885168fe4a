/*
 * The CSB access path every device shares (NVDLA: src/sim/nvdla/device.c,
 * RK3588: src/sim/rk3588/rk_npu.c): argument checks, the DLASIM_LOG_REG
 * line, the register file's write with its guest-error logs, and the
 * description of what keeps a device busy.  What a stored write then does
 * (GLB, BDMA's queue, the PC, GLOBAL.OPERATION_ENABLE) is the device's.
 */
#ifndef DLASIM_SIM_CORE_CSB_H
#define DLASIM_SIM_CORE_CSB_H

#include <stddef.h>
#include <stdint.h>

#include "regs/regdb.h"
#include "sim/core/host.h"
#include "sim/core/regfile.h"

/* The out-of-line parts of the inline functions below (csb.c): the
 * messages, taken only when there is something to say. */
int dla_csb_unaligned_write(struct dla_host *h, uint32_t addr);
void dla_csb_log_write_line(const struct dla_host *h, const struct regdb *db, uint32_t addr,
                            uint32_t val, const char *note);
void dla_csb_log_store(struct dla_host *h, struct dla_regfile *rf, uint32_t addr, uint32_t val,
                       const char *where, enum dla_write_effect effect);

/* 0, or DLASIM_ERR_INVAL with the message for an unaligned address (and,
 * for reads, a NULL val; *val is 0 after a refused read).  Inline: a
 * network's inference makes ~10^5 CSB writes. */
static inline int dla_csb_check_write(struct dla_host *h, uint32_t addr)
{
    return addr & 3u ? dla_csb_unaligned_write(h, addr) : 0;
}
int dla_csb_check_read(struct dla_host *h, uint32_t addr, uint32_t *val);

/* "reg_write(NVDLA_PDP.D_OP_ENABLE_0, 0x1);<note>" when DLASIM_LOG_REG is on;
 * `addr` is the database's address. */
static inline void dla_csb_log_write(const struct dla_host *h, const struct regdb *db,
                                     uint32_t addr, uint32_t val, const char *note)
{
    if (h->log_mask & DLASIM_LOG_REG) {
        dla_csb_log_write_line(h, db, addr, val, note);
    }
}

/* The register file's write; an unmapped address and a write dropped
 * because its group is enabled (spec 001 ping-pong) are logged as guest
 * errors, prefixed by `where` ("", "core 1: ").  Returns the effect.
 * dla_csb_logged: the same for a write already done (its effect). */
static inline enum dla_write_effect dla_csb_logged(struct dla_host *h, struct dla_regfile *rf,
                                                   uint32_t addr, uint32_t val,
                                                   const char *where,
                                                   enum dla_write_effect effect)
{
    if (effect == DLA_WRITE_UNMAPPED || effect == DLA_WRITE_DROPPED_ENABLED) {
        dla_csb_log_store(h, rf, addr, val, where, effect);
    }
    return effect;
}

static inline enum dla_write_effect dla_csb_store(struct dla_host *h, struct dla_regfile *rf,
                                                  uint32_t addr, uint32_t val, const char *where)
{
    return dla_csb_logged(h, rf, addr, val, where, dla_regfile_write(rf, addr, val));
}

/* A busy description being written (dlasim_busy): items joined by "; ". */
struct dla_desc {
    char *buf;   /* may be NULL */
    size_t len;
    size_t used;
};
void dla_desc_init(struct dla_desc *d, char *buf, size_t len);
void dla_desc_add(struct dla_desc *d, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Adds "<prefix><UNIT> group <g> enabled" for every enabled group of a
 * present unit; returns how many. */
unsigned dla_csb_describe_enabled(const struct dla_regfile *rf, const char *prefix,
                                  struct dla_desc *d);

#endif

/*
 * A small cache of an engine's decoded configurations, keyed on the exact
 * raw values of its registers (issue 18: an inference replays the same
 * register programs every image, so an engine's decode and the plans it
 * derives from the registers alone are paid once per distinct programming).
 *
 * The key is table-driven from the register database (src/regs/regdb.h):
 * every register of the unit and of its linked RDMA unit that software can
 * write (kind PLAIN, a non-zero write mask), the unit's read in the group
 * being executed and the RDMA's in its own consumer group, plus both group
 * numbers.  A decode that reads only those registers and the device's
 * constant state (its configuration, the instruction set) is then a pure
 * function of the key: a hit hands back what the decode produced for the
 * same values.  Only successful decodes are kept (a refused programming is
 * decoded, and its error reported, every time).
 * Entries are replaced round-robin; the cache lives with the device
 * (struct dla_conv_state) and needs no reset (the key is the values).
 */
#ifndef DLASIM_SIM_NVDLA_DECODE_CACHE_H
#define DLASIM_SIM_NVDLA_DECODE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "sim/nvdla/dla.h"

#define DLA_DCACHE_WAYS 4
#define DLA_DCACHE_MAX_REGS 128

struct dla_dcache {
    enum nvdla_unit unit, linked;          /* linked: its RDMA, read in its consumer group */
    unsigned n_regs;                       /* registers in a key */
    int ready;                             /* initialised and the key complete */
    uint32_t addr[DLA_DCACHE_MAX_REGS];    /* their CSB addresses */
    uint8_t of_linked[DLA_DCACHE_MAX_REGS];
    unsigned used, next;                   /* ways holding an entry, next to replace */
    /* [way][1 + n_regs]; row DLA_DCACHE_WAYS: the key of the last lookup */
    uint32_t key[DLA_DCACHE_WAYS + 1][DLA_DCACHE_MAX_REGS + 1];
    void *cfg[DLA_DCACHE_WAYS];            /* owned decoded configurations */
    uint64_t hits, misses;
};

/* The registers of `unit` and `linked` (a unit, or NVDLA_UNIT_COUNT for
 * none) that make the key, from the register database.  A unit with more
 * such registers than a key holds leaves the cache off (every lookup a
 * miss, nothing kept): never a partial key. */
void dla_dcache_init(struct dla_dcache *c, enum nvdla_unit unit, enum nvdla_unit linked);
void dla_dcache_free(struct dla_dcache *c);
/* Read the key of the layer in `group`; the configuration kept under it, or
 * NULL (a miss: the key stays for dla_dcache_keep). */
const void *dla_dcache_find(struct dla_dcache *c, const struct dla_dev *d, unsigned group);
/* After a miss: keep `cfg` (malloc'd) under the key the last
 * dla_dcache_find read, evicting the oldest entry; 1 if the cache took it
 * (and frees it), 0 if it is off (the caller still owns cfg). */
int dla_dcache_keep(struct dla_dcache *c, void *cfg);

#endif

/*
 * Two memory windows of a device, one on each port (DBB, CVIF), filled with
 * random bytes and mirrored on the host, where a test's reference applies
 * what the hardware must do; then compared byte for byte, gaps included.
 */
#ifndef DLASIM_TESTS_MIRROR_H
#define DLASIM_TESTS_MIRROR_H

#include <stdint.h>

#include "dlasim/dlasim.h"

struct world {
    struct dlasim_dev *dev;
    uint32_t size;      /* bytes of each window */
    uint64_t base[2];   /* device address of each window, by enum dlasim_port */
    uint8_t *mirror[2]; /* by port: what memory must hold */
};

/* A device of `config` (default options) with both windows filled from the
 * PRNG state `seed`, DBB first. */
void world_init(struct world *w, const char *config, uint32_t size, const uint64_t base[2],
                uint64_t *seed);
/* Both windows hold what their mirrors say; `what` names the check. */
void world_check(const struct world *w, const char *what);
void world_free(struct world *w);

#endif

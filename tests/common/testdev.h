/*
 * A device under test through the public API: creation that fails the test
 * with the library's reason, and CSB / memory accesses that assert success.
 */
#ifndef DLASIM_TESTS_TESTDEV_H
#define DLASIM_TESTS_TESTDEV_H

#include <stddef.h>
#include <stdint.h>

#include "dlasim/dlasim.h"

/* A device with options `o` (NULL: defaults); fails the test if refused. */
struct dlasim_dev *tdev_create(const struct dlasim_options *o);
/* A device of `config` with `novr` overrides and `threads` worker threads. */
struct dlasim_dev *tdev_new(const char *config, const char *const *ovr, size_t novr,
                            unsigned threads);

/* CSB write / read of one register. */
void wr(struct dlasim_dev *dev, uint32_t addr, uint32_t v);
uint32_t rd(struct dlasim_dev *dev, uint32_t addr);
/* Bytes of the primary memory (DBB). */
void mem_wr(struct dlasim_dev *dev, uint64_t addr, const void *p, size_t n);
void mem_rd(struct dlasim_dev *dev, uint64_t addr, void *p, size_t n);
/* A scalability parameter of the device's configuration. */
uint32_t param(struct dlasim_dev *dev, const char *name);

/* Program (31 register writes) and enable a 1x1 max-pooling layer that
 * copies an 8x8x8 int8 cube (one surface, line stride 0x40) from src to dst. */
void tdev_pdp_copy(struct dlasim_dev *dev, uint64_t src, uint64_t dst);

/* `rc` (a dlasim_run/step result) is `status` and the device's last error
 * message contains `needle`. */
void expect_error(struct dlasim_dev *dev, int rc, int status, const char *needle);

/* A cmocka test NAME whose body is the call FN(...). */
#define RUN_TEST(NAME, FN, ...)                                                                 \
    static void NAME(void **state)                                                              \
    {                                                                                           \
        (void)state;                                                                            \
        FN(__VA_ARGS__);                                                                        \
    }

#endif

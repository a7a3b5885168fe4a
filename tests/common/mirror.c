/* Mirrored memory windows (see mirror.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "mirror.h"
#include "rng.h"
#include "testdev.h"

/* the mirrors are indexed by port */
_Static_assert(DLASIM_PORT_DBB == 0 && DLASIM_PORT_CVIF == 1, "port numbers");

void world_init(struct world *w, const char *config, uint32_t size, const uint64_t base[2],
                uint64_t *seed)
{
    w->dev = tdev_new(config, NULL, 0, 0);
    w->size = size;
    for (int p = 0; p < 2; p++) {
        w->base[p] = base[p];
        w->mirror[p] = malloc(size);
        assert_non_null(w->mirror[p]);
        splitmix64_fill(seed, w->mirror[p], size);
        assert_int_equal(dlasim_mem_write(w->dev, (enum dlasim_port)p, base[p], w->mirror[p],
                                          size), 0);
    }
}

void world_check(const struct world *w, const char *what)
{
    uint8_t *got = malloc(w->size);
    assert_non_null(got);
    for (int p = 0; p < 2; p++) {
        assert_int_equal(dlasim_mem_read(w->dev, (enum dlasim_port)p, w->base[p], got, w->size),
                         0);
        for (uint32_t i = 0; i < w->size; i++) {
            if (got[i] != w->mirror[p][i]) {
                fail_msg("%s: port %d offset 0x%x: got 0x%02x, expected 0x%02x", what, p, i,
                         got[i], w->mirror[p][i]);
            }
        }
    }
    free(got);
}

void world_free(struct world *w)
{
    dlasim_destroy(w->dev);
    free(w->mirror[0]);
    free(w->mirror[1]);
}

/*
 * The public face of the convolution kernel (include/dlasim/kernel.h): the
 * public geometry converted to the kernel's own, then the kernel itself.
 */
#include <stddef.h>

#include "dlasim/kernel.h"
#include "common/team.h"
#include "kernels/conv_s8.h"
#include "kernels/conv_s8_impl.h"

static struct dla_conv_geom geom_of(const struct dlasim_conv_geom *g)
{
    struct dla_conv_geom k = {
        .in_w = g->in_w, .in_h = g->in_h, .in_c = g->in_c,
        .out_w = g->out_w, .out_h = g->out_h, .out_k = g->out_k,
        .k_w = g->k_w, .k_h = g->k_h,
        .stride_x = g->stride_x, .stride_y = g->stride_y,
        .dil_x = g->dil_x, .dil_y = g->dil_y,
    };
    return k;
}

int dlasim_conv_s8(const struct dlasim_conv_geom *g, const int8_t *in, const int8_t *wt,
                   int32_t *out, unsigned threads)
{
    if (!g) {
        return DLASIM_ERR_INVAL;
    }
    struct dla_conv_geom k = geom_of(g);
    return dla_conv_s8(&k, in, wt, out, threads);
}

int dlasim_conv_s8_ref(const struct dlasim_conv_geom *g, const int8_t *in, const int8_t *wt,
                       int32_t *out)
{
    if (!g || !in || !wt || !out) {
        return DLASIM_ERR_INVAL;
    }
    struct dla_conv_geom k = geom_of(g);
    int rc = dla_conv_geom_check(&k);
    if (!rc) {
        dla_conv_s8_ref(&k, in, wt, out);
    }
    return rc;
}

const char *dlasim_conv_s8_isa(void)
{
    return dla_conv_s8_isa();
}

const char *dlasim_conv_s8_isa_name(unsigned i)
{
    return i < DLA_CONV_ISA_COUNT ? dla_conv_isa_name((enum dla_conv_isa)i) : NULL;
}

int dlasim_conv_s8_on_isa(unsigned i, const struct dlasim_conv_geom *g, const int8_t *in,
                          const int8_t *wt, int32_t *out, unsigned threads)
{
    if (!g || i >= DLA_CONV_ISA_COUNT) {
        return DLASIM_ERR_INVAL;
    }
    struct dla_conv_geom k = geom_of(g);
    struct dla_conv_opts o = {(enum dla_conv_isa)i, -1, 0, threads};
    return dla_conv_s8_opts(&o, &k, in, wt, out);
}

/* The public pack and pool are the kernel's own objects under opaque
 * public names: never dereferenced as the public type. */
int dlasim_conv_wpack_build(const struct dlasim_conv_geom *g, const int8_t *wt,
                            struct dlasim_conv_wpack **out)
{
    if (!g || !out) {
        return DLASIM_ERR_INVAL;
    }
    struct dla_conv_geom k = geom_of(g);
    struct dla_conv_wpack *w = NULL;
    int rc = dla_conv_wpack_build(&k, wt, &w);
    *out = (struct dlasim_conv_wpack *)w;
    return rc;
}

void dlasim_conv_wpack_free(struct dlasim_conv_wpack *w)
{
    dla_conv_wpack_free((struct dla_conv_wpack *)w);
}

int dlasim_conv_pool_create(unsigned threads, struct dlasim_conv_pool **out)
{
    if (!out) {
        return DLASIM_ERR_INVAL;
    }
    /* NULL with one thread: dlasim_conv_s8_packed then runs on the caller */
    *out = (struct dlasim_conv_pool *)dla_team_create(threads);
    return threads > 1 && *out == NULL ? DLASIM_ERR_NOMEM : 0;
}

void dlasim_conv_pool_destroy(struct dlasim_conv_pool *pool)
{
    dla_team_destroy((struct dla_team *)pool);
}

int dlasim_conv_s8_packed(const struct dlasim_conv_geom *g, const int8_t *in,
                          const struct dlasim_conv_wpack *w, int32_t *out, unsigned threads,
                          struct dlasim_conv_pool *pool)
{
    if (!g) {
        return DLASIM_ERR_INVAL;
    }
    struct dla_conv_geom k = geom_of(g);
    return dla_conv_s8_packed(&k, in, (const struct dla_conv_wpack *)w, out, threads,
                              (struct dla_team *)pool);
}

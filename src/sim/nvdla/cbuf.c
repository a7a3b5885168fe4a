/*
 * CBUF — the convolution buffer and its bookkeeping across layers.
 *
 * No CSB registers of its own: D_BANK (DATA_BANK, WEIGHT_BANK) of CDMA and
 * CSC split the NVDLA_CBUF_BANK_NUMBER banks between data (first) and
 * weights; D_ENTRY_PER_SLICE gives the entries one slice of data takes.
 * CDMA's S_CBUF_FLUSH_STATUS reads "done" after reset.
 *
 * Modelled (ref: cmod/cdma ActDataReadRequestSequenceThread,
 * WeightReadRequestSequenceThread; cmod/csc DataLoadSequenceThread,
 * WeightLoadSequenceThread; vmod/nvdla/cdma NV_NVDLA_CDMA_dc.v/_wt.v config
 * checks):
 *   - bank ownership: DATA_BANK + WEIGHT_BANK must not exceed the banks;
 *     all slices of a layer must fit the data banks (CSC only starts once
 *     the whole input is in CBUF and releases at the end of the layer); a
 *     whole weight stream must fit the weight banks when it is kept
 *     (SKIP_WEIGHT_RLS), one kernel group when weights stream through;
 *   - data reuse: with the previous layer's SKIP_DATA_RLS, DATA_REUSE uses
 *     all its slices and fetches nothing; without it, DATA_REUSE keeps the
 *     slices the previous layer did not release (D_RELEASE) and appends the
 *     newly fetched ones; a change of CONV_MODE, banks, input format or
 *     precision starts from an empty CBUF;
 *   - weight reuse: with the previous layer's SKIP_WEIGHT_RLS and the same
 *     mode/banks/format, WEIGHT_REUSE uses the weights held in CBUF and does
 *     not fetch; asking for it otherwise is refused (the C model fails);
 *   - at the end of a layer SKIP_DATA_RLS keeps every slice, otherwise
 *     RLS_SLICES+1 slices are released and the rest stay for the next
 *     layer; SKIP_WEIGHT_RLS keeps the weights.
 *
 *   - the weight ring (vmod/nvdla/cdma NV_NVDLA_CDMA_wt.v wt_cbuf_wr_idx,
 *     vmod/nvdla/csc NV_NVDLA_CSC_wl.v wt_entry_st/wt_entry_end): CDMA
 *     writes the weight stream into the weight banks as a ring and does not
 *     restart its write pointer at a layer (wt_cbuf_wr_idx_set only when it
 *     is 0); CSC reads from wt_entry_st, which advances by the entries it
 *     releases: per kernel group, the entries its kernels' bytes occupy.
 *     Both restart only when CSC pends on a change of D_BANK (NV_NVDLA_CSC_sg.v
 *     need_pending -> sc2cdma_wt_pending_req -> CDMA clear_all, CSC
 *     cbuf_reset) and after reset.  D_WEIGHT_BYTES is padded to 128 bytes,
 *     so a layer that streams and releases weights whose bytes are not a
 *     multiple of the entries leaves CDMA's pointer ahead of CSC's: the next
 *     layer's CSC reads those entries (the end of the previous stream) first
 *     and its own stream that many entries late (dla_cbuf_weight_lag).
 *     A layer that keeps its weights (SKIP_WEIGHT_RLS) or reuses them is
 *     taken to leave the pointers in step (its release covers what was
 *     written).
 *
 * Modelling choice: CBUF holds the data as slices in CSC's view (see
 * cbuf.h), not as raw entries; reusing slices whose geometry differs from
 * the reading layer's is refused instead of reading misaligned entries.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/nvdla/cbuf.h"
#include "kernels/conv_s8.h"
#include "sim/core/host.h"
#include "sim/nvdla/units.h"

int dla_conv_state_create(struct dla_dev *d, struct dla_conv_state **out)
{
    (void)d;
    *out = calloc(1, sizeof(**out));
    if (*out == NULL) {
        return DLASIM_ERR_NOMEM;
    }
    /* PDP with the read DMA whose registers it reads (units.c) */
    dla_dcache_init(&(*out)->pdp_dcache, NVDLA_UNIT_PDP,
                    (enum nvdla_unit)dla_unit_table[NVDLA_UNIT_PDP].rdma);
    return 0;
}

void dla_conv_state_destroy(struct dla_conv_state *s)
{
    if (!s) {
        return;
    }
    free(s->data.buf ? s->data.buf - DLA_CBUF_GUARD : NULL);
    free(s->wt);
    free(s->wt_tail);
    free(s->fetch);
    free(s->in);
    free(s->wplanar);
    free(s->wdec_src);
    dla_wt_cache_free(&s->wcache);
    dla_dcache_free(&s->pdp_dcache);
    dla_sdp_cache_free(s->sdp_cache);
    free(s->wchunk);
    free(s->acc);
    free(s->cube);
    free(s->in16);
    free(s->wt16);
    free(s->to_pdp);
    free(s);
}

void dla_cbuf_forget(struct dla_conv_state *s)
{
    s->have_prev = 0;
    s->data.n = 0;
    s->data.atoms_h = 0;
    s->data.atoms_view = NULL;
    s->wt_len = 0;
    s->wt_deferred = 0;
    s->wt_lag = 0;
}

void dla_conv_reset(struct dla_dev *d)
{
    struct dla_conv_state *s = dla_dev_conv_state(d);
    if (s) {
        dla_cbuf_forget(s);
    }
    /* ref: cmod/cdma Reset: the flush status reads done */
    dla_reg_hw_set(d, NVDLA_CDMA_S_CBUF_FLUSH_STATUS_0, 0,
                   NVDLA_CDMA_S_CBUF_FLUSH_STATUS_0_FLUSH_DONE__MASK);
}

int dla_conv_scratch(struct dla_dev *d, void **buf, size_t *cap, size_t bytes)
{
    if (dla_scratch_grow(buf, cap, bytes)) { /* src/sim/core/host.c */
        return dla_error(d, DLASIM_ERR_NOMEM, "CONV: no memory for %zu bytes of scratch", bytes);
    }
    return 0;
}

int32_t *dla_cacc_cube_place(struct dla_conv_state *s, uint64_t elems, uint64_t below)
{
    const uint64_t side = below > elems - below ? below : elems - below;
    if (side > s->cube_half) {
        /* a whole number of lines a side: the middle on a line boundary */
        const uint64_t half = (side + 15u) & ~(uint64_t)15u;
        void *p = half <= SIZE_MAX / 8u ? aligned_alloc(64, (size_t)half * 8u) : NULL;
        if (!p) {
            return NULL;
        }
        free(s->cube);
        s->cube = p;
        s->cube_half = (size_t)half;
    }
    return s->cube + s->cube_half - below;
}

int32_t *dla_cacc_cube_middle(struct dla_conv_state *s, uint64_t below, uint64_t above)
{
    if (s == NULL || s->cube == NULL || below > s->cube_half || above > s->cube_half) {
        return NULL;
    }
    return s->cube + s->cube_half - below;
}

/* ---- capacity ------------------------------------------------------------ */

int dla_cbuf_validate(struct dla_dev *d, const struct dla_cdma_cfg *c)
{
    const struct dla_config *cfg = dla_cfg(d);
    const uint64_t bank_bytes = (uint64_t)cfg->cbuf_bank_depth * cfg->cbuf_bank_width;
    if (c->data_bank + c->weight_bank > cfg->cbuf_bank_number) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "CDMA: D_BANK_0 DATA_BANK=%u + WEIGHT_BANK=%u (%u + %u banks) exceed the "
                         "%u CBUF banks",
                         c->data_bank - 1, c->weight_bank - 1, c->data_bank, c->weight_bank,
                         cfg->cbuf_bank_number);
    }
    uint64_t slices = (uint64_t)c->height * c->batches;
    uint64_t need = slices * c->entries;
    uint64_t have = (uint64_t)c->data_bank * cfg->cbuf_bank_depth;
    if (need > have) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "CDMA: %llu slices of D_ENTRY_PER_SLICE_0.ENTRIES+1=%u entries need %llu "
                         "CBUF entries but D_BANK_0.DATA_BANK=%u gives %llu",
                         (unsigned long long)slices, c->entries, (unsigned long long)need,
                         c->data_bank - 1, (unsigned long long)have);
    }
    uint64_t wt_have = (uint64_t)c->weight_bank * bank_bytes;
    if (c->skip_weight_rls && c->weight_bytes > wt_have) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "CDMA: D_WEIGHT_BYTES_0=%u do not fit the %llu bytes of "
                         "D_BANK_0.WEIGHT_BANK=%u but D_MISC_CFG_0.SKIP_WEIGHT_RLS keeps them all",
                         c->weight_bytes, (unsigned long long)wt_have, c->weight_bank - 1);
    }
    uint32_t group_k = dla_conv_kernels_per_group(cfg, c->proc_precision);
    uint32_t kpg = c->weight_kernel < group_k ? c->weight_kernel : group_k;
    uint64_t group = (uint64_t)kpg * c->byte_per_kernel;
    if (group > wt_have) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "CDMA: a kernel group (%u kernels of D_WEIGHT_SIZE_0.BYTE_PER_KERNEL+1=%u "
                         "bytes) does not fit the %llu bytes of D_BANK_0.WEIGHT_BANK=%u",
                         kpg, c->byte_per_kernel, (unsigned long long)wt_have,
                         c->weight_bank - 1);
    }
    return 0;
}

/* ---- reuse decisions ------------------------------------------------------ */

static int same_setup(const struct dla_conv_state *s, const struct dla_cdma_cfg *c)
{
    return s->have_prev && s->prev_conv_mode == c->conv_mode && s->prev_data_bank == c->data_bank &&
           s->prev_weight_bank == c->weight_bank && s->prev_fmt == c->fmt &&
           s->prev_precision == c->proc_precision;
}

int dla_cbuf_plan(struct dla_dev *d, const struct dla_conv_state *s, const struct dla_cdma_cfg *c,
                  enum dla_cbuf_use *data_use, enum dla_cbuf_use *weight_use)
{
    int same = same_setup(s, c);
    *data_use = DLA_CBUF_FRESH;
    if (same && c->data_reuse) {
        *data_use = s->prev_skip_data_rls ? DLA_CBUF_REUSE : DLA_CBUF_PARTIAL;
    }
    *weight_use = DLA_CBUF_FRESH;
    if (c->weight_reuse && s->have_prev) {
        /* ref: cmod/cdma WeightReadRequestSequenceThread: weight reuse needs
         * the previous layer's SKIP_WEIGHT_RLS and the same banks */
        if (!s->prev_skip_weight_rls || !same) {
            return dla_error(d, DLASIM_ERR_PROG,
                             "CDMA: D_MISC_CFG_0.WEIGHT_REUSE=1 but the previous layer %s",
                             !s->prev_skip_weight_rls
                                 ? "released its weights (SKIP_WEIGHT_RLS=0)"
                                 : "used another CONV_MODE, D_BANK_0, input format or "
                                   "precision");
        }
        if (s->wt_len < c->weight_bytes) {
            return dla_error(d, DLASIM_ERR_PROG,
                             "CDMA: D_MISC_CFG_0.WEIGHT_REUSE=1 with D_WEIGHT_BYTES_0=%u but CBUF "
                             "holds %zu bytes of weights",
                             c->weight_bytes, s->wt_len);
        }
        *weight_use = DLA_CBUF_REUSE;
    }
    return 0;
}

/* ---- data slices ------------------------------------------------------------ */

int8_t *dla_cbuf_append(struct dla_dev *d, struct dla_cbuf_slices *s, uint32_t n)
{
    size_t sb = dla_cbuf_slice_bytes(s);
    size_t need = (size_t)(s->n + n) * sb;
    if (need > s->cap) {
        size_t cap = need + need / 2;
        int8_t *p = realloc(s->buf ? s->buf - DLA_CBUF_GUARD : NULL, cap + 2 * DLA_CBUF_GUARD);
        if (!p) {
            dla_error(d, DLASIM_ERR_NOMEM, "CBUF: no memory for %zu bytes of data", cap);
            return NULL;
        }
        s->buf = p + DLA_CBUF_GUARD;
        s->cap = cap;
    }
    int8_t *first = s->buf + (size_t)s->n * sb;
    s->n += n;
    return first;
}

int dla_cbuf_begin_data(struct dla_dev *d, struct dla_conv_state *s, enum dla_cbuf_use use,
                        const struct dla_cdma_cfg *c, uint32_t slice_w, uint32_t slice_c)
{
    struct dla_cbuf_slices *data = &s->data;
    if (use == DLA_CBUF_FRESH) {
        data->n = 0;
    } else if (data->n && (data->w != slice_w || data->c != slice_c || data->fmt != c->fmt)) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "CDMA: D_MISC_CFG_0.DATA_REUSE=1 but the %u slices held in CBUF are "
                         "%ux%u, this layer reads %ux%u slices",
                         data->n, data->w, data->c, slice_w, slice_c);
    } else if (use == DLA_CBUF_PARTIAL && data->n) {
        uint64_t need = ((uint64_t)data->n + (uint64_t)c->height * c->batches) * c->entries;
        uint64_t have = (uint64_t)c->data_bank * dla_cfg(d)->cbuf_bank_depth;
        if (need > have) {
            return dla_error(d, DLASIM_ERR_PROG,
                             "CDMA: D_MISC_CFG_0.DATA_REUSE=1 keeps %u slices and fetches %u: %llu "
                             "entries exceed the %llu of D_BANK_0.DATA_BANK=%u",
                             data->n, c->height * c->batches, (unsigned long long)need,
                             (unsigned long long)have, c->data_bank - 1);
        }
    }
    data->w = slice_w;
    data->c = slice_c;
    data->entries = c->entries;
    data->fmt = c->fmt;
    return 0;
}

uint32_t dla_cbuf_weight_lag(const struct dla_conv_state *s, const struct dla_cdma_cfg *c)
{
    /* the ring pointers restart when CSC pends on a bank change (and the
     * first layer after reset always pends: last_weight_bank resets to
     * all ones) */
    if (!s->have_prev || s->prev_data_bank != c->data_bank || s->prev_weight_bank != c->weight_bank) {
        return 0;
    }
    return s->wt_lag;
}

uint32_t dla_cbuf_weight_ring_left(const struct dla_conv_state *s, const struct dla_csc_cfg *csc,
                                   const struct dla_cdma_cfg *c, uint32_t lag, int fetched,
                                   uint32_t entry_bytes, uint32_t atomic_k)
{
    if (!fetched || csc->skip_weight_rls || !c->weight_kernel) {
        return 0;
    }
    /* CDMA wrote D_WEIGHT_BYTES; CSC released, per group of Atomic-K
     * kernels, the entries the group's bytes occupy (CSC_wl wt_rls_cnt) */
    uint64_t per_kernel = c->byte_per_kernel;
    uint64_t written = (c->weight_bytes + entry_bytes - 1) / entry_bytes;
    uint64_t released = 0;
    for (uint32_t k0 = 0; k0 < c->weight_kernel; k0 += atomic_k) {
        uint32_t kg = c->weight_kernel - k0 < atomic_k ? c->weight_kernel - k0 : atomic_k;
        released += (kg * per_kernel + entry_bytes - 1) / entry_bytes;
    }
    uint64_t total = (uint64_t)lag + written;
    if (released >= total || total - released > s->wt_len / entry_bytes) {
        return 0;
    }
    return (uint32_t)(total - released);
}

int dla_cbuf_weight_ring_end(struct dla_conv_state *s, const struct dla_csc_cfg *csc,
                             const struct dla_cdma_cfg *c, uint32_t lag, int fetched,
                             uint32_t entry_bytes, uint32_t atomic_k)
{
    uint32_t n = dla_cbuf_weight_ring_left(s, csc, c, lag, fetched, entry_bytes, atomic_k);
    s->wt_lag = 0;
    if (n == 0) {
        return 0;
    }
    size_t bytes = (size_t)n * entry_bytes;
    if (bytes > s->wt_tail_cap) {
        uint8_t *p = realloc(s->wt_tail, bytes);
        if (!p) {
            return DLASIM_ERR_NOMEM;
        }
        s->wt_tail = p;
        s->wt_tail_cap = bytes;
    }
    memcpy(s->wt_tail, s->wt + s->wt_len - bytes, bytes);
    s->wt_lag = n;
    return 0;
}

uint32_t dla_cbuf_kept(const struct dla_csc_cfg *csc, uint32_t held)
{
    uint32_t total = csc->height * csc->batches;
    total = total < held ? total : held;
    if (csc->skip_data_rls) {
        return total;
    }
    /* ref: cmod/csc DataLoadSequenceThread: RLS_SLICES+1 slices are
     * released, the following ones stay for a partial reuse */
    return total - (csc->rls_slices < total ? csc->rls_slices : total);
}

void dla_cbuf_end_layer(struct dla_conv_state *s, const struct dla_csc_cfg *csc,
                        const struct dla_cdma_cfg *c)
{
    struct dla_cbuf_slices *data = &s->data;
    const uint32_t total = csc->height * csc->batches < data->n ? csc->height * csc->batches
                                                                 : data->n;
    const uint32_t kept = dla_cbuf_kept(csc, data->n);
    const size_t sb = dla_cbuf_slice_bytes(data);
    if (kept && total > kept) { /* the released slices were the first ones */
        memmove(data->buf, data->buf + (size_t)(total - kept) * sb, (size_t)kept * sb);
    }
    /* (a layer holding atoms keeps no slice: csc.c fetch_atoms) */
    data->n = data->atoms_h != 0 ? 0 : kept;
    data->atoms_h = 0;
    data->atoms_view = NULL;
    if (!csc->skip_weight_rls) {
        s->wt_len = 0;
        s->wt_deferred = 0; /* released unread: nothing left to copy */
    }
    s->have_prev = 1;
    s->prev_conv_mode = c->conv_mode;
    s->prev_data_bank = c->data_bank;
    s->prev_weight_bank = c->weight_bank;
    s->prev_fmt = c->fmt;
    s->prev_precision = c->proc_precision;
    s->prev_skip_data_rls = csc->skip_data_rls;
    s->prev_skip_weight_rls = csc->skip_weight_rls;
}

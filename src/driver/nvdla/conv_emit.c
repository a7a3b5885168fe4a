/*
 * Emission of the convolution planner's hardware layers (conv_plan.c plans,
 * this file programs) on the runtime port (port.h): CSB writes built with
 * the generated packers, completion by the interrupt, acknowledged in GLB
 * S_INTR_STATUS.  Register order and values: see the "Programming" notes at
 * the top of conv_plan.c.
 */
#include "dlasim/conv.h"
#include "regs/gen/nvdla_regs.h"
#include "plan/conv_plan.h"
#include "driver/port.h"

/* ---- programming ---------------------------------------------------------------------------- */

#define F(UNIT, REG, FIELD, v) NVDLA_##UNIT##_##REG##_0_##FIELD((uint32_t)(v))

/* CSB writes of one hardware layer on the runtime port, stopping at the
 * first error. */
struct csb {
    const struct nvrt_port *port;
    int rc;
};

static void wr(struct csb *b, uint32_t addr, uint32_t v)
{
    if (!b->rc) {
        b->rc = b->port->reg_write(b->port->ctx, addr, v);
    }
}

static uint32_t rd(struct csb *b, uint32_t addr)
{
    uint32_t v = 0;
    if (!b->rc) {
        b->rc = b->port->reg_read(b->port->ctx, addr, &v);
    }
    return v;
}

/* The producer of each unit is set to its consumer: the group it executes
 * next (kmd/firmware dla_conv_set_producer / dla_sdp_set_producer). */
static void set_producers(struct csb *b)
{
    static const uint32_t ptrs[] = {
        NVDLA_CACC_S_POINTER_0,   NVDLA_CMAC_A_S_POINTER_0, NVDLA_CMAC_B_S_POINTER_0,
        NVDLA_CSC_S_POINTER_0,    NVDLA_CDMA_S_POINTER_0,   NVDLA_SDP_RDMA_S_POINTER_0,
        NVDLA_SDP_S_POINTER_0,
    };
    for (size_t i = 0; i < sizeof(ptrs) / sizeof(ptrs[0]); i++) {
        uint32_t v = rd(b, ptrs[i]);
        uint32_t consumer = (v & NVDLA_CDMA_S_POINTER_0_CONSUMER__MASK) >>
                            NVDLA_CDMA_S_POINTER_0_CONSUMER__SHIFT;
        wr(b, ptrs[i], NVDLA_CDMA_S_POINTER_0_PRODUCER(consumer));
    }
}

/* Geometry of one hardware layer as the registers see it. */
struct hw_layer {
    const struct dlasim_conv_plan *p;
    const struct dlasim_conv_layer *l;
    uint64_t in_addr, out_addr;
    uint32_t in_line, in_surf, out_line, out_surf;
};

static uint32_t misc_flags(const struct hw_layer *h)
{
    /* DIRECT, INT8 in/proc precision (0), no data reuse, release all data */
    return F(CDMA, D_MISC_CFG, WEIGHT_REUSE, h->l->weight_reuse) |
           F(CDMA, D_MISC_CFG, SKIP_WEIGHT_RLS, h->l->skip_weight_rls);
}

static void program_cacc_cmac(struct csb *b, const struct hw_layer *h)
{
    const struct dlasim_conv_plan *p = h->p;
    const int packed = p->out_w == 1 && h->l->out_h == 1;
    wr(b, NVDLA_CACC_D_MISC_CFG_0, 0);
    wr(b, NVDLA_CACC_D_DATAOUT_SIZE_0_0,
       F(CACC, D_DATAOUT_SIZE_0, DATAOUT_WIDTH, p->out_w - 1) |
           F(CACC, D_DATAOUT_SIZE_0, DATAOUT_HEIGHT, h->l->out_h - 1));
    wr(b, NVDLA_CACC_D_DATAOUT_SIZE_1_0, p->desc.kernels - 1);
    wr(b, NVDLA_CACC_D_DATAOUT_ADDR_0, (uint32_t)h->out_addr);
    wr(b, NVDLA_CACC_D_BATCH_NUMBER_0, 0);
    wr(b, NVDLA_CACC_D_LINE_STRIDE_0, h->out_line);
    wr(b, NVDLA_CACC_D_SURF_STRIDE_0, h->out_surf);
    wr(b, NVDLA_CACC_D_DATAOUT_MAP_0,
       F(CACC, D_DATAOUT_MAP, LINE_PACKED, packed) | F(CACC, D_DATAOUT_MAP, SURF_PACKED, packed));
    wr(b, NVDLA_CACC_D_CLIP_CFG_0, p->desc.clip_truncate);
    wr(b, NVDLA_CMAC_A_D_MISC_CFG_0, 0);
    wr(b, NVDLA_CMAC_B_D_MISC_CFG_0, 0);
}

static uint32_t pad_value_field(int32_t v)
{
    return (uint32_t)v & NVDLA_CSC_D_ZERO_PADDING_VALUE_0_PAD_VALUE__MASK;
}

static void program_csc(struct csb *b, const struct hw_layer *h)
{
    const struct dlasim_conv_plan *p = h->p;
    const struct dlasim_conv_desc *d = &p->desc;
    const struct dlasim_conv_layer *l = h->l;
    wr(b, NVDLA_CSC_D_MISC_CFG_0, misc_flags(h));
    wr(b, NVDLA_CSC_D_DATAIN_FORMAT_0, 0);
    wr(b, NVDLA_CSC_D_DATAIN_SIZE_EXT_0_0,
       F(CSC, D_DATAIN_SIZE_EXT_0, DATAIN_WIDTH_EXT, d->in_w - 1) |
           F(CSC, D_DATAIN_SIZE_EXT_0, DATAIN_HEIGHT_EXT, l->in_h - 1));
    wr(b, NVDLA_CSC_D_DATAIN_SIZE_EXT_1_0, d->in_c - 1);
    wr(b, NVDLA_CSC_D_BATCH_NUMBER_0, 0);
    wr(b, NVDLA_CSC_D_POST_Y_EXTENSION_0, 0);
    wr(b, NVDLA_CSC_D_ENTRY_PER_SLICE_0, p->entries - 1);
    wr(b, NVDLA_CSC_D_WEIGHT_FORMAT_0, 0);
    wr(b, NVDLA_CSC_D_WEIGHT_SIZE_EXT_0_0,
       F(CSC, D_WEIGHT_SIZE_EXT_0, WEIGHT_WIDTH_EXT, d->kernel_w - 1) |
           F(CSC, D_WEIGHT_SIZE_EXT_0, WEIGHT_HEIGHT_EXT, d->kernel_h - 1));
    wr(b, NVDLA_CSC_D_WEIGHT_SIZE_EXT_1_0,
       F(CSC, D_WEIGHT_SIZE_EXT_1, WEIGHT_CHANNEL_EXT, d->in_c - 1) |
           F(CSC, D_WEIGHT_SIZE_EXT_1, WEIGHT_KERNEL, d->kernels - 1));
    wr(b, NVDLA_CSC_D_WEIGHT_BYTES_0, p->weight_bytes);
    wr(b, NVDLA_CSC_D_WMB_BYTES_0, 0);
    wr(b, NVDLA_CSC_D_DATAOUT_SIZE_0_0,
       F(CSC, D_DATAOUT_SIZE_0, DATAOUT_WIDTH, p->out_w - 1) |
           F(CSC, D_DATAOUT_SIZE_0, DATAOUT_HEIGHT, l->out_h - 1));
    wr(b, NVDLA_CSC_D_DATAOUT_SIZE_1_0, d->kernels - 1);
    wr(b, NVDLA_CSC_D_ATOMICS_0, p->out_w * l->out_h - 1);
    wr(b, NVDLA_CSC_D_RELEASE_0, l->in_h - 1);
    wr(b, NVDLA_CSC_D_CONV_STRIDE_EXT_0,
       F(CSC, D_CONV_STRIDE_EXT, CONV_X_STRIDE_EXT, d->stride_x - 1) |
           F(CSC, D_CONV_STRIDE_EXT, CONV_Y_STRIDE_EXT, d->stride_y - 1));
    wr(b, NVDLA_CSC_D_DILATION_EXT_0,
       F(CSC, D_DILATION_EXT, X_DILATION_EXT, d->dilation_x - 1) |
           F(CSC, D_DILATION_EXT, Y_DILATION_EXT, d->dilation_y - 1));
    wr(b, NVDLA_CSC_D_ZERO_PADDING_0,
       F(CSC, D_ZERO_PADDING, PAD_LEFT, d->pad_left) | F(CSC, D_ZERO_PADDING, PAD_TOP, l->pad_top));
    wr(b, NVDLA_CSC_D_ZERO_PADDING_VALUE_0, pad_value_field(d->pad_value));
    wr(b, NVDLA_CSC_D_BANK_0,
       F(CSC, D_BANK, DATA_BANK, l->data_bank - 1) | F(CSC, D_BANK, WEIGHT_BANK, p->weight_bank - 1));
    wr(b, NVDLA_CSC_D_PRA_CFG_0, 0);
}

static void program_cdma(struct csb *b, const struct hw_layer *h, uint64_t weights)
{
    const struct dlasim_conv_plan *p = h->p;
    const struct dlasim_conv_desc *d = &p->desc;
    const struct dlasim_conv_layer *l = h->l;
    const uint32_t m = p->hw.atom_m;
    wr(b, NVDLA_CDMA_D_MISC_CFG_0, misc_flags(h));
    wr(b, NVDLA_CDMA_D_DATAIN_FORMAT_0, 0); /* FEATURE */
    wr(b, NVDLA_CDMA_D_DATAIN_SIZE_0_0,
       F(CDMA, D_DATAIN_SIZE_0, DATAIN_WIDTH, d->in_w - 1) |
           F(CDMA, D_DATAIN_SIZE_0, DATAIN_HEIGHT, l->in_h - 1));
    wr(b, NVDLA_CDMA_D_DATAIN_SIZE_1_0, d->in_c - 1);
    wr(b, NVDLA_CDMA_D_DATAIN_SIZE_EXT_0_0,
       F(CDMA, D_DATAIN_SIZE_EXT_0, DATAIN_WIDTH_EXT, d->in_w - 1) |
           F(CDMA, D_DATAIN_SIZE_EXT_0, DATAIN_HEIGHT_EXT, l->in_h - 1));
    wr(b, NVDLA_CDMA_D_DAIN_RAM_TYPE_0, NVDLA_CDMA_D_DAIN_RAM_TYPE_0_DATAIN_RAM_TYPE_MCIF);
    wr(b, NVDLA_CDMA_D_DAIN_ADDR_HIGH_0_0, (uint32_t)(h->in_addr >> 32));
    wr(b, NVDLA_CDMA_D_DAIN_ADDR_LOW_0_0, (uint32_t)h->in_addr);
    wr(b, NVDLA_CDMA_D_DAIN_ADDR_HIGH_1_0, (uint32_t)(h->in_addr >> 32));
    wr(b, NVDLA_CDMA_D_DAIN_ADDR_LOW_1_0, (uint32_t)h->in_addr);
    wr(b, NVDLA_CDMA_D_LINE_STRIDE_0, h->in_line);
    wr(b, NVDLA_CDMA_D_SURF_STRIDE_0, h->in_surf);
    wr(b, NVDLA_CDMA_D_LINE_UV_STRIDE_0, 0);
    wr(b, NVDLA_CDMA_D_DAIN_MAP_0,
       F(CDMA, D_DAIN_MAP, LINE_PACKED, h->in_line == d->in_w * m) |
           F(CDMA, D_DAIN_MAP, SURF_PACKED, (uint64_t)h->in_surf == (uint64_t)d->in_w * l->in_h * m));
    wr(b, NVDLA_CDMA_D_BATCH_NUMBER_0, 0);
    wr(b, NVDLA_CDMA_D_BATCH_STRIDE_0, 0);
    wr(b, NVDLA_CDMA_D_ENTRY_PER_SLICE_0, p->entries - 1);
    wr(b, NVDLA_CDMA_D_FETCH_GRAIN_0, 0); /* the compiler's fetch_grain 1 */
    wr(b, NVDLA_CDMA_D_WEIGHT_FORMAT_0, 0);
    wr(b, NVDLA_CDMA_D_WEIGHT_SIZE_0_0, p->bytes_per_kernel - 1);
    wr(b, NVDLA_CDMA_D_WEIGHT_SIZE_1_0, d->kernels - 1);
    wr(b, NVDLA_CDMA_D_WEIGHT_RAM_TYPE_0, NVDLA_CDMA_D_WEIGHT_RAM_TYPE_0_WEIGHT_RAM_TYPE_MCIF);
    wr(b, NVDLA_CDMA_D_WEIGHT_ADDR_HIGH_0, (uint32_t)(weights >> 32));
    wr(b, NVDLA_CDMA_D_WEIGHT_ADDR_LOW_0, (uint32_t)weights);
    wr(b, NVDLA_CDMA_D_WEIGHT_BYTES_0, p->weight_bytes);
    wr(b, NVDLA_CDMA_D_MEAN_FORMAT_0, 0);
    wr(b, NVDLA_CDMA_D_CVT_CFG_0, 0);
    wr(b, NVDLA_CDMA_D_CONV_STRIDE_0,
       F(CDMA, D_CONV_STRIDE, CONV_X_STRIDE, d->stride_x - 1) |
           F(CDMA, D_CONV_STRIDE, CONV_Y_STRIDE, d->stride_y - 1));
    wr(b, NVDLA_CDMA_D_ZERO_PADDING_0,
       F(CDMA, D_ZERO_PADDING, PAD_LEFT, d->pad_left) |
           F(CDMA, D_ZERO_PADDING, PAD_RIGHT, d->pad_right) |
           F(CDMA, D_ZERO_PADDING, PAD_TOP, l->pad_top) |
           F(CDMA, D_ZERO_PADDING, PAD_BOTTOM, l->pad_bottom));
    wr(b, NVDLA_CDMA_D_ZERO_PADDING_VALUE_0, pad_value_field(d->pad_value));
    wr(b, NVDLA_CDMA_D_BANK_0,
       F(CDMA, D_BANK, DATA_BANK, l->data_bank - 1) |
           F(CDMA, D_BANK, WEIGHT_BANK, p->weight_bank - 1));
}

static void program_sdp(struct csb *b, const struct hw_layer *h)
{
    const struct dlasim_conv_plan *p = h->p;
    const struct dlasim_conv_desc *d = &p->desc;
    /* SDP_RDMA: nothing to read (flying input, no operands) */
    wr(b, NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0,
       F(SDP_RDMA, D_FEATURE_MODE_CFG, FLYING_MODE,
         NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0_FLYING_MODE_ON));
    wr(b, NVDLA_SDP_RDMA_D_BRDMA_CFG_0, F(SDP_RDMA, D_BRDMA_CFG, BRDMA_DISABLE, 1));
    wr(b, NVDLA_SDP_RDMA_D_NRDMA_CFG_0, F(SDP_RDMA, D_NRDMA_CFG, NRDMA_DISABLE, 1));
    wr(b, NVDLA_SDP_RDMA_D_ERDMA_CFG_0, F(SDP_RDMA, D_ERDMA_CFG, ERDMA_DISABLE, 1));

    wr(b, NVDLA_SDP_D_DATA_CUBE_WIDTH_0, p->out_w - 1);
    wr(b, NVDLA_SDP_D_DATA_CUBE_HEIGHT_0, h->l->out_h - 1);
    wr(b, NVDLA_SDP_D_DATA_CUBE_CHANNEL_0, d->kernels - 1);
    wr(b, NVDLA_SDP_D_DST_BASE_ADDR_HIGH_0, (uint32_t)(h->out_addr >> 32));
    wr(b, NVDLA_SDP_D_DST_BASE_ADDR_LOW_0, (uint32_t)h->out_addr);
    wr(b, NVDLA_SDP_D_DST_LINE_STRIDE_0, h->out_line);
    wr(b, NVDLA_SDP_D_DST_SURFACE_STRIDE_0, h->out_surf);
    /* BS, BN, EW bypassed (BYPASS, ALU_BYPASS, MUL_BYPASS, RELU_BYPASS) */
    const uint32_t bypass = F(SDP, D_DP_BS_CFG, BS_BYPASS, 1) | F(SDP, D_DP_BS_CFG, BS_ALU_BYPASS, 1) |
                            F(SDP, D_DP_BS_CFG, BS_MUL_BYPASS, 1) |
                            F(SDP, D_DP_BS_CFG, BS_RELU_BYPASS, 1);
    wr(b, NVDLA_SDP_D_DP_BS_CFG_0, bypass);
    wr(b, NVDLA_SDP_D_DP_BN_CFG_0, bypass);
    wr(b, NVDLA_SDP_D_DP_EW_CFG_0, bypass);
    wr(b, NVDLA_SDP_D_FEATURE_MODE_CFG_0,
       F(SDP, D_FEATURE_MODE_CFG, FLYING_MODE, NVDLA_SDP_D_FEATURE_MODE_CFG_0_FLYING_MODE_ON) |
           F(SDP, D_FEATURE_MODE_CFG, OUTPUT_DST, NVDLA_SDP_D_FEATURE_MODE_CFG_0_OUTPUT_DST_MEM));
    wr(b, NVDLA_SDP_D_DST_DMA_CFG_0, NVDLA_SDP_D_DST_DMA_CFG_0_DST_RAM_TYPE_MC);
    wr(b, NVDLA_SDP_D_DATA_FORMAT_0, 0); /* int8 processing and output */
    wr(b, NVDLA_SDP_D_CVT_OFFSET_0, (uint32_t)d->out_offset);
    wr(b, NVDLA_SDP_D_CVT_SCALE_0, (uint32_t)d->out_scale & 0xffffu);
    wr(b, NVDLA_SDP_D_CVT_SHIFT_0, d->out_shift);
}

/* Enable SDP, then the convolution pipeline once CBUF is flushed. */
static void enable_layer(struct csb *b)
{
    wr(b, NVDLA_SDP_D_OP_ENABLE_0, 1);
    if (!(rd(b, NVDLA_CDMA_S_CBUF_FLUSH_STATUS_0) & NVDLA_CDMA_S_CBUF_FLUSH_STATUS_0_FLUSH_DONE__MASK) &&
        !b->rc) {
        b->rc = DLASIM_ERR_TIMEOUT;
        return;
    }
    wr(b, NVDLA_CACC_D_OP_ENABLE_0, 1);
    wr(b, NVDLA_CMAC_A_D_OP_ENABLE_0, 1);
    wr(b, NVDLA_CMAC_B_D_OP_ENABLE_0, 1);
    wr(b, NVDLA_CSC_D_OP_ENABLE_0, 1);
    wr(b, NVDLA_CDMA_D_OP_ENABLE_0, 1);
}

/* Program and run every hardware layer of a plan on a port. */
static int run_on_port(const struct nvrt_port *port, const struct dlasim_conv_plan *p,
                       const struct dlasim_conv_mem *m)
{
    struct csb b = { port, 0 };
    if (nvrt_conv_check_mem(p, m)) {
        return DLASIM_ERR_INVAL;
    }
    for (size_t i = 0; i < p->n_layers && !b.rc; i++) {
        struct hw_layer h;
        h.p = p;
        h.l = &p->layers[i];
        h.in_line = nvrt_conv_in_line(p, m);
        h.in_surf = nvrt_conv_in_surf(p, m);
        h.out_line = nvrt_conv_out_line(p, m);
        h.out_surf = nvrt_conv_out_surf(p, m);
        h.in_addr = m->input + (uint64_t)h.l->in_y0 * h.in_line;
        h.out_addr = m->output + (uint64_t)h.l->out_y0 * h.out_line;
        set_producers(&b);
        program_cacc_cmac(&b, &h);
        program_csc(&b, &h);
        program_cdma(&b, &h, m->weights);
        program_sdp(&b, &h);
        enable_layer(&b);
        if (!b.rc) {
            b.rc = port->wait_irq(port->ctx);
        }
        /* the driver acknowledges the layer's interrupts (write 1 to
         * clear); the layer completes even when it failed */
        uint32_t st = 0;
        if (!port->reg_read(port->ctx, NVDLA_GLB_S_INTR_STATUS_0, &st) && st) {
            port->reg_write(port->ctx, NVDLA_GLB_S_INTR_STATUS_0, st);
        }
    }
    return b.rc;
}

int dlasim_conv_run(struct dlasim_dev *dev, const struct dlasim_conv_plan *p,
                    const struct dlasim_conv_mem *m)
{
    struct nvrt_sim_port sp;
    if (!dev) {
        return DLASIM_ERR_INVAL;
    }
    nvrt_sim_port_init(&sp, dev);
    return run_on_port(&sp.port, p, m);
}

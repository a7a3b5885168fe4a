/*
 * Convolution pipeline (CDMA, CSC, CMAC_A/B, CACC) programming for the
 * firmware-equivalent executor.
 * ref: nvdla/sw kmd/firmware/conv.c (processor_conv_program,
 * dla_conv_enable, dla_conv_set_producer): the same registers, values and
 * order (sub-units programmed in reverse pipeline order, CACC first),
 * restated on the port.  CONV completes by the CACC done interrupt; its
 * output goes on the fly into the fused SDP.
 * Refusals: Winograd and compressed weights (dlasim models neither),
 * precisions the configuration lacks, output converter other than scale 1 /
 * offset 0 (as the firmware), groups that are not idle, CBUF flush never
 * done, unknown data formats, address indexes outside the list.
 */
#include "regs/gen/nvdla_regs.h"
#include "driver/nvdla/fw.h"

#define CDMA(R) NVDLA_CDMA_##R##_0
#define CSC(R) NVDLA_CSC_##R##_0
#define CACC(R) NVDLA_CACC_##R##_0
#define CMAC_A(R) NVDLA_CMAC_A_##R##_0
#define CMAC_B(R) NVDLA_CMAC_B_##R##_0

#define FORMAT_FEATURE 36 /* dla_interface.h FORMAT_FEATURE; 0..35 = pixel formats */
#define FLUSH_POLLS 1000  /* the firmware polls forever; a bounded poll reports instead */

static uint32_t minus1(uint32_t v)
{
    return v ? v - 1 : 0;
}

static uint32_t ram_type(uint16_t mem_type)
{
    return mem_type == DLASIM_RT_MEM_MC ? NVDLA_CDMA_D_DAIN_RAM_TYPE_0_DATAIN_RAM_TYPE_MCIF
                                        : NVDLA_CDMA_D_DAIN_RAM_TYPE_0_DATAIN_RAM_TYPE_CVIF;
}

static void conv_set_producer(struct nvrt_fw *fw, int group, int rdma_group)
{
    (void)rdma_group;
    uint32_t v = NVDLA_CACC_S_POINTER_0_PRODUCER((uint32_t)group);
    nvrt_wr(fw, CACC(S_POINTER), v);
    nvrt_wr(fw, CMAC_A(S_POINTER), v);
    nvrt_wr(fw, CMAC_B(S_POINTER), v);
    nvrt_wr(fw, CSC(S_POINTER), v);
    nvrt_wr(fw, CDMA(S_POINTER), v);
}

static void conv_enable(struct nvrt_fw *fw, struct nvrt_group *g)
{
    int polls = 0;
    while (!(nvrt_rd(fw, CDMA(S_CBUF_FLUSH_STATUS)) &
             NVDLA_CDMA_S_CBUF_FLUSH_STATUS_0_FLUSH_DONE__MASK)) {
        if (fw->rc || ++polls == FLUSH_POLLS) {
            nvrt_fail(fw, DLASIM_ERR_TIMEOUT,
                      "operation %d (CONV): CDMA S_CBUF_FLUSH_STATUS.FLUSH_DONE never set", g->op);
            return;
        }
    }
    uint32_t en = NVDLA_CACC_D_OP_ENABLE_0_OP_EN(1);
    nvrt_wr(fw, CACC(D_OP_ENABLE), en);
    nvrt_wr(fw, CMAC_A(D_OP_ENABLE), en);
    nvrt_wr(fw, CMAC_B(D_OP_ENABLE), en);
    nvrt_wr(fw, CSC(D_OP_ENABLE), en);
    nvrt_wr(fw, CDMA(D_OP_ENABLE), en);
}

static void conv_rdma_check(struct nvrt_fw *fw, struct nvrt_group *g)
{
    (void)fw;
    g->is_rdma_needed = 0;
}

static int conv_is_ready(struct nvrt_fw *fw, const struct nvrt_group *g,
                         const struct nvrt_group *other)
{
    (void)fw, (void)g, (void)other;
    return 1;
}

static int validate(struct nvrt_fw *fw, const struct nvrt_group *g)
{
    const struct dlasim_rt_op *d = nvrt_op_of(fw, g);
    const struct dlasim_rt_conv_op *op = &d->op.conv;
    const struct dlasim_rt_conv_surface *s = &d->surface.conv;
    int rc = 0;
    if (op->conv_mode != 0) {
        return nvrt_fail(fw, DLASIM_ERR_UNSUPPORTED,
                         "operation %d (CONV): conv_op.conv_mode=%u asks for Winograd "
                         "convolution, which dlasim does not model",
                         g->op, op->conv_mode);
    }
    if (op->weight_format != 0) {
        return nvrt_fail(fw, DLASIM_ERR_UNSUPPORTED,
                         "operation %d (CONV): conv_op.weight_format=%u asks for compressed "
                         "weights, which dlasim does not model",
                         g->op, op->weight_format);
    }
    rc = nvrt_check_precision(fw, g, "conv_op.in_precision", op->in_precision);
    rc = rc ? rc : nvrt_check_precision(fw, g, "conv_op.out_precision", op->out_precision);
    rc = rc ? rc : nvrt_check_range(fw, g, "conv_op.data_format", op->data_format, 0,
                                    FORMAT_FEATURE);
    rc = rc ? rc : nvrt_check_range(fw, g, "conv_op.pixel_mapping", op->pixel_mapping, 0, 0);
    rc = rc ? rc : nvrt_check_range(fw, g, "conv_op.mean_format", op->mean_format, 0, 1);
    rc = rc ? rc : nvrt_check_range(fw, g, "conv_op.out_cvt.scale", op->out_cvt.scale, 1, 1);
    rc = rc ? rc : nvrt_check_range(fw, g, "conv_op.out_cvt.offset", op->out_cvt.offset, 0, 0);
    rc = rc ? rc : nvrt_check_range(fw, g, "conv_surface.src_data.type", s->src_data.type, 0, 1);
    rc = rc ? rc : nvrt_check_range(fw, g, "conv_surface.weight_data.type", s->weight_data.type,
                                    0, 1);
    return rc;
}

/* ref: conv.c: every sub-unit's group must be idle before it is programmed */
static int check_idle(struct nvrt_fw *fw, const struct nvrt_group *g)
{
    static const struct {
        const char *name;
        uint32_t reg;
    } units[] = { { "CACC", CACC(S_STATUS) },     { "CMAC_A", CMAC_A(S_STATUS) },
                  { "CMAC_B", CMAC_B(S_STATUS) }, { "CSC", CSC(S_STATUS) },
                  { "CDMA", CDMA(S_STATUS) } };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        uint32_t v = nvrt_rd(fw, units[i].reg);
        uint32_t st = g->id ? (v & NVDLA_CACC_S_STATUS_0_STATUS_1__MASK) >>
                                  NVDLA_CACC_S_STATUS_0_STATUS_1__SHIFT
                            : (v & NVDLA_CACC_S_STATUS_0_STATUS_0__MASK) >>
                                  NVDLA_CACC_S_STATUS_0_STATUS_0__SHIFT;
        if (st != NVDLA_CACC_S_STATUS_0_STATUS_0_IDLE) {
            return nvrt_fail(fw, DLASIM_ERR_PROG,
                             "operation %d (CONV): %s S_STATUS group %u is not idle (0x%x)",
                             g->op, units[i].name, g->id, v);
        }
    }
    return fw->rc;
}

static uint32_t misc_flags(const struct dlasim_rt_conv_op *op)
{
    return NVDLA_CSC_D_MISC_CFG_0_DATA_REUSE(op->data_reuse) |
           NVDLA_CSC_D_MISC_CFG_0_WEIGHT_REUSE(op->weight_reuse) |
           NVDLA_CSC_D_MISC_CFG_0_SKIP_DATA_RLS(op->skip_data_rls) |
           NVDLA_CSC_D_MISC_CFG_0_SKIP_WEIGHT_RLS(op->skip_weight_rls);
}

static void program_cacc_cmac(struct nvrt_fw *fw, const struct dlasim_rt_conv_op *op,
                              const struct dlasim_rt_cube *dst, uint64_t out)
{
    nvrt_wr(fw, CACC(D_MISC_CFG), NVDLA_CACC_D_MISC_CFG_0_CONV_MODE(op->conv_mode) |
                                      NVDLA_CACC_D_MISC_CFG_0_PROC_PRECISION(op->out_precision));
    nvrt_wr(fw, CACC(D_DATAOUT_SIZE_0),
            NVDLA_CACC_D_DATAOUT_SIZE_0_0_DATAOUT_WIDTH(minus1(dst->width)) |
                NVDLA_CACC_D_DATAOUT_SIZE_0_0_DATAOUT_HEIGHT(minus1(dst->height)));
    nvrt_wr(fw, CACC(D_DATAOUT_SIZE_1),
            NVDLA_CACC_D_DATAOUT_SIZE_1_0_DATAOUT_CHANNEL(minus1(dst->channel)));
    nvrt_wr(fw, CACC(D_DATAOUT_ADDR), NVRT_LO32(out));
    nvrt_wr(fw, CACC(D_BATCH_NUMBER), minus1(op->batch));
    nvrt_wr(fw, CACC(D_LINE_STRIDE), dst->line_stride);
    nvrt_wr(fw, CACC(D_SURF_STRIDE), dst->surf_stride);
    uint32_t packed = dst->width == 1 && dst->height == 1;
    nvrt_wr(fw, CACC(D_DATAOUT_MAP), NVDLA_CACC_D_DATAOUT_MAP_0_LINE_PACKED(packed) |
                                         NVDLA_CACC_D_DATAOUT_MAP_0_SURF_PACKED(packed));
    nvrt_wr(fw, CACC(D_CLIP_CFG), op->out_cvt.truncate);
    uint32_t misc = NVDLA_CMAC_A_D_MISC_CFG_0_CONV_MODE(op->conv_mode) |
                    NVDLA_CMAC_A_D_MISC_CFG_0_PROC_PRECISION(op->out_precision);
    nvrt_wr(fw, CMAC_A(D_MISC_CFG), misc);
    nvrt_wr(fw, CMAC_B(D_MISC_CFG), misc);
}

static void program_csc(struct nvrt_fw *fw, const struct dlasim_rt_conv_op *op,
                        const struct dlasim_rt_conv_surface *s)
{
    const struct dlasim_rt_cube *dst = &s->dst_data;
    uint32_t in_format = op->data_format == FORMAT_FEATURE
                             ? NVDLA_CSC_D_DATAIN_FORMAT_0_DATAIN_FORMAT_FEATURE
                             : NVDLA_CSC_D_DATAIN_FORMAT_0_DATAIN_FORMAT_PIXEL;
    nvrt_wr(fw, CSC(D_MISC_CFG), NVDLA_CSC_D_MISC_CFG_0_CONV_MODE(op->conv_mode) |
                                     NVDLA_CSC_D_MISC_CFG_0_IN_PRECISION(op->out_precision) |
                                     NVDLA_CSC_D_MISC_CFG_0_PROC_PRECISION(op->out_precision) |
                                     misc_flags(op));
    nvrt_wr(fw, CSC(D_DATAIN_FORMAT), NVDLA_CSC_D_DATAIN_FORMAT_0_DATAIN_FORMAT(in_format));
    nvrt_wr(fw, CSC(D_DATAIN_SIZE_EXT_0),
            NVDLA_CSC_D_DATAIN_SIZE_EXT_0_0_DATAIN_WIDTH_EXT(minus1(op->input_width_csc)) |
                NVDLA_CSC_D_DATAIN_SIZE_EXT_0_0_DATAIN_HEIGHT_EXT(minus1(op->input_height_csc)));
    nvrt_wr(fw, CSC(D_DATAIN_SIZE_EXT_1),
            NVDLA_CSC_D_DATAIN_SIZE_EXT_1_0_DATAIN_CHANNEL_EXT(minus1(op->input_channel_csc)));
    nvrt_wr(fw, CSC(D_BATCH_NUMBER), NVDLA_CSC_D_BATCH_NUMBER_0_BATCHES(minus1(op->batch)));
    nvrt_wr(fw, CSC(D_POST_Y_EXTENSION), NVDLA_CSC_D_POST_Y_EXTENSION_0_Y_EXTENSION(op->post_extension));
    nvrt_wr(fw, CSC(D_ENTRY_PER_SLICE), NVDLA_CSC_D_ENTRY_PER_SLICE_0_ENTRIES(minus1(op->entry_per_slice)));
    nvrt_wr(fw, CSC(D_WEIGHT_FORMAT), NVDLA_CSC_D_WEIGHT_FORMAT_0_WEIGHT_FORMAT(op->weight_format));
    nvrt_wr(fw, CSC(D_WEIGHT_SIZE_EXT_0),
            NVDLA_CSC_D_WEIGHT_SIZE_EXT_0_0_WEIGHT_WIDTH_EXT(minus1(op->kernel_width_csc)) |
                NVDLA_CSC_D_WEIGHT_SIZE_EXT_0_0_WEIGHT_HEIGHT_EXT(minus1(op->kernel_height_csc)));
    nvrt_wr(fw, CSC(D_WEIGHT_SIZE_EXT_1),
            NVDLA_CSC_D_WEIGHT_SIZE_EXT_1_0_WEIGHT_CHANNEL_EXT(minus1(op->kernel_channel_csc)) |
                NVDLA_CSC_D_WEIGHT_SIZE_EXT_1_0_WEIGHT_KERNEL(minus1(dst->channel)));
    nvrt_wr(fw, CSC(D_WEIGHT_BYTES), s->weight_data.size);
    nvrt_wr(fw, CSC(D_WMB_BYTES), s->wmb_data.size);
    nvrt_wr(fw, CSC(D_DATAOUT_SIZE_0),
            NVDLA_CSC_D_DATAOUT_SIZE_0_0_DATAOUT_WIDTH(minus1(op->input_width_cmac)) |
                NVDLA_CSC_D_DATAOUT_SIZE_0_0_DATAOUT_HEIGHT(minus1(op->input_height_cmac)));
    nvrt_wr(fw, CSC(D_DATAOUT_SIZE_1), NVDLA_CSC_D_DATAOUT_SIZE_1_0_DATAOUT_CHANNEL(minus1(dst->channel)));
    nvrt_wr(fw, CSC(D_ATOMICS), NVDLA_CSC_D_ATOMICS_0_ATOMICS(minus1((uint32_t)dst->width * dst->height)));
    nvrt_wr(fw, CSC(D_RELEASE), NVDLA_CSC_D_RELEASE_0_RLS_SLICES(minus1(op->release)));
    nvrt_wr(fw, CSC(D_CONV_STRIDE_EXT),
            NVDLA_CSC_D_CONV_STRIDE_EXT_0_CONV_X_STRIDE_EXT(minus1(op->conv_stride_x)) |
                NVDLA_CSC_D_CONV_STRIDE_EXT_0_CONV_Y_STRIDE_EXT(minus1(op->conv_stride_y)));
    nvrt_wr(fw, CSC(D_DILATION_EXT), NVDLA_CSC_D_DILATION_EXT_0_X_DILATION_EXT(minus1(op->dilation_x)) |
                                         NVDLA_CSC_D_DILATION_EXT_0_Y_DILATION_EXT(minus1(op->dilation_y)));
    nvrt_wr(fw, CSC(D_ZERO_PADDING), NVDLA_CSC_D_ZERO_PADDING_0_PAD_LEFT(op->pad_x_left) |
                                         NVDLA_CSC_D_ZERO_PADDING_0_PAD_TOP(op->pad_y_top));
    nvrt_wr(fw, CSC(D_ZERO_PADDING_VALUE),
            NVDLA_CSC_D_ZERO_PADDING_VALUE_0_PAD_VALUE((uint32_t)(int32_t)op->pad_val));
    nvrt_wr(fw, CSC(D_BANK), NVDLA_CSC_D_BANK_0_DATA_BANK(minus1(op->data_bank)) |
                                 NVDLA_CSC_D_BANK_0_WEIGHT_BANK(minus1(op->weight_bank)));
    nvrt_wr(fw, CSC(D_PRA_CFG), op->pra_truncate);
}

static void program_cdma_input(struct nvrt_fw *fw, const struct dlasim_rt_conv_op *op,
                               const struct dlasim_rt_conv_surface *s, uint64_t in)
{
    const struct dlasim_rt_cube *src = &s->src_data;
    int feature = op->data_format == FORMAT_FEATURE;
    nvrt_wr(fw, CDMA(D_MISC_CFG), NVDLA_CDMA_D_MISC_CFG_0_CONV_MODE(op->conv_mode) |
                                      NVDLA_CDMA_D_MISC_CFG_0_IN_PRECISION(op->in_precision) |
                                      NVDLA_CDMA_D_MISC_CFG_0_PROC_PRECISION(op->out_precision) |
                                      misc_flags(op));
    nvrt_wr(fw, CDMA(D_DATAIN_FORMAT),
            NVDLA_CDMA_D_DATAIN_FORMAT_0_DATAIN_FORMAT(
                feature ? NVDLA_CDMA_D_DATAIN_FORMAT_0_DATAIN_FORMAT_FEATURE
                        : NVDLA_CDMA_D_DATAIN_FORMAT_0_DATAIN_FORMAT_PIXEL) |
                NVDLA_CDMA_D_DATAIN_FORMAT_0_PIXEL_FORMAT(feature ? 0u : op->data_format) |
                NVDLA_CDMA_D_DATAIN_FORMAT_0_PIXEL_MAPPING(op->pixel_mapping) |
                NVDLA_CDMA_D_DATAIN_FORMAT_0_PIXEL_SIGN_OVERRIDE(op->pixel_override));
    nvrt_wr(fw, CDMA(D_DATAIN_SIZE_0), NVDLA_CDMA_D_DATAIN_SIZE_0_0_DATAIN_WIDTH(minus1(src->width)) |
                                           NVDLA_CDMA_D_DATAIN_SIZE_0_0_DATAIN_HEIGHT(minus1(src->height)));
    nvrt_wr(fw, CDMA(D_DATAIN_SIZE_1), NVDLA_CDMA_D_DATAIN_SIZE_1_0_DATAIN_CHANNEL(minus1(src->channel)));
    nvrt_wr(fw, CDMA(D_DATAIN_SIZE_EXT_0),
            NVDLA_CDMA_D_DATAIN_SIZE_EXT_0_0_DATAIN_WIDTH_EXT(minus1(op->input_width_csc)) |
                NVDLA_CDMA_D_DATAIN_SIZE_EXT_0_0_DATAIN_HEIGHT_EXT(minus1(op->input_height_csc)));
    nvrt_wr(fw, CDMA(D_DAIN_RAM_TYPE), NVDLA_CDMA_D_DAIN_RAM_TYPE_0_DATAIN_RAM_TYPE(ram_type(src->type)));
    nvrt_wr(fw, CDMA(D_DAIN_ADDR_HIGH_0), NVRT_HI32(in));
    nvrt_wr(fw, CDMA(D_DAIN_ADDR_LOW_0), NVRT_LO32(in));
    uint64_t uv = in + (uint64_t)s->offset_u;
    nvrt_wr(fw, CDMA(D_DAIN_ADDR_HIGH_1), NVRT_HI32(uv));
    nvrt_wr(fw, CDMA(D_DAIN_ADDR_LOW_1), NVRT_LO32(uv));
    nvrt_wr(fw, CDMA(D_LINE_STRIDE), src->line_stride);
    nvrt_wr(fw, CDMA(D_SURF_STRIDE), src->surf_stride);
    nvrt_wr(fw, CDMA(D_LINE_UV_STRIDE), s->in_line_uv_stride);
    uint32_t line_packed = src->line_stride == (uint32_t)src->width * fw->atom_size;
    uint32_t surf_packed = src->surf_stride == (uint32_t)src->width * src->height * fw->atom_size;
    nvrt_wr(fw, CDMA(D_DAIN_MAP), NVDLA_CDMA_D_DAIN_MAP_0_LINE_PACKED(line_packed) |
                                      NVDLA_CDMA_D_DAIN_MAP_0_SURF_PACKED(surf_packed));
    nvrt_wr(fw, CDMA(D_BATCH_NUMBER), NVDLA_CDMA_D_BATCH_NUMBER_0_BATCHES(minus1(op->batch)));
    nvrt_wr(fw, CDMA(D_BATCH_STRIDE), op->batch_stride);
    nvrt_wr(fw, CDMA(D_ENTRY_PER_SLICE), NVDLA_CDMA_D_ENTRY_PER_SLICE_0_ENTRIES(minus1(op->entry_per_slice)));
    nvrt_wr(fw, CDMA(D_FETCH_GRAIN), NVDLA_CDMA_D_FETCH_GRAIN_0_GRAINS(minus1(op->fetch_grain)));
}

static void program_cdma_weights(struct nvrt_fw *fw, const struct dlasim_rt_conv_op *op,
                                 const struct dlasim_rt_conv_surface *s, uint64_t weights)
{
    nvrt_wr(fw, CDMA(D_WEIGHT_FORMAT), NVDLA_CDMA_D_WEIGHT_FORMAT_0_WEIGHT_FORMAT(op->weight_format));
    nvrt_wr(fw, CDMA(D_WEIGHT_SIZE_0), NVDLA_CDMA_D_WEIGHT_SIZE_0_0_BYTE_PER_KERNEL(minus1(op->bytes_per_kernel)));
    nvrt_wr(fw, CDMA(D_WEIGHT_SIZE_1), NVDLA_CDMA_D_WEIGHT_SIZE_1_0_WEIGHT_KERNEL(minus1(s->dst_data.channel)));
    nvrt_wr(fw, CDMA(D_WEIGHT_RAM_TYPE),
            NVDLA_CDMA_D_WEIGHT_RAM_TYPE_0_WEIGHT_RAM_TYPE(ram_type(s->weight_data.type)));
    nvrt_wr(fw, CDMA(D_WEIGHT_ADDR_HIGH), NVRT_HI32(weights));
    nvrt_wr(fw, CDMA(D_WEIGHT_ADDR_LOW), NVRT_LO32(weights));
    nvrt_wr(fw, CDMA(D_WEIGHT_BYTES), s->weight_data.size);
    nvrt_wr(fw, CDMA(D_MEAN_FORMAT), NVDLA_CDMA_D_MEAN_FORMAT_0_MEAN_FORMAT(op->mean_format));
    if (op->mean_format) {
        nvrt_wr(fw, CDMA(D_MEAN_GLOBAL_0),
                NVDLA_CDMA_D_MEAN_GLOBAL_0_0_MEAN_RY((uint32_t)(uint16_t)op->mean_ry) |
                    NVDLA_CDMA_D_MEAN_GLOBAL_0_0_MEAN_GU((uint32_t)(uint16_t)op->mean_gu));
        nvrt_wr(fw, CDMA(D_MEAN_GLOBAL_1),
                NVDLA_CDMA_D_MEAN_GLOBAL_1_0_MEAN_BV((uint32_t)(uint16_t)op->mean_bv) |
                    NVDLA_CDMA_D_MEAN_GLOBAL_1_0_MEAN_AX((uint32_t)(uint16_t)op->mean_ax));
    }
    if (op->in_cvt.enable) {
        nvrt_wr(fw, CDMA(D_CVT_CFG), NVDLA_CDMA_D_CVT_CFG_0_CVT_EN(1) |
                                         NVDLA_CDMA_D_CVT_CFG_0_CVT_TRUNCATE(op->in_cvt.truncate));
        nvrt_wr(fw, CDMA(D_CVT_OFFSET), (uint32_t)op->in_cvt.offset);
        nvrt_wr(fw, CDMA(D_CVT_SCALE), (uint32_t)(int32_t)op->in_cvt.scale);
    } else {
        nvrt_wr(fw, CDMA(D_CVT_CFG), NVDLA_CDMA_D_CVT_CFG_0_CVT_EN(0));
    }
    nvrt_wr(fw, CDMA(D_CONV_STRIDE), NVDLA_CDMA_D_CONV_STRIDE_0_CONV_X_STRIDE(minus1(op->conv_stride_x)) |
                                         NVDLA_CDMA_D_CONV_STRIDE_0_CONV_Y_STRIDE(minus1(op->conv_stride_y)));
    nvrt_wr(fw, CDMA(D_ZERO_PADDING), NVDLA_CDMA_D_ZERO_PADDING_0_PAD_LEFT(op->pad_x_left) |
                                          NVDLA_CDMA_D_ZERO_PADDING_0_PAD_RIGHT(op->pad_x_right) |
                                          NVDLA_CDMA_D_ZERO_PADDING_0_PAD_TOP(op->pad_y_top) |
                                          NVDLA_CDMA_D_ZERO_PADDING_0_PAD_BOTTOM(op->pad_y_bottom));
    nvrt_wr(fw, CDMA(D_ZERO_PADDING_VALUE),
            NVDLA_CDMA_D_ZERO_PADDING_VALUE_0_PAD_VALUE((uint32_t)(int32_t)op->pad_val));
    nvrt_wr(fw, CDMA(D_BANK), NVDLA_CDMA_D_BANK_0_WEIGHT_BANK(minus1(op->weight_bank)) |
                                  NVDLA_CDMA_D_BANK_0_DATA_BANK(minus1(op->data_bank)));
}

static int conv_program(struct nvrt_fw *fw, struct nvrt_group *g)
{
    const struct dlasim_rt_op *d = nvrt_op_of(fw, g);
    const struct dlasim_rt_conv_op *op = &d->op.conv;
    const struct dlasim_rt_conv_surface *s = &d->surface.conv;
    uint64_t weights = 0, out = 0, in = 0;
    int rc = validate(fw, g);
    if (!rc && s->weight_data.address != -1) {
        rc = nvrt_cube_address(fw, g->op, "conv_surface.weight_data", &s->weight_data, &weights);
    }
    if (!rc && s->dst_data.address != -1) {
        rc = nvrt_cube_address(fw, g->op, "conv_surface.dst_data", &s->dst_data, &out);
    }
    rc = rc ? rc : nvrt_cube_address(fw, g->op, "conv_surface.src_data", &s->src_data, &in);
    rc = rc ? rc : check_idle(fw, g);
    if (rc) {
        return rc;
    }
    program_cacc_cmac(fw, op, &s->dst_data, out);
    program_csc(fw, op, s);
    program_cdma_input(fw, op, s, in);
    program_cdma_weights(fw, op, s, weights);
    nvrt_mark_input(fw, in, &s->src_data);
    nvrt_mark_input(fw, weights, &s->weight_data);
    nvrt_mark_output(fw, out, &s->dst_data);
    return fw->rc;
}

const struct nvrt_engine nvrt_conv_engine = {
    .name = "CONV",
    .op_type = DLASIM_RT_OP_CONV,
    .pointer_reg = CACC(S_POINTER),
    .rdma_pointer_reg = 0,
    .enable_param = NULL,
    .set_producer = conv_set_producer,
    .rdma_check = conv_rdma_check,
    .is_ready = conv_is_ready,
    .program = conv_program,
    .validate = validate,
    .enable = conv_enable,
};

#!/usr/bin/python3
"""Make trace cases of new shapes from NVIDIA's nv_small conformance cases,
to measure the RTL beyond the suite and check the timing model there
(docs/timing.md, "Beyond the suite").  The surface files stay where they
are: each case folder gets its .cfg and copies of the .dat files it names.

  tools/timing/mkcases.py CONFORMANCE_NV_SMALL OUT_DIR

Cases (the CRC of a new shape is unknown until a run: each case is written
with check_crc CRC 0x0: run it once on dlasim, which is bit-exact, and put
the CRC it reports in; the RTL then confirms it):
  sdp_16x16x32_bypass   sdp_8x8x32_bypass_int8_0 on a 16x16 cube
  pdp_16x16x32_3x3s2_max  pdp_8x8x64_2x2_ave_int8_0 reshaped: 16x16x32 input,
                        3x3 max pooling, stride 2, padding 1 on every side
  multi_sdp_pdp_cdp     three independent layers (SDP, PDP, CDP) programmed
                        back to back, so the engines run side by side
  img_51x48x4_A8B8G8R8  the image-input case on half its lines
  conv_sdp_pdp_13x15x64_pool2  a convolution case fused with SDP and PDP
  pdp_*, cdp_*          the PDP and CDP cases reshaped (sizes, kernels,
                        strides, padding, LRN size: see the calls at the end)
"""
import os
import re
import shutil
import sys


def read(conf, case):
    with open(os.path.join(conf, case, case + ".cfg")) as f:
        return [l.rstrip("\n") for l in f]


def copy_dats(conf, case, lines, out):
    for l in lines:
        m = re.search(r'mem_load\([^,]*,[^,]*,\s*"([^"]+)"', l)
        if m:
            shutil.copy(os.path.join(conf, case, m.group(1)), out)


def setreg(lines, name, value):
    pat = re.compile(r"reg_write\(%s,\s*[^)]*\);" % re.escape(name))
    hit = False
    for i, l in enumerate(lines):
        if pat.search(l):
            lines[i] = pat.sub("reg_write(%s, 0x%x);" % (name, value), l)
            hit = True
    if not hit:
        raise SystemExit("no write of %s" % name)


def tbd_crc(lines, size=None):
    out = []
    for l in lines:
        m = re.match(r"(check_crc\([^,]*,[^,]*,\s*)(0x[0-9a-fA-F]+)(,\s*)(0x[0-9a-fA-F]+)(,\s*)(0x[0-9a-fA-F]+)\);", l)
        if m:
            sz = "0x%x" % size if size else m.group(4)
            l = "%s%s%s%s%s0x0);" % (m.group(1), m.group(2), m.group(3), sz, m.group(5))
        out.append(l)
    return out


def write(out, name, lines):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name + ".cfg"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return d


def sdp_16x16(conf, out):
    src = "sdp_8x8x32_bypass_int8_0"
    l = [x for x in read(conf, src) if not x.startswith("//")]
    l = ["mem_init(pri_mem, 0x80000000, 0x2000, ALL_ZERO);",
         "mem_init(pri_mem, 0x80080000, 0x2000, ALL_ZERO);"] + l
    for u in ("NVDLA_SDP", "NVDLA_SDP_RDMA"):
        setreg(l, u + ".D_DATA_CUBE_WIDTH_0", 15)
        setreg(l, u + ".D_DATA_CUBE_HEIGHT_0", 15)
    setreg(l, "NVDLA_SDP_RDMA.D_SRC_LINE_STRIDE_0", 0x80)
    setreg(l, "NVDLA_SDP_RDMA.D_SRC_SURFACE_STRIDE_0", 0x800)
    setreg(l, "NVDLA_SDP.D_DST_LINE_STRIDE_0", 0x80)
    setreg(l, "NVDLA_SDP.D_DST_SURFACE_STRIDE_0", 0x800)
    d = write(out, "sdp_16x16x32_bypass", tbd_crc(l, 0x2000))
    copy_dats(conf, src, l, d)


def pdp_16x16(conf, out):
    src = "pdp_8x8x64_2x2_ave_int8_0"
    l = read(conf, src)
    l = [x.replace("mem_init(pri_mem, 0x80000000, 0x1000", "mem_init(pri_mem, 0x80000000, 0x2000")
         for x in l]
    for u in ("NVDLA_PDP", "NVDLA_PDP_RDMA"):
        setreg(l, u + ".D_DATA_CUBE_IN_WIDTH_0", 15)
        setreg(l, u + ".D_DATA_CUBE_IN_HEIGHT_0", 15)
        setreg(l, u + ".D_DATA_CUBE_IN_CHANNEL_0", 31)
        setreg(l, u + ".D_SRC_LINE_STRIDE_0", 0x80)
        setreg(l, u + ".D_SRC_SURFACE_STRIDE_0", 0x800)
        setreg(l, u + ".D_PARTIAL_WIDTH_IN_0", 15 | 15 << 10 | 15 << 20)
    setreg(l, "NVDLA_PDP_RDMA.D_POOLING_KERNEL_CFG_0", 0x22)   # width 3, stride 2
    setreg(l, "NVDLA_PDP.D_POOLING_KERNEL_CFG_0", 0x110202)    # 3x3, stride 2x2
    setreg(l, "NVDLA_PDP.D_POOLING_PADDING_CFG_0", 0x1111)     # 1 on every side
    setreg(l, "NVDLA_PDP.D_OPERATION_MODE_CFG_0", 0x11)        # max, off-flying
    setreg(l, "NVDLA_PDP.D_DATA_CUBE_OUT_CHANNEL_0", 31)
    setreg(l, "NVDLA_PDP.D_PARTIAL_WIDTH_OUT_0", 7 | 7 << 10 | 7 << 20)
    d = write(out, "pdp_16x16x32_3x3s2_max", tbd_crc(l))
    copy_dats(conf, src, l, d)


def multi(conf, out):
    parts = []
    s = [x for x in read(conf, "sdp_8x8x32_bypass_int8_0") if not x.startswith("//")]
    p = [x.replace("0x80000000", "0x80200000").replace("sync_id_0", "pdp_done")
         for x in read(conf, "pdp_8x8x64_2x2_ave_int8_0")]
    c = [x.replace("0x80000020", "0x80400020").replace("sync_id_0", "cdp_done")
         for x in read(conf, "cdp_8x8x32_lrn5_int8_0")]
    cases = (("sdp_8x8x32_bypass_int8_0", s), ("pdp_8x8x64_2x2_ave_int8_0", p),
             ("cdp_8x8x32_lrn5_int8_0", c))
    mem, regs, waits, checks = [], [], [], []
    for _, l in cases:
        for x in l:
            if x.startswith("mem_"):
                mem.append(x)
            elif x.startswith("reg_write"):
                regs.append(x)
            elif x.startswith("intr_notify"):
                waits.append(x)
            elif x.startswith("check_crc"):
                checks.append(x)
    d = write(out, "multi_sdp_pdp_cdp", mem + regs + waits + checks)
    for name, l in cases:
        copy_dats(conf, name, l, d)


def img_half(conf, out):
    """img_51x96x4_1x10x4x32_A8B8G8R8_int8_0 on the top 48 of its 96 lines:
    20 output rows instead of 44."""
    src = "img_51x96x4_1x10x4x32_A8B8G8R8_int8_0"
    l = read(conf, src)
    for r in ("NVDLA_CDMA.D_DATAIN_SIZE_0_0", "NVDLA_CDMA.D_DATAIN_SIZE_EXT_0_0",
              "NVDLA_CSC.D_DATAIN_SIZE_EXT_0_0"):
        setreg(l, r, 0x2f0032)
    for r in ("NVDLA_CSC.D_DATAOUT_SIZE_0_0", "NVDLA_CACC.D_DATAOUT_SIZE_0_0"):
        setreg(l, r, 0x13000b)
    setreg(l, "NVDLA_SDP.D_DATA_CUBE_HEIGHT_0", 0x13)
    setreg(l, "NVDLA_CSC.D_ATOMICS_0", 12 * 20 - 1)
    d = write(out, "img_51x48x4_A8B8G8R8", tbd_crc(l))
    copy_dats(conf, src, l, d)


def conv_pdp(conf, out):
    """dc_13x15x64_5x3x64x16_int8_0 with SDP sending its output on the fly to
    PDP (2x2/2 max pooling): convolution -> SDP -> PDP fused, the 12x14x16
    result pooled to 6x7x16 in memory; PDP's done interrupt unmasked."""
    src = "dc_13x15x64_5x3x64x16_int8_0"
    pdp = [("D_DATA_CUBE_IN_WIDTH_0", 11), ("D_DATA_CUBE_IN_HEIGHT_0", 13),
           ("D_DATA_CUBE_IN_CHANNEL_0", 15), ("D_DATA_CUBE_OUT_WIDTH_0", 5),
           ("D_DATA_CUBE_OUT_HEIGHT_0", 6), ("D_DATA_CUBE_OUT_CHANNEL_0", 15),
           ("D_POOLING_KERNEL_CFG_0", 0x110101), ("D_POOLING_PADDING_CFG_0", 0),
           ("D_OPERATION_MODE_CFG_0", 0x1), ("D_PARTIAL_WIDTH_IN_0", 11 | 11 << 10 | 11 << 20),
           ("D_PARTIAL_WIDTH_OUT_0", 5 | 5 << 10 | 5 << 20), ("D_RECIP_KERNEL_WIDTH_0", 0x8000),
           ("D_RECIP_KERNEL_HEIGHT_0", 0x8000), ("D_DST_BASE_ADDR_LOW_0", 0x80800000),
           ("D_DST_BASE_ADDR_HIGH_0", 0), ("D_DST_LINE_STRIDE_0", 6 * 8),
           ("D_DST_SURFACE_STRIDE_0", 6 * 7 * 8), ("D_DST_RAM_CFG_0", 1),
           ("D_DATA_FORMAT_0", 0), ("D_OP_ENABLE_0", 1)]
    l = []
    for x in read(conf, src):
        if x.startswith("reg_write(NVDLA_GLB.S_INTR_MASK_0"):
            x = "reg_write(NVDLA_GLB.S_INTR_MASK_0, 0x3f03cc);"
        elif x.startswith("reg_write(NVDLA_SDP.D_FEATURE_MODE_CFG_0"):
            x = "reg_write(NVDLA_SDP.D_FEATURE_MODE_CFG_0, 0x3);"
        elif x.startswith("reg_write(NVDLA_SDP.D_OP_ENABLE_0"):
            l += ["reg_write(NVDLA_PDP.%s, 0x%x);" % (r, v) for r, v in pdp]
        elif x.startswith("intr_notify(SDP_0"):
            l += ["mem_init(pri_mem, 0x80800000, 0x2a0, ALL_ZERO);",
                  "intr_notify(SDP_0, conv_done);", "intr_notify(PDP_0, pool_done);",
                  "check_nothing(conv_done);",
                  "check_crc(pool_done, 1, 0x80800000, 0x2a0, 0x0);"]
            continue
        elif x.startswith("check_crc"):
            continue
        l.append(x)
    d = write(out, "conv_sdp_pdp_13x15x64_pool2", l)
    copy_dats(conf, src, l, d)


def pdp_shape(conf, out, name, w, h, c, kw, kh, sw, sh, pads, method):
    """pdp_8x8x64_2x2_ave_int8_0 on a w x h x c cube (packed), kernel kw x kh,
    stride sw x sh, pads (left, top, right, bottom), method 0 avg, 1 max, 2 min."""
    src = "pdp_8x8x64_2x2_ave_int8_0"
    pl, pt, pr, pb = pads
    ow = (w + pl + pr - kw) // sw + 1
    oh = (h + pt + pb - kh) // sh + 1
    surf = (c + 7) // 8
    in_bytes, out_bytes = w * h * 8 * surf, ow * oh * 8 * surf
    l = read(conf, src)
    l = [x.replace("mem_init(pri_mem, 0x80000000, 0x1000", "mem_init(pri_mem, 0x80000000, 0x%x" % max(in_bytes, 0x1000))
          .replace("mem_init(pri_mem, 0x80100000, 0x1000", "mem_init(pri_mem, 0x80100000, 0x%x" % out_bytes)
         for x in l]
    for u in ("NVDLA_PDP", "NVDLA_PDP_RDMA"):
        setreg(l, u + ".D_DATA_CUBE_IN_WIDTH_0", w - 1)
        setreg(l, u + ".D_DATA_CUBE_IN_HEIGHT_0", h - 1)
        setreg(l, u + ".D_DATA_CUBE_IN_CHANNEL_0", c - 1)
        setreg(l, u + ".D_SRC_LINE_STRIDE_0", w * 8)
        setreg(l, u + ".D_SRC_SURFACE_STRIDE_0", w * h * 8)
        setreg(l, u + ".D_PARTIAL_WIDTH_IN_0", (w - 1) | (w - 1) << 10 | (w - 1) << 20)
    setreg(l, "NVDLA_PDP_RDMA.D_POOLING_KERNEL_CFG_0", (kw - 1) | (sw - 1) << 4)
    setreg(l, "NVDLA_PDP.D_POOLING_KERNEL_CFG_0",
           (kw - 1) | (kh - 1) << 8 | (sw - 1) << 16 | (sh - 1) << 20)
    setreg(l, "NVDLA_PDP.D_POOLING_PADDING_CFG_0", pl | pt << 4 | pr << 8 | pb << 12)
    setreg(l, "NVDLA_PDP.D_OPERATION_MODE_CFG_0", method | 0x10)
    setreg(l, "NVDLA_PDP.D_RECIP_KERNEL_WIDTH_0", 0x10000 // kw)
    setreg(l, "NVDLA_PDP.D_RECIP_KERNEL_HEIGHT_0", 0x10000 // kh)
    setreg(l, "NVDLA_PDP.D_DATA_CUBE_OUT_WIDTH_0", ow - 1)
    setreg(l, "NVDLA_PDP.D_DATA_CUBE_OUT_HEIGHT_0", oh - 1)
    setreg(l, "NVDLA_PDP.D_DATA_CUBE_OUT_CHANNEL_0", c - 1)
    setreg(l, "NVDLA_PDP.D_PARTIAL_WIDTH_OUT_0", (ow - 1) | (ow - 1) << 10 | (ow - 1) << 20)
    setreg(l, "NVDLA_PDP.D_DST_LINE_STRIDE_0", ow * 8)
    setreg(l, "NVDLA_PDP.D_DST_SURFACE_STRIDE_0", ow * oh * 8)
    d = write(out, name, tbd_crc(l, out_bytes))
    copy_dats(conf, src, l, d)


def cdp_shape(conf, out, name, w, h, c, lrn):
    """cdp_8x8x32_lrn5_int8_0 on a w x h x c cube (packed); lrn = 3, 5, 7 or 9."""
    src = "cdp_8x8x32_lrn5_int8_0"
    surf = (c + 7) // 8
    size = w * h * 8 * surf
    l = read(conf, src)
    l = [x.replace("mem_init(pri_mem, 0x80800c00, 0x2000", "mem_init(pri_mem, 0x80800c00, 0x%x" % max(size, 0x2000))
          .replace("mem_init(pri_mem, 0x80000020, 0x2000", "mem_init(pri_mem, 0x80000020, 0x%x" % size)
         for x in l]
    setreg(l, "NVDLA_CDP_RDMA.D_DATA_CUBE_WIDTH_0", w - 1)
    setreg(l, "NVDLA_CDP_RDMA.D_DATA_CUBE_HEIGHT_0", h - 1)
    setreg(l, "NVDLA_CDP_RDMA.D_DATA_CUBE_CHANNEL_0", c - 1)
    setreg(l, "NVDLA_CDP_RDMA.D_SRC_LINE_STRIDE_0", w * 8)
    setreg(l, "NVDLA_CDP_RDMA.D_SRC_SURFACE_STRIDE_0", w * h * 8)
    setreg(l, "NVDLA_CDP.D_DST_LINE_STRIDE_0", w * 8)
    setreg(l, "NVDLA_CDP.D_DST_SURFACE_STRIDE_0", w * h * 8)
    setreg(l, "NVDLA_CDP.D_LRN_CFG_0", (lrn - 3) // 2)
    d = write(out, name, tbd_crc(l, size))
    copy_dats(conf, src, l, d)


if __name__ == "__main__":
    conf, out = sys.argv[1], sys.argv[2]
    sdp_16x16(conf, out)
    pdp_16x16(conf, out)
    multi(conf, out)
    pdp_shape(conf, out, "pdp_12x10x16_3x3s1_p1_avg", 12, 10, 16, 3, 3, 1, 1, (1, 1, 1, 1), 0)
    pdp_shape(conf, out, "pdp_20x6x24_2x2s2_max", 20, 6, 24, 2, 2, 2, 2, (0, 0, 0, 0), 1)
    pdp_shape(conf, out, "pdp_9x17x8_4x4s3_p1212_min", 9, 17, 8, 4, 4, 3, 3, (1, 2, 1, 2), 2)
    pdp_shape(conf, out, "pdp_16x4x64_1x3s1_p0101_max", 16, 4, 64, 1, 3, 1, 1, (0, 1, 0, 1), 1)
    cdp_shape(conf, out, "cdp_16x8x32_lrn3", 16, 8, 32, 3)
    cdp_shape(conf, out, "cdp_4x4x96_lrn7", 4, 4, 96, 7)
    cdp_shape(conf, out, "cdp_24x2x16_lrn5", 24, 2, 16, 5)
    img_half(conf, out)
    conv_pdp(conf, out)
    # bottom padding rows, one at a time: the output lines PDP flushes
    for k, h, pads in ((3, 8, (0, 1, 2)), (5, 10, (0, 2, 4))):
        for b in pads:
            pdp_shape(conf, out, "pdp_16x%dx8_%dx%d_pb%d" % (h, k, k, b), 16, h, 8, k, k, 1, 1,
                      (0, 0, 0, b), 1)

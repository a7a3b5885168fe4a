#!/usr/bin/env python3
"""Write the RK3588 trace cases of tests/traces/rk3588/ (deterministic).

Each case is a trace in NVDLA's trace language with RK3588 register names
(RKNN_<block>_<register>, offsets in core 0's window) plus its surface
files.  The expected CRCs come from the plain-Python integer references
below, written from the documented semantics (docs/rk3588.md), not from
the model.  Python 3 standard library only.

    python3 tools/rk/gen_trace_cases.py tests/traces/rk3588
"""

import os
import random
import sys
import zlib

BLOCK_TARGET = {0x0: 0x0100, 0x1: 0x0200, 0x3: 0x0800, 0x4: 0x1000, 0x5: 0x2000,
                0x6: 0x4000, 0x7: 0x8000}


def entry(target, reg, value):
    return (target << 48) | ((value & 0xffffffff) << 16) | reg


def emit(lst, reg, value):
    lst.append(entry(BLOCK_TARGET[reg >> 12] | 1, reg, value))


def feature_offset(w, h, c, y, x, bpe):
    c2 = 16 // bpe
    return (c // c2) * h * w * 16 + (y * w + x) * 16 + (c % c2) * bpe


def feature_bytes(w, h, c, bpe):
    c2 = 16 // bpe
    return (c + c2 - 1) // c2 * h * w * 16


def pack_feature(t, w, h, c):
    buf = bytearray(feature_bytes(w, h, c, 1))
    for ch in range(c):
        for y in range(h):
            for x in range(w):
                buf[feature_offset(w, h, ch, y, x, 1)] = t[ch][y][x] & 0xff
    return buf


def pack_weights(wt, k, c, kh, kw):
    """[K/32][C/32][ky][kx][k2][c2], partial last blocks."""
    out = bytearray()
    for kg in range(0, k, 32):
        k2n = min(32, k - kg)
        for cg in range(0, c, 32):
            c2n = min(32, c - cg)
            for ky in range(kh):
                for kx in range(kw):
                    for k2 in range(k2n):
                        for c2 in range(c2n):
                            out.append(wt[kg + k2][cg + c2][ky][kx] & 0xff)
    return out


def dat(buf):
    """NVDLA surface file: one payload line per 16 bytes."""
    lines = ["{"]
    for off in range(0, len(buf), 16):
        chunk = buf[off:off + 16]
        lines.append("{offset:0x%x, size:%d, payload:%s} ," % (
            off, len(chunk), " ".join("0x%02x" % b for b in chunk)))
    lines.append("}")
    return "\n".join(lines) + "\n"


def conv_ref(inp, wt, c, k, h, w, kh, kw, s, pad):
    oh, ow = (h + 2 * pad - kh) // s + 1, (w + 2 * pad - kw) // s + 1
    out = [[[0] * ow for _ in range(oh)] for _ in range(k)]
    for ko in range(k):
        for oy in range(oh):
            for ox in range(ow):
                acc = 0
                for ch in range(c):
                    for ky in range(kh):
                        for kx in range(kw):
                            y, x = oy * s + ky - pad, ox * s + kx - pad
                            if 0 <= y < h and 0 <= x < w:
                                acc += inp[ch][y][x] * wt[ko][ch][ky][kx]
                out[ko][oy][ox] = acc
    return out, oh, ow


def conv_task(lst, p, addr_in, addr_wt, addr_out):
    w, h, c, k, kn, s, pad, ow, oh = p
    emit(lst, 0x100c, 0)                                   # CNA_CONV_CON1: direct, int8
    emit(lst, 0x1014, s | s << 3)                          # CNA_CONV_CON3: strides
    emit(lst, 0x1020, w << 16 | h)                         # CNA_DATA_SIZE0
    emit(lst, 0x1024, (c - 1) << 16 | c)                   # CNA_DATA_SIZE1
    emit(lst, 0x1028, ow)                                  # CNA_DATA_SIZE2
    emit(lst, 0x1038, kn << 24 | kn << 16 | k)             # CNA_WEIGHT_SIZE2
    emit(lst, 0x104c, 0xb)                                 # CNA_CVT_CON0: bypass
    emit(lst, 0x1068, pad << 4 | pad)                      # CNA_PAD_CON0
    emit(lst, 0x1070, addr_in)                             # CNA_FEATURE_DATA_ADDR
    emit(lst, 0x1110, addr_wt)                             # CNA_DCOMP_ADDR0
    emit(lst, 0x1184, 0)                                   # CNA_PAD_CON1
    emit(lst, 0x3010, 1)                                   # CORE_MISC_CFG: qd_en
    emit(lst, 0x3014, (oh - 1) << 16 | (ow - 1))           # CORE_DATAOUT_SIZE_0
    emit(lst, 0x3018, k - 1)                               # CORE_DATAOUT_SIZE_1
    emit(lst, 0x4004, 0xe)                                 # DPU_S_POINTER
    emit(lst, 0x400c, 15 << 5 | 2 << 1)                    # DPU_FEATURE_MODE_CFG: to memory
    emit(lst, 0x4010, 4 << 29)                             # DPU_DATA_FORMAT: int32 out
    emit(lst, 0x4020, addr_out)                            # DPU_DST_BASE_ADDR
    emit(lst, 0x4024, (ow * oh) << 4)                      # DPU_DST_SURF_STRIDE
    emit(lst, 0x4030, ow - 1)
    emit(lst, 0x4034, oh - 1)
    emit(lst, 0x403c, (k - 1) << 16 | (k - 1))
    emit(lst, 0x4040, 1)                                   # BS bypass
    emit(lst, 0x4060, 1)                                   # BN bypass
    emit(lst, 0x4070, 1)                                   # EW bypass
    emit(lst, 0x4084, 1)                                   # OUT_CVT_SCALE 1
    emit(lst, 0x5004, 0xe)                                 # DPU_RDMA_S_POINTER


def layout(tasks, base, mask):
    """Mesa's layout: each task + 4-entry tail, 64-byte aligned."""
    sizes = [len(t) + 4 for t in tasks]
    offs, off = [], 0
    for n in sizes:
        offs.append(off)
        off += ((n + (n & 1)) * 8 + 63) // 64 * 64
    buf = bytearray(off)
    for i, t in enumerate(tasks):
        ents = list(t)
        if i + 1 < len(tasks):
            ents.append(entry(0x0101, 0x10, base + offs[i + 1]))
            ents.append(entry(0x0101, 0x14, (sizes[i + 1] + 1) // 2 - 1))
        else:
            ents.append(0)
            ents.append(entry(0x0101, 0x14, 0))
        ents.append(entry(0x0041, 0, 0))
        ents.append(entry(0x0081, 0x8, mask))
        for j, e in enumerate(ents):
            buf[offs[i] + 8 * j:offs[i] + 8 * j + 8] = e.to_bytes(8, "little")
    return buf, sizes[0]


def kick(lines, addr, count, tasks, mask):
    w = lines.append
    w("reg_write(RKNN_pc_base_address, 0x1);")
    w("reg_write(RKNN_cna_s_pointer, 0xe);")
    w("reg_write(RKNN_core_s_pointer, 0xe);")
    w("reg_write(RKNN_pc_base_address, 0x%x);" % addr)
    w("reg_write(RKNN_pc_register_amounts, 0x%x);" % ((count + 1) // 2 - 1))
    w("reg_write(RKNN_pc_interrupt_mask, 0x%x);" % mask)
    w("reg_write(RKNN_pc_interrupt_clear, 0x%x);" % mask)
    w("reg_write(RKNN_pc_task_con, 0x%x);" % (1 << 14 | 1 << 13 | 1 << 12 | tasks))
    w("reg_write(RKNN_pc_task_dma_base_addr, 0x0);")
    w("reg_write(RKNN_pc_operation_enable, 0x1);")


def case_conv_chain(rnd):
    """Two int8 -> int32 conv tasks in one regcmd list, one kick (rknpu style)."""
    w, h, c, k, kn, s, pad = 7, 5, 40, 20, 3, 1, 1
    inp = [[[rnd.randint(-128, 127) for _ in range(w)] for _ in range(h)] for _ in range(c)]
    wts = [[[[[rnd.randint(-128, 127) for _ in range(kn)] for _ in range(kn)] for _ in range(c)]
            for _ in range(k)] for _ in range(2)]
    files, lines, checks = {}, [], []
    files["in.dat"] = pack_feature(inp, w, h, c)
    tasks = []
    for t in range(2):
        ref, oh, ow = conv_ref(inp, wts[t], c, k, h, w, kn, kn, s, pad)
        files["wt%d.dat" % t] = pack_weights(wts[t], k, c, kn, kn)
        out = bytearray(feature_bytes(ow, oh, k, 4))
        for ko in range(k):
            for y in range(oh):
                for x in range(ow):
                    o = feature_offset(ow, oh, ko, y, x, 4)
                    out[o:o + 4] = (ref[ko][y][x] & 0xffffffff).to_bytes(4, "little")
        lst = []
        conv_task(lst, (w, h, c, k, kn, s, pad, ow, oh), 0x100000, 0x200000 + t * 0x10000,
                  0x400000 + t * 0x10000)
        tasks.append(lst)
        checks.append((0x400000 + t * 0x10000, len(out), zlib.crc32(out)))
    cmd, count = layout(tasks, 0x40000, 0x0d)
    files["regcmd.dat"] = cmd
    w_ = lines.append
    w_("// RK3588: two int8 conv tasks (int32 out, DPU bypassed) chained through the PC")
    w_("mem_load(pri_mem, 0x100000, \"%s\");" % "conv_chain_in.dat")
    w_("mem_load(pri_mem, 0x200000, \"conv_chain_wt0.dat\");")
    w_("mem_load(pri_mem, 0x210000, \"conv_chain_wt1.dat\");")
    w_("mem_load(pri_mem, 0x40000, \"conv_chain_regcmd.dat\");")
    kick(lines, 0x40000, count, 2, 0x300)
    w_("poll_reg_equal(RKNN_pc_task_status, 0x2);")
    w_("intr_notify(DPU_1, sync_id_0);")
    for addr, size, crc in checks:
        w_("check_crc(sync_id_0, 1, 0x%x, 0x%x, 0x%08x);" % (addr, size, crc))
    return "conv_chain", lines, files


def case_pointer_polls(rnd):
    """One conv task; the only checks are register reads (poll_reg_equal)."""
    w, h, c, k, kn, s, pad = 4, 4, 16, 16, 1, 1, 0
    inp = [[[rnd.randint(-128, 127) for _ in range(w)] for _ in range(h)] for _ in range(c)]
    wt = [[[[rnd.randint(-128, 127)]] for _ in range(c)] for _ in range(k)]
    files = {"in.dat": pack_feature(inp, w, h, c), "wt.dat": pack_weights(wt, k, c, 1, 1)}
    lst = []
    conv_task(lst, (w, h, c, k, kn, s, pad, w, h), 0x100000, 0x200000, 0x400000)
    cmd, count = layout([lst], 0x40000, 0x0d)
    files["regcmd.dat"] = cmd
    lines = ["// RK3588: S_POINTER / S_STATUS / TASK_STATUS / interrupts after one task,",
             "// checked by register reads only",
             "mem_load(pri_mem, 0x100000, \"pointer_polls_in.dat\");",
             "mem_load(pri_mem, 0x200000, \"pointer_polls_wt.dat\");",
             "mem_load(pri_mem, 0x40000, \"pointer_polls_regcmd.dat\");"]
    kick(lines, 0x40000, count, 1, 0x300)
    lines += ["poll_reg_equal(RKNN_pc_task_status, 0x1);",
              "poll_reg_equal(RKNN_dpu_s_pointer, 0x1000f);",
              "poll_reg_equal(RKNN_cna_s_pointer, 0x1000f);",
              "poll_reg_equal(RKNN_dpu_s_status, 0x0);",
              "poll_reg_equal(RKNN_pc_interrupt_raw_status, 0x155);",
              "poll_reg_equal(RKNN_pc_interrupt_status, 0x100);",
              "reg_write(RKNN_pc_interrupt_clear, 0x1ffff);",
              "poll_reg_equal(RKNN_pc_interrupt_status, 0x0);"]
    return "pointer_polls", lines, files


def case_ppu_slave(rnd):
    """Max pooling programmed over MMIO (no PC), PPU_RDMA input."""
    w, h, c, k, s = 9, 6, 20, 3, 2
    ow, oh = (w - k) // s + 1, (h - k) // s + 1
    inp = [[[rnd.randint(-128, 127) for _ in range(w)] for _ in range(h)] for _ in range(c)]
    out = bytearray(feature_bytes(ow, oh, c, 1))
    for ch in range(c):
        for y in range(oh):
            for x in range(ow):
                v = max(inp[ch][y * s + ky][x * s + kx] for ky in range(k) for kx in range(k))
                out[feature_offset(ow, oh, ch, y, x, 1)] = v & 0xff
    files = {"in.dat": pack_feature(inp, w, h, c)}
    lines = ["// RK3588: 3x3 stride-2 max pooling, PPU + PPU_RDMA programmed over MMIO",
             "mem_load(pri_mem, 0x100000, \"ppu_slave_in.dat\");",
             "reg_write(RKNN_ppu_rdma_cube_in_width, 0x%x);" % (w - 1),
             "reg_write(RKNN_ppu_rdma_cube_in_height, 0x%x);" % (h - 1),
             "reg_write(RKNN_ppu_rdma_cube_in_channel, 0x%x);" % (c - 1),
             "reg_write(RKNN_ppu_rdma_src_base_addr, 0x100000);",
             "reg_write(RKNN_ppu_rdma_src_line_stride, 0x%x);" % (w * 16),
             "reg_write(RKNN_ppu_rdma_src_surf_stride, 0x%x);" % (w * h * 16),
             "reg_write(RKNN_ppu_data_cube_in_width, 0x%x);" % (w - 1),
             "reg_write(RKNN_ppu_data_cube_in_height, 0x%x);" % (h - 1),
             "reg_write(RKNN_ppu_data_cube_in_channel, 0x%x);" % (c - 1),
             "reg_write(RKNN_ppu_data_cube_out_width, 0x%x);" % (ow - 1),
             "reg_write(RKNN_ppu_data_cube_out_height, 0x%x);" % (oh - 1),
             "reg_write(RKNN_ppu_data_cube_out_channel, 0x%x);" % (c - 1),
             "reg_write(RKNN_ppu_operation_mode_cfg, 0x11);",
             "reg_write(RKNN_ppu_pooling_kernel_cfg, 0x%x);" % ((s - 1) << 20 | (s - 1) << 16 |
                                                                (k - 1) << 8 | (k - 1)),
             "reg_write(RKNN_ppu_dst_base_addr, 0x300000);",
             "reg_write(RKNN_ppu_dst_surf_stride, 0x%x);" % (ow * oh * 16),
             "reg_write(RKNN_global_operation_enable, 0x60);",
             "intr_notify(PPU_0, sync_id_0);",
             "check_crc(sync_id_0, 1, 0x300000, 0x%x, 0x%08x);" % (len(out), zlib.crc32(out))]
    return "ppu_slave", lines, files


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: gen_trace_cases.py OUT_DIR\n")
        return 2
    for make in (case_conv_chain, case_pointer_polls, case_ppu_slave):
        name, lines, files = make(random.Random(make.__name__))
        d = os.path.join(argv[1], name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, name + ".cfg"), "w") as f:
            f.write("\n".join(lines) + "\n")
        for fn, data in files.items():
            with open(os.path.join(d, "%s_%s" % (name, fn)), "w") as f:
                f.write(dat(data))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

// cal2d_probe: NVIDIA's PDP cal2d (NV_NVDLA_PDP_CORE_cal2d.v, nv_small) run alone under
// Verilator, fed a stream of 1-D results, to measure how many output beats it sends and when
// (docs/fidelity.md, "When PDP never completes").  Built by cal2d_probe.sh against an RTL build
// (../shared/tools/rtl-build.sh); not part of make test.
//   cal2d_probe IN_H OUT_W OUT_H SURFACES KH SH PAD_T PAD_B KW ABSORB [MAX_CYCLES [BEATS_IN]]
// ABSORB: beats the output takes past OUT_H lines (-1: always ready).  BEATS_IN: 1-D result
// beats fed (default SURFACES * IN_H * OUT_W * 8, what cal2d counts; dlasim's cal1d replay
// gives the real number when PAD_RIGHT is over-stated).  Prints the beats sent by the time the
// last input beat was taken, their excess over PDP_WDMA's count, and COMPLETE / SHORT / STALL.
#include "VNV_NVDLA_PDP_CORE_cal2d.h"
#include "verilated.h"
#include <cstdio>
#include <cstdlib>

static void tick(VNV_NVDLA_PDP_CORE_cal2d &t)
{
    t.nvdla_core_clk = 1;
    t.eval();
    t.nvdla_core_clk = 0;
    t.eval();
}

int main(int argc, char **argv)
{
    if (argc < 11) {
        fprintf(stderr, "usage: cal2d_probe IN_H OUT_W OUT_H SURFACES KH SH PAD_T PAD_B KW ABSORB "
                        "[MAX_CYCLES [BEATS_IN]]\n");
        return 2;
    }
    int in_h = atoi(argv[1]), out_w = atoi(argv[2]), out_h = atoi(argv[3]), S = atoi(argv[4]);
    int kh = atoi(argv[5]), sh = atoi(argv[6]), pt = atoi(argv[7]), pb = atoi(argv[8]);
    int kw = atoi(argv[9]);
    long absorb = atol(argv[10]);
    long maxcyc = argc > 11 ? atol(argv[11]) : 400000;
    long n_in = argc > 12 ? atol(argv[12]) : (long)S * in_h * out_w * 8;
    VerilatedContext ctx;
    VNV_NVDLA_PDP_CORE_cal2d t(&ctx);
    t.padding_v_cfg = pt;
    t.pooling_channel_cfg = S * 8 - 1;
    t.pooling_size_v_cfg = kh - 1;
    t.pooling_stride_v_cfg = sh - 1;
    t.pooling_type_cfg = 1;
    t.reg2dp_cube_in_height = in_h - 1;
    t.reg2dp_cube_out_width = out_w - 1;
    t.reg2dp_kernel_height = kh - 1;
    t.reg2dp_kernel_width = kw - 1;
    t.reg2dp_pad_bottom_cfg = pb;
    t.reg2dp_pad_top = pt;
    t.nvdla_core_rstn = 0;
    for (int i = 0; i < 5; i++) {
        tick(t);
    }
    t.nvdla_core_rstn = 1;
    for (int i = 0; i < 5; i++) {
        tick(t);
    }
    long want = (long)S * out_h * out_w * 8, in = 0, out = 0, at_last_in = -1, last_cyc = -1;
    for (long cyc = 0; cyc < maxcyc; cyc++) {
        t.pdp_op_start = cyc == 2;
        t.pooling1d_pvld = cyc > 4 && in < n_in;
        t.pooling1d_pd = (in * 37) & 0x7f;
        t.pdp_dp2wdma_ready = absorb < 0 || out < want + absorb;
        t.eval();
        int took = t.pooling1d_pvld && t.pooling1d_prdy;
        int sent = t.pdp_dp2wdma_valid && t.pdp_dp2wdma_ready;
        tick(t);
        in += took;
        out += sent;
        if (took && in == n_in) {
            at_last_in = out;
            last_cyc = cyc;
        }
        if (in == n_in && cyc > last_cyc + 2000) {
            break;
        }
    }
    printf("in=%ld/%ld out=%ld want=%ld out_at_last_in=%ld excess_at_last_in=%ld %s\n", in, n_in,
           out, want, at_last_in, at_last_in - want,
           in < n_in ? "STALL" : out < want ? "SHORT" : "COMPLETE");
    t.final();
    return 0;
}

#!/bin/sh
# Regenerate the committed fuzz seeds from NVDLA's conformance traces:
#   tests/fuzz/seeds/csb/    register programming of small conformance layers
#                            of every engine (tools/fuzz/trace2csb.py), so
#                            fuzz_csb starts from valid programming of the
#                            convolution pipeline, SDP, PDP, CDP, BDMA, RUBIK
#   tests/fuzz/seeds/trace/  a few of them as normalised trace text: register
#                            writes, waits and checks only (the fuzzer has no
#                            surface files)
# Cases are chosen small (each layer well under fuzz_csb's work limit, except
# one image-input case that reaches the image path's checks) to keep the
# corpus a few hundred KB and the fuzzers fast.
#   usage: tools/fuzz/make_seeds.sh [CONFORMANCE_DIR]
set -eu
conf=${1:-../shared/conformance/nvdla-traces}
out=tests/fuzz/seeds
small="cdp_1x1x31_lrn3_int8_0 cdp_8x8x32_lrn3_int8_0 cdp_8x8x32_lrn5_int8_0
cdp_8x8x32_lrn9_int8_0 cdp_8x8x64_lrn3_int8_0 cdp_8x8x64_lrn3_int8_10
dc_13x15x64_5x3x64x16_int8_0 dc_1x1x8_1x1x8x1_int8_0 dc_4x1x8192_1x1x8192x1_int8_0
dc_6x8x192_3x3x192x32_int8_0 dc_8x8x36_4x4x36x16_dilation_int8_0
img_51x96x4_1x10x4x32_A8B8G8R8_int8_0
pdp_1x1x1_3x3_ave_int8_0 pdp_1x3x8_8x8_ave_int8_0 pdp_24x16x1_8x8_ave_int8_0
pdp_28x28x8_2x2_max_int8_0 pdp_5x7x8_4x1_split_max_int8_0 pdp_7x9x10_3x3_int8
pdp_8x8x32_1x1_int8_0 pdp_8x8x64_2x2_ave_int8_0 pdp_8x8x64_2x2_min_int8_0
pdp_8x9x19_3x3_ave_int8_0
sdp_1x1x1_pass_through_int8 sdp_1x8192x1_pass_through_int8_0 sdp_3x3x32_ew_lo_lin_int8
sdp_3x3x33_bn_int8_mem_0 sdp_3x3x33_bs_bn_int8_0 sdp_3x3x33_ew_int8_reg_0
sdp_3x3x33_ew_le_exp_int8 sdp_4x22x42_bypass_int8 sdp_5x24x18_bs_int8_mem_0
sdp_8x8x32_bypass_int8_0 sdp_pdp_32x16x32_pass_through_int8_0"
# element-wise SDP where the configuration has EW and LUT
large_too="sdp_3x3x32_ew_lo_lin_int8 sdp_3x3x33_ew_le_exp_int8 sdp_3x3x33_ew_int8_reg_0"
trace_cases="pdp_8x8x64_2x2_int8 sdp_3x3x33_bn_int8_reg_0 cdp_8x8x32_lrn3_int8_0
dc_1x1x8_1x1x8x1_int8_0"

cfgs() { dir=$1; shift; for c in "$@"; do echo "$conf/$dir/$c/$c.cfg"; done; }
rm -rf "$out/csb"
mkdir -p "$out/csb" "$out/trace"
# shellcheck disable=SC2046,SC2086
python3 tools/fuzz/trace2csb.py --config nv_small "$out/csb" $(cfgs nv_small $small) > /dev/null
# shellcheck disable=SC2046,SC2086
python3 tools/fuzz/trace2csb.py --config nv_large "$out/csb" $(cfgs nv_small $large_too) > /dev/null
# shellcheck disable=SC2046
python3 tools/fuzz/trace2csb.py --config nv_large "$out/csb" $(ls "$conf"/nv_large/*/*.cfg) > /dev/null
# BDMA and RUBIK have no conformance trace: small hand-written programs
python3 tools/fuzz/trace2csb.py --config nv_large "$out/csb" tools/fuzz/seed_traces/*.cfg > /dev/null
python3 tools/fuzz/trace2csb.py --config nv_small_256 "$out/csb" \
    "$conf/nv_small_256/dc_1x1x8_1x1x8x1_int8_0/dc_1x1x8_1x1x8x1_int8_0.cfg" > /dev/null
# shellcheck disable=SC2046,SC2086
python3 tools/fuzz/trace2csb.py --text "$out/trace" $(cfgs nv_small $trace_cases) > /dev/null
echo "seeds: $(ls "$out/csb" | wc -l) csb, $(ls "$out/trace" | wc -l) trace," \
     "$(du -sk "$out" | cut -f1) KB"

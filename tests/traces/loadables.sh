#!/bin/sh
# NVIDIA's regression loadables through `dlasim loadable`: the md5 of the
# dumped o_000000.dimg must equal the lead.md5 golden of NVIDIA's software
# regression (../shared/conformance/nvdla-loadables, see its README).
#  - the _small loadables on nv_small, the _large ones on nv_large;
#  - the nv_full INT8 loadables dlasim can run (BDMA, PDP) on nv_large, and
#    the INT16 RUBIK, SDP, CDP and CONV ones on nv_large with INT16 switched on;
#  - on plain nv_large, the nv_full loadables needing INT16/FP16 or CPU tasks
#    must be refused (non-zero exit, a message naming the descriptor).
# Needs DLASIM (the CLI) and CONFORMANCE (the nvdla-traces folder; the
# loadables are its sibling, or set LOADABLES).
set -u
dlasim=${DLASIM:-build/dlasim}
conf=${CONFORMANCE:-../shared/conformance/nvdla-traces}
dir=${LOADABLES:-$conf/../nvdla-loadables}
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "PASS $1"; }
ko() { failed=$((failed + 1)); echo "FAIL $1"; }
if [ ! -d "$dir/flatbufs" ]; then
    echo "loadables: none at $dir (set LOADABLES)"; echo "0 passed, 1 failed"; exit 1
fi
out=$(mktemp -d)
golden() {  # loadable name -> md5 of its golden
    cut -c1-32 "$(ls -d "$dir"/golden/"$1"_*/dla | head -1)/lead.md5"
}
md5_case() {  # CONFIG KIND/NAME [OPTIONS]
    name=$(basename "$2")
    want=$(golden "$name")
    if "$dlasim" loadable --config "$1" ${3:-} "$dir/flatbufs/kmd/$2_fbuf" --output "$out/$name" \
        --expect-md5 "$want" > "$out/log" 2>&1 &&
        [ "$(md5sum < "$out/$name/o_000000.dimg" | cut -c1-32)" = "$want" ]; then
        ok "$name on $1${3:+ (INT16 on)}: md5 $want"
    else
        ko "$name on $1: $(cat "$out/log")"
    fi
}
refused() {  # CONFIG KIND/NAME WORDS
    "$dlasim" loadable --config "$1" "$dir/flatbufs/kmd/$2_fbuf" > "$out/log" 2>&1
    rc=$?
    if [ "$rc" -eq 1 ] && grep -q "$3" "$out/log"; then
        ok "$(basename "$2") on $1 refused: $(cat "$out/log" | sed 's/.*: task/task/')"
    else
        ko "$(basename "$2") on $1 (exit $rc, want 1 and '$3'): $(cat "$out/log")"
    fi
}
for k in CONV/CONV_D_L0_0 SDP/SDP_X1_L0_0 PDP/PDP_L0_0 CDP/CDP_L0_0; do
    md5_case nv_small "${k}_small"
    md5_case nv_large "${k}_large"
done
md5_case nv_large PDP/PDP_L0_0
md5_case nv_large BDMA/BDMA_L0_0
int16="--set NVDLA_FEATURE_DATA_TYPE=INT8|INT16 --set NVDLA_WEIGHT_DATA_TYPE=INT8|INT16 --set NVDLA_CBUF_BANK_WIDTH=128"
md5_case nv_large RBK/RBK_L0_0 "$int16"
md5_case nv_large SDP/SDP_X1_L0_0 "$int16"
md5_case nv_large CDP/CDP_L0_0 "$int16"
md5_case nv_large CONV/CONV_D_L0_0 "$int16"
refused nv_large CONV/CONV_D_L0_0 "conv_op.in_precision=1 asks for INT16"
refused nv_large SDP/SDP_X1_L0_0 "sdp_op.src_precision=1 asks for INT16"
refused nv_large CDP/CDP_L0_0 "cdp_op.in_precision=1 asks for INT16"
refused nv_large RBK/RBK_L0_0 "rubik_op.precision=1 asks for INT16"
refused nv_large NN/NN_L0_0 "conv_op.in_precision=2 asks for FP16"
refused nv_small BDMA/BDMA_L0_0 "needs the BDMA unit"
# The cycle model through the runtime: CONV_D_L0_0_small programmed by the
# firmware-equivalent executor, timed with the testbench profile, must take
# what the nv_small RTL took for the recording of the same run
# (`dlasim loadable --record-trace`, replayed with ../shared/tools/rtl-run.sh:
# 41,782 cycles to the last interrupt), within the model's 15 % bound.
timed=$("$dlasim" loadable --timing "$dir/flatbufs/kmd/CONV/CONV_D_L0_0_small_fbuf" 2>&1 |
        sed -n 's/^cycle model: .* \([0-9][0-9]*\) cycles per inference.*/\1/p')
if [ -n "$timed" ] && [ "$timed" -ge 35515 ] && [ "$timed" -le 48049 ]; then
    ok "CONV_D_L0_0_small timed through the runtime: $timed cycles (RTL 41782)"
else
    ko "CONV_D_L0_0_small timed through the runtime: '${timed}' cycles, want 41782 +- 15 %"
fi
rm -rf "$out"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/bin/sh
# Overlap (dlasim_options.overlap, `--overlap`): when a layer completes, the
# next enabled one starts on a worker while the runtime services the
# interrupt and programs the freed register group.  It must not change a
# byte: every model below runs through the runtime with the device stepped
# (--no-overlap) and overlapped (the default of `dlasim run`, --threads 2
# and 3), and the INT8 outputs must be identical.  The models cover each
# engine that overlaps: convolutions with SDP on the fly (depthwise channel
# blocks, the runtime's two register groups both busy), SDP from memory
# with a second input (residual add, RDMA), PDP on the fly and from memory,
# CDP (LRN), concatenation and PReLU, plus a MobileNetV2 cut-down
# (tools/models/make_mobilenetv2.py: a 64x64 input, four rows of its table: 32x32, 16x16 and
# 8x8 depthwise blocks).
# The stepped output is checked against the float executor (SQNR), an
# independent reference, so that two equal wrong outputs do not pass.
set -u
dlasim=${DLASIM:-build/dlasim}
models=tests/models
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/common/netdata.sh

# input elements of an ONNX model (its first input's shape)
in_elems() {
    /usr/bin/python3 -c 'import sys, onnx
m = onnx.load(sys.argv[1]); n = 1
for d in m.graph.input[0].type.tensor_type.shape.dim:
    n *= max(d.dim_value, 1)
print(n)' "$1"
}

# model, count: stepped vs overlapped
check() {
    model=$1; count=$2; name=$(basename "$model" .onnx)
    n=$(in_elems "$model") || { fail "$name: cannot read its input shape"; return; }
    bytes $((n * count)) "$name" > "$tmp/$name.in"
    run() { # tag, options...
        tag=$1; shift
        if ! "$dlasim" run "$model" --config nv_small --input "$tmp/$name.in" --count "$count" \
                --calib "$tmp/$name.in" --out-raw "$tmp/$name.$tag" "$@" > "$tmp/$name.$tag.log" 2>&1; then
            fail "$name ($tag): $(tail -1 "$tmp/$name.$tag.log")"; return 1
        fi
    }
    run stepped --threads 2 --no-overlap --float-raw "$tmp/$name.f" || return
    if db=$(sqnr_ok "$tmp/$name.stepped" "$tmp/$name.f" 15); then pass
    else fail "$name: stepped INT8 against float: $db (want >= 15 dB)"; fi
    for t in 2 3; do
        run "over$t" --threads "$t" || return
        if cmp -s "$tmp/$name.stepped" "$tmp/$name.over$t"; then pass
        else fail "$name: overlapped output (--threads $t) differs from the stepped one: $(cmp "$tmp/$name.stepped" "$tmp/$name.over$t" 2>&1)"; fi
    done
}

for m in op_conv_depthwise op_conv_depthwise32 op_add_tensor op_pool_fly op_maxpool op_lrn \
         op_concat_pool op_prelu op_conv_grouped; do
    check "$models/$m.onnx" 2
done
if /usr/bin/python3 tools/models/make_mobilenetv2.py "$tmp/mnv2.onnx" 64 4 > "$tmp/make.log" 2>&1; then
    check "$tmp/mnv2.onnx" 2
else
    fail "mobilenetv2 cut-down: the model could not be made: $(tail -1 "$tmp/make.log")"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/bin/sh
# Pre-quantized (QDQ) models against ONNX Runtime's own int8 execution
# (docs/compiler.md "Pre-quantized models"; tools/models/qdq_grade.py):
#  - tests/models/qdq_torch_small.onnx, a residual network quantized by
#    PyTorch's post-training quantization with its default affine quint8
#    activations and exported to QDQ (tools/models/make_torch_qdq.py small):
#    top-1 identical on 64 inputs and >= 99.5 % of the int8 outputs within
#    +-1 of ORT's (issue 17 asks 99 %; measured 100 %, 82 % identical:
#    docs/compiler.md);
#  - one model per operator (tools/models/make_qdq_tests.py), symmetric
#    (zero point 128 / 0) and affine (qdq_node_zp_*: zero points anywhere in
#    the type): every int8 output within +-1 of ORT's and >= 99 % identical
#    (measured 99.9-100 %), AveragePool 2x2 >= 80 % (measured 87.7 %: a tie
#    rounds away from zero on SDP, to even in ORT), and an affine Add+Relu
#    SDP cannot do, run on the host CPU (its Add output quantized at a
#    calibrated step in between: >= 80 %, measured 87.8 %);
#  - a float output after a ReLU the quantization folded (uint8 from 0, no
#    Relu node; tests/models/qdq_float_tail_u8.onnx): its step calibrated on
#    the float graph with the Q/DQ pairs' saturation, every value within one
#    step of ORT's and >= 85 % on the same step (measured 94 %; without the
#    saturation the float graph keeps the negative values, the step comes
#    out 1.8x too wide, 53 %);
#  - the same small model against an independent numpy reference with exact
#    arithmetic rounding half away from zero, as SDP's shifts do
#    (tools/models/qdq_reference.py): >= 98 % of dlasim's int8 outputs
#    identical (measured 98.3 %; what differs starts at the residual Adds,
#    whose operand ratios are int16 multipliers: docs/compiler.md);
#  - the refusals name the node, its op and the reason.
# ONNX Runtime: npm onnxruntime-node in build/ort (tools/models/ort_install.sh).
set -u
dlasim=${DLASIM:-build/dlasim}
ort=${ORT_DIR:-build/ort}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
grade() { # out-file args...
    out=$1; shift
    /usr/bin/python3 tools/models/qdq_grade.py "$dlasim" "$ort" "$@" > "$out" 2>&1
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -1)
    p=$(echo "$line" | sed 's/ passed.*//'); f=$(echo "$line" | sed 's/.*passed, \([0-9]*\) failed.*/\1/')
    [ -n "$p" ] || { p=0; f=1; }
    passed=$((passed + p)); failed=$((failed + f))
    [ "$f" -eq 0 ] || cat "$out"
}
refused() { # model, expected text
    out=$("$dlasim" run "$1" --input "$work/x.f32" 2>&1)
    if printf '%s' "$out" | grep -qF -- "$2"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1)); echo "FAIL $1: expected '$2' in: $out"
    fi
}
if sh tools/models/ort_install.sh "$ort"; then
    grade "$work/small.txt" "$work/small" tests/models/qdq_torch_small.onnx 64 --min-within=99.5
    sed -n '2,4p' "$work/small.txt"
    out=$work/ref.txt
    /usr/bin/python3 tools/models/qdq_reference.py "$dlasim" - "$work/ref" \
        tests/models/qdq_torch_small.onnx 64 --min-dlasim-exact=98 > "$out" 2>&1
    if grep -q '^1 passed, 0 failed' "$out"; then
        passed=$((passed + 1)); grep '^PASS' "$out"
    else
        failed=$((failed + 1)); cat "$out"
    fi
    for m in tests/models/qdq_node_*.onnx; do
        case $m in *avgpool* | *_cpu_*) exact=80 ;; *) exact=99 ;; esac
        grade "$work/node.txt" "$work/node" "$m" 4 --node --min-exact=$exact
    done
    grade "$work/tail.txt" "$work/tail" tests/models/qdq_float_tail_u8.onnx 8 --node --min-exact=85
else
    echo "FAIL onnxruntime-node could not be installed"; failed=$((failed + 1))
fi
head -c 64 /dev/zero > "$work/x.f32"
refused tests/models/qdq_bad_per_channel_zp.onnx \
    "node 'QuantizeLinear_1' (QuantizeLinear): 4 zero points for 1 scales"
refused tests/models/qdq_bad_per_channel.onnx \
    "node 'QuantizeLinear_1' (QuantizeLinear): per-channel activation scales (4 values) are not supported"
refused tests/models/qdq_bad_requantize.onnx \
    "node 'DequantizeLinear_2' (DequantizeLinear): scale 0.02 / zero point 128 differ"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

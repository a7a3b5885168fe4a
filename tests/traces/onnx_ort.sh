#!/bin/sh
# The compiler's float reference (src/compiler/float_exec.c) against ONNX
# Runtime (npm onnxruntime-node, CPU; installed into build/ort on first use)
# on every model the suite uses, then ONNX's own operator tests (Debian's
# libonnx-testdata) on the float reference: tools/models/ort_compare.py and
# tools/models/onnx_node_tests.py, each ending "N passed, N failed".
set -u
dlasim=${DLASIM:-build/dlasim}
ort=${ORT_DIR:-build/ort}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
add() {
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -1)
    p=$(echo "$line" | sed 's/ passed.*//'); f=$(echo "$line" | sed 's/.*passed, \([0-9]*\) failed.*/\1/')
    [ -n "$p" ] || { p=0; f=1; }
    passed=$((passed + p)); failed=$((failed + f))
}
if sh tools/models/ort_install.sh "$ort"; then
    /usr/bin/python3 tools/models/ort_compare.py "$dlasim" "$ort" "$work/ort" tests/models/op_*.onnx \
        tests/models/tv_*.onnx models/fashion_mnist.onnx > "$work/ort.txt" 2>&1
    grep -v '^PASS' "$work/ort.txt"
    add "$work/ort.txt"
else
    echo "FAIL onnxruntime-node could not be installed"; failed=$((failed + 1))
fi
/usr/bin/python3 tools/models/onnx_node_tests.py "$dlasim" "$work/nodes" > "$work/nodes.txt" 2>&1
grep -E '^FAIL' "$work/nodes.txt"
grep -E '^[0-9]+ passed' "$work/nodes.txt" | sed 's/^/onnx node tests: /'
add "$work/nodes.txt"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

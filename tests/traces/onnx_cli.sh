#!/bin/sh
# `dlasim compile` / `dlasim run` end to end on the Fashion-MNIST model:
#   - run MODEL.onnx on 300 test images with --labels --json --report: the JSON
#     has top1_accuracy, images and one 10-value output per image, the
#     accuracy is plausible (>= 80 %), the per-layer table is printed;
#   - compile -o MODEL.nvdla; run MODEL.nvdla on the same images (the loadable
#     runner, nvdla_runtime's PGM conversion): its top-1 classes equal the
#     .onnx run's on every image (same hardware layers, same input
#     quantization for [0, 1] images);
#   - --record-trace on one image writes a trace case that replays on a fresh
#     device with its checks passing;
#   - bad input: an unsupported model and a wrong-sized input exit non-zero
#     with a message naming the node / file.
# Skipped (counted as passed, with a message) without Debian's
# dataset-fashion-mnist.
set -u
dlasim=${DLASIM:-build/dlasim}
fm=${FMNIST:-/usr/share/datasets/fashion-mnist}
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "PASS $1"; }
ko() { failed=$((failed + 1)); echo "FAIL $1"; }
if [ ! -f "$fm/t10k-images-idx3-ubyte.gz" ]; then
    echo "onnx_cli: no Fashion-MNIST at $fm (Debian dataset-fashion-mnist): skipped"
    echo "0 passed, 0 failed"; exit 0
fi
out=$(mktemp -d)
args="--calib $fm/train-images-idx3-ubyte.gz --calib-count 200"
imgs="$fm/t10k-images-idx3-ubyte.gz"
labs="$fm/t10k-labels-idx1-ubyte.gz"
if "$dlasim" run models/fashion_mnist.onnx $args --input "$imgs" --labels "$labs" --count 300 \
    --json "$out/onnx.json" --report > "$out/onnx.log" 2>&1; then ok "run .onnx"; else ko "run .onnx: $(tail -3 "$out/onnx.log")"; fi
/usr/bin/python3 - "$out/onnx.json" <<'PY' && ok "run --json: format and accuracy" || ko "run --json: format and accuracy"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["images"] == 300 and len(j["outputs"]) == 300 and all(len(o) == 10 for o in j["outputs"])
assert 0.80 <= j["top1_accuracy"] <= 1.0, j["top1_accuracy"]
PY
grep -q "SQNR dB" "$out/onnx.log" && grep -q "^0   CONV+SDP Conv+Relu" "$out/onnx.log" && ok "run --report: per-layer table" || ko "run --report: per-layer table"
if "$dlasim" compile models/fashion_mnist.onnx $args -o "$out/fm.nvdla" > "$out/compile.log" 2>&1 &&
    grep -q "0 host-CPU layers" "$out/compile.log"; then ok "compile -o .nvdla"; else ko "compile -o .nvdla: $(tail -3 "$out/compile.log")"; fi
# NVIDIA's schema (loadable.fbs from LOADABLE_FBS or the nvdla/sw git mirror) through Debian's flatc
fbs=${LOADABLE_FBS:-}
swgit=${NVDLA_SW_GIT:-/work/.mirror/nvdla+sw/repo}
if [ -z "$fbs" ] && [ -d "$swgit" ] && git --git-dir="$swgit" show master:umd/core/src/common/loadable.fbs > "$out/loadable.fbs" 2>/dev/null; then
    fbs=$out/loadable.fbs
fi
if [ -n "$fbs" ] && command -v flatc > /dev/null 2>&1; then
    if (cd "$out" && flatc --json --strict-json --raw-binary "$fbs" -- fm.nvdla > flatc.log 2>&1) &&
        grep -q '"task_list"' "$out/fm.json"; then ok "flatc accepts the .nvdla against loadable.fbs"
    else ko "flatc rejects the .nvdla: $(cat "$out/flatc.log")"; fi
else
    echo "onnx_cli: no loadable.fbs (LOADABLE_FBS or NVDLA_SW_GIT) or no flatc: schema check skipped"
fi
if "$dlasim" run "$out/fm.nvdla" --input "$imgs" --labels "$labs" --count 300 --json "$out/nvdla.json" \
    > "$out/nvdla.log" 2>&1; then ok "run .nvdla"; else ko "run .nvdla: $(tail -3 "$out/nvdla.log")"; fi
/usr/bin/python3 - "$out/onnx.json" "$out/nvdla.json" <<'PY' && ok "run .nvdla: same top-1 as .onnx on 300 images" || ko "run .nvdla: same top-1 as .onnx"
import json, sys
a = json.load(open(sys.argv[1]))["outputs"]
b = json.load(open(sys.argv[2]))["outputs"]
top = lambda v: max(range(len(v)), key=lambda k: v[k])
diff = [i for i in range(300) if top(a[i]) != top(b[i])]
assert not diff, diff[:10]
PY
if "$dlasim" run models/fashion_mnist.onnx $args --input "$imgs" --count 1 --record-trace "$out/rec" \
    > "$out/rec.log" 2>&1 && "$dlasim" trace --suite "$out/rec" > "$out/replay.log" 2>&1; then
    ok "run --record-trace: the recording replays"
else
    ko "run --record-trace: $(tail -3 "$out/rec.log" "$out/replay.log")"
fi
# PGM images (a folder of them) give the same top-1 classes as the IDX records they came from
mkdir -p "$out/pgm"
/usr/bin/python3 - "$imgs" "$out/pgm" <<'PY'
import gzip, sys
raw = gzip.open(sys.argv[1]).read()
for i in range(3):
    px = raw[16 + i * 784:16 + (i + 1) * 784]
    open(f"{sys.argv[2]}/img{i}.pgm", "wb").write(b"P5\n28 28\n255\n" + px)
PY
if "$dlasim" run models/fashion_mnist.onnx $args --input "$out/pgm" --json "$out/pgm.json" > "$out/pgm.log" 2>&1 &&
    /usr/bin/python3 - "$out/onnx.json" "$out/pgm.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["outputs"][:3]
b = json.load(open(sys.argv[2]))["outputs"]
assert len(b) == 3 and a == b, (a, b)
PY
then ok "run on a folder of PGM images: same outputs as the IDX records"; else ko "PGM input: $(tail -3 "$out/pgm.log")"; fi
if "$dlasim" run tests/models/bad_unsupported_op.onnx --input "$imgs" > "$out/bad.log" 2>&1; then
    ko "unsupported op accepted"
else
    grep -q "node 'my_einsum': op Einsum is not supported" "$out/bad.log" && ok "unsupported op refused" ||
        ko "unsupported op message: $(cat "$out/bad.log")"
fi
head -c 100 /dev/zero > "$out/short.raw"
if "$dlasim" run models/fashion_mnist.onnx --input "$out/short.raw" > "$out/short.log" 2>&1; then
    ko "wrong-sized input accepted"
else
    grep -q "short.raw: raw file of 100 bytes" "$out/short.log" && ok "wrong-sized input refused" ||
        ko "wrong-sized input message: $(cat "$out/short.log")"
fi
rm -rf "$out"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

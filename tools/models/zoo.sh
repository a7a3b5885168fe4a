#!/bin/sh
# make zoo (not part of make test): torchvision models as torch.onnx.export
# writes them (tools/models/make_torchvision.py; Debian's python3-torch and
# python3-torchvision, random seeded weights), each compiled for a
# configuration as exported and run on the simulated device, against ONNX
# Runtime's float output (npm onnxruntime-node, CPU).  Per model: compiles
# (yes / the error), hardware and host-CPU layers, MMAC per image as
# executed, INT8 vs ONNX Runtime cosine (the lowest of the images; also with
# each output's mean removed, which shows a collapse to a constant output),
# the float reference's largest difference from ONNX Runtime (of the
# output's range), and the simulated INT8 time per image.  Calibration: 4
# images, evaluation: 2 other images, both uniform [0, 1).
#   usage: tools/models/zoo.sh DLASIM BUILD_DIR [CONFIG] [MODEL...]
set -u
dlasim=$1
build=$2
config=${3:-nv_small}
[ $# -ge 3 ] && shift 3 || shift $#
py=/usr/bin/python3
dir=$build/zoo
mkdir -p "$dir"
if ! $py -c "import torch, torchvision" 2>/dev/null; then
    if [ "$(id -u)" = 0 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-torch python3-torchvision >/dev/null ||
            { echo "zoo: apt-get install python3-torch python3-torchvision failed" >&2; exit 1; }
    else
        echo "zoo: needs Debian's python3-torch and python3-torchvision" >&2; exit 1
    fi
fi
sh tools/models/ort_install.sh "$build/ort" || exit 1
nice $py tools/models/make_torchvision.py zoo "$dir" "$@" 2>/dev/null | sed 's/^/exported /' || exit 1
models=${*:-resnet18 resnet50 mobilenet_v2 mobilenet_v3_small mobilenet_v3_large efficientnet_b0 squeezenet1_1 shufflenet_v2_x1_0 densenet121 vgg11 googlenet mnasnet0_5 regnet_x_400mf lraspp_mobilenet_v3_large}
out=$dir/zoo-$config.md
echo "| model | compiles | HW / CPU layers | MMAC per image | INT8 vs ORT cosine (centered) | float vs ORT | INT8 ms per image |" > "$out"
echo "|---|---|---|---:|---|---:|---:|" >> "$out"
for m in $models; do
    f=$dir/$m.onnx
    $py - "$f" "$dir/$m" <<'PY'
import sys, numpy as np, onnx
m = onnx.load(sys.argv[1])
inits = {i.name for i in m.graph.initializer}
x = [i for i in m.graph.input if i.name not in inits][0]
shape = [d.dim_value or 1 for d in x.type.tensor_type.shape.dim]
rng = np.random.default_rng(7)
rng.uniform(0, 1, [4] + shape).astype(np.float32).tofile(sys.argv[2] + ".cal.f32")
rng.uniform(0, 1, [2] + shape).astype(np.float32).tofile(sys.argv[2] + ".in.f32")
PY
    log=$dir/$m.$config.log
    "$dlasim" run "$f" --config "$config" --calib "$dir/$m.cal.f32" --calib-count 4 --input "$dir/$m.in.f32" \
        --count 2 --out-raw "$dir/$m.q.f32" --float-raw "$dir/$m.f.f32" > "$log" 2>&1
    rc=$?
    NODE_PATH=$build/ort/node_modules node tools/models/ort_run.js "$f" "$dir/$m.in.f32" 2 "$dir/$m.o.f32" > /dev/null
    $py - "$m" "$rc" "$log" "$dir/$m" >> "$out" <<'PY'
import re, sys, numpy as np
name, rc, log, base = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
text = open(log).read()
if rc:
    err = [l for l in text.splitlines() if l.startswith("dlasim")][-1:] or ["exit %d" % rc]
    print("| %s | no: %s | | | | | |" % (name, err[0].split(": ", 2)[-1].replace("|", "/")))
    sys.exit()
hw = re.search(r"(\d+) hardware layers, (\d+) host-CPU layers, \d+ networks, ([\d.]+) MMAC", text)
ms = re.search(r"\(([\d.]+) ms per input", text)
q, f, o = (np.fromfile(base + s, np.float32).reshape(2, -1) for s in (".q.f32", ".f.f32", ".o.f32"))
def cos(a, b):
    return float((a * b).sum() / np.sqrt((a * a).sum() * (b * b).sum()))
c = min(cos(q[i], o[i]) for i in range(2))
cc = min(cos(q[i] - q[i].mean(), o[i] - o[i].mean()) for i in range(2))
fd = float(np.abs(f - o).max() / (o.max() - o.min()))
print("| %s | yes | %s / %s | %.0f | %.4f (%.4f) | %.1e | %.0f |" %
      (name, hw.group(1), hw.group(2), float(hw.group(3)), c, cc, fd, float(ms.group(1))))
PY
    tail -1 "$out"
done
echo "table: $out"
# Pre-quantized: torchvision's ResNet-18 quantized by torch's post-training
# quantization and exported to QDQ, against ONNX Runtime's int8 (docs/compiler.md
# "Pre-quantized models"; skipped with ZOO_QDQ=0).
if [ "${ZOO_QDQ:-1}" != 0 ]; then
    # exported again when the exporter is newer than the file (its defaults change: affine
    # activations since 2026-11-26), never an old form graded under the new name
    q=$dir/resnet18_qdq.onnx
    if [ ! -f "$q" ] || [ tools/models/make_torch_qdq.py -nt "$q" ]; then
        rm -f "$q"
        $py tools/models/make_torch_qdq.py resnet18 "$q" 224 > /dev/null 2>&1 ||
            echo "zoo: the QDQ ResNet-18 export failed" >&2
    fi
    [ -f "$dir/resnet18_qdq.onnx" ] && $py tools/models/qdq_grade.py "$dlasim" "$build/ort" "$dir/qdq" \
        "$dir/resnet18_qdq.onnx" 8 "$config"
fi

#!/bin/sh
# `make bench`: dlasim against ONNX Runtime (issue 18), in one run on the
# same models and the same inputs, measured alternately (round after round)
# so both see the same machine load; time per image = the mean over a
# round's runs, of the round where it was least (the least disturbed).
#   - ONNX Runtime: npm's onnxruntime-node (CPU build,
#     ONNXRUNTIME_NODE_INSTALL_CUDA=skip) installed into BUILD/ort from the
#     registry npm is configured with;
#   - models: the Fashion-MNIST demo CNN (2,000 test images, when Debian's
#     dataset-fashion-mnist is installed), ResNet-18, ResNet-50
#     (tools/models/make_resnet.py) and MobileNetV2
#     (tools/models/make_mobilenetv2.py), random weights, and
#     their int8 QDQ forms (tools/models/make_qdq.py: activation ranges
#     measured by ONNX Runtime in float on the calibration inputs);
#   - dlasim: bench/model_bench (public API): INT8 on the simulated nv_small
#     and the float reference; ONNX Runtime: fp32 and int8 QDQ, THREADS
#     intra-op threads (default: the online cores, as dlasim uses);
#   - the QDQ models themselves on dlasim (their own scales), against the
#     same ORT int8 runs;
#   - MobileNetV2's layer kinds alone (tools/models/make_kind_models.py:
#     its 1x1 and 3x3 depthwise layers at 56x56, 14x14 and 7x7), INT8 against
#     int8 QDQ, in the same rounds: where the network's ratio comes from;
#   - bench/kernel_peak: the int8 MAC peaks of this CPU (vpmaddwd; on AVX2
#     also vpmaddubsw, the exact path for inputs with no negative code) and
#     the convolution kernel on ResNet-50's layers.
# Prints a table and writes BUILD/peer_bench.json.
# Runs per round: RUNS for every model but Fashion-MNIST when given, else about 0.15 s of
# dlasim's INT8 a model (Fashion-MNIST 2,000 images, ResNet-18 32, ResNet-50
# 12, MobileNetV2 40), the same count for ONNX Runtime: a model of a few
# milliseconds takes ~20 runs to reach its steady time on this host (4
# runs of MobileNetV2 averaged 4.0-4.3 ms where 150 averaged 3.4).
#   usage: bench/peer_bench.sh BUILD [ROUNDS (3)] [RUNS per round]
set -u
build=$1
rounds=${2:-3}
runs=${3:-}
py=/usr/bin/python3
threads=${THREADS:-$(getconf _NPROCESSORS_ONLN)}
raw=$build/peer_raw.jsonl
: > "$raw"

ort=$build/ort
# npm (and node) from Debian when missing, as root, as make plot does for matplotlib
if ! command -v npm > /dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null 2>&1; then
    echo "== installing Debian's npm (for ONNX Runtime)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm > /dev/null 2>&1 ||
        echo "peer_bench: apt-get install npm failed"
fi
if command -v npm > /dev/null 2>&1; then
    [ -d "$ort/node_modules/onnxruntime-node" ] || echo "== installing onnxruntime-node (npm, CPU build) into $ort"
    sh tools/models/ort_install.sh "$ort" || echo "peer_bench: ONNX Runtime columns empty"
else
    echo "peer_bench: no npm: ONNX Runtime columns empty"
fi
have_ort=0
[ -d "$ort/node_modules/onnxruntime-node" ] && command -v node > /dev/null 2>&1 && have_ort=1

# BASE.qdq.onnx from BASE.onnx, the activation ranges measured by ONNX Runtime
# over the first COUNT of INPUTS (BASE.ranges.json); made again when the
# model or the scripts that make it changed since
make_qdq() {
    base=$1 in=$2 count=$3
    [ "$have_ort" = 1 ] || return 0
    [ -f "$base.qdq.onnx" ] && [ ! "$base.onnx" -nt "$base.qdq.onnx" ] &&
        [ ! tools/models/make_qdq.py -nt "$base.qdq.onnx" ] && [ ! bench/ort_bench.js -nt "$base.qdq.onnx" ] &&
        return 0
    $py tools/models/make_qdq.py expose "$base.onnx" "$base.allout.onnx" &&
        node bench/ort_bench.js "$ort" "$base.allout.onnx" "$in" "$count" "$threads" --ranges "$base.ranges.json" &&
        $py tools/models/make_qdq.py qdq "$base.onnx" "$base.ranges.json" "$base.qdq.onnx" ||
        echo "peer_bench: ${base##*/}: no QDQ model"
    rm -f "$base.allout.onnx"
}

inputs=$build/rand224x8.f32
[ -f "$inputs" ] || $py -c "import numpy as np; np.random.default_rng(1).uniform(-1, 1, (8, 3, 224, 224)).astype(np.float32).tofile('$inputs')"
models=""
for m in resnet18 resnet50 mobilenetv2; do
    f=$build/$m.onnx
    if [ ! -f "$f" ]; then
        case $m in
        resnet*) nice $py tools/models/make_resnet.py "${m#resnet}" "$f" ;;
        *) nice $py tools/models/make_mobilenetv2.py "$f" ;;
        esac || { echo "peer_bench: $m: cannot generate (python3-onnx?)"; continue; }
    fi
    make_qdq "$build/$m" "$inputs" 2
    models="$models $m"
done

# The Fashion-MNIST demo model on the first 2,000 test images (per image, as make demo runs 10,000)
fm=${FMNIST:-/usr/share/datasets/fashion-mnist}
if [ -f "$fm/t10k-images-idx3-ubyte.gz" ]; then
    [ -f "$build/fmnist2k.f32" ] || $py -c "import gzip, numpy as np; r = gzip.open('$fm/t10k-images-idx3-ubyte.gz').read()[16:16 + 2000 * 784]; (np.frombuffer(r, np.uint8).astype(np.float32) / 255).tofile('$build/fmnist2k.f32')"
    cmp -s models/fashion_mnist.onnx "$build/fashion_mnist.onnx" || cp models/fashion_mnist.onnx "$build/fashion_mnist.onnx"
    make_qdq "$build/fashion_mnist" "$build/fmnist2k.f32" 200
    models="fashion_mnist $models"
fi

# MobileNetV2's layer kinds alone (their QDQ forms as the networks')
kinds=""
# (dw7.f32 is the last file make_kind_models.py writes)
if [ -f "$build/kinds/dw7.f32" ] && [ ! tools/models/make_kind_models.py -nt "$build/kinds/dw7.f32" ] ||
    $py tools/models/make_kind_models.py "$build/kinds" 2> /dev/null; then
    for k in pw56 pw14 dw56 dw14 dw7; do
        make_qdq "$build/kinds/$k" "$build/kinds/$k.f32" 2
        kinds="$kinds $k"
    done
else
    echo "peer_bench: cannot generate the layer-kind models (python3-onnx?)"
fi

tag() { sed "s/^{/{\"side\": \"$1\", \"name\": \"$2\", \"round\": $3, /" >> "$raw"; }
# the cores' round trip before and after (bench/link_rtt.c): the host's state during the runs
link_rtt() { [ -x "$build/link_rtt" ] && "$build/link_rtt" | tag link "$1" 0; }
link_rtt before
for r in $(seq 1 "$rounds"); do
    echo "== round $r of $rounds"
    for m in $models; do
        in=$inputs calib=2
        case $m in
        fashion_mnist) in=$build/fmnist2k.f32 n=2000 calib=200 ;;
        resnet18) n=32 ;;
        resnet50) n=12 ;;
        *) n=40 ;;
        esac
        [ -n "$runs" ] && [ "$m" != fashion_mnist ] && n=$runs
        "$build/model_bench" "$build/$m.onnx" "$in" --calib $calib --runs $n --float-runs $n |
            tag dlasim "$m" "$r"
        if [ "$have_ort" = 1 ]; then
            node bench/ort_bench.js "$ort" "$build/$m.onnx" "$in" $n "$threads" | tag ort_fp32 "$m" "$r"
            [ -f "$build/$m.qdq.onnx" ] &&
                node bench/ort_bench.js "$ort" "$build/$m.qdq.onnx" "$in" $n "$threads" | tag ort_int8 "$m" "$r"
        fi
        # the QDQ model itself on dlasim: its own scales and zero points
        [ -f "$build/$m.qdq.onnx" ] &&
            "$build/model_bench" "$build/$m.qdq.onnx" "$in" --calib $calib --runs $n \
                --float-runs 0 | tag dlasim_qdq "$m" "$r"
    done
    for k in $kinds; do
        f=$build/kinds/$k n=${runs:-40}
        "$build/model_bench" "$f.onnx" "$f.f32" --calib 2 --runs $n --float-runs 0 | tag dlasim "kind:$k" "$r"
        [ "$have_ort" = 1 ] && [ -f "$f.qdq.onnx" ] &&
            node bench/ort_bench.js "$ort" "$f.qdq.onnx" "$f.f32" $n "$threads" | tag ort_int8 "kind:$k" "$r"
    done
done
"$build/kernel_peak" "$threads" | tag kernel all 0
link_rtt after

$py - "$raw" "$build/peer_bench.json" "$threads" "$build" <<'PY'
import json, platform, sys, time
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]

def weights_acts(path):
    """Bytes of a model's float weights (initializers) and of every float
    tensor one inference computes (ONNX shape inference), or (None, None)."""
    try:
        import numpy as np, onnx
        from onnx import numpy_helper, shape_inference
        m = onnx.load(path)
        init = {t.name for t in m.graph.initializer}
        w = sum(numpy_helper.to_array(t).nbytes for t in m.graph.initializer)
        g = shape_inference.infer_shapes(m).graph
        dims = lambda v: [d.dim_value if d.dim_value > 0 else 1 for d in v.type.tensor_type.shape.dim]
        a = sum(int(np.prod(dims(v))) * 4 for v in list(g.value_info) + list(g.input) + list(g.output)
                if v.name not in init)
        return w, a
    except Exception:
        return None, None
def best(side, name, key):
    v = [r[key] for r in rows if r["side"] == side and r["name"] == name and r.get(key)]
    return min(v) if v else None
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
out = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": f"{cpu}, {sys.argv[3]} threads",
       "models": {}}
kern = next((r for r in rows if r["side"] == "kernel"), None)
# a figure in a column of w characters, p decimals ("-" when not measured)
f = lambda v, w, p=1: f"{v:{w}.{p}f}" if v is not None else " " * (w - 1) + "-"
print(f"\n{'model':12} {'GMAC':>6} | {'dlasim INT8':>11} {'ORT int8':>9} {'ratio':>6} | "
      f"{'dlasim float':>12} {'ORT fp32':>9} {'ratio':>6} | {'INT8 GMAC/s':>11} {'peak RSS':>9} {'/(W+A)':>6}")
for name in dict.fromkeys(r["name"] for r in rows if r["side"] == "dlasim" and not r["name"].startswith("kind:")):
    # per image: the mean over a round's runs, the best round (the least disturbed by other load)
    d = {k: best("dlasim", name, k) for k in ("gmac", "peak_rss_mb")}
    d["int8_ms_best"] = best("dlasim", name, "int8_ms_mean")
    d["float_ms_best"] = best("dlasim", name, "float_ms_mean")
    o8, of = best("ort_int8", name, "ms_mean"), best("ort_fp32", name, "ms_mean")
    r8 = d["int8_ms_best"] / o8 if o8 else None
    rf = d["float_ms_best"] / of if of else None
    gm = d["gmac"] / d["int8_ms_best"] * 1e3 if d["int8_ms_best"] else None
    out["models"][name] = {"gmac": d["gmac"], "dlasim_int8_ms": d["int8_ms_best"], "ort_int8_ms": o8,
                           "int8_ratio": r8, "dlasim_float_ms": d["float_ms_best"], "ort_fp32_ms": of,
                           "float_ratio": rf, "dlasim_int8_gmacs": gm, "peak_rss_mb": d["peak_rss_mb"]}
    # issue 18 item 5: peak RSS against the model's weights + activations (float, every tensor)
    wb, ab = weights_acts(f"{sys.argv[4]}/{name}.onnx")
    rss_ratio = d["peak_rss_mb"] * 1048576 / (wb + ab) if wb and d["peak_rss_mb"] else None
    out["models"][name].update({"weights_mb": wb / 1048576 if wb else None,
                                "activations_mb": ab / 1048576 if ab else None,
                                "rss_per_weights_acts": rss_ratio})
    print(f"{name:12} {f(d['gmac'], 6, 4 if (d['gmac'] or 1) < 0.01 else 2)} | {f(d['int8_ms_best'], 9)}ms {f(o8, 7)}ms {f(r8, 5, 2)}x | "
          f"{f(d['float_ms_best'], 10)}ms {f(of, 7)}ms {f(rf, 5, 2)}x | {f(gm, 11)} {f(d['peak_rss_mb'], 7)}MB "
          f"{f(rss_ratio, 5, 2)}x")
qdq = list(dict.fromkeys(r["name"] for r in rows if r["side"] == "dlasim_qdq"))
if qdq:
    # the pre-quantized model ORT runs, on dlasim as it is (docs/compiler.md "Pre-quantized
    # models"): two multipliers a requantization, its Adds and global pool layers apart
    out["qdq"] = {}
    print(f"\n{'QDQ model':12} {'GMAC':>6} | {'dlasim INT8':>11} {'ORT int8':>9} {'ratio':>6}   "
          f"(the same QDQ model on both)")
    for name in qdq:
        d8, gm = best("dlasim_qdq", name, "int8_ms_mean"), best("dlasim_qdq", name, "gmac")
        o8 = best("ort_int8", name, "ms_mean")
        r8 = d8 / o8 if d8 and o8 else None
        out["qdq"][name] = {"gmac": gm, "dlasim_int8_ms": d8, "ort_int8_ms": o8, "int8_ratio": r8}
        print(f"{name:12} {f(gm, 6, 4 if (gm or 1) < 0.01 else 2)} | {f(d8, 9)}ms {f(o8, 7)}ms "
              f"{f(r8, 5, 2)}x")
kinds = [n for n in dict.fromkeys(r["name"] for r in rows if r["side"] == "dlasim") if n.startswith("kind:")]
if kinds:
    # MobileNetV2's layer kinds alone (tools/models/make_kind_models.py)
    out["kinds"] = {}
    print(f"\n{'layer kind':12} {'GMAC':>6} | {'dlasim INT8':>11} {'ORT int8':>9} {'ratio':>6}   (MobileNetV2's layers alone)")
    for name in kinds:
        d8, o8, gm = best("dlasim", name, "int8_ms_mean"), best("ort_int8", name, "ms_mean"), best("dlasim", name, "gmac")
        r8 = d8 / o8 if d8 and o8 else None
        out["kinds"][name[5:]] = {"gmac": gm, "dlasim_int8_ms": d8, "ort_int8_ms": o8, "int8_ratio": r8}
        print(f"{name[5:]:12} {f(gm, 6, 3)} | {f(d8, 9, 3)}ms {f(o8, 7, 3)}ms {f(r8, 5, 2)}x")
    print("pw56, pw14: a bottleneck's 1x1 layers (expansion + ReLU6, projection) at 56x56 and 14x14; "
          "dw56, dw14, dw7: 3x3 depthwise + ReLU6 at 56x56x144, 14x14x576, 7x7x960")
if kern:
    out["kernel"] = kern
    print(f"\nint8 MAC peak ({kern['isa']}, {kern['threads']} threads): {kern['peak_gmacs']:.1f} GMAC/s; "
          f"convolution kernel on ResNet-50's layers: {kern['resnet50_gmacs']:.1f} GMAC/s "
          f"({100 * kern['share_of_peak']:.0f} % of the peak), slowest layer {kern['slowest_layer_gmacs']:.1f} GMAC/s "
          f"with the weights packed at every call; packed once, pooled threads (as CSC runs it): "
          f"{kern['resnet50_packed_gmacs']:.1f} GMAC/s ({100 * kern['packed_share_of_peak']:.0f} %), "
          f"slowest layer {kern['slowest_layer_packed_gmacs']:.1f} GMAC/s; in CPU time (load-independent): "
          f"{kern['resnet50_packed_gmacs_per_cpu_s']:.1f} GMAC per CPU second against the peak loop's "
          f"{kern['peak_gmacs_per_cpu_s']:.1f} ({100 * kern['cpu_share_of_peak']:.0f} %)")
    if kern.get("u8_peak_gmacs") and "resnet50_relu_in_packed_gmacs" in kern:  # the exact vpmaddubsw path: inputs with no negative code (ReLU'd)
        print(f"vpmaddubsw peak (the U8 path, inputs with no negative code): {kern['u8_peak_gmacs']:.1f} GMAC/s; "
              f"the kernel on ResNet-50's layers with ReLU'd inputs, packed once: "
              f"{kern['resnet50_relu_in_packed_gmacs']:.1f} GMAC/s "
              f"({100 * kern['resnet50_relu_in_packed_gmacs'] / kern['u8_peak_gmacs']:.0f} % of that peak); "
              f"in CPU time {kern['resnet50_relu_in_packed_gmacs_per_cpu_s']:.1f} against "
              f"{kern['u8_peak_gmacs_per_cpu_s']:.1f} ({100 * kern['relu_in_cpu_share_of_peak']:.0f} %)")
    if kern.get("u8_peak_gmacs") and "resnet50_relu_in_net_wt_gmacs" in kern:  # a quantized network's weights: paired steps
        print(f"the same with a network's bell-shaped weights (as the compiler's codes are: most reduction "
              f"steps paired): {kern['resnet50_relu_in_net_wt_gmacs']:.1f} GMAC/s "
              f"({100 * kern['resnet50_relu_in_net_wt_gmacs'] / kern['u8_peak_gmacs']:.0f} % of the vpmaddubsw peak); "
              f"in CPU time {kern['resnet50_relu_in_net_wt_gmacs_per_cpu_s']:.1f} "
              f"({100 * kern['net_wt_cpu_share_of_peak']:.0f} %)")
print("per image: mean of a round's runs, best round; ratio = dlasim / ONNX Runtime; "
      "ORT int8 = QDQ model from tools/models/make_qdq.py; /(W+A) = peak RSS of the dlasim "
      "process over the model's float weights + every float tensor of one inference")
link = {r["name"]: r["rtt_ns"] for r in rows if r["side"] == "link"}
if link:
    out["link_rtt_ns"] = link
    show = lambda v: "?" if v is None else f"{v:.0f} ns"
    print(f"the cores' round trip (bench/link_rtt.c): {show(link.get('before'))} before the runs, "
          f"{show(link.get('after'))} after (over 250 ns a dlasim device keeps its small jobs on one "
          f"thread and two-thread figures move; seen: 70-130 ns, 380-490 in slow spells, on an AVX2 "
          f"host, 100-210 ns on an AVX-512 one)")
json.dump(out, open(sys.argv[2], "w"), indent=1)
print(f"JSON: {sys.argv[2]}")
PY

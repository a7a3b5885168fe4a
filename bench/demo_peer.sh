#!/bin/sh
# `make demo`, last lines: the demo's INT8 time for the test images next to
# ONNX Runtime fp32's time for the same images in this process's minute
# (issue 18): ONNX Runtime's CPU build from npm in BUILD/ort
# (tools/models/ort_install.sh, as make test and make bench use it), the
# same model file, the same IDX images made float the same way
# (bench/ort_bench.js), as many threads as dlasim used (all cores).  Without
# ONNX Runtime (no npm, no network) the line says so and the demo goes on.
#   usage: bench/demo_peer.sh BUILD MODEL.onnx IMAGES-idx3-ubyte.gz TIMES.json
# (TIMES.json: what `dlasim run --times` wrote)
set -u
build=$1 model=$2 images=$3 json=$4
threads=$(getconf _NPROCESSORS_ONLN)
ort_json=$build/demo_ort.json
if ! sh tools/models/ort_install.sh "$build/ort" > "$build/demo_ort.log" 2>&1; then
    echo "ONNX Runtime fp32: not measured: $(tail -1 "$build/demo_ort.log")"
    exit 0
fi
n=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).images)' "$json") || exit 1
if ! node bench/ort_bench.js "$build/ort" "$model" "$images" "$n" "$threads" > "$ort_json" 2>> "$build/demo_ort.log"; then
    echo "ONNX Runtime fp32: not measured: $(tail -1 "$build/demo_ort.log")"
    exit 0
fi
node - "$json" "$ort_json" "$threads" "$(cut -d' ' -f1 /proc/loadavg)" <<'JS'
const fs = require('fs');
const [d, o] = [2, 3].map((i) => JSON.parse(fs.readFileSync(process.argv[i])));
const [threads, load] = [process.argv[4], process.argv[5]];
const n = d.images.toLocaleString('en-US');
const line = (what, s, runs) => `  ${what.padEnd(44)} ${s.toFixed(2).padStart(6)} s  (${(1e3 * s / runs).toFixed(3)} ms per image)`;
console.log(`the ${n} test images, one at a time, on this machine (${threads} threads each, load average ${load}):`);
console.log(line('dlasim INT8 on the simulated NVDLA (nv_small)', d.int8_seconds, d.images));
console.log(line(`ONNX Runtime ${o.ort_version} fp32 on the CPU (npm)`, o.s_total, o.runs));
const r = d.int8_seconds / o.s_total;
console.log(r <= 1 ? `  dlasim took ${r.toFixed(2)}x ONNX Runtime fp32's time: faster`
                   : `  dlasim took ${r.toFixed(2)}x ONNX Runtime fp32's time`);
JS

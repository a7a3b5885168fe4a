#!/bin/sh
# ONNX Runtime for node (npm onnxruntime-node, CPU build) into DIR/node_modules,
# unless it is there: the independent reference of tests/traces/onnx_ort.sh,
# tests/traces/onnx_qdq.sh, make bench and make zoo.
# ONNXRUNTIME_NODE_INSTALL_CUDA=skip keeps it to the CPU build.
#   usage: tools/models/ort_install.sh DIR
#
# Safe to call from several processes at once (tests/run.sh runs onnx_ort.sh
# and onnx_qdq.sh side by side): the callers queue on DIR.lock (flock), and
# npm installs into a staging folder that is renamed into place only when
# complete, so no caller ever loads a half-written onnxruntime-node (a
# second npm install rewriting the native library under a running node is
# how the two test groups once crashed each other on a fresh clone).
set -u
dir=$1
installed() { [ -f "$dir/node_modules/onnxruntime-node/package.json" ]; }
installed && exit 0
command -v npm >/dev/null 2>&1 || { echo "ort_install: npm is missing (Debian: npm)" >&2; exit 1; }
mkdir -p "$dir" || exit 1
if command -v flock >/dev/null 2>&1; then
    exec 9> "$dir.lock" && flock 9 || { echo "ort_install: cannot lock $dir.lock" >&2; exit 1; }
fi
installed && exit 0
stage=$dir/.stage.$$
# its own package.json, so npm installs here and not into a parent folder
rm -rf "$stage" && mkdir -p "$stage" && echo '{}' > "$stage/package.json" || exit 1
if ! (cd "$stage" && ONNXRUNTIME_NODE_INSTALL_CUDA=skip npm install --no-audit --no-fund \
        onnxruntime-node) > "$dir/npm.log" 2>&1 || [ ! -f "$stage/node_modules/onnxruntime-node/package.json" ]; then
    rm -rf "$stage"
    echo "ort_install: npm install onnxruntime-node failed: $(tail -n 3 "$dir/npm.log" | tr '\n' ' ')(log: $dir/npm.log)" >&2
    exit 1
fi
rm -rf "$dir/node_modules"
mv "$stage/node_modules" "$dir/node_modules"
rm -rf "$stage"
installed || { echo "ort_install: $dir/node_modules/onnxruntime-node missing after the install" >&2; exit 1; }

#!/bin/sh
# ONNX Runtime for node (npm onnxruntime-node, CPU build) into DIR/node_modules,
# unless it is there: the independent reference of tests/traces/onnx_ort.sh
# and make zoo.  ONNXRUNTIME_NODE_INSTALL_CUDA=skip keeps it to the CPU build.
#   usage: tools/models/ort_install.sh DIR
set -u
dir=$1
[ -f "$dir/node_modules/onnxruntime-node/package.json" ] && exit 0
command -v npm >/dev/null 2>&1 || { echo "ort_install: npm is missing (Debian: npm)" >&2; exit 1; }
mkdir -p "$dir"
cd "$dir" && ONNXRUNTIME_NODE_INSTALL_CUDA=skip npm install --no-audit --no-fund --silent \
    onnxruntime-node >/dev/null 2>&1 || { echo "ort_install: npm install onnxruntime-node failed" >&2; exit 1; }

#!/bin/sh
# The differential harness (tools/difftest/difftest.py, issue 22): random
# valid ONNX graphs from the supported operator set (fixed seeds), each
# compiled for nv_small, nv_small_256 and nv_large; INT8 output against a
# numpy float reference by SQNR, and the .onnx run against its .nvdla run
# element by element.  Any silent divergence fails.  DIFF_CASES cases
# (default 200; 40 under the sanitizers, whose CLI is ~5x slower);
# `make fuzz-long` runs thousands.
set -u
dlasim=${DLASIM:-build/dlasim}
case "$dlasim" in
    *build-san*) cases=${DIFF_CASES:-40} ;;
    *) cases=${DIFF_CASES:-200} ;;
esac
exec /usr/bin/python3 tools/difftest/difftest.py "$dlasim" --cases "$cases" --seed "${DIFF_SEED:-1}"

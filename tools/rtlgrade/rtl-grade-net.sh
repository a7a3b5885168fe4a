#!/bin/sh
# The network family of `make rtl-grade` (also `make rtl-grade-net`): record the networks of
# netcases.sh, run every recorded layer on the nv_small RTL and install the cases, .cfg only,
# into tests/traces/rtl-graded-net with the RTL's CRCs and cycles (its RESULTS file).
#   usage: rtl-grade-net.sh BUILD RTL_BUILD_DIR SHARED_DIR [NET...]
# Network layers run longer than engine cases (a ResNet-18 layer with 2.4 MB of weights:
# ~300k cycles, half a minute of RTL time): they get RTL_TIMEOUT_ENGINE=1200 s.
set -eu
build=$1; rtl=$2; shared=$3; shift 3
sim=$rtl/hw/outdir/nv_small/verilator/VNV_nvdla
[ -x "$sim" ] || { echo "rtl-grade-net: no nv_small RTL simulator at $sim (build it with $shared/tools/rtl-build.sh, or set RTL=DIR)" >&2; exit 2; }
here=$(dirname "$0")
cases=$build/rtlgrade/netcases
dest=tests/traces/rtl-graded-net
rm -rf "$cases"; mkdir -p "$cases"
echo "rtl-grade-net: recording networks into $cases"
sh "$here/netcases.sh" "$build/dlasim" "$cases" "$@" > "$cases.list"
echo "rtl-grade-net: $(wc -l < "$cases.list") layers; grading on $rtl (one at a time, niced)"
RTL_RUN=$shared/tools/rtl-run.sh RTL_TIMEOUT_ENGINE=${RTL_TIMEOUT_ENGINE:-1200} \
    sh "$here/grade.sh" "$cases" "$rtl" "$build/rtlgrade/RESULTS-net"
sh "$here/install_net.sh" "$cases" "$build/rtlgrade/RESULTS-net" "$dest"

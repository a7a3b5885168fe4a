#!/bin/sh
# make rtl-grade: regenerate the RTL-graded cases, grade them on the nv_small RTL and install
# them into tests/traces/rtl-graded (see tools/rtlgrade/README.md).
#   usage: rtl-grade.sh BUILD RTL_BUILD_DIR SHARED_DIR
set -eu
build=$1; rtl=$2; shared=$3
sim=$rtl/hw/outdir/nv_small/verilator/VNV_nvdla
[ -x "$sim" ] || { echo "rtl-grade: no nv_small RTL simulator at $sim (build it with $shared/tools/rtl-build.sh, or set RTL=DIR)" >&2; exit 2; }
cases=$build/rtlgrade/cases
rm -rf "$cases"; mkdir -p "$cases"
echo "rtl-grade: generating cases into $cases"
/usr/bin/python3 tools/rtlgrade/gen.py "$cases" --dlasim "$build/dlasim" --convcase "$build/rtlgrade/convcase" --imgcase "$build/rtlgrade/imgcase" > "$cases.list"
echo "rtl-grade: $(wc -l < "$cases.list") cases; grading on $rtl (one at a time, niced)"
RTL_RUN=$shared/tools/rtl-run.sh sh tools/rtlgrade/grade.sh "$cases" "$rtl" "$build/rtlgrade/RESULTS"
sh tools/rtlgrade/install.sh "$cases" "$build/rtlgrade/RESULTS" tests/traces/rtl-graded

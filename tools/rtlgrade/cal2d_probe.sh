#!/bin/sh
# cal2d_probe.sh RTL_BUILD_DIR OUT_DIR: build tools/rtlgrade/cal2d_probe.cpp against the nv_small
# RTL's cal2d (the folder ../shared/tools/rtl-build.sh made) with Verilator; the binary is
# OUT_DIR/obj_dir/cal2d_probe.  About 20 s.  See cal2d_probe.cpp for its arguments.
set -eu
rtl=$(cd "$1" && pwd); out=$2
hw=$rtl/hw; v=$hw/outdir/nv_small/vmod
f=$hw/verif/verilator/verilator_nv_small.f
[ -f "$v/nvdla/pdp/NV_NVDLA_PDP_CORE_cal2d.v" ] || { echo "cal2d_probe: no nv_small RTL in $rtl" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"; cd "$out"
inc=$(sed -n "s#^-I\.\./\.\./#-I$hw/#p" "$f" | tr '\n' ' ')
libs=$(sed -n "s#^-v \.\./\.\./#-v $hw/#p" "$f" | tr '\n' ' ')
# shellcheck disable=SC2086
nice verilator --cc --exe --build -j 1 -DEMULATION -y "$v/rams/model" $inc $libs --no-timing \
    -Wno-fatal -Wno-lint -Wno-style --top-module NV_NVDLA_PDP_CORE_cal2d \
    "$v/nvdla/pdp/NV_NVDLA_PDP_CORE_cal2d.v" "$here/cal2d_probe.cpp" -o cal2d_probe > build.log 2>&1 \
    || { tail -20 build.log >&2; exit 1; }
echo "$out/obj_dir/cal2d_probe"

#!/bin/sh
# NVIDIA's regression loadables through the NVDLA DRM UAPI in user space
# (docs/nvdla-uapi.md): tests/uapi/nvdla_umd_client issues the calls
# NVIDIA's user-mode driver issues, in its order, on /dev/dri/renderD128,
# with build/libdlasim-nvdla.so preloaded; the md5 of the output it dumps
# must equal NVIDIA's golden (../shared/conformance/nvdla-loadables).
#  - the 4 _small loadables on DLASIM_CONFIG=nv_small (the default: unset),
#    the 4 _large ones on nv_large; descriptor layout detected; the calls the
#    shim logs (DLASIM_LOG=1, fd numbers left out) equal, line for line, those
#    NVIDIA's own nvdla_runtime (nvdla/sw 79538ba, built by hand, not in the
#    tree) made through the shim for the same loadable: tests/uapi/calls/;
#  - with the layout given (DLASIM_NVDLA_INTERFACE=0.10), the same golden;
#    given wrongly (0.12), the submit is refused: EINVAL, a log line naming
#    the descriptor field, no output;
#  - DLASIM_CONFIG naming no configuration: open() fails with ENODEV.
# Needs DLASIM (the CLI; its folder is the build) and CONFORMANCE.
set -u
build=$(dirname "${DLASIM:-build/dlasim}")
conf=${CONFORMANCE:-../shared/conformance/nvdla-traces}
dir=${LOADABLES:-$conf/../nvdla-loadables}
client=$build/tests/uapi/nvdla_umd_client
shim=$(cd "$build" && pwd)/libdlasim-nvdla.so
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "PASS $1"; }
ko() { failed=$((failed + 1)); echo "FAIL $1"; }
if [ ! -d "$dir/flatbufs" ]; then
    echo "loadables: none at $dir (set LOADABLES)"; echo "0 passed, 1 failed"; exit 1
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
golden() { cut -c1-32 "$(ls -d "$dir"/golden/"$1"_*/dla | head -1)/lead.md5"; }
run() {  # CONFIG(- = unset) KIND/NAME [ENV=VALUE]
    name=$(basename "$2")
    rm -f "$out/o.dimg"
    if [ "$1" = - ]; then
        env ${3:-} LD_PRELOAD="$shim" "$client" "$dir/flatbufs/kmd/$2_fbuf" "$out/o.dimg" > "$out/log" 2>&1
    else
        env ${3:-} DLASIM_CONFIG="$1" LD_PRELOAD="$shim" "$client" "$dir/flatbufs/kmd/$2_fbuf" \
            "$out/o.dimg" > "$out/log" 2>&1
    fi
}
md5_case() {  # CONFIG KIND/NAME [ENV=VALUE]
    name=$(basename "$2")
    want=$(golden "$name")
    if run "$1" "$2" "DLASIM_LOG=1 ${3:-}" && [ "$(md5sum < "$out/o.dimg" | cut -c1-32)" = "$want" ]; then
        cfg=$1; [ "$cfg" = - ] && cfg="nv_small (DLASIM_CONFIG unset)"
        ok "$name through the UAPI on $cfg${3:+ ($3)}: md5 $want"
    else
        ko "$name through the UAPI on $1 ${3:-}: $(grep -v 'dlasim-nvdla: [GPmoc]' "$out/log" | tail -5)"
    fi
    grep '^dlasim-nvdla' "$out/log" | sed 's/fd [0-9]*/fd N/g' > "$out/calls"
    if diff "tests/uapi/calls/$name.calls" "$out/calls" > "$out/diff"; then
        ok "$name: $(wc -l < "$out/calls") calls, as NVIDIA's nvdla_runtime makes them"
    else
        ko "$name: calls differ from NVIDIA's nvdla_runtime's: $(head -5 "$out/diff")"
    fi
}
for k in CONV/CONV_D_L0_0 SDP/SDP_X1_L0_0 PDP/PDP_L0_0 CDP/CDP_L0_0; do
    md5_case - "${k}_small"
    md5_case nv_large "${k}_large"
done
md5_case nv_small CONV/CONV_D_L0_0_small DLASIM_NVDLA_INTERFACE=0.10
md5_case nv_large SDP/SDP_X1_L0_0_large DLASIM_NVDLA_INTERFACE=0.11
if ! run nv_small PDP/PDP_L0_0_small DLASIM_NVDLA_INTERFACE=0.12 && [ ! -f "$out/o.dimg" ] &&
    grep -q "SUBMIT: task failed.*pdp_surface.*is outside" "$out/log" &&
    grep -q "SUBMIT of task (0): Invalid argument" "$out/log"; then
    ok "PDP_L0_0_small read as interface 0.12 refused: $(grep 'task failed' "$out/log" | head -1)"
else
    ko "PDP_L0_0_small as 0.12: $(cat "$out/log")"
fi
if ! run nv_nonesuch PDP/PDP_L0_0_small && grep -q "cannot create the device" "$out/log" &&
    grep -q "open /dev/dri/renderD128 (0): No such device" "$out/log"; then
    ok "DLASIM_CONFIG=nv_nonesuch: open fails with ENODEV, saying why"
else
    ko "DLASIM_CONFIG=nv_nonesuch: $(cat "$out/log")"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/bin/sh
# The CLI's resource limits: --max-mem SIZE (host memory device memory may
# take; default 8 GiB) and --max-work N (per-layer work), each refusing with
# the trace file:line, the unit, the layer and the addresses; malformed
# values are usage errors.  Needs DLASIM (the CLI) and CONFORMANCE.
set -u
dlasim=${DLASIM:-build/dlasim}
conf=${CONFORMANCE:-../shared/conformance/nvdla-traces}
case_cfg="$conf/nv_small/pdp_8x8x64_2x2_int8/pdp_8x8x64_2x2_int8.cfg"
passed=0; failed=0
expect() {  # name, wanted exit status, text the output must contain, command...
    name=$1; want=$2; text=$3; shift 3
    out=$("$@" 2>&1); rc=$?
    if [ "$rc" -eq "$want" ] && printf '%s' "$out" | grep -qF -- "$text"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1)); echo "FAIL $name (exit $rc): $out"
    fi
}
expect "defaults run the case" 0 "PASS" "$dlasim" trace "$case_cfg"
expect "--max-mem 64K (one page) stops the layer's output" 1 \
    "pdp_8x8x64_2x2_int8.cfg:41: while waiting here the device failed: layer 1: PDP: DMA write of 0x80100000+0x200 on DBB failed: the host memory budget for device memory is spent at 0x80100000: 65536 bytes of pages in use, max_host_mem=65536" \
    "$dlasim" trace --max-mem 64K "$case_cfg"
expect "--max-mem 1MiB is enough" 0 "PASS" "$dlasim" trace --max-mem 1MiB "$case_cfg"
expect "--max-work refuses the layer" 1 \
    "layer 1: PDP: the layer's work of 24576 (4096 bytes read, 4096 bytes written, 16384 elements computed) exceeds the caller's limit of 1000 (max_layer_work)" \
    "$dlasim" trace --max-work 1000 "$case_cfg"
expect "--max-work 24K is enough" 0 "PASS" "$dlasim" trace --max-work 24K "$case_cfg"
expect "--max-mem takes sizes only" 2 "--max-mem takes a number with an optional K, M, G or T suffix" \
    "$dlasim" trace --max-mem 12Q "$case_cfg"
expect "--max-work overflow is refused" 2 "--max-work takes a number" \
    "$dlasim" trace --max-work 99999999999999999999T "$case_cfg"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

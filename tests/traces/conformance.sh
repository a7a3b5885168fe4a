#!/bin/sh
# NVDLA's conformance traces (expected CRCs from NVIDIA's RTL), one test per
# case.  Needs DLASIM (the CLI) and CONFORMANCE (the nvdla-traces folder).
#  - nv_small: every case; the four SDP element-wise cases must give the CRC
#    the nv_small RTL writes (tests/traces/nv_small.expect);
#  - the same four with SDP EW and LUT switched on must give their .cfg CRCs;
#  - nv_small_256: every case whose surface files are present, same rule;
#  - nv_large: its pass-through cases.
set -u
here=$(dirname "$0")
dlasim=${DLASIM:-build/dlasim}
conf=${CONFORMANCE:-../shared/conformance/nvdla-traces}
passed=0
failed=0
tally() {
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -1)
    p=$(echo "$line" | sed 's/ passed.*//'); f=$(echo "$line" | sed 's/.*passed, \([0-9]*\) failed.*/\1/')
    [ -n "$p" ] || { p=0; f=1; }
    passed=$((passed + p)); failed=$((failed + f))
    grep -E '^(FAIL|SKIP)|^    ' "$1"
}
if [ ! -d "$conf/nv_small" ]; then
    echo "conformance: no suite at $conf (set CONFORMANCE)"; echo "0 passed, 1 failed"; exit 1
fi
out=$(mktemp)
"$dlasim" trace --suite "$conf/nv_small" --expect "$here/nv_small.expect" > "$out" 2>&1
echo "nv_small: $(tail -1 "$out")"; tally "$out"
"$dlasim" trace --suite "$conf/nv_small" --match 'sdp_3x3x3?_ew_*' \
    --set NVDLA_SDP_EW_ENABLE=1 --set NVDLA_SDP_LUT_ENABLE=1 > "$out" 2>&1
echo "nv_small + SDP EW/LUT, element-wise cases: $(tail -1 "$out")"; tally "$out"
"$dlasim" trace --suite "$conf/nv_small_256" --config nv_small_256 --skip-missing-data \
    --expect "$here/nv_small.expect" > "$out" 2>&1
echo "nv_small_256: $(tail -1 "$out")"; tally "$out"
"$dlasim" trace --suite "$conf/nv_large" --config nv_large > "$out" 2>&1
echo "nv_large: $(tail -1 "$out")"; tally "$out"
rm -f "$out"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

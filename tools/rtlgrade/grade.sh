#!/bin/sh
# grade.sh CASES_DIR RTL_BUILD_DIR RESULTS_FILE
# Runs every case folder of CASES_DIR on the nv_small RTL (../shared/tools/rtl-run.sh, one at a
# time, niced) and writes the RTL's CRC into the case's check_crc.  One line per case goes to
# RESULTS_FILE:  <case> agree|disagree|rtl-fail rtl_crc=0x.. dlasim_crc=0x.. cycles=N
#   agree     the RTL computed the CRC dlasim put there (the trace passes on the RTL as written)
#   disagree  the RTL computed another CRC; it replaces dlasim's (a dlasim bug to investigate)
#   rtl-fail  the RTL hung or failed otherwise (the reason is in RESULTS_FILE.log)
set -u
cases=$1; rtl=$2; results=$3
run=${RTL_RUN:-$(dirname "$0")/../../../shared/tools/rtl-run.sh}
: > "$results"; : > "$results.log"
for d in "$cases"/*/; do
    d=${d%/}; c=$(basename "$d"); cfg=$d/$c.cfg
    [ -f "$cfg" ] || continue
    ours=$(sed -n 's/^check_crc(.*, \(0x[0-9a-f]*\));$/\1/p' "$cfg" | tail -1)
    # engine cases run at most ~12k cycles (seconds): a short limit keeps the many programmings
    # the RTL hangs on (over-stated PDP padding, see docs/fidelity.md) from costing 10 minutes each
    limit=${RTL_TIMEOUT:-600}
    grep -q '^// regenerate:' "$cfg" || limit=${RTL_TIMEOUT_ENGINE:-60}
    out=$(RTL_TIMEOUT=$limit nice bash "$run" "$d" "$rtl" 2>"$d.err")
    rc=$?
    cyc=$(echo "$out" | sed -n 's/.*cycles_to_last_intr=\([0-9NA]*\).*/\1/p')
    if [ $rc -eq 0 ]; then
        echo "$c agree rtl_crc=$ours dlasim_crc=$ours cycles=$cyc" >> "$results"
    elif grep -q 'should have been' "$d.err"; then
        rtlcrc=0x$(sed -n 's/.*should have been \([0-9a-f]*\),.*/\1/p' "$d.err" | head -1)
        sed -i "s/^\(check_crc(.*, \)$ours);\$/\1$rtlcrc);/" "$cfg"
        echo "$c disagree rtl_crc=$rtlcrc dlasim_crc=$ours cycles=$cyc" >> "$results"
    else
        echo "$c rtl-fail rtl_crc=NA dlasim_crc=$ours cycles=$cyc" >> "$results"
        { echo "== $c"; cat "$d.err"; } >> "$results.log"
    fi
    rm -f "$d.err"
    tail -1 "$results"
done

#!/bin/sh
# grade_one.sh CASE_DIR RTL_BUILD_DIR: one case of grade.sh on the nv_small RTL
# (RTL_RUN, default ../shared/tools/rtl-run.sh): prints its RESULTS line
#   <case> agree|disagree|rtl-fail rtl_crc=0x.. dlasim_crc=0x.. cycles=N
# and on a disagreement writes the RTL's CRC into the case's check_crc; on
# rtl-fail the RTL's messages stay in CASE_DIR.err.  A timeout is the RTL
# hanging on the programming: `never` (dlasim never completes it either) or
# `rtl-hang` (dlasim completes it: a disagreement).  Always exits 0 when the
# case was graded: the verdict is the line.  Used by grade.sh (one machine)
# and by `dlasim each` (a cluster, docs/cluster.md).
set -u
d=${1%/}; rtl=$2
run=${RTL_RUN:-$(dirname "$0")/../../../shared/tools/rtl-run.sh}
c=$(basename "$d"); cfg=$d/$c.cfg
[ -f "$cfg" ] || { echo "grade_one: no case file $cfg" >&2; exit 2; }
ours=$(sed -n 's/^check_crc(.*, \(0x[0-9a-f]*\));$/\1/p' "$cfg" | tail -1)
# engine cases run at most ~12k cycles (seconds): a short limit keeps the many programmings
# the RTL hangs on (over-stated PDP padding, see docs/fidelity.md) from costing 10 minutes each
limit=${RTL_TIMEOUT:-600}
grep -q '^// regenerate:' "$cfg" || limit=${RTL_TIMEOUT_ENGINE:-60}
out=$(RTL_TIMEOUT=$limit nice bash "$run" "$d" "$rtl" 2>"$d.err")
rc=$?
cyc=$(echo "$out" | sed -n 's/.*cycles_to_last_intr=\([0-9NA]*\).*/\1/p')
if [ $rc -eq 0 ]; then
    echo "$c agree rtl_crc=$ours dlasim_crc=$ours cycles=$cyc"
elif grep -q 'should have been' "$d.err"; then
    rtlcrc=0x$(sed -n 's/.*should have been \([0-9a-f]*\),.*/\1/p' "$d.err" | head -1)
    sed -i "s/^\(check_crc(.*, \)$ours);\$/\1$rtlcrc);/" "$cfg"
    echo "$c disagree rtl_crc=$rtlcrc dlasim_crc=$ours cycles=$cyc"
elif grep -q 'timeout after' "$d.err"; then
    # the RTL never completes the programming: `never` when dlasim says so too
    # (gen.py marks such cases), `rtl-hang` when dlasim completes it
    if grep -q '^// dlasim: never completes' "$cfg"; then v=never; else v=rtl-hang; fi
    echo "$c $v rtl_crc=NA dlasim_crc=$ours cycles=NA"
else
    echo "$c rtl-fail rtl_crc=NA dlasim_crc=$ours cycles=$cyc"
    exit 0  # keep $d.err: grade.sh copies it into RESULTS.log
fi
rm -f "$d.err"

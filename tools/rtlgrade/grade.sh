#!/bin/sh
# grade.sh CASES_DIR RTL_BUILD_DIR RESULTS_FILE
# Runs every case folder of CASES_DIR on the nv_small RTL (../shared/tools/rtl-run.sh, one at a
# time, niced) and writes the RTL's CRC into the case's check_crc.  One line per case goes to
# RESULTS_FILE:  <case> agree|disagree|rtl-fail rtl_crc=0x.. dlasim_crc=0x.. cycles=N
#   agree     the RTL computed the CRC dlasim put there (the trace passes on the RTL as written)
#   disagree  the RTL computed another CRC; it replaces dlasim's (a dlasim bug to investigate)
#   rtl-fail  the RTL hung or failed otherwise (the reason is in RESULTS_FILE.log)
# One case is grade_one.sh; on a cluster `dlasim each` runs it over shards (docs/cluster.md).
set -u
cases=$1; rtl=$2; results=$3
here=$(dirname "$0")
: > "$results"; : > "$results.log"
for d in "$cases"/*/; do
    d=${d%/}; c=$(basename "$d")
    [ -f "$d/$c.cfg" ] || continue
    sh "$here/grade_one.sh" "$d" "$rtl" >> "$results"
    if [ -f "$d.err" ]; then
        { echo "== $c"; cat "$d.err"; } >> "$results.log"
        rm -f "$d.err"
    fi
    tail -1 "$results"
done

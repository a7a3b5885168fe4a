#!/bin/sh
# The network family of the RTL-graded campaign (tests/traces/rtl-graded-net, made by
# `make rtl-grade-net`, tools/rtlgrade/README.md): every hardware layer of whole networks as
# dlasim records them (`dlasim run --record-trace`), with the CRCs and cycles NVIDIA's nv_small
# RTL computed.  The cases keep only their .cfg: the networks are recorded again here
# (tools/rtlgrade/netcases.sh) for the .dat files, which must have the cksum the
# "// data cksum:" line records (else the recording changed and the family must be graded
# again).  Checks: every case gives the RTL's CRCs, and the cycle model is within
# NET_MAX_MEDIAN % (median) and NET_MAX_WORST % (worst case) of the RTL's cycles_to_last_intr.
# Needs DLASIM.
set -u
here=$(dirname "$0")
dlasim=${DLASIM:-build/dlasim}
suite=$here/rtl-graded-net
max_median=${NET_MAX_MEDIAN:-1}
# issue 19: median <= 1 %, worst <= 5 % (measured 0.50 % and 3.60 %, docs/timing.md)
max_worst=${NET_MAX_WORST:-5}
passed=0
failed=0
bad() { failed=$((failed + 1)); echo "FAIL $1"; }
[ -f "$suite/RESULTS" ] || { echo "rtl_graded_net: no $suite/RESULTS"; echo "0 passed, 1 failed"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/cases"
nets=$(sed -n 's|^// regenerate-net: ||p' "$suite"/*/*.cfg | sort -u | tr '\n' ' ')
if ! sh "$here/../../tools/rtlgrade/netcases.sh" "$dlasim" "$tmp/regen" $nets > "$tmp/regen.txt" 2>&1; then
    bad "netcases.sh could not record the networks ($nets): $(tail -1 "$tmp/regen.txt")"
fi
for d in "$suite"/*/; do
    d=${d%/}; c=$(basename "$d")
    want=$(grep '^// data cksum:' "$d/$c.cfg")
    got=$(grep -s '^// data cksum:' "$tmp/regen/$c/$c.cfg")
    if [ "$want" != "$got" ]; then
        bad "$c: the network's recording changed (data ${got:-missing}, graded ${want#// }): grade it again (make rtl-grade-net)"
        continue
    fi
    mkdir -p "$tmp/cases/$c"
    cp "$d/$c.cfg" "$tmp/cases/$c/"
    mv "$tmp/regen/$c"/*.dat "$tmp/cases/$c/"
    rm -rf "$tmp/regen/$c"
done
{ echo "case,rtl_result,cycles_total,cycles_trace,cycles_to_last_intr"
  sed -n 's/^\([^ ]*\) agree .*cycles=\([0-9]*\)$/\1,PASS,NA,NA,\2/p' "$suite/RESULTS"; } > "$tmp/rtl.csv"
"$dlasim" trace --suite "$tmp/cases" --timing --rtl "$tmp/rtl.csv" \
    --max-median "$max_median" --max-worst "$max_worst" > "$tmp/out.txt" 2>&1
line=$(tail -1 "$tmp/out.txt")
echo "tests/traces/rtl-graded-net: $line"
grep -E '^FAIL' "$tmp/out.txt"
p=$(echo "$line" | sed -n 's/^\([0-9]*\) passed.*/\1/p'); f=$(echo "$line" | sed -n 's/.*passed, \([0-9]*\) failed.*/\1/p')
passed=$((passed + ${p:-0})); failed=$((failed + ${f:-1}))
grep '^timing:' "$tmp/out.txt"
if grep -q '^timing: [0-9]* cases vs RTL' "$tmp/out.txt" && ! grep -q '^timing: FAIL' "$tmp/out.txt"; then
    passed=$((passed + 1))
else
    bad "cycle model vs RTL over the limits (median $max_median %, worst $max_worst %)"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

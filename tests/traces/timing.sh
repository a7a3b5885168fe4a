#!/bin/sh
# The timing model against NVIDIA's nv_small RTL (../shared/reference/
# rtl_cycles_nv_small.csv): one test per case whose modelled
# cycles_to_last_intr is within 5 % of the RTL's, one for the median error
# (<= 1 %) and worst case (<= 5 %), and the reports: --json carries the same cycles as the printed
# line, --timeline is valid Chrome trace-event JSON (tests/traces/
# check_trace_events.py).  Needs DLASIM and CONFORMANCE; REFERENCE defaults
# to CONFORMANCE/../../reference.
set -u
set -f  # the case list holds glob patterns for dlasim, not for the shell
here=$(dirname "$0")
dlasim=${DLASIM:-build/dlasim}
conf=${CONFORMANCE:-../shared/conformance/nvdla-traces}
ref=${REFERENCE:-$conf/../../reference}
csv=$ref/rtl_cycles_nv_small.csv
py=/usr/bin/python3
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL $1"; }
if [ ! -f "$csv" ] || [ ! -d "$conf/nv_small" ]; then
    echo "timing: no RTL table at $csv or no suite at $conf"; echo "0 passed, 1 failed"; exit 1
fi
out=$(mktemp -d)
"$dlasim" trace --suite "$conf/nv_small" --timing --rtl "$csv" --expect "$here/nv_small.expect" \
    --max-median 1 --max-worst 5 > "$out/suite.txt" 2>&1
# per case: |model/RTL - 1| <= 5 %
while IFS='|' read -r _ name model rtl ratio _; do
    name=$(echo "$name" | tr -d ' '); ratio=$(echo "$ratio" | tr -d ' ')
    case "$ratio" in ''|-|model/RTL|-*-) continue ;; esac
    if awk -v r="$ratio" 'BEGIN { exit !(r >= 0.95 && r <= 1.05) }'; then ok
    else bad "timing $name: model $model vs RTL $rtl cycles (ratio $ratio)"; fi
done < "$out/suite.txt"
grep '^timing:' "$out/suite.txt"
if grep -q '^timing: [0-9]* cases vs RTL' "$out/suite.txt" && ! grep -q '^timing: FAIL' "$out/suite.txt"; then ok
else bad "timing: median/worst error over the limits (1 %, 5 %)"; fi
# functional results are the same with timing on
if grep -q '^69 passed, 0 failed' "$out/suite.txt"; then ok; else bad "conformance with --timing: $(tail -1 "$out/suite.txt")"; fi

# cases of new shapes measured on the RTL (tests/traces/rtl_own.txt), made again here
own="$here/rtl_own.txt"
mk=$(dirname "$here")/../tools/timing/mkcases.py
made_mk=0
made_onnx=0
while read -r name rtl how args; do
    case "$name" in ''|\#*) continue ;; esac
    d="$out/own/$name"
    if [ "$how" = mkcases ]; then
        if [ $made_mk = 0 ]; then
            "$py" "$mk" "$conf/nv_small" "$out/own" > /dev/null 2>&1 || bad "mkcases.py failed"
            made_mk=1
            # CRCs: dlasim's (bit-exact; the RTL matched them)
            for c in "$out"/own/*/*.cfg; do
                got=$("$dlasim" trace "$c" 2>&1 | sed -n 's/.*expected 0x00000000, got \(0x[0-9a-f]*\)/\1/p' | head -1)
                [ -n "$got" ] && sed -i "s/^\(check_crc(.*\), 0x0);\$/\1, $got);/" "$c"
            done
        fi
    elif [ "$how" = onnx ]; then
        # one-layer models of tests/traces/timing_models.py, recorded by dlasim run
        if [ $made_onnx = 0 ]; then
            mkdir -p "$out/onnx"
            "$py" "$here/timing_models.py" "$out/onnx" > /dev/null 2>&1 || bad "timing_models.py failed"
            made_onnx=1
        fi
        rec="$out/rec_$name"
        "$dlasim" run "$out/onnx/$name.onnx" --config nv_small --input "$out/onnx/$name.in" \
            --record-trace "$rec" > /dev/null 2>&1 || bad "dlasim run --record-trace for $name"
        d="$rec/rec_${name}_000"
    else
        mkdir -p "$d"
        # shellcheck disable=SC2086
        "$dlasim" estimate $args --mem-profile rtl-tb --record "$d" > /dev/null 2>&1 || bad "estimate --record for $name"
    fi
    cfg="$d/$(basename "$d").cfg"
    [ -f "$cfg" ] || { bad "own case $name was not made"; continue; }
    model=$("$dlasim" trace --timing "$cfg" 2>&1 | sed -n 's/^cycles_to_last_intr \([0-9]*\)$/\1/p')
    if [ -n "$model" ] && awk -v m="$model" -v r="$rtl" 'BEGIN { x = m / r; exit !(x >= 0.95 && x <= 1.05) }'; then
        ok; printf 'own %-24s model %9s RTL %9s\n' "$name" "$model" "$rtl"
    else bad "own case $name: model ${model:-none} vs RTL $rtl"; fi
done < "$own"

# reports of a two-layer case (SDP -> PDP on the fly, then nothing else)
case=sdp_pdp_32x16x32_pass_through_int8_0
"$dlasim" trace --timing --json "$out/t.json" --timeline "$out/tl.json" \
    "$conf/nv_small/$case/$case.cfg" > "$out/one.txt" 2>&1
printed=$(sed -n 's/^cycles_to_last_intr \([0-9][0-9]*\)$/\1/p' "$out/one.txt")
if [ -n "$printed" ] && [ "$printed" -gt 0 ]; then ok; else bad "trace --timing prints no cycles_to_last_intr line"; fi
if [ -x "$py" ]; then
    if "$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["cycles_to_last_intr"]==int(sys.argv[2]); assert len(d["layers"])>=1 and all(l["end"]>=l["start"] for l in d["layers"])' \
        "$out/t.json" "$printed" 2>"$out/err.txt"; then ok
    else bad "--json: $(cat "$out/err.txt" | tail -1)"; fi
    if "$py" "$here/check_trace_events.py" "$out/tl.json" > "$out/err.txt" 2>&1; then ok
    else bad "--timeline: $(tail -1 "$out/err.txt")"; fi
    # the checker itself rejects a malformed file
    printf '{"traceEvents": [{"name": "x", "ph": "X", "pid": 1, "tid": 1, "ts": -1}]}' > "$out/badtl.json"
    if "$py" "$here/check_trace_events.py" "$out/badtl.json" > /dev/null 2>&1; then
        bad "check_trace_events.py accepts a slice without dur and with a negative ts"
    else ok; fi
else
    bad "no /usr/bin/python3 to check the JSON files"
fi
rm -rf "$out"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

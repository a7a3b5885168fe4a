#!/bin/sh
# The Teflon conformance sweep: every MODELDIR/*.tflite through
# `dlasim teflon` (TFLite's CPU against Teflon -> rocket -> dlasim RK3588),
# classified by the largest output difference: within 1, within 2, beyond,
# refused (Teflon delegated nothing, or the run failed), dma-error (the NPU
# wrote or read outside every BO: the IOMMU fault silicon would take; the
# table's last column, with the largest difference the outputs still show).
#
#   usage: tools/teflon/sweep.sh DLASIM MODELDIR [KNOWN] [--table]
# A case passes when it is within 2, or when KNOWN (tests/teflon/known.txt)
# names it with the class it shows; one line per case, then the table (op
# family, cases, within 1, within 2, beyond, refused, DMA fault) and
# "N passed, N failed".
set -u
dlasim=$1
dir=$2
known=${3:-}
table=${4:-}
log=$(mktemp -d)
passed=0
failed=0
rows=""

# the reason KNOWN gives case $1 for class $2 (empty when none)
known_reason() {
    [ -n "$known" ] || return 0
    while read -r glob class reason; do
        case "$glob" in ''|'#'*) continue ;; esac
        # shellcheck disable=SC2254
        case "$1" in $glob) [ "$class" = "$2" ] && { echo "$reason"; return 0; } ;; esac
    done < "$known"
}

for m in "$dir"/*.tflite; do
    name=$(basename "$m" .tflite)
    "$dlasim" teflon "$m" --json "$log/out.json" > "$log/out.txt" 2> "$log/err.txt"
    rc=$?
    class=refused
    detail=""
    if [ "$rc" -eq 0 ] && [ -s "$log/out.json" ]; then
        deleg=$(sed -n 's/.*"delegated_ops": \([0-9]*\).*/\1/p' "$log/out.json")
        maxd=$(grep -o '"max_abs_diff": [0-9]*' "$log/out.json" | sed 's/.*: //' | sort -n | tail -1)
        share=$(sed -n 's/.*bytes differ (\([0-9.]*%\)).*/\1/p' "$log/out.txt" | head -1)
        if grep -q "DMA .* error\|DMA write of\|DMA read of" "$log/err.txt"; then
            class=dma-error
        elif [ "${deleg:-0}" -eq 0 ]; then
            class=refused
        elif [ "${maxd:-999}" -le 1 ]; then
            class=within1
        elif [ "$maxd" -le 2 ]; then
            class=within2
        else
            class=beyond
        fi
        detail="delegated $deleg, max |diff| $maxd, $share of bytes differ"
    else
        detail="$(grep -v '^dlasim teflon: building' "$log/err.txt" | tail -1)"
    fi
    grep "^dlasim-rocket" "$log/err.txt" | head -3 | sed 's/^/    /' > "$log/why.txt"
    case $class in
        within1|within2) passed=$((passed + 1)); verdict=PASS ;;
        *)
            reason=$(known_reason "$name" "$class")
            if [ -n "$reason" ]; then
                passed=$((passed + 1)); verdict=KNOWN; detail="$detail; $reason"
            else
                failed=$((failed + 1)); verdict=FAIL
            fi ;;
    esac
    echo "$verdict $name: $class ($detail)"
    [ "$verdict" = FAIL ] && cat "$log/why.txt"
    rows="$rows$(echo "$name" | cut -d_ -f1-2) $class
"
    rm -f "$log/out.json"
done

if [ "$table" = --table ]; then
    echo
    printf '%s' "$rows" | sh "$(dirname "$0")/table.sh"
    echo
fi
rm -rf "$log"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

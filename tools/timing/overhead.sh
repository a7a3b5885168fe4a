#!/bin/sh
# Functional speed with the timing model on vs off (make bench): the ResNet-18
# rows of conv_bench (bench/conv_bench.c), run alternately without and with --timing, ROUNDS
# times each; each row's best time of each mode is kept and the sums are
# compared (the machine's load varies: the best run of a row is its least
# disturbed one).
#   usage: tools/timing/overhead.sh CONV_BENCH [ROUNDS]
set -u
bench=${1:-build/conv_bench}
rounds=${2:-3}
tmp=$(mktemp -d)
best() {  # sum over the ResNet-18 rows of each row's best dlasim_ms x count in the JSON files $@
    /usr/bin/python3 -c '
import json, sys
best = {}
for f in sys.argv[1:]:
    for r in json.load(open(f))["rows"]:
        if r.get("kind") == "resnet18" and "dlasim_ms" in r:
            k = r["layer"]
            best[k] = min(best.get(k, 1e30), r["dlasim_ms"] * r.get("count", 1))
print(sum(best.values()))' "$@"
}
i=0
while [ $i -lt "$rounds" ]; do
    "$bench" --match 'resnet18*' --reps 5 --json "$tmp/off$i.json" > /dev/null 2>&1
    "$bench" --match 'resnet18*' --reps 5 --timing --json "$tmp/on$i.json" > /dev/null 2>&1
    i=$((i + 1))
done
off=$(best "$tmp"/off*.json); on=$(best "$tmp"/on*.json)
awk -v off="$off" -v on="$on" 'BEGIN {
    printf "ResNet-18 conv layers, each row at its best of the rounds: timing off %.2f ms, timing on %.2f ms: "\
           "%.1f %% of the functional speed\n", off, on, 100 * off / on }'
rm -rf "$tmp"

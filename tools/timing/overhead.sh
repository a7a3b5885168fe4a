#!/bin/sh
# Functional speed with the timing model on vs off (make bench): the ResNet-18
# rows of `dlasim bench`, run alternately without and with --timing, ROUNDS
# times each; the best total of each mode is compared (the machine's load
# varies, the best run is the least disturbed one).
#   usage: tools/timing/overhead.sh DLASIM [ROUNDS]
set -u
dlasim=${1:-build/dlasim}
rounds=${2:-3}
tmp=$(mktemp -d)
best() {  # best "ResNet-18 all conv layers" dlasim_ms over the JSON files $@
    /usr/bin/python3 -c '
import json, sys
print(min(json.load(open(f))["totals"]["ResNet-18 all conv layers"]["dlasim_ms"] for f in sys.argv[1:]))' "$@"
}
i=0
while [ $i -lt "$rounds" ]; do
    "$dlasim" bench --match 'resnet18*' --reps 5 --json "$tmp/off$i.json" > /dev/null 2>&1
    "$dlasim" bench --match 'resnet18*' --reps 5 --timing --json "$tmp/on$i.json" > /dev/null 2>&1
    i=$((i + 1))
done
off=$(best "$tmp"/off*.json); on=$(best "$tmp"/on*.json)
awk -v off="$off" -v on="$on" 'BEGIN {
    printf "ResNet-18 conv layers, best of the rounds: timing off %.2f ms, timing on %.2f ms: "\
           "%.1f %% of the functional speed\n", off, on, 100 * off / on }'
rm -rf "$tmp"

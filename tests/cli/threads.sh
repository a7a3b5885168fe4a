#!/bin/sh
# Issue 18: the work a device shares over its team of threads gives the
# bytes of the calling thread alone.  Two MobileNetV2 cut-downs (random
# weights, tools/models/make_mobilenetv2.py) run with --threads 1, 2 and 3:
# a 224x224 input with the first two rows of the bottleneck table (its
# 112x112x96 expand layer goes in bands through CACC and SDP, SDP's team
# items and bands write in place, the 112x112 and 56x56 depthwise blocks
# copy and compute on the team) and a 64x64 input with four rows (32x32,
# 16x16 and 8x8 depthwise blocks: the team's wake-up and awake-only jobs,
# and the calling thread alone).  Checks: the INT8 outputs of 2 and 3
# threads are those of 1 byte for byte, and the INT8 output agrees with the
# float executor's (SQNR >= 20 dB), an independent reference.
set -u
dlasim=${DLASIM:-build/dlasim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/common/netdata.sh

check_net() {
    size=$1; rows=$2; count=$3
    name=mobilenetv2_${size}_${rows}
    if ! /usr/bin/python3 tools/models/make_mobilenetv2.py "$tmp/$name.onnx" "$size" "$rows" > "$tmp/make.log" 2>&1; then
        fail "$name: the model could not be made: $(tail -1 "$tmp/make.log")"; return
    fi
    bytes $((3 * size * size * count)) "$name" > "$tmp/$name.in"
    for t in 1 2 3; do
        if ! "$dlasim" run "$tmp/$name.onnx" --config nv_small --input "$tmp/$name.in" --count "$count" \
                --calib "$tmp/$name.in" --threads "$t" --out-raw "$tmp/o$t" --float-raw "$tmp/f$t" \
                > "$tmp/run$t.log" 2>&1; then
            fail "$name --threads $t: $(tail -1 "$tmp/run$t.log")"; return
        fi
    done
    for t in 2 3; do
        if cmp -s "$tmp/o1" "$tmp/o$t"; then pass
        else fail "$name: INT8 output with --threads $t differs from --threads 1: $(cmp "$tmp/o1" "$tmp/o$t" 2>&1)"; fi
    done
    if db=$(sqnr_ok "$tmp/o1" "$tmp/f1"); then pass
    else fail "$name: INT8 against float: $db (want >= 20 dB)"; fi
}

check_net 224 2 2
check_net 64 4 3
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

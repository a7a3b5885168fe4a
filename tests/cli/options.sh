#!/bin/sh
# Issue 22: every CLI number parsed strictly (junk, sign, range, overflow),
# every output write checked, every refusal a message saying what, where and
# why, with a non-zero exit -- the reproducers of the issue, one check each.
# Needs DLASIM (the CLI) and CONFORMANCE.
set -u
dlasim=${DLASIM:-build/dlasim}
conf=${CONFORMANCE:-../shared/conformance/nvdla-traces}
case_cfg="$conf/nv_small/pdp_8x8x64_2x2_int8/pdp_8x8x64_2x2_int8.cfg"
model=models/fashion_mnist.onnx
. tests/common/expect.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 - "$tmp" <<'PY'
import sys, struct
d = sys.argv[1]
open(d + "/img.pgm", "wb").write(b"P5\n28 28\n255\n" + bytes((i * 7) % 256 for i in range(784)) [:783] + b"\xff")
# a regcmd list whose only entry is an op_en of no block: the PC fetches it
open(d + "/list.bin", "wb").write(struct.pack("<QQ", (0x81 << 48) | 8, 0))
PY

# ---- rk run / rk conv (item 5) ----
expect "rk run --addr junk" 2 "--addr takes a whole number" "$dlasim" rk run "$tmp/list.bin" --addr junk
expect "rk run --addr 64-bit" 2 "got '0x100000000'" "$dlasim" rk run "$tmp/list.bin" --addr 0x100000000
expect "rk run --addr slave-mode bit" 2 "16-byte aligned list address" "$dlasim" rk run "$tmp/list.bin" --addr 0x10001
expect "rk run --tasks -1" 2 "--tasks takes a whole number from 1 to 4095" "$dlasim" rk run "$tmp/list.bin" --tasks -1
expect "rk run --core 3" 2 "--core takes a whole number from 0 to 2" "$dlasim" rk run "$tmp/list.bin" --core 3
expect "rk run --load junk address" 2 "--load takes a hexadecimal address below 2^32" \
    "$dlasim" rk run "$tmp/list.bin" --load "zz:$tmp/img.pgm"
expect "rk run: tasks that never complete fail with a reason" 1 "only 0 of 1 task(s) completed" \
    "$dlasim" rk run "$tmp/list.bin"
expect "rk run: a list that is not 64-bit entries" 1 "is not a list of 64-bit regcmd entries" \
    "$dlasim" rk run "$tmp/img.pgm"
expect "rk conv --kernels abc" 2 "--kernels takes a whole number" "$dlasim" rk conv --kernels abc
expect "rk conv --in with junk" 2 "--in takes WxHxC" "$dlasim" rk conv --in 16x16x32z
expect "rk conv: address map beyond 4 GiB refused, not blamed on the model" 2 \
    "the RK3588 NPU addresses 4 GiB" "$dlasim" rk conv --in 2048x2048x512 --kernels 512 --tasks 8
expect "rk conv still runs" 0 "equal to integer math" "$dlasim" rk conv --tasks 3 --in 20x12x40 --kernels 24

# ---- numbers of the ONNX commands (item 2, options) ----
expect "--scale abc" 2 "--scale takes a finite number" "$dlasim" run "$model" --input "$tmp/img.pgm" --scale abc
expect "--scale nan" 2 "--scale takes a finite number" "$dlasim" run "$model" --input "$tmp/img.pgm" --scale nan
expect "--mean inf" 2 "--mean takes a finite number" "$dlasim" run "$model" --input "$tmp/img.pgm" --mean inf
expect "--mean 1e-400 (underflow)" 2 "--mean takes a finite number" "$dlasim" run "$model" --input "$tmp/img.pgm" --mean 1e-400
expect "--percentile 5x" 2 "--percentile takes a finite number" "$dlasim" compile "$model" --calib "$tmp/img.pgm" --percentile 5x
expect "--count -3" 2 "--count takes a whole number" "$dlasim" run "$model" --input "$tmp/img.pgm" --count -3
expect "--threads 1k" 2 "--threads takes a whole number from 0 to 256" "$dlasim" trace --threads 1k "$case_cfg"
expect "--mem-bw 1e-300" 2 "--mem-bw takes a finite number from 0.01 to 100000" "$dlasim" trace --timing --mem-bw 1e-300 "$case_cfg"
expect "--clock-mhz nan" 2 "--clock-mhz takes a finite number" "$dlasim" trace --timing --clock-mhz nan "$case_cfg"
expect "--max-median junk" 2 "--max-median takes a finite number" "$dlasim" trace --max-median 5% "$case_cfg"
expect "--log nothing" 2 "--log takes a comma-separated list of reg, exec, guest, unimp" "$dlasim" trace --log nothing "$case_cfg"
expect "--log reg,exec works" 0 "PASS" "$dlasim" trace --log guest,unimp "$case_cfg"

# ---- outputs that cannot be written (item 6) ----
expect "trace --json into a missing folder" 1 "cannot write" "$dlasim" trace --timing --json /nonexistent/x.json "$case_cfg"
expect "trace --timeline into a missing folder" 1 "cannot write" "$dlasim" trace --timing --timeline /nonexistent/t.json "$case_cfg"
if [ -w /dev/full ]; then
    expect "trace --json to a full disk" 1 "cannot write: No space left on device" "$dlasim" trace --timing --json /dev/full "$case_cfg"
    expect "compile -o to a full disk" 1 "/dev/full: cannot write" "$dlasim" compile "$model" --calib "$tmp/img.pgm" -o /dev/full
    expect "run --json to a full disk" 1 "/dev/full: cannot write" "$dlasim" run "$model" --input "$tmp/img.pgm" --json /dev/full
fi
expect "estimate --json into a missing folder" 1 "cannot write" "$dlasim" estimate --network resnet18 --match 'conv1*' --json /nonexistent/e.json

# ---- unclear messages of the issue ----
expect "run --config rk3588" 2 "the ONNX compiler targets the NVDLA configurations" \
    "$dlasim" run "$model" --input "$tmp/img.pgm" --config rk3588
touch "$tmp/afile"
expect "--record-trace into a file" 2 "--record-trace $tmp/afile: exists and is not a folder" \
    "$dlasim" run "$model" --input "$tmp/img.pgm" --record-trace "$tmp/afile"
expect "--names DIR" 1 "$tmp: a directory" "$dlasim" run "$model" --input "$tmp/img.pgm" --names "$tmp"
expect "--expect /etc/passwd" 2 "not an expectations line" "$dlasim" trace --expect /etc/passwd "$case_cfg"
expect "--expect of the suite still works" 0 "PASS" "$dlasim" trace --expect tests/traces/nv_small.expect "$case_cfg"
set --; for i in $(seq 17); do set -- "$@" --input "$tmp/img.pgm"; done
expect "loadable: 17 --input options" 2 "at most 16 --input options" "$dlasim" loadable "$tmp/x.nvdla" "$@"
expect "loadable --expect-md5 junk" 2 "--expect-md5 takes 32 hex digits" "$dlasim" loadable "$tmp/x.nvdla" --expect-md5 xyz
set --; for i in $(seq 41); do set -- "$@" --input "$tmp/img.pgm"; done
expect "run: 41 --input options" 0 "41 inputs" "$dlasim" run "$model" "$@"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

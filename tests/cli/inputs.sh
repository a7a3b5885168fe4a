#!/bin/sh
# Issue 22: inputs are checked before they take the host -- a gzip file's
# stated size against --max-mem before inflating, data that inflates beyond
# what it states, a FIFO (refused at once, never waited on), PGM pixels above
# maxval, NaN in raw float32 inputs, trace payloads within --max-mem -- each a
# clear error with a non-zero exit; peak RSS bounded (GNU time when present).
set -u
dlasim=${DLASIM:-build/dlasim}
model=models/fashion_mnist.onnx
. tests/common/expect.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# peak RSS in KB of a command (GNU time), or 0 without /usr/bin/time or
# under the sanitizers (ASan's quarantine keeps freed memory resident)
rss() { if [ -x /usr/bin/time ] && case "$dlasim" in *build-san*) false ;; *) true ;; esac; then /usr/bin/time -f '%M' "$@" 2>&1 >/dev/null | tail -1; else echo 0; fi; }

/usr/bin/python3 - "$tmp" <<'PY'
import sys, gzip, numpy as np
d = sys.argv[1]
px = bytes((i * 7) % 256 for i in range(783)) + b"\xff"
open(d + "/img.pgm", "wb").write(b"P5\n28 28\n255\n" + px)
open(d + "/maxval.pgm", "wb").write(b"P5\n28 28\n100\n" + bytes([255] + [50] * 783))
open(d + "/maxval2.pgm", "wb").write(b"P2\n2 1\n100\n 100 101\n")
# 80001 zero images (62.7 MB of pixels) in a small .gz (a "bomb" at --max-mem 16M)
with gzip.open(d + "/bomb.raw.gz", "wb", compresslevel=1) as f:
    z = bytes(784 * 1000)
    for _ in range(80):
        f.write(z)
    f.write(bytes(784))
# two members: the last one states 784 bytes, the first holds 48 MiB
with open(d + "/liar.raw.gz", "wb") as f:
    f.write(gzip.compress(bytes(48 << 20), compresslevel=1))
    f.write(gzip.compress(px, compresslevel=1))
a = np.ones(784, np.float32); a[100] = np.nan
a.tofile(d + "/nan.f32")
PY

expect "gzip input stating more than --max-mem" 1 "gzip data states 62720784 bytes, more than the 16777216-byte limit" \
    "$dlasim" run "$model" --input "$tmp/bomb.raw.gz" --max-mem 16M
kb=$(rss "$dlasim" run "$model" --input "$tmp/bomb.raw.gz" --max-mem 16M)
if [ "$kb" -lt 65536 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL gzip refusal took $kb KB"; fi
expect "gzip data inflating beyond what it states" 1 "inflates to more than the 16777216-byte limit" \
    "$dlasim" run "$model" --input "$tmp/liar.raw.gz" --max-mem 16M
expect "inputs as float32 beyond --max-mem" 1 "the inputs as float32 would pass the --max-mem limit" \
    "$dlasim" run "$model" --input "$tmp/bomb.raw.gz" --max-mem 100M
mkfifo "$tmp/fifo"
expect "a FIFO as --input is refused at once" 1 "a FIFO: dlasim reads inputs as whole regular files" \
    timeout 20 "$dlasim" run "$model" --input "$tmp/fifo"
expect "a FIFO as --calib" 1 "a FIFO" timeout 20 "$dlasim" compile "$model" --calib "$tmp/fifo"
expect "a FIFO as the model" 1 "a FIFO" timeout 20 "$dlasim" run "$tmp/fifo" --input "$tmp/img.pgm"
expect "/dev/zero as --input" 1 "a character device" timeout 20 "$dlasim" run "$model" --input /dev/zero
expect "PGM pixel above maxval (P5)" 1 "PGM pixel 0 is 255, above the maxval 100" \
    "$dlasim" run "$model" --input "$tmp/maxval.pgm"
expect "PGM pixel above maxval (P2)" 1 "above the maxval 100" "$dlasim" compile "$model" --calib "$tmp/maxval2.pgm"
expect "NaN in a raw float32 input" 1 "float32 value 100 (record 0) is NaN or infinite" \
    "$dlasim" run "$model" --input "$tmp/nan.f32"

# trace payloads: one 1 MiB surface file named on 100 lines
/usr/bin/python3 - "$tmp" <<'PY'
import sys
d = sys.argv[1]
row = " ".join("0x%02x" % (j & 255) for j in range(16))
with open(d + "/s.dat", "w") as f:
    f.write("{\n")
    for i in range(65536):
        f.write("{offset:0x%x, size:16, payload:%s} ,\n" % (i * 16, row))
    f.write("}\n")
with open(d + "/t.cfg", "w") as f:
    for i in range(100):
        f.write('mem_load(pri_mem, 0x80000000, "s.dat");\n')
PY
expect "trace payloads beyond --max-mem" 1 "would pass the host memory budget for trace payloads" \
    "$dlasim" trace --max-mem 16M "$tmp/t.cfg"
kb=$(rss "$dlasim" trace --max-mem 16M "$tmp/t.cfg")
if [ "$kb" -lt 65536 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL trace refusal took $kb KB"; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

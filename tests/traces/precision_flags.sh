#!/bin/sh
# Precision flags of `dlasim compile` and `dlasim run --report` (issue 17
# items 5 and 9), their figures recomputed by numpy from the model's
# weights and the raw outputs (an independent computation: numpy's own
# convolution, not dlasim's float reference):
#   - op_bias_collapse.onnx: compile flags big_bias_conv (bias vs input
#     step, channels the inputs move by less than one output step) and
#     not small_conv; the bias, the channel count and the swing equal
#     numpy's from the weights and the calibrated ranges;
#   - op_conv calibrated on inputs with one outlier: run --report flags
#     'conv' with the SQNR numpy computes from --out-raw / --float-raw, and
#     the input's own quantization SQNR numpy computes from the input step;
#   - op_conv calibrated on inputs like those it runs: no flag (compile and
#     run); --min-sqnr above its SQNR flags it; a bad --min-sqnr is refused.
set -u
dlasim=${DLASIM:-build/dlasim}
. tests/common/expect.sh
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { passed=$((passed + 1)); echo "PASS $1"; }
ko() { failed=$((failed + 1)); echo "FAIL $1"; }

# inputs: 8 calibration inputs in [0, 1), the same with one 60 (outlier), 8 others to run
$py - "$tmp" <<'PY'
import sys, numpy as np
d = sys.argv[1]
r = np.random.default_rng(1717)
c = r.random((8, 8, 12, 12), dtype=np.float32); c.tofile(d + "/cal.f32")
c[0, 0, 0, 0] = 60.0; c.tofile(d + "/cal_outlier.f32")
r.random((8, 8, 12, 12), dtype=np.float32).tofile(d + "/in.f32")
PY

# 1. the collapse, at compile time
"$dlasim" compile tests/models/op_bias_collapse.onnx --calib "$tmp/cal.f32" > "$tmp/c1.log" 2>&1
grep "\[big_bias_conv\] Conv: bias" "$tmp/c1.log" > "$tmp/flag1.txt" && ! grep -q "\[small_conv\] Conv:" "$tmp/c1.log" &&
    ok "compile flags big_bias_conv only" || ko "compile flags big_bias_conv only: $(cat "$tmp/c1.log")"
$py - "$tmp" tests/models/op_bias_collapse.onnx <<'PY' && ok "bias flag figures = numpy's" || ko "bias flag figures = numpy's"
import re, sys, numpy as np, onnx
from onnx import numpy_helper
d, path = sys.argv[1], sys.argv[2]
w = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in onnx.load(path).graph.initializer}
def conv(x, wt, b):  # 3x3, pad 1, stride 1, NCHW
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    H, W = x.shape[2], x.shape[3]
    win = np.stack([xp[:, :, i:i + H, j:j + W] for i in range(3) for j in range(3)], -1)
    return np.einsum("nchwk,ock->nohw", win, wt.reshape(wt.shape[0], wt.shape[1], 9)) + b[None, :, None, None]
x = np.fromfile(d + "/cal.f32", np.float32).reshape(8, 8, 12, 12).astype(np.float64)
a = conv(x, w["a.w"], w["a.b"]); y = conv(a, w["b.w"], w["b.b"])
s_in, s_out = np.abs(a).max() / 127, np.abs(y).max() / 127
swing = 127 * s_in * np.abs(w["b.w"]).reshape(16, -1).sum(1) / s_out
bias = np.abs(w["b.b"])
flat = (swing < 1) & (bias >= s_out)
k = np.argmax(np.where(flat, bias, -1))
line = open(d + "/flag1.txt").read()
m = re.search(r"bias ([0-9.e+-]+) vs input step ([0-9.e+-]+): the inputs move (\d+) of (\d+) channels "
              r"by at most ([0-9.e+-]+) output steps \(step ([0-9.e+-]+)\)", line)
assert m, line
got = [float(m.group(i)) for i in (1, 2, 5, 6)]
want = [bias[k], s_in, swing[k], s_out]
print("dlasim", got, int(m.group(3)), "numpy", want, int(flat.sum()))
assert int(m.group(3)) == flat.sum() and int(m.group(4)) == 16
for g, v in zip(got, want):  # printed with 2 or 3 significant digits
    assert abs(g - v) <= 0.051 * abs(v), (g, v)
PY

# 2. an outlier in the calibration set: SQNR flag with numpy's figures
"$dlasim" run tests/models/op_conv.onnx --calib "$tmp/cal_outlier.f32" --input "$tmp/in.f32" \
    --report --out-raw "$tmp/q.f32" --float-raw "$tmp/f.f32" > "$tmp/r2.log" 2>&1
grep "\[conv\] Conv: SQNR" "$tmp/r2.log" > "$tmp/flag2.txt" &&
    ok "run --report flags conv (outlier calibration)" || ko "run --report flags conv: $(tail -5 "$tmp/r2.log")"
$py - "$tmp" <<'PY' && ok "SQNR flag figures = numpy's" || ko "SQNR flag figures = numpy's"
import re, sys, numpy as np
d = sys.argv[1]
q = np.fromfile(d + "/q.f32", np.float32).astype(np.float64)
f = np.fromfile(d + "/f.f32", np.float32).astype(np.float64)
x = np.fromfile(d + "/in.f32", np.float32).astype(np.float64)
db = 10 * np.log10((f * f).sum() / ((q - f) ** 2).sum())
s = np.float32(60.0) / np.float32(127)                       # the calibrated input step
xq = np.clip(np.sign(x) * np.floor(np.abs(x) / s + 0.5), -128, 127) * s
db_in = 10 * np.log10((x * x).sum() / ((xq - x) ** 2).sum())
line = open(d + "/flag2.txt").read()
m = re.search(r"SQNR ([0-9.]+) dB, below 20.0 dB: the model input's own quantization has SQNR ([0-9.]+) dB", line)
assert m, line
print("dlasim", m.group(1), m.group(2), "numpy %.2f %.2f" % (db, db_in))
assert abs(float(m.group(1)) - db) <= 0.051 and abs(float(m.group(2)) - db_in) <= 0.051
PY

# 3. healthy: no flag; --min-sqnr
"$dlasim" compile tests/models/op_conv.onnx --calib "$tmp/cal.f32" > "$tmp/c3.log" 2>&1 &&
    grep -q "precision check: 4 calibration inputs" "$tmp/c3.log" && ! grep -q "precision flags" "$tmp/c3.log" &&
    ok "compile: healthy op_conv not flagged" || ko "compile: healthy op_conv not flagged: $(cat "$tmp/c3.log")"
"$dlasim" run tests/models/op_conv.onnx --calib "$tmp/cal.f32" --input "$tmp/in.f32" --report > "$tmp/r3.log" 2>&1 &&
    ! grep -q "precision flags" "$tmp/r3.log" && ok "run --report: healthy op_conv not flagged" ||
    ko "run --report: healthy op_conv not flagged: $(tail -5 "$tmp/r3.log")"
expect "--min-sqnr 60 flags the healthy model" 0 "[conv] Conv: SQNR" \
    "$dlasim" run tests/models/op_conv.onnx --calib "$tmp/cal.f32" --input "$tmp/in.f32" --report --min-sqnr 60
expect "--min-sqnr -3 refused" 2 "--min-sqnr" \
    "$dlasim" compile tests/models/op_conv.onnx --calib "$tmp/cal.f32" --min-sqnr -3
expect "--check 0: no device run" 0 "compiled for nv_small" \
    "$dlasim" compile tests/models/op_conv.onnx --calib "$tmp/cal.f32" --check 0
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/python3
"""Differential harness for the ONNX compiler (issue 22): random valid ONNX
graphs from the supported operator set, each compiled for every NVDLA
configuration and run on the simulated device; every result is checked
against two independent things:

  1. the INT8 output of `dlasim run MODEL.onnx` against a float reference
     computed here in numpy (ONNX operator definitions, not dlasim's float
     executor), by SQNR over all inputs: below --min-sqnr dB is a silent
     wrong answer;
  2. the `.nvdla` loadable written by `dlasim compile -o` and run by
     `dlasim run MODEL.nvdla` against the `.onnx` run, element by element:
     the loadable's int8 outputs times the output scale must equal the
     `.onnx` run's dequantized outputs exactly (one scale for the tensor).

A refusal (non-zero exit with a `dlasim:` message) is a clear error, not a
divergence; it is counted and reported.  A crash, a signal, a refusal
without a message, a low SQNR or one differing byte fails the case.

Graphs are built from fixed seeds (case i of seed S is the same graph on
every machine).  Calibration images always contain a 255 pixel, so the
input's quantization equals the loadable runtime's image conversion, and
the calibration set includes the test inputs, so no test value lies beyond
its calibrated range (that saturation would be the data's, not a bug).

usage: difftest.py DLASIM [--cases N] [--seed S] [--configs a,b] [--min-sqnr DB]
                          [--keep DIR] [--case I] [-v]
Prints one line per failing case and ends with "N passed, N failed".
Needs Debian's python3-onnx and python3-numpy (/usr/bin/python3).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

CONFIGS = ["nv_small", "nv_small_256", "nv_large"]


# ---- float reference (numpy, ONNX semantics) ------------------------------------

def conv2d(x, w, b, stride, pad, group):
    c, h, wd = x.shape
    k, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - kh) // stride + 1
    ow = (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((k, oh, ow), dtype=np.float64)
    kg = k // group
    for g in range(group):
        xs = xp[g * cg:(g + 1) * cg]
        for ky in range(kh):
            for kx in range(kw):
                patch = xs[:, ky:ky + stride * oh:stride, kx:kx + stride * ow:stride]
                wk = w[g * kg:(g + 1) * kg, :, ky, kx]  # kg x cg
                out[g * kg:(g + 1) * kg] += np.tensordot(wk, patch, axes=([1], [0]))
    return out + b[:, None, None]


def pool2d(x, k, s, pad, kind):
    c, h, w = x.shape
    fill = -np.inf if kind == "max" else 0.0
    xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad)), constant_values=fill)
    ones = np.pad(np.ones((h, w)), ((pad, pad), (pad, pad)))
    oh = (h + 2 * pad - k) // s + 1
    ow = (w + 2 * pad - k) // s + 1
    stack = np.stack([xp[:, ky:ky + s * oh:s, kx:kx + s * ow:s] for ky in range(k) for kx in range(k)])
    if kind == "max":
        return stack.max(axis=0)
    cnt = np.stack([ones[ky:ky + s * oh:s, kx:kx + s * ow:s] for ky in range(k) for kx in range(k)])
    return stack.sum(axis=0) / cnt.sum(axis=0)[None]  # count_include_pad = 0


def run_ref(ops, x):
    """ops: list of (kind, inputs, output, params); x: C,H,W float64."""
    v = {"x": x}
    for kind, ins, out, p in ops:
        a = v[ins[0]]
        if kind == "conv":
            r = conv2d(a, p["w"], p["b"], p["stride"], p["pad"], p["group"])
        elif kind == "relu":
            r = np.maximum(a, 0)
        elif kind == "clip":
            r = np.clip(a, p["lo"], p["hi"])
        elif kind == "leaky":
            r = np.where(a >= 0, a, a * p["alpha"])
        elif kind == "maxpool":
            r = pool2d(a, p["k"], p["s"], p["pad"], "max")
        elif kind == "avgpool":
            r = pool2d(a, p["k"], p["s"], p["pad"], "avg")
        elif kind == "add":
            r = a + v[ins[1]]
        elif kind == "mul":
            r = a * v[ins[1]]
        elif kind == "concat":
            r = np.concatenate([v[i] for i in ins], axis=0)
        elif kind == "bn":
            inv = p["scale"] / np.sqrt(p["var"] + p["eps"])
            r = (a - p["mean"][:, None, None]) * inv[:, None, None] + p["bias"][:, None, None]
        elif kind == "gap":
            r = a.mean(axis=(1, 2), keepdims=True)
        elif kind == "gemm":
            r = (p["w"] @ a.reshape(-1) + p["b"]).reshape(-1, 1, 1)
        else:
            raise ValueError(kind)
        v[out] = r
    return v[ops[-1][2]]


# ---- random graphs ----------------------------------------------------------------

class Builder:
    def __init__(self, rng):
        self.rng = rng
        self.ops = []      # reference program
        self.nodes = []    # ONNX nodes
        self.inits = []
        self.n = 0
        self.shape = {}    # tensor -> (C, H, W)

    def name(self, kind):
        self.n += 1
        return "%s%d" % (kind, self.n)

    def const(self, name, arr):
        self.inits.append(numpy_helper.from_array(arr.astype(np.float32), name))

    def conv(self, x, cout, k, stride, group=1):
        c, h, w = self.shape[x]
        pad = k // 2
        if h + 2 * pad < k or w + 2 * pad < k:
            k, pad = 1, 0
        y = self.name("conv")
        wt = (self.rng.standard_normal((cout, c // group, k, k)) *
              np.sqrt(2.0 / (c // group * k * k))).astype(np.float32)
        b = (self.rng.standard_normal(cout) * 0.1).astype(np.float32)
        self.const(y + ".w", wt)
        self.const(y + ".b", b)
        self.nodes.append(helper.make_node("Conv", [x, y + ".w", y + ".b"], [y], name=y,
                                           kernel_shape=[k, k], strides=[stride, stride],
                                           pads=[pad] * 4, group=group))
        self.ops.append(("conv", [x], y, dict(w=wt.astype(np.float64), b=b.astype(np.float64),
                                              stride=stride, pad=pad, group=group)))
        self.shape[y] = (cout, (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1)
        return y

    def unary(self, x, kind):
        y = self.name(kind)
        if kind == "relu":
            self.nodes.append(helper.make_node("Relu", [x], [y], name=y))
            p = {}
        elif kind == "clip":
            hi = float(self.rng.choice([1.0, 6.0, 0.5]))
            self.const(y + ".lo", np.array(0.0))
            self.const(y + ".hi", np.array(hi))
            self.nodes.append(helper.make_node("Clip", [x, y + ".lo", y + ".hi"], [y], name=y))
            p = dict(lo=0.0, hi=hi)
        elif kind == "leaky":
            alpha = float(self.rng.choice([0.1, 0.2]))
            self.nodes.append(helper.make_node("LeakyRelu", [x], [y], name=y, alpha=alpha))
            p = dict(alpha=np.float32(alpha).item())
        self.ops.append((kind, [x], y, p))
        self.shape[y] = self.shape[x]
        return y

    def pool(self, x, kind):
        c, h, w = self.shape[x]
        k, s, pad = [(2, 2, 0), (3, 1, 1), (3, 2, 1)][int(self.rng.integers(3))]
        if kind == "avgpool" and pad:
            k, s, pad = 2, 2, 0  # no uncounted padding (README)
        if h + 2 * pad < k or w + 2 * pad < k:
            return x
        y = self.name(kind)
        op = "MaxPool" if kind == "maxpool" else "AveragePool"
        self.nodes.append(helper.make_node(op, [x], [y], name=y, kernel_shape=[k, k],
                                           strides=[s, s], pads=[pad] * 4))
        self.ops.append((kind, [x], y, dict(k=k, s=s, pad=pad)))
        self.shape[y] = (c, (h + 2 * pad - k) // s + 1, (w + 2 * pad - k) // s + 1)
        return y

    def binary(self, a, b, kind):
        y = self.name(kind)
        self.nodes.append(helper.make_node("Add" if kind == "add" else "Mul", [a, b], [y], name=y))
        self.ops.append((kind, [a, b], y, {}))
        self.shape[y] = self.shape[a]
        return y

    def concat(self, xs):
        y = self.name("concat")
        self.nodes.append(helper.make_node("Concat", xs, [y], name=y, axis=1))
        self.ops.append(("concat", list(xs), y, {}))
        c = sum(self.shape[t][0] for t in xs)
        self.shape[y] = (c,) + self.shape[xs[0]][1:]
        return y

    def bn(self, x):
        c = self.shape[x][0]
        y = self.name("bn")
        p = dict(scale=self.rng.uniform(0.5, 1.5, c), bias=self.rng.standard_normal(c) * 0.1,
                 mean=self.rng.standard_normal(c) * 0.1, var=self.rng.uniform(0.5, 2.0, c), eps=1e-5)
        for k in ("scale", "bias", "mean", "var"):
            p[k] = p[k].astype(np.float32)
            self.const(y + "." + k, p[k])
            p[k] = p[k].astype(np.float64)
        self.nodes.append(helper.make_node("BatchNormalization",
                                           [x] + [y + "." + k for k in ("scale", "bias", "mean", "var")],
                                           [y], name=y, epsilon=1e-5))
        self.ops.append(("bn", [x], y, p))
        self.shape[y] = self.shape[x]
        return y

    def head(self, x, classes):
        c = self.shape[x][0]
        g = self.name("gap")
        self.nodes.append(helper.make_node("GlobalAveragePool", [x], [g], name=g))
        self.ops.append(("gap", [x], g, {}))
        f = self.name("flat")
        self.nodes.append(helper.make_node("Flatten", [g], [f], name=f, axis=1))
        y = self.name("gemm")
        wt = (self.rng.standard_normal((classes, c)) / np.sqrt(c)).astype(np.float32)
        b = (self.rng.standard_normal(classes) * 0.1).astype(np.float32)
        self.const(y + ".w", wt)
        self.const(y + ".b", b)
        self.nodes.append(helper.make_node("Gemm", [f, y + ".w", y + ".b"], [y], name=y, transB=1))
        self.ops.append(("gemm", [g], y, dict(w=wt.astype(np.float64), b=b.astype(np.float64))))
        self.shape[y] = (classes, 1, 1)
        return y


def random_graph(seed):
    """A random valid graph: a chain of Conv blocks with activations,
    pooling, residual Add/Mul, channel Concat, BatchNormalization, and a
    classifier head or a feature-map output."""
    rng = np.random.default_rng(seed)
    b = Builder(rng)
    h, w = int(rng.integers(6, 17)), int(rng.integers(6, 17))
    b.shape["x"] = (1, h, w)
    cur = b.conv("x", int(rng.choice([8, 16])), int(rng.choice([1, 3, 5])), 1)
    for _ in range(int(rng.integers(1, 6))):
        r = rng.random()
        c = b.shape[cur][0]
        if r < 0.25:
            k = int(rng.choice([1, 3]))
            s = int(rng.choice([1, 1, 2]))
            dw = rng.random() < 0.2
            cur = b.conv(cur, c if dw else int(rng.choice([8, 16, 24])), k, s, group=c if dw else 1)
            if rng.random() < 0.3:
                cur = b.bn(cur)
            if rng.random() < 0.7:
                cur = b.unary(cur, str(rng.choice(["relu", "relu", "clip", "leaky"])))
        elif r < 0.4:
            cur = b.pool(cur, str(rng.choice(["maxpool", "avgpool"])))
        elif r < 0.55:
            side = b.conv(cur, c, 1, 1)
            if rng.random() < 0.5:
                side = b.unary(side, "relu")
            cur = b.binary(cur, side, "add" if rng.random() < 0.8 else "mul")
            if rng.random() < 0.5:
                cur = b.unary(cur, "relu")
        elif r < 0.8:
            # Inception/MobileNet-like: a branch with its own activation, then Concat
            a = b.conv(cur, int(rng.choice([8, 16])), int(rng.choice([1, 3])), 1)
            if rng.random() < 0.7:
                a = b.unary(a, str(rng.choice(["relu", "clip", "clip"])))
            d = b.conv(a, int(rng.choice([8, 16])), 1, 1) if rng.random() < 0.5 else b.conv(cur, 8, 3, 1)
            cur = b.concat([d, a] if rng.random() < 0.5 else [a, d])
        else:
            cur = b.unary(cur, str(rng.choice(["relu", "clip", "leaky"])))
    if rng.random() < 0.5:
        cur = b.head(cur, int(rng.integers(4, 13)))
    return b, cur


def save_model(b, out, path):
    c, h, w = b.shape["x"]
    oc, oh, ow = b.shape[out]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, w])
    is_head = b.ops[-1][0] == "gemm"
    y = helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, oc] if is_head else [1, oc, oh, ow])
    g = helper.make_graph(b.nodes, "difftest", [x], [y], b.inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="dlasim-difftest")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


def write_pgm(path, px):
    h, w = px.shape
    with open(path, "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (w, h))
        f.write(px.astype(np.uint8).tobytes())


def images(rng, folder, n, h, w):
    """n images with smooth structure and noise; each has a 255 pixel and a 0
    pixel so the input range is exactly [0, 1] (the loadable's conversion)."""
    os.makedirs(folder, exist_ok=True)
    out = []
    for i in range(n):
        yy, xx = np.mgrid[0:h, 0:w]
        base = 128 + 100 * np.sin(xx * rng.uniform(0.2, 1.0) + rng.uniform(0, 6)) * \
            np.cos(yy * rng.uniform(0.2, 1.0))
        px = np.clip(base + rng.normal(0, 30, (h, w)), 0, 255).round()
        px.flat[int(rng.integers(h * w))] = 255
        px.flat[int(rng.integers(h * w))] = 0
        write_pgm(os.path.join(folder, "i%03d.pgm" % i), px)
        out.append(px)
    return out


# ---- running dlasim ---------------------------------------------------------------

def dlasim(exe, args, timeout=120):
    p = subprocess.run([exe] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def sqnr_db(ref, got):
    ref = np.asarray(ref, dtype=np.float64)
    err = np.asarray(got, dtype=np.float64) - ref
    ps, pn = float((ref ** 2).sum()), float((err ** 2).sum())
    if pn == 0:
        return float("inf")
    if ps == 0:
        return float("-inf")
    return 10 * np.log10(ps / pn)


def same_as_scaled(onnx_out, q):
    """True when onnx_out == q * s for one scale s (printed with %.6g)."""
    onnx_out = np.asarray(onnx_out, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    if onnx_out.shape != q.shape:
        return False, "%d values from .onnx, %d from .nvdla" % (onnx_out.size, q.size)
    j = int(np.argmax(np.abs(q)))
    if q[j] == 0:
        ok = bool(np.all(np.abs(onnx_out) < 1e-12))
        return ok, "" if ok else ".nvdla output is all 0, .onnx is not"
    s = onnx_out[j] / q[j]
    # the JSON holds 6 significant digits: onnx / s is within 0.002 of a
    # whole number of steps for |q| <= 128; that number must be q
    steps = onnx_out / s
    grid = np.round(steps)
    bad = (np.abs(steps - grid) > 0.01) | (grid != q)
    if bad.any():
        k = int(np.argmax(bad))
        return False, "%d of %d int8 outputs differ (first at %d: .onnx %.6g = %.3f steps, " \
            ".nvdla %d)" % (int(bad.sum()), q.size, k, onnx_out[k], steps[k], int(q[k]))
    return True, ""


def refusal_ok(rc, err):
    """A refusal must exit 1 or 2 with a dlasim message, never a signal or crash."""
    return rc in (1, 2) and "dlasim" in err and "Sanitizer" not in err and "runtime error" not in err


def run_case(exe, seed, configs, min_sqnr, work, stats, verbose):
    b, out = random_graph(seed)
    d = os.path.join(work, "case%d" % seed)
    os.makedirs(d, exist_ok=True)
    model = os.path.join(d, "m.onnx")
    save_model(b, out, model)
    c, h, w = b.shape["x"]
    rng = np.random.default_rng(seed + 7919)
    images(rng, os.path.join(d, "cal"), 6, h, w)
    inputs = images(rng, os.path.join(d, "in"), 4, h, w)
    ref = np.concatenate([run_ref(b.ops, (px / 255.0).astype(np.float32).astype(np.float64)[None]).reshape(-1)
                          for px in inputs])
    # calibrated on the inputs too: a test input beyond the calibrated range
    # saturates legitimately (min/max on a few images); here every low SQNR
    # is then the compiler's or the device's error, not the data's
    calib = ["--calib", os.path.join(d, "cal"), os.path.join(d, "in")]
    # a product of two int8 tensors carries each operand's step times the
    # other's value: its error follows the inputs' ranges, not the output's
    # (measured down to 16 dB on correct lowerings); the floor is lower there
    floor = min_sqnr - 8 if any(k == "mul" for k, _, _, _ in b.ops) else min_sqnr
    fails = []
    for cfg in configs:
        oj = os.path.join(d, cfg + ".json")
        rc, so, se = dlasim(exe, ["run", model, "--config", cfg] + calib +
                            ["--input", os.path.join(d, "in"), "--json", oj])
        if rc != 0:
            if refusal_ok(rc, se):
                stats["refused"] += 1
                if verbose:
                    print("  case %d %s: refused: %s" % (seed, cfg, se.strip().splitlines()[-1]))
                continue
            fails.append("%s: run .onnx exit %d without a clear message: %s" % (cfg, rc, se.strip()[-300:]))
            continue
        got = np.array(json.load(open(oj))["outputs"], dtype=np.float64).reshape(-1)
        if got.size != ref.size:
            fails.append("%s: %d outputs, the reference has %d" % (cfg, got.size, ref.size))
            continue
        db = sqnr_db(ref, got)
        stats["sqnr"].append(db)
        if not np.isfinite(got).all() or db < floor:
            fails.append("%s: INT8 vs float reference SQNR %.1f dB < %.1f dB (silent wrong answer)"
                         % (cfg, db, floor))
        nv = os.path.join(d, cfg + ".nvdla")
        rc, so, se = dlasim(exe, ["compile", model, "--config", cfg] + calib + ["-o", nv])
        if rc != 0:
            if refusal_ok(rc, se):
                stats["no_loadable"] += 1
                continue
            fails.append("%s: compile -o exit %d without a clear message: %s" % (cfg, rc, se.strip()[-300:]))
            continue
        nj = os.path.join(d, cfg + ".nvdla.json")
        rc, so, se = dlasim(exe, ["run", nv, "--config", cfg, "--input", os.path.join(d, "in"),
                                  "--json", nj])
        if rc != 0:
            fails.append("%s: run .nvdla exit %d: %s" % (cfg, rc, se.strip()[-300:]))
            continue
        q = np.array(json.load(open(nj))["outputs"], dtype=np.float64).reshape(-1)
        ok, why = same_as_scaled(got, q)
        stats["loadable_compared"] += 1
        if not ok:
            fails.append("%s: .nvdla run differs from the .onnx run: %s" % (cfg, why))
    return fails


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dlasim")
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--case", type=int, default=None, help="only this case number")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--min-sqnr", type=float, default=20.0)
    ap.add_argument("--keep", default=None, help="keep the cases in this folder")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    work = a.keep or tempfile.mkdtemp(prefix="difftest.")
    os.makedirs(work, exist_ok=True)
    configs = a.configs.split(",")
    stats = dict(refused=0, no_loadable=0, loadable_compared=0, sqnr=[])
    passed = failed = 0
    cases = [a.case] if a.case is not None else range(a.seed * 100000, a.seed * 100000 + a.cases)
    for seed in cases:
        try:
            fails = run_case(a.dlasim, seed, configs, a.min_sqnr, work, stats, a.v)
        except subprocess.TimeoutExpired as e:
            fails = ["timeout: %s" % e]
        if fails:
            failed += 1
            for f in fails:
                print("FAIL case %d: %s" % (seed, f))
            print("     reproduce: /usr/bin/python3 tools/difftest/difftest.py %s --case %d --keep DIR"
                  % (a.dlasim, seed))
        else:
            passed += 1
    s = np.array(stats["sqnr"])
    s = s[np.isfinite(s)]
    print("difftest: %d cases x %d configurations: %d INT8 runs vs float (SQNR min %.1f dB, "
          "median %.1f dB), %d loadables compared byte for byte, %d runs and %d loadables "
          "refused with a message" % (len(cases), len(configs), len(stats["sqnr"]),
                                      s.min() if s.size else 0, float(np.median(s)) if s.size else 0,
                                      stats["loadable_compared"], stats["refused"], stats["no_loadable"]))
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

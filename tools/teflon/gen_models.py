#!/usr/bin/python3
"""Generate the quantized TFLite models of the Teflon conformance sweep.

  gen_models.py OUTDIR [--subset quick|full] [--list]

One model per case, named after it (conv_u8_16x16x3_k32_3x3_s1_same.tflite);
weights, biases and quantization from a fixed seed per case (crc32 of the
name), so the files are the same on every run.  Families: Conv2D,
DepthwiseConv2D, FullyConnected, Add (of two convolutions, the form Mesa
fuses), one small MobileNet-like CNN; uint8, and int8 for some.  quick: the
make-test subset (one model per behaviour); full: the sweep of the README.
"""
import argparse
import math
import os
import sys
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tflite_writer as tw  # noqa: E402


def qparams(rng, signed):
    scale = float(rng.uniform(0.005, 0.05))
    zp = int(rng.integers(-20, 20)) if signed else int(rng.integers(100, 156))
    return scale, zp


def out_scale(s_in, s_w, taps):
    # acc ~ (uniform byte spread)^2 * sqrt(taps): +-3 sigma over the output's 256 steps
    return s_in * s_w * 74.0 * 74.0 * math.sqrt(taps) * 3.0 / 128.0


class Case:
    def __init__(self, name, signed):
        self.name = name
        self.signed = signed
        self.rng = np.random.default_rng(zlib.crc32(name.encode()))
        self.m = tw.Model()
        self.ttype = tw.INT8 if signed else tw.UINT8

    def weights(self, shape, zp):
        lo, hi = (-127, 128) if self.signed else (0, 256)
        w = self.rng.integers(lo, hi, size=shape)
        return w

    def conv(self, x, shape_in, s_in, k, kernel, stride, padding, depthwise=False, act=tw.ACT_NONE):
        h, w, c = shape_in
        s_w, zp_w = qparams(self.rng, self.signed)
        if self.signed:
            zp_w = 0  # TFLite int8 weights are symmetric
        mult = 1
        if depthwise:
            mult = k // c
            wshape = [1, kernel, kernel, k]
        else:
            wshape = [k, kernel, kernel, c]
        wt = self.m.tensor(f"w{len(self.m.tensors)}", wshape, self.ttype, s_w, zp_w,
                           self.weights(wshape, zp_w))
        bias = self.rng.integers(-2000, 2000, size=[k])
        bt = self.m.tensor(f"b{len(self.m.tensors)}", [k], tw.INT32, s_in * s_w, 0, bias)
        if padding == tw.SAME:
            oh, ow = -(-h // stride), -(-w // stride)
        else:
            oh, ow = (h - kernel) // stride + 1, (w - kernel) // stride + 1
        taps = kernel * kernel * (1 if depthwise else c)
        s_out = out_scale(s_in, s_w, taps)
        _, zp_out = qparams(self.rng, self.signed)
        y = self.m.tensor(f"t{len(self.m.tensors)}", [1, oh, ow, k], self.ttype, s_out, zp_out)
        if depthwise:
            self.m.op(tw.DEPTHWISE_CONV_2D, [x, wt, bt], [y], tw.OPT_DEPTHWISE,
                      [(0, "b", padding), (1, "i", stride), (2, "i", stride), (3, "i", mult),
                       (4, "b", act), (5, "i", 1), (6, "i", 1)])
        else:
            self.m.op(tw.CONV_2D, [x, wt, bt], [y], tw.OPT_CONV,
                      [(0, "b", padding), (1, "i", stride), (2, "i", stride), (3, "b", act),
                       (4, "i", 1), (5, "i", 1)])
        return y, (oh, ow, k), s_out

    def input(self, shape):
        s_in, zp_in = qparams(self.rng, self.signed)
        return self.m.tensor("input", [1] + list(shape), self.ttype, s_in, zp_in), s_in

    def add(self, a, b, shape, s_a, s_b):
        s_out = (s_a + s_b) * 1.2
        _, zp = qparams(self.rng, self.signed)
        y = self.m.tensor(f"t{len(self.m.tensors)}", [1] + list(shape), self.ttype, s_out, zp)
        self.m.op(tw.ADD, [a, b], [y], tw.OPT_ADD, [(0, "b", tw.ACT_NONE)])
        return y, s_out

    def fc(self, x, n_in, s_in, n_out):
        s_w, zp_w = qparams(self.rng, self.signed)
        if self.signed:
            zp_w = 0
        wt = self.m.tensor(f"w{len(self.m.tensors)}", [n_out, n_in], self.ttype, s_w, zp_w,
                           self.weights([n_out, n_in], zp_w))
        bt = self.m.tensor(f"b{len(self.m.tensors)}", [n_out], tw.INT32, s_in * s_w, 0,
                           self.rng.integers(-2000, 2000, size=[n_out]))
        s_out = out_scale(s_in, s_w, n_in)
        _, zp = qparams(self.rng, self.signed)
        y = self.m.tensor(f"t{len(self.m.tensors)}", [1, n_out], self.ttype, s_out, zp)
        self.m.op(tw.FULLY_CONNECTED, [x, wt, bt], [y], tw.OPT_FC,
                  [(0, "b", tw.ACT_NONE), (1, "b", 0), (2, "B", False)])
        return y

    def save(self, outdir, inputs, outputs):
        self.m.save(os.path.join(outdir, self.name + ".tflite"), inputs, outputs)


def pad_name(p):
    return "same" if p == tw.SAME else "valid"


def conv_case(outdir, signed, size, c, k, kernel, stride, padding, depthwise=False):
    fam = "dwconv" if depthwise else "conv"
    name = (f"{fam}_{'i8' if signed else 'u8'}_{size}x{size}x{c}_k{k}_{kernel}x{kernel}"
            f"_s{stride}_{pad_name(padding)}")
    cs = Case(name, signed)
    x, s_in = cs.input((size, size, c))
    y, _, _ = cs.conv(x, (size, size, c), s_in, k, kernel, stride, padding, depthwise)
    cs.save(outdir, [x], [y])
    return name


def add_case(outdir, signed, size, c, k):
    name = f"add_{'i8' if signed else 'u8'}_{size}x{size}x{c}_k{k}"
    cs = Case(name, signed)
    x, s_in = cs.input((size, size, c))
    a, shp, s_a = cs.conv(x, (size, size, c), s_in, k, 1, 1, tw.SAME)
    b, _, s_b = cs.conv(x, (size, size, c), s_in, k, 3, 1, tw.SAME)
    y, _ = cs.add(a, b, shp, s_a, s_b)
    cs.save(outdir, [x], [y])
    return name


def fc_case(outdir, signed, n_in, n_out):
    name = f"fc_{'i8' if signed else 'u8'}_{n_in}_to_{n_out}"
    cs = Case(name, signed)
    x, s_in = cs.input((n_in,))
    cs.m.tensors[x] = ("input", [1, n_in]) + cs.m.tensors[x][2:]
    y = cs.fc(x, n_in, s_in, n_out)
    cs.save(outdir, [x], [y])
    return name


def cnn_case(outdir, signed):
    """MobileNet-like: conv 3x3/2, then depthwise 3x3 + pointwise 1x1 blocks, one with stride 2."""
    name = f"cnn_{'i8' if signed else 'u8'}_mobilenet_like_32x32x3"
    cs = Case(name, signed)
    x, s = cs.input((32, 32, 3))
    t, shp, s = cs.conv(x, (32, 32, 3), s, 16, 3, 2, tw.SAME)
    t, shp, s = cs.conv(t, shp, s, 16, 3, 1, tw.SAME, depthwise=True)
    t, shp, s = cs.conv(t, shp, s, 32, 1, 1, tw.SAME)
    t, shp, s = cs.conv(t, shp, s, 32, 3, 2, tw.SAME, depthwise=True)
    t, shp, s = cs.conv(t, shp, s, 64, 1, 1, tw.SAME)
    t, shp, s = cs.conv(t, shp, s, 64, 3, 1, tw.SAME, depthwise=True)
    y, shp, s = cs.conv(t, shp, s, 32, 1, 1, tw.SAME)
    cs.save(outdir, [x], [y])
    return name


QUICK = [
    # (function, args): the make-test subset, one model per behaviour
    (conv_case, (False, 8, 1, 16, 3, 1, tw.SAME)),      # one-channel input (ARGB_IN=8)
    (conv_case, (False, 16, 1, 32, 3, 2, tw.VALID)),
    (conv_case, (False, 8, 3, 3, 3, 1, tw.SAME)),       # 3 kernels padded to 32 outputs
    (conv_case, (False, 16, 3, 32, 3, 2, tw.VALID)),
    (conv_case, (False, 8, 16, 16, 1, 1, tw.VALID)),
    (conv_case, (False, 16, 32, 48, 3, 1, tw.SAME)),    # 48 kernels padded to 64
    (conv_case, (False, 8, 120, 120, 3, 1, tw.SAME)),
    (conv_case, (False, 16, 16, 16, 5, 1, tw.SAME)),
    (conv_case, (False, 8, 16, 16, 3, 1, tw.SAME, True)),
    (conv_case, (False, 16, 32, 32, 3, 1, tw.SAME, True)),
    (conv_case, (False, 16, 32, 32, 3, 2, tw.VALID, True)),
    (cnn_case, (False,)),
    (conv_case, (True, 8, 32, 32, 3, 1, tw.SAME)),      # int8: a Mesa limitation (known)
    (add_case, (False, 8, 32, 32)),                     # Add: a Mesa limitation (known)
    (fc_case, (False, 120, 32)),                        # not delegated by Mesa (known)
]


def cases(subset):
    """(function, args) of every case of the subset."""
    if subset == "quick":
        return QUICK
    out = []
    big = 56 * 56 * 32  # bounds the qemu time of the sweep
    for size in [3, 8, 16, 32, 56, 112]:
        for c in [1, 3, 16, 32, 120, 256]:
            for k in sorted({32 if c == 1 else c, 48}):
                if size * size * max(c, k) > big:
                    continue
                for kernel, stride, pad in [(1, 1, tw.VALID), (3, 1, tw.SAME), (3, 2, tw.VALID),
                                            (5, 1, tw.SAME)]:
                    if kernel <= size:
                        out.append((conv_case, (False, size, c, k, kernel, stride, pad)))
        for c in [3, 16, 32, 120, 256]:
            if size * size * c <= big:
                for kernel, stride, pad in [(3, 1, tw.SAME), (3, 2, tw.VALID)]:
                    if kernel <= size:
                        out.append((conv_case, (False, size, c, c, kernel, stride, pad, True)))
        if size in (8, 16):
            for c in [16, 32, 120]:
                out.append((add_case, (False, size, c, c)))
            for c in [3, 16, 32]:
                out.append((conv_case, (True, size, c, c, 3, 1, tw.SAME)))
                out.append((conv_case, (True, size, c, c, 3, 1, tw.SAME, True)))
    for signed in (False, True):
        for n_in, n_out in [(16, 16), (120, 32), (256, 10)]:
            out.append((fc_case, (signed, n_in, n_out)))
        out.append((cnn_case, (signed,)))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--subset", choices=["quick", "full"], default="quick")
    ap.add_argument("--only", help="write only the cases whose name contains this")
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    for fn, args in cases(a.subset):
        name = fn(a.outdir, *args)
        if a.only and a.only not in name:
            os.remove(os.path.join(a.outdir, name + ".tflite"))
            continue
        print(name)


if __name__ == "__main__":
    main()

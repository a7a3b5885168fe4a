#!/usr/bin/python3
"""Generate the quantized TFLite models of the Teflon conformance sweep.

  gen_models.py OUTDIR [--subset quick|full] [--list]

One model per case, named after it (conv_u8_16x16x3_k32_3x3_s1_same.tflite);
weights, biases and quantization from a fixed seed per case, so the files are
the same on every run.  Families: Conv2D, DepthwiseConv2D, FullyConnected,
Add (of two convolutions, the form Mesa fuses), one small MobileNet-like CNN;
each in uint8 and int8.
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
    """MobileNet-like: conv 3x3/2, depthwise 3x3 + pointwise blocks, a residual Add."""
    name = f"cnn_{'i8' if signed else 'u8'}_mobilenet_like_32x32x3"
    cs = Case(name, signed)
    x, s = cs.input((32, 32, 3))
    t, shp, s = cs.conv(x, (32, 32, 3), s, 16, 3, 2, tw.SAME, act=tw.ACT_RELU6)
    t, shp, s = cs.conv(t, shp, s, 16, 3, 1, tw.SAME, depthwise=True, act=tw.ACT_RELU6)
    t, shp, s = cs.conv(t, shp, s, 32, 1, 1, tw.SAME)
    t, shp, s = cs.conv(t, shp, s, 32, 3, 2, tw.SAME, depthwise=True, act=tw.ACT_RELU6)
    t, shp, s = cs.conv(t, shp, s, 64, 1, 1, tw.SAME)
    a, shp2, s_a = cs.conv(t, shp, s, 64, 1, 1, tw.SAME)
    b, _, s_b = cs.conv(t, shp, s, 64, 3, 1, tw.SAME, depthwise=True)
    y, _ = cs.add(a, b, shp2, s_a, s_b)
    cs.save(outdir, [x], [y])
    return name


def cases(subset):
    """(function, args) of every case of the subset."""
    out = []
    sizes = [3, 8, 16, 32, 56, 112] if subset == "full" else [8, 16]
    chans = [1, 3, 16, 32, 120, 256] if subset == "full" else [1, 3, 16, 32, 120]
    signs = [False, True]
    for signed in signs:
        for size in sizes:
            for c in chans:
                for k in (chans if subset == "full" else [c if c > 1 else 16]):
                    if size * size * max(c, k) > 112 * 112 * 32:
                        continue  # keeps the sweep's qemu time bounded
                    for kernel, stride, pad in ([(1, 1, tw.VALID), (3, 1, tw.SAME), (3, 2, tw.VALID),
                                                 (5, 1, tw.SAME)] if subset == "full"
                                                else [(3, 1, tw.SAME)] if c != 16 else
                                                [(1, 1, tw.VALID), (3, 2, tw.VALID)]):
                        if kernel > size:
                            continue
                        out.append((conv_case, (signed, size, c, k, kernel, stride, pad)))
            for c in ([3, 16, 32, 120, 256] if subset == "full" else [16, 32]):
                if size * size * c > 112 * 112 * 32:
                    continue
                for kernel, stride, pad in ([(3, 1, tw.SAME), (3, 2, tw.VALID)] if subset == "full"
                                            else [(3, 1, tw.SAME)]):
                    if kernel <= size:
                        out.append((conv_case, (signed, size, c, c, kernel, stride, pad, True)))
            for c in ([16, 32, 120] if subset == "full" else [32]):
                out.append((add_case, (signed, size, c, c)))
        for n_in, n_out in ([(16, 16), (120, 32), (256, 10), (1024, 100)] if subset == "full"
                            else [(120, 32)]):
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

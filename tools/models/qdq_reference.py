#!/usr/bin/python3
"""An independent numpy reference of a pre-quantized (QDQ) ONNX model, with
selectable requantization semantics (docs/compiler.md "Pre-quantized
models", "Is the criterion reachable").

    /usr/bin/python3 tools/models/qdq_reference.py DLASIM ORT_DIR WORKDIR MODEL.onnx
                     [COUNT [CONFIG]] [--layers] [--min-dlasim-exact=PERCENT]

Runs COUNT seeded inputs (uniform [0, 1), as tools/models/qdq_grade.py) through
  ort    ONNX Runtime's arithmetic as its CPU provider executes this graph
         after its own graph optimizations (ORT 1.30, checked by saving the
         optimized model): a Conv whose only consumer is a QuantizeLinear
         becomes QLinearConv (int32 sum, then float32(sum + bias) x float32
         multiplier (s_x x s_w) / s_y, round half to even), Gemm -> QGemm
         (the same), GlobalAveragePool -> QLinearGlobalAveragePool (sum,
         float32 multiplier s_x / (s_y x n), round half to even); Conv + Relu
         (activation zero point 128, so ORT keeps the Relu) becomes a float32
         FusedConv on the dequantized codes (then QuantizeLinear: float32
         division by the scale, round half to even); Add, Relu and the other
         operators dequantize, compute in float32 and quantize the same way;
  away   exact integer/rational arithmetic, every requantization rounded
         half away from zero once (an NVDLA SDP with infinitely precise
         multipliers: its shifts round half away from zero);
  even   the same exact arithmetic, rounded half to even.
A convolution's or Gemm's exact modes use the multiplier ORT and dlasim's
compiler both target, M = float32(float32(s_x x s_w[k]) / s_y) (a float32
value, an exact rational), on the exact int32 sum plus the int32 bias; Add,
pooling and rescaling use the exact scales (a x s_a + b x s_b) / s_y.
Prints, for each reference, its agreement with ONNX Runtime's codes and with
dlasim's (`dlasim run --out-raw`, as qdq_grade.py): share within +-1,
identical, top-1.  --layers also feeds each requantization ORT's own input
codes (cut models, one ORT run per quantized tensor) and counts per layer
where each reference's output differs from ORT's: the per-layer seeds.
--min-dlasim-exact=PERCENT: "N passed, N failed" on dlasim's codes being
identical to the `away` reference on at least that share (the test of
tests/traces/onnx_qdq.sh).
"""
import collections
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qdq_grade  # noqa: E402  (the same inputs, ORT runner and output conventions)

F32 = np.float32


# --- exact rounding on integers --------------------------------------------

def dyadic(scale):
    """A float32 value as m x 2^e, m an integer (exact)."""
    f, e = np.frexp(np.float64(F32(scale)))
    return int(f * (1 << 24)), int(e) - 24


def round_ratio(num, den, mode):
    """round(num / den), integers (den > 0), half away from zero or to even."""
    num = np.asarray(num, dtype=object if isinstance(den, int) and den >= 1 << 62 else np.int64)
    a = np.abs(num)
    q, r = a // den, a % den
    if mode == "away":
        q = q + (2 * r >= den)
    else:
        q = q + ((2 * r > den) | ((2 * r == den) & (q % 2 == 1)))
    return np.where(num < 0, -q, q).astype(np.int64)


def scaled_ratio(num, exp, den, mode):
    """round(num x 2^exp / den) for integer num, den."""
    if exp >= 0:
        return round_ratio(np.asarray(num, np.int64) << exp, den, mode)
    return round_ratio(num, den << -exp, mode)


def rne(x):
    """float32 -> integer, round half to even (x86 cvtps2dq, ARM fcvtns)."""
    return np.rint(x).astype(np.int64)


# --- the graph --------------------------------------------------------------

class Codes:
    """A quantized tensor: int8-domain codes c = q - zero point, value c x scale."""

    def __init__(self, c, scale, lo, hi):
        self.c, self.scale, self.lo, self.hi = c, F32(scale), lo, hi


class Lin:
    """A float tensor not yet quantized: kind + what each mode needs."""

    def __init__(self, kind, **kw):
        self.kind, self.relu = kind, False
        self.__dict__.update(kw)


def attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def im2col(x, kh, kw, sh, sw, pads):
    """(C, H, W) -> (OH x OW, C x KH x KW), zero padding (code 0 = value 0)."""
    x = np.pad(x, ((0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    win = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(1, 2))[:, ::sh, ::sw]
    c, oh, ow = win.shape[:3]
    return win.transpose(1, 2, 0, 3, 4).reshape(oh * ow, c * kh * kw), oh, ow


def conv_nchw(x, w, a, dtype):
    """Convolution of x (N, C, H, W) with w (K, C, KH, KW) as im2col matmuls in dtype."""
    if a.get("group", 1) != 1:
        raise ValueError("qdq_reference: grouped convolutions are not modelled")
    kh, kw = w.shape[2:]
    sh, sw = a.get("strides", [1, 1])
    pads = a.get("pads", [0, 0, 0, 0])
    wm = w.reshape(w.shape[0], -1).T.astype(dtype)
    outs = []
    for img in x:
        cols, oh, ow = im2col(img.astype(dtype), kh, kw, sh, sw, pads)
        outs.append((cols @ wm).T.reshape(w.shape[0], oh, ow))
    return np.stack(outs)


class Reference:
    def __init__(self, model, mode):
        self.m, self.mode = model, mode
        self.consts = qdq_grade.consts(model)
        for n in model.graph.node:  # torch's bias zero points: Cast(ConstantOfShape)
            if n.op_type == "ConstantOfShape" and n.input[0] in self.consts:
                fill = numpy_helper.to_array(n.attribute[0].t) if n.attribute else np.float32(0)
                self.consts[n.output[0]] = np.full(self.consts[n.input[0]], fill.reshape(-1)[0])
            elif n.op_type == "Cast" and n.input[0] in self.consts:
                to = onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[attrs(n)["to"]]
                self.consts[n.output[0]] = self.consts[n.input[0]].astype(to)
        self.consumers = collections.defaultdict(list)
        for n in model.graph.node:
            for i in n.input:
                self.consumers[i].append(n)

    def const(self, name):
        return self.consts[name]

    def dq_const(self, node):
        """A DequantizeLinear of constants: (codes, per-channel scale)."""
        q = self.const(node.input[0]).astype(np.int64)
        zp = self.const(node.input[2]).astype(np.int64) if len(node.input) > 2 else 0
        return q - (zp if np.ndim(zp) == 0 else zp.reshape(-1, *[1] * (q.ndim - 1))), \
            np.atleast_1d(self.const(node.input[1]).astype(F32))

    def only_quantized(self, name):
        """Read only by a QuantizeLinear, directly or through a Relu that the
        QuantizeLinear's clamp makes redundant (zero point = the type's
        minimum: ORT then drops the Relu and fuses the integer operator)."""
        cons = self.consumers[name]
        if len(cons) == 1 and cons[0].op_type == "Relu":
            after = self.consumers[cons[0].output[0]]
            if len(after) == 1 and after[0].op_type == "QuantizeLinear" and len(after[0].input) > 2:
                zp = self.const(after[0].input[2])
                return int(zp) == np.iinfo(zp.dtype).min
            return False
        return len(cons) == 1 and cons[0].op_type == "QuantizeLinear"

    # each op: inputs (values) -> value
    def linear(self, node, v):
        """Conv or Gemm on dequantized codes: keep the exact sum and the float32 operands."""
        x = v[node.input[0]]
        wdq = self.producer[node.input[1]]
        wc, sw = self.dq_const(wdq)
        bias, sb = np.zeros(wc.shape[0], np.int64), np.zeros(wc.shape[0], F32)
        if len(node.input) > 2 and node.input[2]:
            bc, sb = self.dq_const(self.producer[node.input[2]])
            bias = bc.reshape(-1)
            sb = np.broadcast_to(sb, bias.shape).astype(F32)
        sw = np.broadcast_to(sw, (wc.shape[0],)).astype(F32)
        a = attrs(node)
        if node.op_type == "Conv":
            acc = conv_nchw(x.c, wc, a, np.float64)
            fxy = lambda xf, wf: conv_nchw(xf, wf, a, F32)  # noqa: E731
            chan = (1, -1, 1, 1)
        else:
            wm = wc if a.get("transB", 0) else wc.T  # (out, in)
            acc = x.c.reshape(x.c.shape[0], -1).astype(np.float64) @ wm.T.astype(np.float64)
            fxy = lambda xf, wf: xf.reshape(xf.shape[0], -1) @ wf.T  # noqa: E731
            wc, chan = wm, (1, -1)
        return Lin("linear", acc=acc.astype(np.int64), bias=bias, x=x, wc=wc, sw=sw, sb=sb,
                   fxy=fxy, chan=chan, fused=self.only_quantized(node.output[0]))

    def add(self, node, v):
        return Lin("sum", terms=[v[i] for i in node.input], fused=self.only_quantized(node.output[0]))

    def gap(self, node, v):
        x = v[node.input[0]]
        s = x.c.sum(axis=(2, 3), keepdims=True)
        return Lin("mean", s=s, n=x.c.shape[2] * x.c.shape[3], x=x)

    def avgpool(self, node, v):
        x, a = v[node.input[0]], attrs(node)
        kh, kw = a["kernel_shape"]
        sh, sw = a.get("strides", [1, 1])
        if any(a.get("pads", [0])) or a.get("ceil_mode", 0):
            raise ValueError("qdq_reference: padded AveragePool is not modelled")
        win = np.lib.stride_tricks.sliding_window_view(x.c, (kh, kw), axis=(2, 3))[:, :, ::sh, ::sw]
        return Lin("mean", s=win.sum(axis=(4, 5)), n=kh * kw, x=x)

    def maxpool(self, node, v):
        x, a = v[node.input[0]], attrs(node)
        kh, kw = a["kernel_shape"]
        sh, sw = a.get("strides", [1, 1])
        p = a.get("pads", [0, 0, 0, 0])
        xp = np.pad(x.c, ((0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])), constant_values=-(1 << 40))
        win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))[:, :, ::sh, ::sw]
        return Codes(win.max(axis=(4, 5)), x.scale, x.lo, x.hi)

    # requantization, per mode
    def quantize(self, val, scale, lo, hi):
        if isinstance(val, Codes):
            val = Lin("sum", terms=[val])
        c = getattr(self, "q_" + val.kind)(val, F32(scale))
        if val.relu:
            c = np.maximum(c, 0)
        return np.clip(c, lo, hi)

    def q_linear(self, val, sy):
        x = val.x
        mult = ((x.scale * val.sw) / sy).astype(F32)  # ORT's QLinearConv / QGemm multiplier
        if self.mode == "ort" and not val.fused:
            xf = x.c.astype(F32) * x.scale
            wf = (val.wc.astype(F32) * val.sw.reshape(-1, *[1] * (val.wc.ndim - 1))).astype(F32)
            y = val.fxy(xf, wf) + (val.bias.astype(F32) * val.sb).reshape(val.chan)
            if val.relu:
                y = np.maximum(y, F32(0))
            return rne(np.clip(y.astype(F32) / sy, -1e9, 1e9))
        t = val.acc + val.bias.reshape(val.chan)
        if self.mode == "ort":
            return rne(np.clip(t.astype(F32) * mult.reshape(val.chan), -1e9, 1e9))
        out = np.empty_like(t)
        for k, mk in enumerate(mult):
            m, e = dyadic(mk)
            sl = (slice(None), k)
            out[sl] = scaled_ratio(t[sl] * m, e, 1, self.mode)
        return out

    def q_sum(self, val, sy):
        if self.mode == "ort" and getattr(val, "fused", False) and len(val.terms) == 2:
            # QLinearAdd (MLAS): each operand's code times its float32 ratio to the output
            # scale, summed in float32, round half to even
            y = sum(t.c.astype(F32) * F32(t.scale / F32(sy)) for t in val.terms).astype(F32)
            return rne(np.clip(y, -1e9, 1e9))
        if self.mode == "ort":
            y = sum(t.c.astype(F32) * t.scale for t in val.terms).astype(F32)
            if val.relu:
                y = np.maximum(y, F32(0))
            return rne(np.clip(y / sy, -1e9, 1e9))
        ds = [dyadic(t.scale) for t in val.terms]
        e0 = min(e for _, e in ds)
        num = sum(t.c * (m << (e - e0)) for t, (m, e) in zip(val.terms, ds))
        my, ey = dyadic(sy)
        return scaled_ratio(num, e0 - ey, my, self.mode)

    def q_mean(self, val, sy):
        x = val.x
        if self.mode == "ort":  # MLAS QLinear(Global)AveragePool: sum x float32 multiplier
            mult = F32(x.scale / F32(sy * F32(val.n)))
            return rne(np.clip(val.s.astype(F32) * mult, -1e9, 1e9))
        mx, ex = dyadic(x.scale)
        my, ey = dyadic(sy)
        return scaled_ratio(val.s * mx, ex - ey, my * val.n, self.mode)

    def run(self, x, forced=None):
        """All quantized tensors (name -> int8-domain codes) of one batch x.
        forced: name -> codes replacing this reference's own (teacher forcing)."""
        self.producer = {o: n for n in self.m.graph.node for o in n.output}
        v, out = {}, {}
        inp = qdq_grade.input_shape(self.m)
        v[self.m.graph.input[0].name] = x.reshape([x.shape[0]] + inp[1:])
        ops = {"Conv": self.linear, "Gemm": self.linear, "Add": self.add,
               "GlobalAveragePool": self.gap, "AveragePool": self.avgpool,
               "MaxPool": self.maxpool}
        for n in self.m.graph.node:
            t = n.op_type
            if t in ("Constant", "ConstantOfShape") or all(i in self.consts or not i for i in n.input):
                continue
            if t == "QuantizeLinear":
                sy = self.const(n.input[1])
                zp = self.const(n.input[2]) if len(n.input) > 2 else np.uint8(0)
                info = np.iinfo(zp.dtype)
                lo, hi = info.min - int(zp), info.max - int(zp)
                src = v[n.input[0]]
                if isinstance(src, np.ndarray):  # the float input
                    c = np.clip(rne(np.clip(src.astype(F32) / F32(sy), -1e9, 1e9)), lo, hi)
                else:
                    c = self.quantize(src, sy, lo, hi)
                out[n.output[0]] = c
                if forced is not None and n.output[0] in forced:
                    c = forced[n.output[0]].reshape(c.shape)
                v[n.output[0]] = Codes(c, sy, lo, hi)
            elif t in ("Cast", "Identity"):
                v[n.output[0]] = v[n.input[0]]
                if n.input[0] in out:
                    out[n.output[0]] = out[n.input[0]]
            elif t == "DequantizeLinear":
                # the codes are zero-point free already (dlasim refuses a
                # DequantizeLinear whose zero point differs from its QuantizeLinear's)
                src = v[n.input[0]]
                v[n.output[0]] = Codes(src.c, self.const(n.input[1]), src.lo, src.hi)
            elif t == "Relu":
                src = v[n.input[0]]
                if isinstance(src, Codes):
                    src = Lin("sum", terms=[src])
                src.relu = True
                v[n.output[0]] = src
            elif t == "Pad":  # constant 0 (= code 0 without its zero point)
                src, p = v[n.input[0]], self.const(n.input[1]).astype(int)
                if attrs(n).get("mode", b"constant") != b"constant" or \
                        (len(n.input) > 2 and n.input[2] and self.const(n.input[2]) != 0):
                    raise ValueError("qdq_reference: node '%s' (Pad): only zero padding" % n.name)
                r = len(p) // 2
                v[n.output[0]] = Codes(np.pad(src.c, list(zip(p[:r], p[r:]))), src.scale,
                                       src.lo, src.hi)
            elif t in ("Flatten", "Reshape"):
                src = v[n.input[0]]
                v[n.output[0]] = Codes(src.c.reshape(src.c.shape[0], -1), src.scale, src.lo, src.hi)
            elif t in ops:
                v[n.output[0]] = ops[t](n, v)
            else:
                raise ValueError("qdq_reference: node '%s' (%s) is not modelled" % (n.name, t))
        return out


# --- comparisons ----------------------------------------------------------

def agreement(a, b, count):
    d = a - b
    a2, b2 = a.reshape(count, -1), b.reshape(count, -1)
    return (100 * float(np.mean(np.abs(d) <= 1)), 100 * float(np.mean(d == 0)),
            int(np.sum(np.argmax(a2, 1) == np.argmax(b2, 1))), int(np.max(np.abs(d))))


def quantized_names(model):
    return [n.output[0] for n in model.graph.node if n.op_type == "QuantizeLinear"]


def ort_all(model_path, names, model, xp, count, work, ort_dir):
    """ORT's codes of every quantized tensor (one cut model each)."""
    zps = {n.output[0]: (qdq_grade.consts(model).get(n.input[2], np.uint8(0)))
           for n in model.graph.node if n.op_type == "QuantizeLinear"}
    return {nm: qdq_grade.ort_codes(model_path, nm, zps[nm].dtype, xp, count, work, ort_dir)
            - int(zps[nm]) for nm in names}


def main():
    layers = "--layers" in sys.argv
    min_exact = None
    args = []
    for a in sys.argv[1:]:
        if a.startswith("--min-dlasim-exact="):
            min_exact = float(a.split("=", 1)[1])
        elif a != "--layers":
            args.append(a)
    dlasim, ort_dir, work, model_path = args[:4]
    count = int(args[4]) if len(args) > 4 else 8
    config = args[5] if len(args) > 5 else "nv_small"
    os.makedirs(work, exist_ok=True)
    model = onnx.load(model_path)
    codes_name, scale, zp, dtype = qdq_grade.final_codes(model)
    xp, x = qdq_grade.write_inputs(model, count, work)
    got = {"dlasim": qdq_grade.dlasim_codes(dlasim, model_path, xp, work, config, scale,
                                            "qdq_reference")}
    if ort_dir != "-":
        got["ORT"] = qdq_grade.ort_codes(model_path, codes_name, dtype, xp, count, work, ort_dir) - zp
    refs = {m: Reference(model, m) for m in ("ort", "away", "even")}
    for m, ref in refs.items():
        got["ref-" + m] = ref.run(x)[codes_name].reshape(-1)
    name = os.path.basename(model_path)
    print("%s: %d inputs x %d int8 outputs" % (name, count, got["dlasim"].size // count))
    print("%-10s %-10s %9s %9s %7s %5s" % ("codes", "against", "within±1", "exact", "top-1", "max"))
    pairs = [(a, b) for b in ("ORT", "dlasim") for a in got if a != b and b in got
             and not (b == "dlasim" and a == "ORT")]
    for a, b in pairs:
        w, e, t, mx = agreement(got[a], got[b], count)
        print("%-10s %-10s %8.2f%% %8.3f%% %4d/%-2d %5d" % (a, b, w, e, t, count, mx))
    if layers and "ORT" in got:
        names = quantized_names(model)
        ort = ort_all(model_path, names, model, xp, count, work, ort_dir)
        print("per quantized tensor, ORT's inputs fed (teacher forcing): outputs differing from ORT")
        print("%-48s %9s %9s %9s %9s" % ("tensor", "outputs", "ref-ort", "ref-away", "ref-even"))
        res = {m: ref.run(x, forced=ort) for m, ref in refs.items()}
        for nm in names:
            o = ort[nm]
            print("%-48s %9d %9d %9d %9d" % (nm[-48:], o.size, *[
                int(np.sum(res[m][nm].reshape(-1) != o)) for m in refs]))
    if min_exact is not None:
        e = agreement(got["dlasim"], got["ref-away"], count)[1]
        ok = e >= min_exact
        print("%s dlasim's codes identical to the exact half-away reference on %.3f %% (>= %g %%)"
              % ("PASS" if ok else "FAIL", e, min_exact))
        print("%d passed, %d failed" % (ok, 1 - ok))
        return 0 if ok else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

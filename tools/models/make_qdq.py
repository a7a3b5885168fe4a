#!/usr/bin/python3
"""INT8 QDQ version of a float ONNX model, for ONNX Runtime's int8 kernels in
`make bench` (bench/peer_bench.sh).  ONNX Runtime's own quantize_static is
Python-only and needs PyPI; this uses Debian's python3-onnx and numpy only.

    make_qdq.py expose MODEL.onnx ALLOUT.onnx
        BatchNormalization folded into the preceding Conv; every tensor a
        node computes also becomes a graph output (for the range pass).
    make_qdq.py qdq MODEL.onnx RANGES.json OUT.onnx
        RANGES.json: {"tensor": [min, max], ...} measured on calibration
        inputs (bench/ort_bench.js --ranges over ALLOUT.onnx).  Writes the
        folded model with QuantizeLinear/DequantizeLinear pairs on every
        activation (uint8, asymmetric, the range measured), weights of Conv
        and Gemm per output channel int8 symmetric, biases int32 at
        input scale x weight scale: the QDQ form ONNX Runtime fuses into
        QLinearConv, QGemm, QLinearAdd, ...
"""
import json
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def fold_bn(model):
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    producer = {o: n for n in g.node for o in n.output}
    readers = {}
    for n in g.node:
        for i in n.input:
            readers.setdefault(i, []).append(n)
    drop, rename = [], {}
    for bn in g.node:
        if bn.op_type != "BatchNormalization":
            continue
        conv = producer.get(bn.input[0])
        if conv is None or conv.op_type != "Conv" or len(readers.get(conv.output[0], [])) != 1:
            continue
        gamma, beta, mean, var = (numpy_helper.to_array(inits[x]) for x in bn.input[1:5])
        eps = attr(bn, "epsilon", 1e-5)
        k = gamma / np.sqrt(var + eps)
        w = numpy_helper.to_array(inits[conv.input[1]])
        b = numpy_helper.to_array(inits[conv.input[2]]) if len(conv.input) > 2 else np.zeros(w.shape[0])
        inits[conv.input[1]].CopyFrom(numpy_helper.from_array((w * k[:, None, None, None]).astype(np.float32),
                                                              conv.input[1]))
        bname = conv.output[0] + ".bias"
        g.initializer.append(numpy_helper.from_array(((b - mean) * k + beta).astype(np.float32), bname))
        del conv.input[2:]
        conv.input.append(bname)
        rename[bn.output[0]] = conv.output[0]
        drop.append(bn)
    for n in drop:
        g.node.remove(n)
    for n in g.node:
        for i, x in enumerate(n.input):
            if x in rename:
                n.input[i] = rename[x]
    for o in g.output:
        if o.name in rename:
            o.name = rename[o.name]
    used = {i for n in g.node for i in n.input}
    for t in [t for t in g.initializer if t.name not in used]:
        g.initializer.remove(t)
    return model


def expose(src, dst):
    model = fold_bn(onnx.load(src))
    g = model.graph
    have = {o.name for o in g.output}
    for n in g.node:
        for o in n.output:
            if o not in have:
                g.output.append(helper.make_tensor_value_info(o, TensorProto.FLOAT, None))
    onnx.save(model, dst)


def act_qparams(lo, hi):
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    scale = (hi - lo) / 255.0 if hi > lo else 1.0
    zp = int(round(-lo / scale))
    return np.float32(scale), np.uint8(min(max(zp, 0), 255))


def fold_activations(g, ranges):
    """Relu / Clip right after a Conv or Add (its only reader) is dropped: the
    output's QuantizeLinear, with the activation's range (from 0), clamps
    the same way (what quantize_static does, and the form ONNX Runtime fuses)."""
    producer = {o: n for n in g.node for o in n.output}
    readers = {}
    for n in g.node:
        for i in n.input:
            readers.setdefault(i, []).append(n)
    outputs = {o.name for o in g.output}
    for act in [n for n in g.node if n.op_type in ("Relu", "Clip")]:
        src = producer.get(act.input[0])
        if (src is None or src.op_type not in ("Conv", "Add") or len(readers[act.input[0]]) != 1
                or act.output[0] in outputs or act.output[0] not in ranges):
            continue
        g.node.remove(act)
        src.output[0] = act.output[0]


def qdq(src, ranges_path, dst):
    model = fold_bn(onnx.load(src))
    ranges = json.load(open(ranges_path))
    g = model.graph
    fold_activations(g, ranges)
    inits = {t.name: t for t in g.initializer}
    new_inits, new_nodes = [], []
    act_scale = {}

    def quant_act(t):
        """Q/DQ of activation t; returns the name of its dequantized copy."""
        if t not in ranges:
            return t
        s, z = act_qparams(*ranges[t])
        act_scale[t] = s
        new_inits.extend([numpy_helper.from_array(np.array(s), t + ".s"),
                          numpy_helper.from_array(np.array(z), t + ".z")])
        new_nodes.append(helper.make_node("QuantizeLinear", [t, t + ".s", t + ".z"], [t + ".q"]))
        new_nodes.append(helper.make_node("DequantizeLinear", [t + ".q", t + ".s", t + ".z"], [t + ".dq"]))
        return t + ".dq"

    dq_name = {g.input[0].name: quant_act(g.input[0].name)}
    for n in g.node:
        for o in n.output:
            if o != g.output[0].name:
                dq_name[o] = quant_act(o)
    for n in g.node:
        x = n.input[0]
        for i, t in enumerate(n.input):
            if t in dq_name:
                n.input[i] = dq_name[t]
        if n.op_type not in ("Conv", "Gemm") or n.input[1] not in inits:
            continue
        w = numpy_helper.to_array(inits[n.input[1]])
        per = np.abs(w.reshape(w.shape[0], -1)).max(axis=1)
        ws = np.where(per > 0, per / 127.0, 1.0).astype(np.float32)
        shape = (-1,) + (1,) * (w.ndim - 1)
        wq = np.clip(np.round(w / ws.reshape(shape)), -127, 127).astype(np.int8)
        wn = n.input[1]
        new_inits.extend([numpy_helper.from_array(wq, wn + ".q"), numpy_helper.from_array(ws, wn + ".s"),
                          numpy_helper.from_array(np.zeros(w.shape[0], np.int8), wn + ".z")])
        new_nodes.append(helper.make_node("DequantizeLinear", [wn + ".q", wn + ".s", wn + ".z"], [wn + ".dq"],
                                          axis=0))
        n.input[1] = wn + ".dq"
        if len(n.input) > 2 and n.input[2] in inits and x in act_scale:
            b = numpy_helper.to_array(inits[n.input[2]])
            bs = (act_scale[x] * ws).astype(np.float32)
            bq = np.round(b / bs).astype(np.int32)
            bn = n.input[2]
            new_inits.extend([numpy_helper.from_array(bq, bn + ".q"), numpy_helper.from_array(bs, bn + ".s"),
                              numpy_helper.from_array(np.zeros(w.shape[0], np.int32), bn + ".z")])
            new_nodes.append(helper.make_node("DequantizeLinear", [bn + ".q", bn + ".s", bn + ".z"],
                                              [bn + ".dq"], axis=0))
            n.input[2] = bn + ".dq"
    nodes = new_nodes + list(g.node)
    # topological order: every node after the producers of its inputs
    ready = {i.name for i in g.input} | {t.name for t in g.initializer} | {t.name for t in new_inits}
    order, pending = [], nodes
    while pending:
        rest = []
        for n in pending:
            if all(i in ready or i == "" for i in n.input):
                order.append(n)
                ready.update(n.output)
            else:
                rest.append(n)
        if len(rest) == len(pending):
            raise SystemExit("make_qdq: graph has a cycle or a missing input")
        pending = rest
    del g.node[:]
    g.node.extend(order)
    used = {i for n in g.node for i in n.input}
    keep = [t for t in list(g.initializer) + new_inits if t.name in used]
    del g.initializer[:]
    g.initializer.extend(keep)
    onnx.save(model, dst)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "expose":
        expose(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "qdq":
        qdq(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)

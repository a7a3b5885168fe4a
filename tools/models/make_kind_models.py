#!/usr/bin/python3
"""MobileNetV2's layer kinds alone, as small ONNX models (random weights, He
initialised, biases folded as exported models have them), for `make bench`
(bench/peer_bench.sh, "layer kinds"): where a whole network's ratio to ONNX
Runtime comes from, kind by kind.

    /usr/bin/python3 tools/models/make_kind_models.py OUTDIR

writes OUTDIR/KIND.onnx and OUTDIR/KIND.f32 (8 inputs: uniform in [0, 3]
for the depthwise kinds, as a ReLU6 leaves them, in [-3, 3] for the 1x1 ones,
as a projection leaves them) for each KIND, dw7 last:

    pw56   a 56x56 bottleneck's 1x1 layers: 24 -> 144 (ReLU6) -> 24, four times
    pw14   a 14x14 bottleneck's 1x1 layers: 96 -> 576 (ReLU6) -> 96, four times
    dw56   3x3 depthwise + ReLU6 on 56x56x144, four times
    dw14   3x3 depthwise + ReLU6 on 14x14x576, ten times
    dw7    3x3 depthwise + ReLU6 on 7x7x960, ten times

The shapes are those of MobileNetV2's inverted residual blocks (Sandler et
al. 2018, table 2, 224x224 input), each kind repeated so that one inference
takes long enough to time.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# kind: (input channels, size, [(output channels, group, ReLU6), ...] one repeat, repeats)
KINDS = {
    "pw56": (24, 56, [(144, 1, True), (24, 1, False)], 4),
    "pw14": (96, 14, [(576, 1, True), (96, 1, False)], 4),
    "dw56": (144, 56, [(144, 144, True)], 4),
    "dw14": (576, 14, [(576, 576, True)], 10),
    "dw7": (960, 7, [(960, 960, True)], 10),
}


def model(kind, rng):
    cin, size, layers, repeats = KINDS[kind]
    nodes, inits = [], []

    def const(n, a):
        inits.append(numpy_helper.from_array(np.asarray(a, np.float32), n))
        return n

    x, c = "input", cin
    for i in range(repeats * len(layers)):
        cout, group, relu6 = layers[i % len(layers)]
        k = 3 if group > 1 else 1
        fan_in = c // group * k * k
        w = rng.standard_normal((cout, c // group, k, k)) * np.sqrt(2.0 / fan_in)
        y = f"conv{i}"
        nodes.append(helper.make_node("Conv", [x, const(y + ".w", w), const(y + ".b", rng.uniform(-0.05, 0.05, cout))],
                                      [y], name=y, kernel_shape=[k, k], pads=[k // 2] * 4, group=group))
        if relu6:
            r = f"relu{i}"
            nodes.append(helper.make_node("Clip", [y, const(r + ".min", 0.0), const(r + ".max", 6.0)], [r], name=r))
            y = r
        x, c = y, cout
    graph = helper.make_graph(nodes, kind, [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, cin, size, size])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, c, size, size])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="dlasim")
    m.ir_version = 8
    return m


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(3)
    for kind, (cin, size, _, _) in KINDS.items():
        onnx.save(model(kind, rng), os.path.join(out, kind + ".onnx"))
        # what a bottleneck's input holds: ReLU6'd activations (dw), or the
        # projection's signed ones (pw)
        lo = 0.0 if kind.startswith("dw") else -3.0
        rng.uniform(lo, 3.0, (8, cin, size, size)).astype(np.float32).tofile(os.path.join(out, kind + ".f32"))


if __name__ == "__main__":
    main()

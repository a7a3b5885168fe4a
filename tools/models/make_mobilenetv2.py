#!/usr/bin/python3
"""MobileNetV2 (ImageNet shape, 1x3x224x224 input, 1000 classes, width 1.0)
with random weights, as ONNX, built with Debian's python3-onnx only (no
download).  For `make bench` (bench/peer_bench.sh).

    /usr/bin/python3 tools/models/make_mobilenetv2.py build/mobilenetv2.onnx
    /usr/bin/python3 tools/models/make_mobilenetv2.py out.onnx 32 2   (a 32x32 input and only
        the first 2 rows of the bottleneck table, 10 classes: the RTL-graded network family,
        tools/rtlgrade/netcases.sh, where every depthwise channel block is a layer to grade)

The graph is torchvision's layout (Sandler et al., "MobileNetV2: Inverted
Residuals and Linear Bottlenecks", 2018, table 2): Conv 3x3/2 to 32
channels, 17 inverted residual blocks (1x1 expansion + ReLU6, 3x3 depthwise
+ ReLU6, 1x1 linear projection, residual Add where the shape allows), Conv
1x1 to 1280, GlobalAveragePool, Flatten, Gemm.  BatchNormalization is folded
into the convolutions' weights and biases (as exported models have it);
weights are He-initialised so activations keep a useful range.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(2)
nodes, inits = [], []
count = [0]


def name(prefix):
    count[0] += 1
    return f"{prefix}{count[0]}"


def const(n, a):
    inits.append(numpy_helper.from_array(a.astype(np.float32), n))
    return n


def conv(x, cin, cout, k, stride, group=1, relu6=True):
    c = name("conv")
    fan_in = cin // group * k * k
    wgt = rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2.0 / fan_in)
    bias = rng.uniform(-0.05, 0.05, cout)
    nodes.append(helper.make_node("Conv", [x, const(c + ".w", wgt), const(c + ".b", bias)], [c], name=c,
                                  kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4,
                                  group=group))
    if not relu6:
        return c
    r = name("relu6")
    nodes.append(helper.make_node("Clip", [c, const(r + ".min", np.array(0.0)), const(r + ".max", np.array(6.0))],
                                  [r], name=r))
    return r


def inverted_residual(x, cin, cout, stride, expand):
    mid = cin * expand
    y = conv(x, cin, mid, 1, 1) if expand != 1 else x
    y = conv(y, mid, mid, 3, stride, group=mid)
    y = conv(y, mid, cout, 1, 1, relu6=False)
    if stride == 1 and cin == cout:
        s = name("add")
        nodes.append(helper.make_node("Add", [x, y], [s], name=s))
        return s
    return y


def main():
    out = sys.argv[1]
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 224
    rows = int(sys.argv[3]) if len(sys.argv) > 3 else 7
    classes = 1000 if rows >= 7 else 10
    x = conv("image", 3, 32, 3, 2)
    cin = 32
    # expansion t, channels c, repeats n, first stride s
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                       (6, 160, 3, 2), (6, 320, 1, 1)][:rows]:
        for i in range(n):
            x = inverted_residual(x, cin, c, s if i == 0 else 1, t)
            cin = c
    x = conv(x, cin, 1280, 1, 1)
    g = name("gap")
    nodes.append(helper.make_node("GlobalAveragePool", [x], [g], name=g))
    f = name("flatten")
    nodes.append(helper.make_node("Flatten", [g], [f], name=f))
    nodes.append(helper.make_node("Gemm", [f, const("fc.w", rng.standard_normal((classes, 1280)) * 0.02),
                                           const("fc.b", np.zeros(classes))], ["logits"], name="fc", transB=1))
    graph = helper.make_graph(nodes, "mobilenetv2",
                              [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, size, size])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, classes])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="dlasim")
    model.ir_version = 8
    onnx.save(model, out)


if __name__ == "__main__":
    main()

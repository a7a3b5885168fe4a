#!/usr/bin/python3
"""ResNet-18 / ResNet-50 (ImageNet shape, 1x3x224x224 input, 1000 classes)
with random weights, as ONNX, built with Debian's python3-onnx only (no
download).  For `make bench`.

    /usr/bin/python3 tools/models/make_resnet.py 18 build/resnet18.onnx
    /usr/bin/python3 tools/models/make_resnet.py 50 build/resnet50.onnx
    /usr/bin/python3 tools/models/make_resnet.py 18 out.onnx 32   (a 32x32 input: the
        RTL-graded network family, tools/rtlgrade/netcases.sh)

The graph is torchvision's layout: Conv 7x7/2 + BatchNormalization + Relu,
MaxPool 3x3/2, basic (18) or bottleneck (50) blocks with BatchNormalization
and a residual Add then Relu, GlobalAveragePool, Flatten, Gemm.  Weights are
He-initialised and BatchNormalization statistics random but sane, so the
activations keep a useful range through the 50 layers.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(50)
nodes, inits = [], []
count = [0]


def name(prefix):
    count[0] += 1
    return f"{prefix}{count[0]}"


def const(n, a):
    inits.append(numpy_helper.from_array(a.astype(np.float32), n))
    return n


def conv_bn(x, cin, cout, k, stride, relu=True):
    c = name("conv")
    wgt = rng.standard_normal((cout, cin, k, k)) * np.sqrt(2.0 / (cin * k * k))
    nodes.append(helper.make_node("Conv", [x, const(c + ".w", wgt)], [c], name=c, kernel_shape=[k, k],
                                  strides=[stride, stride], pads=[k // 2] * 4))
    b = name("bn")
    nodes.append(helper.make_node(
        "BatchNormalization",
        [c, const(b + ".g", rng.uniform(0.6, 1.0, cout)), const(b + ".b", rng.uniform(-0.1, 0.1, cout)),
         const(b + ".m", rng.uniform(-0.1, 0.1, cout)), const(b + ".v", rng.uniform(0.8, 1.2, cout))],
        [b], name=b))
    if not relu:
        return b
    r = name("relu")
    nodes.append(helper.make_node("Relu", [b], [r], name=r))
    return r


def add_relu(a, b):
    s = name("add")
    nodes.append(helper.make_node("Add", [a, b], [s], name=s))
    r = name("relu")
    nodes.append(helper.make_node("Relu", [s], [r], name=r))
    return r


def basic(x, cin, cout, stride):
    y = conv_bn(x, cin, cout, 3, stride)
    y = conv_bn(y, cout, cout, 3, 1, relu=False)
    sc = conv_bn(x, cin, cout, 1, stride, relu=False) if stride != 1 or cin != cout else x
    return add_relu(y, sc)


def bottleneck(x, cin, mid, stride):
    cout = mid * 4
    y = conv_bn(x, cin, mid, 1, 1)
    y = conv_bn(y, mid, mid, 3, stride)
    y = conv_bn(y, mid, cout, 1, 1, relu=False)
    sc = conv_bn(x, cin, cout, 1, stride, relu=False) if stride != 1 or cin != cout else x
    return add_relu(y, sc)


def main():
    depth = int(sys.argv[1])
    out = sys.argv[2]
    size = int(sys.argv[3]) if len(sys.argv) > 3 else 224
    x = conv_bn("image", 3, 64, 7, 2)
    p = name("pool")
    nodes.append(helper.make_node("MaxPool", [x], [p], name=p, kernel_shape=[3, 3], strides=[2, 2],
                                  pads=[1, 1, 1, 1]))
    x, cin = p, 64
    if depth == 18:
        for i, (c, n) in enumerate([(64, 2), (128, 2), (256, 2), (512, 2)]):
            for j in range(n):
                x = basic(x, cin, c, 2 if (j == 0 and i > 0) else 1)
                cin = c
    else:
        for i, (c, n) in enumerate([(64, 3), (128, 4), (256, 6), (512, 3)]):
            for j in range(n):
                x = bottleneck(x, cin, c, 2 if (j == 0 and i > 0) else 1)
                cin = c * 4
    g = name("gap")
    nodes.append(helper.make_node("GlobalAveragePool", [x], [g], name=g))
    f = name("flatten")
    nodes.append(helper.make_node("Flatten", [g], [f], name=f))
    nodes.append(helper.make_node("Gemm", [f, const("fc.w", rng.standard_normal((1000, cin)) * 0.02),
                                           const("fc.b", np.zeros(1000))], ["logits"], name="fc", transB=1))
    graph = helper.make_graph(nodes, f"resnet{depth}",
                              [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, size, size])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1000])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="dlasim")
    model.ir_version = 8
    onnx.save(model, out)


if __name__ == "__main__":
    main()

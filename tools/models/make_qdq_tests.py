#!/usr/bin/python3
"""Node-level QDQ test models (tests/models/qdq_node_*.onnx, qdq_bad_*.onnx)
for tests/traces/onnx_qdq.sh: one operator between QuantizeLinear /
DequantizeLinear pairs, or one QLinearConv / QLinearMatMul / QGemm /
QLinearAdd (the last two com.microsoft), odd scales, uint8 (zero point 128) and int8 (zero
point 0) activations, and affine ones (qdq_node_zp_*: zero points anywhere in the type), int8 weights per output channel with odd scales.
Python3-onnx and numpy only.

    /usr/bin/python3 tools/models/make_qdq_tests.py DIR

Weights are 7-bit (-64..63), as tools/models/make_torch_qdq.py explains:
ONNX Runtime's uint8 x int8 kernels saturate 16-bit pair sums on x86
without VNNI, and ORT is the reference these models are graded against.
The qdq_bad_* models are refused by dlasim with the node named.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(17)
U8, I8 = np.uint8, np.int8


class Graph:
    def __init__(self, shape):
        self.nodes, self.inits, self.n = [], [], 0
        self.shape = shape

    def const(self, arr, name=None):
        name = name or "c%d" % len(self.inits)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(self, op, inputs, **attrs):
        self.n += 1
        out = "%s_%d" % (op.lower(), self.n)
        self.nodes.append(helper.make_node(op, inputs, [out], name="%s_%d" % (op, self.n), **attrs))
        return out

    def qdq(self, x, scale, dtype, zp=None):
        """Q -> DQ of an activation at this step (zero point zp, default 128 / 0)."""
        s = self.const(np.float32(scale))
        z = self.const(dtype((128 if dtype == U8 else 0) if zp is None else zp))
        return self.node("DequantizeLinear", [self.node("QuantizeLinear", [x, s, z]), s, z])

    def weights(self, shape, axis=0):
        """int8 weights (7-bit) with odd per-channel scales, dequantized."""
        q = RNG.integers(-64, 64, size=shape).astype(I8)
        k = shape[axis]
        s = (RNG.uniform(0.5, 2.0, size=k) * 1.37e-2).astype(np.float32)
        z = np.zeros(k, I8)
        return self.node("DequantizeLinear", [self.const(q), self.const(s), self.const(z)],
                         axis=axis), s

    def bias(self, k, s_in, s_w):
        q = RNG.integers(-3000, 3000, size=k).astype(np.int32)
        s = (s_in * s_w).astype(np.float32)
        return self.node("DequantizeLinear", [self.const(q), self.const(s), self.const(np.zeros(k, np.int32))],
                         axis=0)

    def save(self, out, path):
        g = helper.make_graph(self.nodes, "qdq", [helper.make_tensor_value_info("input", TensorProto.FLOAT, self.shape)],
                              [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)], self.inits)
        ops = [helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)]
        m = helper.make_model(g, opset_imports=ops, producer_name="make_qdq_tests")
        onnx.save(m, path)


def conv(dtype, relu):
    g = Graph([1, 8, 10, 10])
    x = g.qdq("input", 0.00813, dtype)
    w, sw = g.weights((16, 8, 3, 3))
    y = g.node("Conv", [x, w, g.bias(16, 0.00813, sw)], pads=[1, 1, 1, 1], strides=[1, 1])
    if relu:
        y = g.node("Relu", [y])
    return g, g.qdq(y, 0.0517, dtype)


def gemm(dtype):
    g = Graph([1, 24])
    x = g.qdq("input", 0.00791, dtype)
    w, sw = g.weights((10, 24), axis=0)
    y = g.node("Gemm", [x, w, g.bias(10, 0.00791, sw)], transB=1)
    return g, g.qdq(y, 0.0213, dtype)


def matmul(dtype):
    g = Graph([1, 24])
    x = g.qdq("input", 0.00791, dtype)
    w, _ = g.weights((24, 10), axis=1)
    return g, g.qdq(g.node("MatMul", [x, w]), 0.0187, dtype)


def add(dtype, relu):
    g = Graph([1, 8, 6, 6])
    x = g.qdq("input", 0.00788, dtype)
    w, sw = g.weights((8, 8, 1, 1))
    a = g.qdq(g.node("Conv", [x, w, g.bias(8, 0.00788, sw)]), 0.0291, dtype)
    y = g.node("Add", [a, x])
    if relu:
        y = g.node("Relu", [y])
    return g, g.qdq(y, 0.0333, dtype)


def pool(op, dtype, **attrs):
    g = Graph([1, 8, 8, 8])
    x = g.qdq("input", 0.00802, dtype)
    return g, g.qdq(g.node(op, [x], **attrs), 0.00802, dtype)


def concat(dtype):
    g = Graph([1, 8, 6, 6])
    x = g.qdq("input", 0.00788, dtype)
    w1, s1 = g.weights((8, 8, 1, 1))
    w2, s2 = g.weights((8, 8, 3, 3))
    a = g.node("Conv", [x, w1, g.bias(8, 0.00788, s1)])
    b = g.node("Conv", [x, w2, g.bias(8, 0.00788, s2)], pads=[1, 1, 1, 1])
    a, b = g.qdq(a, 0.0411, dtype), g.qdq(b, 0.0411, dtype)
    return g, g.qdq(g.node("Concat", [a, b], axis=1), 0.0411, dtype)


def flatten_reshape(dtype):
    g = Graph([1, 8, 2, 2])
    x = g.qdq("input", 0.00788, dtype)
    f = g.qdq(g.node("Flatten", [x], axis=1), 0.00788, dtype)
    r = g.qdq(g.node("Reshape", [f, g.const(np.array([1, 32], np.int64))]), 0.00788, dtype)
    w, sw = g.weights((10, 32), axis=0)
    return g, g.qdq(g.node("Gemm", [r, w, g.bias(10, 0.00788, sw)], transB=1), 0.0177, dtype)


def q_input(g, scale, dtype):
    s, z = g.const(np.float32(scale)), g.const(dtype(128 if dtype == U8 else 0))
    return g.node("QuantizeLinear", ["input", s, z]), s, z


def w_codes(g, shape, axis=0):
    q = RNG.integers(-64, 64, size=shape).astype(I8)
    s = (RNG.uniform(0.5, 2.0, size=shape[axis]) * 1.37e-2).astype(np.float32)
    return g.const(q), g.const(s), g.const(np.zeros(shape[axis], I8)), s


def qlinear_conv(dtype):
    g = Graph([1, 8, 10, 10])
    x, xs, xz = q_input(g, 0.00813, dtype)
    w, ws, wz, sw = w_codes(g, (16, 8, 3, 3))
    b = g.const(RNG.integers(-3000, 3000, size=16).astype(np.int32))
    ys, yz = g.const(np.float32(0.0517)), g.const(dtype(128 if dtype == U8 else 0))
    y = g.node("QLinearConv", [x, xs, xz, w, ws, wz, ys, yz, b], pads=[1, 1, 1, 1])
    return g, g.node("DequantizeLinear", [y, ys, yz])


def qlinear_matmul(dtype):
    g = Graph([1, 24])
    x, xs, xz = q_input(g, 0.00791, dtype)
    w, ws, wz, _ = w_codes(g, (24, 10), axis=1)
    ys, yz = g.const(np.float32(0.0187)), g.const(dtype(128 if dtype == U8 else 0))
    y = g.node("QLinearMatMul", [x, xs, xz, w, ws, wz, ys, yz])
    return g, g.node("DequantizeLinear", [y, ys, yz])


def qgemm(dtype):
    g = Graph([1, 24])
    x, xs, xz = q_input(g, 0.00791, dtype)
    w, ws, wz, _ = w_codes(g, (10, 24), axis=0)
    b = g.const(RNG.integers(-3000, 3000, size=10).astype(np.int32))
    ys, yz = g.const(np.float32(0.0213)), g.const(dtype(128 if dtype == U8 else 0))
    y = g.node("QGemm", [x, xs, xz, w, ws, wz, b, ys, yz], domain="com.microsoft", transB=1)
    return g, g.node("DequantizeLinear", [y, ys, yz])


def qlinear_add(dtype):
    g = Graph([1, 8, 6, 6])
    x, xs, xz = q_input(g, 0.00788, dtype)
    w, ws, wz, sw = w_codes(g, (8, 8, 1, 1))
    b = g.const(RNG.integers(-3000, 3000, size=8).astype(np.int32))
    cs = g.const(np.float32(0.0291))
    c = g.node("QLinearConv", [x, xs, xz, w, ws, wz, cs, xz, b])
    ys = g.const(np.float32(0.0333))
    y = g.node("QLinearAdd", [c, cs, xz, x, xs, xz, ys, xz], domain="com.microsoft")
    return g, g.node("DequantizeLinear", [y, ys, xz])


def bad_per_channel_zp():
    g = Graph([1, 4, 4, 4])
    s, z = g.const(np.float32(0.01)), g.const(np.array([3, 9, 27, 81], U8))
    x = g.node("DequantizeLinear", [g.node("QuantizeLinear", ["input", s, z], axis=1), s, z], axis=1)
    return g, g.node("Relu", [x])


# Affine activations (zero points anywhere in the type, torch's default
# quint8 per_tensor_affine): the device code's offset folded into biases,
# pad values, operand and output offsets (docs/compiler.md).
def conv_zp(dtype, zin, zout, relu):
    g = Graph([1, 8, 10, 10])
    x = g.qdq("input", 0.00813, dtype, zin)
    w, sw = g.weights((16, 8, 3, 3))
    y = g.node("Conv", [x, w, g.bias(16, 0.00813, sw)], pads=[1, 1, 1, 1], strides=[1, 1])
    if relu:
        y = g.node("Relu", [y])
    return g, g.qdq(y, 0.0517 if not relu else 0.0259, dtype, zout)


def float_tail(dtype):
    """A ReLU folded into the quantization (uint8 from 0, no Relu node: as
    ONNX Runtime's quantizer and tools/models/make_qdq.py leave a Conv+Relu),
    then a Conv whose float output no QuantizeLinear follows: dlasim
    calibrates that output's step on the float graph with the pairs'
    saturation (float_exec.c fake_quantize)."""
    g = Graph([1, 8, 10, 10])
    x = g.qdq("input", 0.00813, dtype)
    w, sw = g.weights((16, 8, 3, 3))
    y = g.node("Conv", [x, w, g.bias(16, 0.00813, sw)], pads=[1, 1, 1, 1], strides=[1, 1])
    y = g.qdq(y, 0.0259, dtype, 0 if dtype == U8 else -128)
    w2, sw2 = g.weights((10, 16, 1, 1))
    return g, g.node("Conv", [y, w2, g.bias(10, 0.0259, sw2)])


def gemm_zp(dtype, zin, zout):
    g = Graph([1, 24])
    x = g.qdq("input", 0.00791, dtype, zin)
    w, sw = g.weights((10, 24), axis=0)
    y = g.node("Gemm", [x, w, g.bias(10, 0.00791, sw)], transB=1)
    return g, g.qdq(y, 0.0213, dtype, zout)


def add_zp(dtype, zin, za, zout, relu):
    g = Graph([1, 8, 6, 6])
    x = g.qdq("input", 0.00788, dtype, zin)
    w, sw = g.weights((8, 8, 1, 1))
    a = g.qdq(g.node("Conv", [x, w, g.bias(8, 0.00788, sw)]), 0.0291, dtype, za)
    y = g.node("Add", [a, x])
    if relu:
        y = g.node("Relu", [y])
    return g, g.qdq(y, 0.0333, dtype, zout)


def pool_zp(op, dtype, zin, zout, **attrs):
    g = Graph([1, 8, 8, 8])
    x = g.qdq("input", 0.00802, dtype, zin)
    return g, g.qdq(g.node(op, [x], **attrs), 0.00802 if op == "MaxPool" else 0.00411, dtype,
                    zout)


def bad_per_channel():
    g = Graph([1, 4, 4, 4])
    s, z = g.const(np.full(4, 0.01, np.float32)), g.const(np.full(4, 128, U8))
    x = g.node("DequantizeLinear", [g.node("QuantizeLinear", ["input", s, z], axis=1), s, z], axis=1)
    return g, g.node("Relu", [x])


def bad_requantize():
    g = Graph([1, 4, 4, 4])
    s1, s2, z = g.const(np.float32(0.01)), g.const(np.float32(0.02)), g.const(U8(128))
    x = g.node("DequantizeLinear", [g.node("QuantizeLinear", ["input", s1, z]), s2, z])
    return g, g.node("Relu", [x])


MODELS = {
    "qdq_node_conv_u8": lambda: conv(U8, False),
    "qdq_node_conv_relu_i8": lambda: conv(I8, True),
    "qdq_node_gemm_u8": lambda: gemm(U8),
    "qdq_node_matmul_i8": lambda: matmul(I8),
    "qdq_node_add_u8": lambda: add(U8, False),
    "qdq_node_add_relu_i8": lambda: add(I8, True),
    "qdq_node_maxpool_u8": lambda: pool("MaxPool", U8, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    "qdq_node_avgpool_i8": lambda: pool("AveragePool", I8, kernel_shape=[2, 2], strides=[2, 2]),
    "qdq_node_gap_u8": lambda: pool("GlobalAveragePool", U8),
    "qdq_node_concat_u8": lambda: concat(U8),
    "qdq_node_flatten_reshape_i8": lambda: flatten_reshape(I8),
    "qdq_node_qlinearconv_u8": lambda: qlinear_conv(U8),
    "qdq_node_qlinearmatmul_i8": lambda: qlinear_matmul(I8),
    "qdq_node_qgemm_u8": lambda: qgemm(U8),
    "qdq_node_qlinearadd_u8": lambda: qlinear_add(U8),
    "qdq_bad_per_channel": bad_per_channel,
    "qdq_bad_requantize": bad_requantize,
    "qdq_bad_per_channel_zp": bad_per_channel_zp,
    "qdq_node_zp_conv_u8": lambda: conv_zp(U8, 37, 151, False),
    "qdq_node_zp_conv_relu_u8": lambda: conv_zp(U8, 90, 0, True),
    "qdq_node_zp_conv_relu_i8": lambda: conv_zp(I8, -40, 22, True),
    "qdq_node_zp_gemm_i8": lambda: gemm_zp(I8, -20, 15),
    "qdq_node_zp_add_u8": lambda: add_zp(U8, 60, 100, 140, False),
    "qdq_node_zp_add_relu_u8": lambda: add_zp(U8, 60, 100, 0, True),
    "qdq_node_zp_maxpool_u8": lambda: pool_zp("MaxPool", U8, 70, 70, kernel_shape=[3, 3],
                                              strides=[2, 2], pads=[1, 1, 1, 1]),
    "qdq_node_zp_gap_u8": lambda: pool_zp("GlobalAveragePool", U8, 90, 20),
    "qdq_node_zp_add_relu_cpu_u8": lambda: add_zp(U8, 60, 100, 10, True),
    "qdq_float_tail_u8": lambda: float_tail(U8),
}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, make in MODELS.items():
        g, y = make()
        g.save(y, os.path.join(out, name + ".onnx"))


if __name__ == "__main__":
    main()

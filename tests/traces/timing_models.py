#!/usr/bin/python3
"""Small one-layer ONNX models whose hardware layers were measured on NVIDIA's
nv_small RTL as timing cases (tests/traces/rtl_own.txt, how = onnx): 1x1
convolutions on tiny surfaces, strided and dilated 3x3 convolutions and Gemms
with few outputs -- the layer kinds the network family's worst timing cases
were, in shapes the family does not have (docs/timing.md, "Held-out layers").

usage: timing_models.py OUT_DIR   writes OUT_DIR/<name>.onnx and
OUT_DIR/<name>.in (its input bytes) for every model, prints one name a line.
Weights come from one seeded generator in a fixed order, so the models (and
the traces dlasim records of them) are the same on every machine.
"""
import hashlib
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# (W, H, C, K) of the 1x1 convolutions
CONV1X1 = [(4, 4, 8, 8), (4, 4, 24, 24), (8, 8, 24, 8), (6, 6, 16, 16), (2, 2, 16, 16),
           (4, 4, 64, 16), (8, 8, 8, 24), (3, 3, 32, 32), (8, 4, 16, 16), (2, 2, 48, 48)]
# (W, H, C, K, stride, dilation, pad) of the 3x3 convolutions
CONV3X3 = [(10, 10, 8, 8, 2, 2, 0), (14, 14, 16, 8, 1, 2, 0), (12, 12, 8, 24, 2, 2, 1),
           (16, 16, 8, 12, 2, 3, 0), (9, 9, 8, 16, 1, 2, 0)]
# (inputs, outputs) of the Gemms
GEMM = [(128, 10), (256, 5), (32, 3), (512, 12), (96, 20), (200, 10)]


def input_bytes(n, seed):
    """n bytes of a SHA-256 chain of the model's name."""
    out, h = bytearray(), seed.encode()
    while len(out) < n:
        h = hashlib.sha256(h).digest()
        out += h
    return bytes(out[:n])


def save(out, name, graph, n_in):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13)])
    model.ir_version = 8
    onnx.save(model, f'{out}/{name}.onnx')
    with open(f'{out}/{name}.in', 'wb') as f:
        f.write(input_bytes(n_in, name))
    print(name)


def conv(out, rng, name, w, h, c, k, r, stride, dil, pad):
    x = helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, c, h, w])
    wt = numpy_helper.from_array((rng.standard_normal((k, c, r, r)) * 0.2).astype(np.float32), 'W')
    b = numpy_helper.from_array((rng.standard_normal(k) * 0.1).astype(np.float32), 'B')
    node = helper.make_node('Conv', ['x', 'W', 'B'], ['y'], kernel_shape=[r, r],
                            strides=[stride, stride], dilations=[dil, dil], pads=[pad] * 4)
    oh = (h + 2 * pad - dil * (r - 1) - 1) // stride + 1
    ow = (w + 2 * pad - dil * (r - 1) - 1) // stride + 1
    y = helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, k, oh, ow])
    save(out, name, helper.make_graph([node], name, [x], [y], [wt, b]), c * h * w)


def gemm(out, rng, name, c, k):
    x = helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, c])
    wt = numpy_helper.from_array((rng.standard_normal((k, c)) * 0.1).astype(np.float32), 'W')
    b = numpy_helper.from_array((rng.standard_normal(k) * 0.1).astype(np.float32), 'B')
    node = helper.make_node('Gemm', ['x', 'W', 'B'], ['y'], transB=1)
    y = helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, k])
    save(out, name, helper.make_graph([node], name, [x], [y], [wt, b]), c)


def main():
    if len(sys.argv) != 2:
        sys.exit('usage: timing_models.py OUT_DIR')
    out = sys.argv[1]
    rng = np.random.default_rng(19)
    for w, h, c, k in CONV1X1:
        conv(out, rng, f'ho_c1x1_{w}x{h}x{c}_{k}', w, h, c, k, 1, 1, 1, 0)
    for w, h, c, k, st, dil, pad in CONV3X3:
        conv(out, rng, f'ho_c3x3_{w}x{h}x{c}_{k}_s{st}d{dil}p{pad}', w, h, c, k, 3, st, dil, pad)
    for c, k in GEMM:
        gemm(out, rng, f'ho_gemm_{c}_{k}', c, k)


if __name__ == '__main__':
    main()

#!/usr/bin/python3
"""Small ONNX models for the compiler tests (tests/models/*.onnx), one per
operator (or operator pattern), with random weights, built with Debian's
python3-onnx.  Regenerate with:

    /usr/bin/python3 tools/models/make_test_models.py tests/models

Each op_*.onnx takes a 1x8x12x12 float input (op_gemm* / op_matmul a 1x8x4x4
one).  bad_*.onnx are models the compiler must refuse with a clear message.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(9)
OUT = sys.argv[1] if len(sys.argv) > 1 else "tests/models"


def w(name, *shape, scale=0.3):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def i64(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def f32(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.float32), name)


def save(name, nodes, inits, in_shape=(1, 8, 12, 12), out_shape=None, opset=13):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(in_shape))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)
    g = helper.make_graph(nodes, name, [x], [y], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="dlasim-tests")
    m.ir_version = 8
    onnx.save(m, os.path.join(OUT, name + ".onnx"))


def conv(name, x, y, cin, cout, k=3, **attrs):
    return (helper.make_node("Conv", [x, name + ".w", name + ".b"], [y], name=name, **attrs),
            [w(name + ".w", cout, cin // attrs.get("group", 1), k, k), w(name + ".b", cout, scale=0.1)])


def model_conv_then(name, tail_nodes, tail_inits, cout=16):
    """A 3x3 convolution (8 -> cout) followed by the nodes under test (reading 'c')."""
    n, i = conv("c0", "x", "c", 8, cout, pads=[1, 1, 1, 1])
    save(name, [n] + tail_nodes, i + tail_inits)


def main():
    os.makedirs(OUT, exist_ok=True)
    # convolutions
    n, i = conv("conv", "x", "y", 8, 16, pads=[1, 1, 1, 1])
    save("op_conv", [n], i)
    n, i = conv("conv", "x", "y", 8, 12, k=3, strides=[2, 2], dilations=[2, 2], pads=[2, 1, 2, 1])
    save("op_conv_stride_dilation", [n], i)
    n, i = conv("conv", "x", "y", 8, 16, k=5, pads=[2, 2, 2, 2], strides=[1, 2])
    save("op_conv_5x5", [n], i)
    n, i = conv("conv", "x", "y", 8, 16, pads=[1, 1, 1, 1], group=2)
    save("op_conv_grouped", [n], i)
    n, i = conv("conv", "x", "y", 8, 8, pads=[1, 1, 1, 1], group=8)
    save("op_conv_depthwise", [n], i)
    # BatchNormalization folded, Relu / Clip / LeakyRelu / PRelu
    bn = helper.make_node("BatchNormalization", ["c", "g", "b", "m", "v"], ["y"], name="bn")
    model_conv_then("op_batchnorm", [bn], [f32("g", rng.uniform(0.5, 1.5, 16)), f32("b", rng.uniform(-0.2, 0.2, 16)),
                                           f32("m", rng.uniform(-0.2, 0.2, 16)), f32("v", rng.uniform(0.5, 2, 16))])
    model_conv_then("op_relu", [helper.make_node("Relu", ["c"], ["y"], name="relu")], [])
    model_conv_then("op_clip", [helper.make_node("Clip", ["c", "lo", "hi"], ["y"], name="relu6")],
                    [f32("lo", 0.0), f32("hi", 0.6)])
    model_conv_then("op_leakyrelu", [helper.make_node("LeakyRelu", ["c"], ["y"], name="lrelu", alpha=0.1)], [])
    model_conv_then("op_prelu", [helper.make_node("PRelu", ["c", "slope"], ["y"], name="prelu")],
                    [f32("slope", rng.uniform(0, 0.3, (16, 1, 1)))])
    model_conv_then("op_sigmoid", [helper.make_node("Sigmoid", ["c"], ["y"], name="sigmoid")], [])
    model_conv_then("op_tanh", [helper.make_node("Tanh", ["c"], ["y"], name="tanh")], [])
    # element-wise with a constant and with a tensor
    model_conv_then("op_add_const", [helper.make_node("Add", ["c", "k"], ["y"], name="add")],
                    [f32("k", rng.uniform(-0.5, 0.5, (1, 16, 1, 1)))])
    model_conv_then("op_mul_const", [helper.make_node("Mul", ["c", "k"], ["y"], name="mul")],
                    [f32("k", rng.uniform(0.2, 1.5, (1, 16, 1, 1)))])
    n0, i0 = conv("c0", "x", "a", 8, 16, pads=[1, 1, 1, 1])
    n1, i1 = conv("c1", "x", "b", 8, 16, k=1)
    save("op_add_tensor", [n0, n1, helper.make_node("Add", ["a", "b"], ["s"], name="add"),
                           helper.make_node("Relu", ["s"], ["y"], name="relu")], i0 + i1)
    save("op_sub_tensor", [n0, n1, helper.make_node("Sub", ["a", "b"], ["y"], name="sub")], i0 + i1)
    save("op_mul_tensor", [n0, n1, helper.make_node("Mul", ["a", "b"], ["y"], name="mul")], i0 + i1)
    save("op_concat", [n0, n1, helper.make_node("Concat", ["a", "b"], ["y"], name="concat", axis=1)], i0 + i1)
    # pooling
    model_conv_then("op_maxpool", [helper.make_node("MaxPool", ["c"], ["y"], name="pool", kernel_shape=[3, 3],
                                                    strides=[2, 2], pads=[1, 1, 1, 1])], [])
    model_conv_then("op_avgpool", [helper.make_node("AveragePool", ["c"], ["y"], name="pool", kernel_shape=[2, 2],
                                                    strides=[2, 2])], [])
    model_conv_then("op_globalavgpool", [helper.make_node("GlobalAveragePool", ["c"], ["y"], name="gap")], [])
    model_conv_then("op_lrn", [helper.make_node("LRN", ["c"], ["y"], name="lrn", size=5, alpha=1e-2, beta=0.75,
                                                bias=1.0)], [])
    # layout
    model_conv_then("op_flatten_gemm", [helper.make_node("Flatten", ["c"], ["f"], name="flatten"),
                                        helper.make_node("Gemm", ["f", "gw", "gb"], ["y"], name="fc", transB=1)],
                    [w("gw", 10, 16 * 12 * 12, scale=0.05), w("gb", 10, scale=0.1)])
    model_conv_then("op_reshape_matmul", [helper.make_node("Reshape", ["c", "shape"], ["f"], name="reshape"),
                                          helper.make_node("MatMul", ["f", "mw"], ["y"], name="matmul")],
                    [i64("shape", [1, -1]), w("mw", 16 * 12 * 12, 10, scale=0.05)])
    model_conv_then("op_transpose", [helper.make_node("Transpose", ["c"], ["y"], name="transpose",
                                                      perm=[0, 2, 3, 1])], [])
    model_conv_then("op_squeeze_softmax", [helper.make_node("GlobalAveragePool", ["c"], ["p"], name="gap"),
                                           helper.make_node("Squeeze", ["p", "axes"], ["s"], name="squeeze"),
                                           helper.make_node("Softmax", ["s"], ["y"], name="softmax", axis=1)],
                    [i64("axes", [2, 3])])
    model_conv_then("op_resize", [helper.make_node("Resize", ["c", "", "scales"], ["y"], name="up", mode="nearest")],
                    [f32("scales", [1, 1, 2, 2])])
    model_conv_then("op_pad", [helper.make_node("Pad", ["c", "pads"], ["y"], name="pad")],
                    [i64("pads", [0, 0, 1, 2, 0, 0, 2, 1])])
    # Concat with an input whose scale cannot change (pooling): not placed, runs on the CPU
    n0, i0 = conv("c0", "x", "a", 8, 16, pads=[1, 1, 1, 1])
    save("op_concat_pool", [n0, helper.make_node("MaxPool", ["x"], ["p"], name="pool", kernel_shape=[3, 3],
                                                 pads=[1, 1, 1, 1]),
                            helper.make_node("Concat", ["a", "p"], ["y"], name="concat", axis=1)], i0)
    # a zero Pad folded into the convolution after it
    n1, i1 = conv("c1", "p", "y", 8, 16)
    save("op_pad_conv", [helper.make_node("Pad", ["x", "pads"], ["p"], name="pad"), n1],
         [i64("pads", [0, 0, 1, 2, 0, 0, 2, 1])] + i1)
    # per-channel affine layers not after a convolution: SDP X1 from memory
    save("op_affine_standalone",
         [helper.make_node("MaxPool", ["x"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
          helper.make_node("BatchNormalization", ["p", "g", "b", "m", "v"], ["n"], name="bn"),
          helper.make_node("Relu", ["n"], ["r"], name="relu"),
          helper.make_node("Mul", ["r", "k"], ["q"], name="mul"),
          helper.make_node("Sub", ["q", "d"], ["y"], name="sub")],
         [f32("g", rng.uniform(0.5, 1.5, 8)), f32("b", rng.uniform(-0.2, 0.2, 8)),
          f32("m", rng.uniform(-0.2, 0.2, 8)), f32("v", rng.uniform(0.5, 2, 8)),
          f32("k", rng.uniform(-1.5, 1.5, (1, 8, 1, 1))), f32("d", [0.25])])
    # issue 17's models draw from their own generator (the models after them stay as they were)
    saved = rng.bit_generator.state
    # the CBUF weight-ring conflict of issue 17 (SqueezeNet's stem): convolutions
    # filling CBUF with the same banks one after the other
    n0, i0 = conv("c0", "x", "a", 3, 64, k=3, strides=[2, 2])
    n1, i1 = conv("c1", "p", "b", 64, 16, k=1)
    n2, i2 = conv("c2", "b", "y", 16, 64, k=1)
    save("op_ring_restart", [n0, helper.make_node("MaxPool", ["a"], ["p"], name="pool", kernel_shape=[3, 3],
                                                  strides=[2, 2]), n1, n2], i0 + i1 + i2,
         in_shape=(1, 3, 224, 224))
    # a depthwise convolution wider than one Atomic-M (issue 17: run in channel blocks)
    n, i = conv("dw", "x", "y", 32, 32, k=3, pads=[1, 1, 1, 1], group=32)
    save("op_conv_depthwise32", [n], i, in_shape=(1, 32, 12, 12))
    # what exporters write (issue 17's import pass): a weight through Identity, HardSigmoid +
    # Mul (HardSwish at opset 13), Split along channels, ReduceMean over H, W, the
    # squeeze-and-excitation Mul, Resize (linear) to sizes computed by Shape -> Gather ->
    # Unsqueeze -> Mul -> Concat -> Cast -> Concat (also a fuzz seed: tests/fuzz/seeds/onnx)
    save("op_import_pass", [
        helper.make_node("Identity", ["cw"], ["cw2"], name="idw"),
        helper.make_node("Conv", ["x", "cw2", "cb"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("HardSigmoid", ["c"], ["h"], name="hs", alpha=0.2, beta=0.5),
        helper.make_node("Mul", ["c", "h"], ["hw"], name="hswish"),
        helper.make_node("Split", ["hw", "sp"], ["s0", "s1"], name="split", axis=1),
        helper.make_node("ReduceMean", ["s1"], ["r"], name="mean", axes=[2, 3], keepdims=1),
        helper.make_node("Mul", ["s0", "r"], ["se"], name="se"),
        helper.make_node("Shape", ["x"], ["shp"], name="shape"),
        helper.make_node("Gather", ["shp", "two"], ["hdim"], name="gather", axis=0),
        helper.make_node("Unsqueeze", ["hdim", "ax0"], ["hu"], name="unsq"),
        helper.make_node("Mul", ["hu", "two64"], ["h2"], name="dbl"),
        helper.make_node("Concat", ["h2", "h2"], ["hw2"], name="cat", axis=0),
        helper.make_node("Cast", ["hw2"], ["hw2i"], name="cast", to=7),
        helper.make_node("Concat", ["nc", "hw2i"], ["sizes"], name="cat2", axis=0),
        helper.make_node("Resize", ["se", "", "", "sizes"], ["y"], name="resize", mode="linear",
                         coordinate_transformation_mode="half_pixel")],
        [w("cw", 16, 8, 3, 3), w("cb", 16), i64("sp", [8, 8]), i64("two", 2), i64("ax0", [0]),
         i64("two64", [2]), i64("nc", [1, 8])], in_shape=(1, 8, 6, 6), out_shape=[1, 8, 12, 12])
    rng.bit_generator.state = saved
    # refusals
    save("bad_unsupported_op", [helper.make_node("Einsum", ["x"], ["y"], name="my_einsum", equation="ij->ji")], [])
    n, i = conv("conv", "x", "y", 8, 16, pads=[1, 1, 1, 1])
    save("bad_opset", [n], i, opset=9)
    ext = w("conv.w", 16, 8, 3, 3)
    ext.ClearField("raw_data")
    ext.data_location = TensorProto.EXTERNAL
    e = ext.external_data.add()
    e.key, e.value = "location", "weights.bin"
    save("bad_external_data", [helper.make_node("Conv", ["x", "conv.w"], ["y"], name="conv", pads=[1, 1, 1, 1])],
         [ext])
    save("bad_conv_weights_missing", [helper.make_node("Conv", ["x", "nowhere"], ["y"], name="conv")], [])
    # constants that would overflow when converted or multiplied (found by fuzz_onnx)
    save("bad_resize_huge_scale", [helper.make_node("Resize", ["x", "", "scales"], ["y"], name="up", mode="nearest")],
         [f32("scales", [1, 1, -3e38, 2])])
    save("bad_reshape_huge", [helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
         [i64("shape", [1 << 40, 1 << 40, 1 << 40])])
    save("bad_pad_huge", [helper.make_node("Pad", ["x", "pads"], ["y"], name="pad")],
         [f32("pads", [0, 0, 1e30, 1, 0, 0, 1, 1])])
    precision_models()
    pool_pair_models()
    residual_models()
    input_write_models()
    float_pool_models()


def float_pool_models():
    """A MaxPool alone on a 1x4x21x27 input, for the float reference's
    pooling (tests/unit/test_float_pool.c, against a reference of its own):
    3x3/2 pad 1 (ResNet's), 3x3/1 pad 1, 2x2/2, 5x5/2 pad 2, 4x2/1 pad 0/1."""
    shapes = {"3s2": ([3, 3], [2, 2], [1, 1, 1, 1]), "3s1": ([3, 3], [1, 1], [1, 1, 1, 1]),
              "2s2": ([2, 2], [2, 2], [0, 0, 0, 0]), "5s2": ([5, 5], [2, 2], [2, 2, 2, 2]),
              "4x2s1": ([4, 2], [1, 1], [0, 1, 0, 1])}
    for tag, (k, st, pads) in shapes.items():
        save("float_maxpool_" + tag,
             [helper.make_node("MaxPool", ["x"], ["y"], name="pool", kernel_shape=k, strides=st,
                               pads=pads)], [], in_shape=(1, 4, 21, 27))


def pool_pair_models():
    """A convolution + Relu with and without a 3x3/2 MaxPool after it, the
    same weights (their own random generator): op_pool_fly pools on the fly
    (SDP -> PDP); its output must be op_pool_conv's output max-pooled."""
    r = np.random.default_rng(23)
    wt = numpy_helper.from_array((r.standard_normal((16, 8, 3, 3)) * 0.3).astype(np.float32), "c0.w")
    b = numpy_helper.from_array((r.standard_normal(16) * 0.1).astype(np.float32), "c0.b")
    head = [helper.make_node("Conv", ["x", "c0.w", "c0.b"], ["c"], name="c0", pads=[1, 1, 1, 1])]
    save("op_pool_conv", head + [helper.make_node("Relu", ["c"], ["y"], name="relu")], [wt, b])
    save("op_pool_fly", head + [helper.make_node("Relu", ["c"], ["r"], name="relu"),
                                helper.make_node("MaxPool", ["r"], ["y"], name="pool", kernel_shape=[3, 3],
                                                 strides=[2, 2], pads=[1, 1, 1, 1])], [wt, b])


def input_write_models():
    """A 1x1 max pooling (the input codes passed through) on a narrow input,
    which the model I/O quantizes as one run, on a wide one, whose lines lie
    back to back (one run of its three lines a surface), and on a tall one
    (100 lines of 100 pixels: runs of as many lines as a 32 KiB chunk holds,
    each of several 64-pixel segments), and on a large one (12 channels of
    150x40: two surfaces, the last of four channels, packed in items of
    rows on the device's team): each output is its input within half a
    step."""
    pool = [helper.make_node("MaxPool", ["x"], ["y"], name="pool", kernel_shape=[1, 1])]
    save("io_pass_narrow", pool, [], in_shape=(1, 24, 3, 5))
    save("io_pass_wide", pool, [], in_shape=(1, 24, 3, 20))
    save("io_pass_tall", pool, [], in_shape=(1, 3, 100, 100))
    save("io_pass_big", pool, [], in_shape=(1, 12, 150, 40))


def residual_models():
    """An Add of two tensors the compiler cannot fuse into a convolution
    (each is a Relu's output, computed by a convolution with its Relu fused):
    SDP's element-wise Add from memory.  op_add_tensor's Add is fused into
    its second convolution (a residual: lower_conv.c residual_fusable).  Its
    own random generator, so that the models above do not change."""
    r = np.random.default_rng(18)

    def wr(name, *shape, scale=0.3):
        return numpy_helper.from_array((r.standard_normal(shape) * scale).astype(np.float32), name)
    save("op_add_standalone", [
        helper.make_node("Conv", ["x", "c0.w", "c0.b"], ["a0"], name="c0", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["a0"], ["a"], name="relu0"),
        helper.make_node("Conv", ["x", "c1.w", "c1.b"], ["b0"], name="c1"),
        helper.make_node("Relu", ["b0"], ["b"], name="relu1"),
        helper.make_node("Add", ["a", "b"], ["y"], name="add")],
        [wr("c0.w", 16, 8, 3, 3), wr("c0.b", 16, scale=0.1), wr("c1.w", 16, 8, 1, 1),
         wr("c1.b", 16, scale=0.1)])


def precision_models():
    """Models of the precision flags (issue 17 items 5, 9), with their own
    random generator so that the models above do not change.
    op_bias_collapse: a convolution with tiny weights (its output, the next
    one's input, has a step of about 1e-5) feeding one with a bias of a few
    hundred: the inputs move its output by far less than one output step."""
    r = np.random.default_rng(17)

    def wr(name, *shape, scale):
        return numpy_helper.from_array((r.standard_normal(shape) * scale).astype(np.float32), name)
    save("op_bias_collapse", [
        helper.make_node("Conv", ["x", "a.w", "a.b"], ["a"], name="small_conv", pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["a", "b.w", "b.b"], ["y"], name="big_bias_conv", pads=[1, 1, 1, 1])],
        [wr("a.w", 16, 8, 3, 3, scale=1e-4), wr("a.b", 16, scale=1e-5),
         wr("b.w", 16, 16, 3, 3, scale=0.3), wr("b.b", 16, scale=300.0)])


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""ONNX's own operator tests (Debian's libonnx-testdata, data/node/test_*)
on dlasim's float reference, for every operator dlasim reads.

    /usr/bin/python3 tools/models/onnx_node_tests.py DLASIM WORKDIR [--table]

Per test: its model and test_data_set_0 inputs and expected output.  Adapted
where dlasim's model shape needs it: inputs after the first become constants
(initializers) holding the test's values; models of opsets below 11 are
converted to opset 13 by onnx.version_converter; element-wise operators
whose first dimension is not 1 get a leading dimension of 1 (same values).
Not run (counted, with the reason): tests of operators dlasim does not read,
more than one output, a first input that is not float32, a batch other
than 1.  Compared with numpy.allclose(rtol=1e-3, atol=1e-5) (ONNX's backend
tests use rtol 1e-3).  A test dlasim refuses with a message (a variant it
does not support: 1-D/3-D pooling, dilated max pooling, ...) is listed as
refused.  Prints one line per test, a table per operator, and ends with
"N passed, N failed" where failed counts wrong values only.
"""
import collections
import glob
import os
import subprocess
import sys

import numpy as np
import onnx
import onnx.version_converter
from onnx import numpy_helper

DATA = "/usr/share/libonnx-testdata/data/node"
# the operators dlasim's reader accepts (src/compiler/onnx_read.c dlc_op_names)
OPS = {"Conv", "Gemm", "MatMul", "BatchNormalization", "Relu", "LeakyRelu", "PRelu", "Clip",
       "Add", "Sub", "Mul", "MaxPool", "AveragePool", "GlobalAveragePool", "LRN", "Sigmoid",
       "Tanh", "Concat", "Flatten", "Reshape", "Squeeze", "Unsqueeze", "Transpose", "Softmax",
       "Resize", "Upsample", "Pad", "Identity", "Dropout", "Constant", "Shape", "Gather", "Cast",
       "Slice", "Div", "HardSigmoid", "HardSwish", "ReduceMean", "Split"}


ELEMENTWISE = {"Relu", "LeakyRelu", "PRelu", "Clip", "Add", "Sub", "Mul", "Div", "Sigmoid", "Tanh",
               "HardSigmoid", "HardSwish", "Identity", "Dropout", "Cast", "Constant"}


def adapt(test_dir, work):
    """(model path, input path, expected output) or a reason to skip."""
    m = onnx.load(os.path.join(test_dir, "model.onnx"))
    opset = max([o.version for o in m.opset_import if o.domain in ("", "ai.onnx")] or [0])
    if opset < 11:
        m = onnx.version_converter.convert_version(m, 13)
    ops = {n.op_type for n in m.graph.node}
    if not ops <= OPS:
        return "op " + ",".join(sorted(ops - OPS)) + " not read by dlasim"
    main_op = m.graph.node[0].op_type if len(m.graph.node) == 1 else "+".join(sorted(ops))
    if len(m.graph.output) != 1:
        return "more than one output"
    ds = os.path.join(test_dir, "test_data_set_0")
    inits = {i.name for i in m.graph.initializer}
    inputs = [i for i in m.graph.input if i.name not in inits]
    values = []
    for k in range(len(inputs)):
        t = onnx.TensorProto()
        with open(os.path.join(ds, "input_%d.pb" % k), "rb") as f:
            t.ParseFromString(f.read())
        values.append(numpy_helper.to_array(t))
    if not values or values[0].dtype != np.float32:
        return "first input is not float32"
    lead = values[0].ndim >= 2 and values[0].shape[0] != 1
    if lead and ops <= ELEMENTWISE and values[0].ndim < 6:
        values[0] = values[0][None]  # element-wise: the same values with a leading 1
        dims = m.graph.input[[i.name for i in m.graph.input].index(inputs[0].name)].type.tensor_type.shape.dim
        dims.insert(0, onnx.TensorShapeProto.Dimension(dim_value=1))
        for o in m.graph.output:
            o.type.tensor_type.shape.dim.insert(0, onnx.TensorShapeProto.Dimension(dim_value=1))
    elif lead:
        return "batch %d" % values[0].shape[0]
    for inp, v in zip(inputs[1:], values[1:]):
        m.graph.initializer.append(numpy_helper.from_array(v, inp.name))
    t = onnx.TensorProto()
    with open(os.path.join(ds, "output_0.pb"), "rb") as f:
        t.ParseFromString(f.read())
    expect = numpy_helper.to_array(t)
    if expect.dtype != np.float32:
        return "output is not float32"
    name = os.path.basename(test_dir)
    mp = os.path.join(work, name + ".onnx")
    onnx.save(m, mp)
    xp = os.path.join(work, name + ".f32")
    values[0].astype(np.float32).tofile(xp)
    return main_op, mp, xp, expect


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    dlasim, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    table = collections.defaultdict(lambda: [0, 0, 0, 0])  # op: passed, failed, refused, not run
    skipped = collections.Counter()
    passed = failed = 0
    for test_dir in sorted(glob.glob(os.path.join(DATA, "test_*"))):
        name = os.path.basename(test_dir)
        try:
            r = adapt(test_dir, work)
        except Exception as e:  # a test this driver cannot read
            r = "unreadable: %s" % e
        if isinstance(r, str):
            if not r.startswith("op "):
                skipped[r] += 1
                op = onnx.load(os.path.join(test_dir, "model.onnx")).graph.node[0].op_type
                table[op][3] += 1
            continue
        op, mp, xp, expect = r
        yp = xp[:-4] + ".out.f32"
        p = subprocess.run([dlasim, "run", mp, "--input", xp, "--float-only", "--float-raw", yp],
                           capture_output=True, text=True)
        if p.returncode:
            msg = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
            table[op][2] += 1
            print("REFUSED %s: %s" % (name, msg.split(": ", 2)[-1]))
            continue
        else:
            y = np.fromfile(yp, np.float32)
            ok = y.size == expect.size and np.allclose(y, expect.ravel(), rtol=1e-3, atol=1e-5)
            msg = "" if ok else "max |diff| %.3g" % (np.abs(y - expect.ravel()).max()
                                                     if y.size == expect.size else float("nan"))
        table[op][0 if ok else 1] += 1
        passed += ok
        failed += not ok
        print("%s %s%s" % ("PASS" if ok else "FAIL", name, "" if ok else ": " + msg))
    print()
    print("| operator | passed | failed | refused | not run |")
    print("|---|---:|---:|---:|---:|")
    for op in sorted(o for o in table if set(o.split("+")) <= OPS):
        print("| %s | %d | %d | %d | %d |" % (op, *table[op]))
    for why, n in skipped.most_common():
        print("not run: %d tests: %s" % (n, why))
    print("%d passed, %d failed" % (passed, failed))


if __name__ == "__main__":
    main()

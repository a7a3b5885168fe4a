#!/usr/bin/python3
"""ONNX's own operator tests (Debian's libonnx-testdata, data/node/test_*)
on dlasim's float reference, for every operator dlasim reads.

    /usr/bin/python3 tools/models/onnx_node_tests.py DLASIM WORKDIR [--table]

Per test: its model and test_data_set_0 inputs and expected output.  Adapted
where dlasim's model shape needs it: inputs after the first become constants
(initializers) holding the test's values; models of opsets below 11 are
converted to opset 13 by onnx.version_converter; element-wise operators
whose first dimension is not 1 get a leading dimension of 1 (same values);
other tests whose first dimension N is not 1 (dlasim's models have batch 1)
run as N runs of one sample each where the operator treats the samples
independently (batch_split: no axis attribute on dimension 0, the output's
first dimension N; constants with a per-sample dimension are sliced with
the input), their outputs concatenated and compared with the whole
expected output.  Not run (counted, with the reason): tests of operators
dlasim does not read, more than one output, a first input that is not
float32, a batch whose samples the operator mixes.  Compared with numpy.allclose(rtol=1e-3, atol=1e-5) (ONNX's backend
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


def norm_axes(axes, rank):
    return {a + rank if a < 0 else a for a in axes}


def batch_split(node, rank, values, inputs, inits, expect):
    """Why the samples of dimension 0 cannot run one at a time, or None; and
    the indices of the inputs (after the first) that carry a per-sample
    dimension 0 (sliced with it)."""
    op = node.op_type
    at = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    n = values[0].shape[0]
    if expect.ndim < 1 or expect.shape[0] != n:
        return "batch > 1: the output's first dimension is not the batch", ()
    default_axis = {"Concat": 0, "Softmax": -1, "Flatten": 1, "Gather": 0}
    if op in default_axis and 0 in norm_axes([at.get("axis", default_axis[op])], rank):
        return "batch > 1: %s along dimension 0" % op, ()
    if op == "ReduceMean" and (0 in norm_axes(at.get("axes", range(rank)), rank)):
        return "batch > 1: ReduceMean over dimension 0", ()
    if op == "Transpose" and list(at.get("perm", range(rank - 1, -1, -1)))[:1] != [0]:
        return "batch > 1: Transpose moves dimension 0", ()
    if op == "Gemm" and at.get("transA", 0):
        return "batch > 1: Gemm's transposed A holds the rows in dimension 1", ()
    if op == "Reshape" and at.get("allowzero", 0):
        return "batch > 1: Reshape with allowzero", ()
    if op == "Slice":
        axes = values[3] if len(values) > 3 else range(len(values[1]))
        if 0 in norm_axes([int(a) for a in axes], rank):
            return "batch > 1: Slice along dimension 0", ()
    if op == "Concat":
        return None, range(1, len(values))
    if op == "Gemm" and len(values) > 2 and values[2].ndim == 2 and values[2].shape[0] == n and n > 1:
        return None, (2,)
    if op == "MatMul" and len(values) > 1 and values[0].ndim >= 3 and values[1].ndim == values[0].ndim:
        return None, (1,)
    if op in ("Unsqueeze", "Squeeze") and len(values) > 1 and 0 in norm_axes([int(a) for a in values[1]], rank):
        return "batch > 1: %s of dimension 0" % op, ()
    return None, ()


def one_sample(m, inputs, values, batched, i, op):
    """The model and input of sample i of a batch."""
    s = onnx.ModelProto()
    s.CopyFrom(m)
    for d in (s.graph.input[[x.name for x in s.graph.input].index(inputs[0].name)].type.tensor_type.shape.dim,
              s.graph.output[0].type.tensor_type.shape.dim):
        if len(d):
            d[0].Clear()
            d[0].dim_value = 1
    for k, (inp, v) in enumerate(zip(inputs[1:], values[1:]), 1):
        if k in batched:
            v = v[i:i + 1]
        elif op == "Reshape" and k == 1 and v.size and v[0] == values[0].shape[0]:
            v = v.copy()
            v[0] = 1
        s.graph.initializer.append(numpy_helper.from_array(v, inp.name))
    return s, values[0][i:i + 1]


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
    t = onnx.TensorProto()
    with open(os.path.join(ds, "output_0.pb"), "rb") as f:
        t.ParseFromString(f.read())
    expect = numpy_helper.to_array(t)
    if expect.dtype != np.float32:
        return "output is not float32"
    name = os.path.basename(test_dir)
    lead = values[0].ndim >= 2 and values[0].shape[0] != 1
    if lead and not (ops <= ELEMENTWISE and values[0].ndim < 6):
        if len(m.graph.node) != 1:
            return "batch %d of several nodes" % values[0].shape[0]
        why, batched = batch_split(m.graph.node[0], values[0].ndim, values, inputs, inits, expect)
        if why:
            return why
        runs = []
        for i in range(values[0].shape[0]):
            s, x = one_sample(m, inputs, values, batched, i, main_op)
            mp = os.path.join(work, "%s.%d.onnx" % (name, i))
            onnx.save(s, mp)
            xp = mp[:-5] + ".f32"
            x.astype(np.float32).tofile(xp)
            runs.append((mp, xp))
        return main_op, runs, expect
    if lead:
        values[0] = values[0][None]  # element-wise: the same values with a leading 1
        dims = m.graph.input[[i.name for i in m.graph.input].index(inputs[0].name)].type.tensor_type.shape.dim
        dims.insert(0, onnx.TensorShapeProto.Dimension(dim_value=1))
        for o in m.graph.output:
            o.type.tensor_type.shape.dim.insert(0, onnx.TensorShapeProto.Dimension(dim_value=1))
    for inp, v in zip(inputs[1:], values[1:]):
        m.graph.initializer.append(numpy_helper.from_array(v, inp.name))
    mp = os.path.join(work, name + ".onnx")
    onnx.save(m, mp)
    xp = os.path.join(work, name + ".f32")
    values[0].astype(np.float32).tofile(xp)
    return main_op, [(mp, xp)], expect


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    dlasim, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    # op: passed, failed, refused, not run, passed of them as one run per sample
    table = collections.defaultdict(lambda: [0, 0, 0, 0, 0])
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
        op, runs, expect = r
        ys, refused = [], None
        for mp, xp in runs:
            yp = xp[:-4] + ".out.f32"
            p = subprocess.run([dlasim, "run", mp, "--input", xp, "--float-only", "--float-raw", yp],
                               capture_output=True, text=True)
            if p.returncode:
                refused = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
                break
            ys.append(np.fromfile(yp, np.float32))
        if refused:
            table[op][2] += 1
            print("REFUSED %s: %s" % (name, refused.split(": ", 2)[-1]))
            continue
        y = np.concatenate(ys)
        ok = y.size == expect.size and np.allclose(y, expect.ravel(), rtol=1e-3, atol=1e-5)
        msg = "" if ok else "max |diff| %.3g" % (np.abs(y - expect.ravel()).max()
                                                 if y.size == expect.size else float("nan"))
        table[op][0 if ok else 1] += 1
        table[op][4] += ok and len(runs) > 1
        passed += ok
        failed += not ok
        split = " (batch %d as %d runs)" % (len(runs), len(runs)) if len(runs) > 1 else ""
        print("%s %s%s%s" % ("PASS" if ok else "FAIL", name, split, "" if ok else ": " + msg))
    print()
    print("| operator | passed | of them batch N as N runs | failed | refused | not run |")
    print("|---|---:|---:|---:|---:|---:|")
    for op in sorted(o for o in table if set(o.split("+")) <= OPS):
        p_, f_, r_, n_, b_ = table[op]
        print("| %s | %d | %d | %d | %d | %d |" % (op, p_, b_, f_, r_, n_))
    for why, n in skipped.most_common():
        print("not run: %d tests: %s" % (n, why))
    print("%d passed, %d failed" % (passed, failed))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""dlasim's float reference against ONNX Runtime on each given model: two
random inputs (seeded; uniform [0, 1), the range image models get), the
float outputs of `dlasim run --float-only` and of ONNX Runtime
(tools/models/ort_run.js) compared element by element.

    /usr/bin/python3 tools/models/ort_compare.py DLASIM ORT_DIR WORKDIR MODEL.onnx...

Passes when the largest difference is within 1e-5 of the output's range
(float32 rounding of different summation orders is about 1e-7 of it).
Prints one line per model and ends with "N passed, N failed".
"""
import os
import subprocess
import sys

import numpy as np
import onnx

TOL = 1e-5


def input_shape(path):
    m = onnx.load(path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    x = [i for i in m.graph.input if i.name not in inits][0]
    return [d.dim_value if d.dim_value > 0 else 1 for d in x.type.tensor_type.shape.dim]


def exit_report(who, r):
    """Which side failed and how: a signal leaves no message, so say so."""
    how = ("killed by signal %d" % -r.returncode if r.returncode < 0
           else "exit status %d" % r.returncode)
    text = (r.stderr.strip() or r.stdout.strip())[-300:]
    return "%s %s%s" % (who, how, ": " + text if text else " (printed nothing)")


def main():
    dlasim, ort_dir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, NODE_PATH=os.path.join(ort_dir, "node_modules"))
    here = os.path.dirname(os.path.abspath(__file__))
    passed = failed = 0
    for i, model in enumerate(sys.argv[4:]):
        name = os.path.basename(model)[:-5]
        shape = input_shape(model)
        x = np.random.default_rng(i + 1).uniform(0, 1, [2] + shape).astype(np.float32)
        xp, fp, op = (os.path.join(work, name + s) for s in (".in.f32", ".dlasim.f32", ".ort.f32"))
        x.tofile(xp)
        a = subprocess.run([dlasim, "run", model, "--input", xp, "--float-only", "--float-raw", fp],
                           capture_output=True, text=True)
        b = subprocess.run(["node", os.path.join(here, "ort_run.js"), model, xp, "2", op],
                           capture_output=True, text=True, env=env)
        if a.returncode or b.returncode:
            failed += 1
            print("FAIL %s: %s" % (name, "; ".join(
                exit_report(who, r) for who, r in (("dlasim", a), ("onnxruntime-node", b))
                if r.returncode)))
            continue
        f, o = np.fromfile(fp, np.float32), np.fromfile(op, np.float32)
        rng = float(o.max() - o.min()) if o.size else 0.0
        err = float(np.abs(f - o).max()) / max(rng, 1e-6) if f.size == o.size else float("inf")
        ok = f.size == o.size and err <= TOL
        passed += ok
        failed += not ok
        print("%s %s: %d outputs, max |dlasim - ORT| = %.2g of the output range" %
              ("PASS" if ok else "FAIL", name, o.size, err))
    print("%d passed, %d failed" % (passed, failed))


if __name__ == "__main__":
    main()

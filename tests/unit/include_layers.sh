#!/bin/sh
# Which way dependencies run (docs/architecture.md, "Folders and layers"):
# every #include "..." of a file under src/ is an edge from its folder to the
# included file's folder.  Checked:
#   1. no cycle between folders (src/sim/core -> src/sim/nvdla -> src/sim/core
#      would be one; a folder including itself is fine, and a gen/ folder is
#      its parent's: src/regs/gen is src/regs);
#   2. the device core (src/sim/core) includes no device folder;
#   3. the planning layer (src/plan) includes nothing of src/sim, src/driver
#      or src/timing (it plans without a device);
#   4. one device folder includes nothing of another (src/sim/nvdla,
#      src/sim/rk3588: what they share is in src/sim/core);
#   5. the simulator (src/sim) includes nothing of src/timing but its
#      interface (timing/timing.h, timing/summary.h), and src/timing nothing
#      of src/sim: the cycle model reads layer summaries and returns PERF
#      counter values, it never reads or writes the device; nor does it
#      include a register map (src/regs): unit ids are opaque to it.
# Run from the repository root:  sh tests/unit/include_layers.sh
# Prints each violation and "N passed, N failed".
PY=${PYTHON:-python3}
exec "$PY" - "$@" <<'PYEOF'
import os, re, sys
from collections import defaultdict

inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
files = []
for root, _, names in os.walk("src"):
    files += [os.path.join(root, n) for n in names if n.endswith((".c", ".h"))]

def folder_of(path):
    # generated code (src/regs/gen) is part of the folder whose generator
    # and lookups made it
    d = os.path.dirname(path)
    return os.path.dirname(d) if os.path.basename(d) == "gen" else d

def resolve(src, name):
    # the Makefile's include path: -Isrc (and the including file's folder)
    for cand in (os.path.join("src", name), os.path.join(os.path.dirname(src), name)):
        if os.path.exists(cand):
            return os.path.normpath(cand)
    return None

edges = defaultdict(set)     # folder -> folders
why = {}                     # (from, to) -> first "file includes name"
includes = []                # (file, included file)
for f in sorted(files):
    for name in inc.findall(open(f, encoding="utf-8", errors="replace").read()):
        t = resolve(f, name)
        if not t:
            continue
        includes.append((f, t))
        a, b = folder_of(f), folder_of(t)
        if a != b:
            edges[a].add(b)
            why.setdefault((a, b), "%s includes %s" % (f, name))

passed = failed = 0
def check(ok, msg):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL " + msg)

# 1. cycles (depth-first search over folders)
state, stack, cycles = {}, [], []
def visit(n):
    state[n] = 1
    stack.append(n)
    for m in sorted(edges[n]):
        if state.get(m) == 1:
            cycles.append(stack[stack.index(m):] + [m])
        elif m not in state:
            visit(m)
    stack.pop()
    state[n] = 2
for n in sorted(list(edges)):
    if n not in state:
        visit(n)
for c in cycles:
    check(False, "include cycle between folders: " + " -> ".join(c) + " (" +
          "; ".join(why[(c[i], c[i + 1])] for i in range(len(c) - 1)) + ")")
check(True, "")  # the search itself ran

def under(path, top):
    return path == top or path.startswith(top + "/")

# 2-5. layer rules: (from folder prefix, to file predicate, reason)
rules = [
    ("src/sim/core", lambda t: under(t, "src/sim/nvdla") or under(t, "src/sim/rk3588"),
     "the device core includes no device"),
    ("src/plan", lambda t: under(t, "src/sim") or under(t, "src/driver") or under(t, "src/timing"),
     "planning needs no device"),
    ("src/sim/nvdla", lambda t: under(t, "src/sim/rk3588"), "one device includes no other"),
    ("src/sim/rk3588", lambda t: under(t, "src/sim/nvdla"), "one device includes no other"),
    ("src/sim", lambda t: under(t, "src/timing") and
     t not in ("src/timing/timing.h", "src/timing/summary.h"),
     "the simulator sees only the timing layer's interface (timing.h, summary.h)"),
    ("src/timing", lambda t: under(t, "src/sim"),
     "the cycle model reads layer summaries, never the simulator"),
    ("src/timing", lambda t: under(t, "src/regs"),
     "the cycle model reads layer summaries, not a device's register map or unit numbers"),
]
for top, bad, reason in rules:
    hits = [(f, t) for f, t in includes if under(folder_of(f), top) and bad(t)]
    for f, t in hits:
        check(False, "%s includes %s: %s" % (f, t, reason))
    if not hits:
        check(True, "")
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
PYEOF

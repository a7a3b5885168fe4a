#!/usr/bin/python3
"""Validate a Chrome/Perfetto trace-event file (JSON Object Format) as
dlasim's --timeline writes it: a "traceEvents" array whose events have a
name, a phase and a pid; complete events (ph "X") a tid, ts >= 0 and dur >= 0
(microseconds); counter events (ph "C") ts >= 0 and numeric args; metadata
events (ph "M") a process_name/thread_name with args.name.  Also: every
thread a slice is on is named, and slices on one thread do not overlap.
Exit 0 when valid, 1 with the first problem on stderr."""
import json
import numbers
import sys


def fail(msg):
    sys.stderr.write("trace-event check: %s\n" % msg)
    sys.exit(1)


def main(path):
    with open(path) as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("no traceEvents array")
    events = doc["traceEvents"]
    if not events:
        fail("traceEvents is empty")
    named, slices = set(), {}
    for i, e in enumerate(events):
        where = "event %d" % i
        if not isinstance(e, dict):
            fail(where + " is not an object")
        for key in ("name", "ph", "pid"):
            if key not in e:
                fail("%s has no %s" % (where, key))
        ph = e["ph"]
        if ph == "M":
            if e["name"] not in ("process_name", "thread_name", "process_sort_index",
                                 "thread_sort_index"):
                fail(where + ": unknown metadata " + str(e["name"]))
            if e["name"] == "thread_name":
                if not isinstance(e.get("args", {}).get("name"), str):
                    fail(where + ": thread_name without args.name")
                named.add((e["pid"], e.get("tid")))
        elif ph == "X":
            for key in ("tid", "ts", "dur"):
                if not isinstance(e.get(key), numbers.Number):
                    fail("%s: complete event without numeric %s" % (where, key))
            if e["ts"] < 0 or e["dur"] < 0:
                fail(where + ": negative ts or dur")
            slices.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["dur"], e["name"]))
        elif ph == "C":
            if not isinstance(e.get("ts"), numbers.Number) or e["ts"] < 0:
                fail(where + ": counter without ts >= 0")
            args = e.get("args")
            if not isinstance(args, dict) or not args or not all(
                    isinstance(v, numbers.Number) for v in args.values()):
                fail(where + ": counter args must be numbers")
        elif ph not in ("B", "E", "i", "I", "b", "e", "n", "s", "t", "f"):
            fail(where + ": unknown phase " + str(ph))
    if not slices:
        fail("no complete (X) events")
    for track, evs in slices.items():
        if track not in named:
            fail("thread %s has slices but no thread_name" % (track,))
        evs.sort()
        for (t0, d0, n0), (t1, _, n1) in zip(evs, evs[1:]):
            if t1 < t0 + d0 - 1e-6:
                fail("slices %s and %s overlap on thread %s" % (n0, n1, track))
    print("trace-event file OK: %d events, %d tracks with slices" % (len(events), len(slices)))


if __name__ == "__main__":
    main(sys.argv[1])

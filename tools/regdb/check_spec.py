#!/usr/bin/env python3
"""Check a register database against register-table spec files.

Usage:
    python3 tools/regdb/check_spec.py regdb/rk3588.xml SPEC.md [SPEC.md ...]

A spec file (e.g. the project's 002 PPU and 003 DPU_RDMA documents) has one
section per register, "## RKNN_<block>_<register>（0xOFFSET）", followed by a
table "| Bit | access | reset | `field` | description |" (reserved rows name
the field "—").  Every register of the blocks the files cover must exist in
the database at that offset with exactly those fields (bits, access type,
reset value), and the database may hold no other register or field in those
blocks.  Prints each difference; exit status 1 if any.  Standard library only.
"""

import re
import sys
import xml.etree.ElementTree as ET

SECTION = re.compile(r"^##\s+RKNN_([a-z0-9_]+?)\s*[（(]\s*(0x[0-9A-Fa-f]+)\s*[）)]")
ROW = re.compile(r"^\|\s*([0-9]+)(?::([0-9]+))?\s*\|\s*([A-Z0-9]+)\s*\|\s*(0x[0-9A-Fa-f]+|[0-9]+)\s*"
                 r"\|\s*`?([^`|]+?)`?\s*\|")


def load_db(path):
    units = {}
    for d in ET.parse(path).getroot().iter("domain"):
        base = int(d.get("base"), 0)
        regs = {}
        for r in d.iter("reg32"):
            fields = {}
            for f in r.iter("bitfield"):
                fields[f.get("name")] = (int(f.get("high")), int(f.get("low")), f.get("access"),
                                         int(f.get("reset"), 0))
            regs[r.get("name")] = (base + int(r.get("offset"), 0), fields)
        units[d.get("name")] = regs
    return units


def load_spec(path, unit_names):
    regs = {}
    cur = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = SECTION.match(line)
            if m:
                full = m.group(1).upper()
                unit = max((u for u in unit_names if full.startswith(u + "_")), key=len,
                           default=None)
                if unit is None:
                    raise SystemExit("%s:%d: no database block prefixes RKNN_%s" % (path, n, m.group(1)))
                cur = (unit, full[len(unit) + 1:])
                regs[cur] = [int(m.group(2), 16), {}, n]
                continue
            m = ROW.match(line)
            if m and cur is not None:
                hi = int(m.group(1))
                lo = int(m.group(2)) if m.group(2) else hi
                name = m.group(5).strip()
                if name in ("—", "-"):
                    continue
                regs[cur][1][name.upper()] = (hi, lo, m.group(3), int(m.group(4), 0))
    return regs


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    db = load_db(argv[1])
    errors = 0
    covered = set()
    nregs = nfields = 0
    for path in argv[2:]:
        spec = load_spec(path, db.keys())
        for (unit, reg), (off, fields, line) in sorted(spec.items()):
            covered.add(unit)
            nregs += 1
            where = "%s:%d: RKNN_%s_%s" % (path, line, unit.lower(), reg.lower())
            if reg not in db[unit]:
                print("%s: not in the database" % where)
                errors += 1
                continue
            doff, dfields = db[unit][reg]
            if doff != off:
                print("%s: offset 0x%x, database 0x%x" % (where, off, doff))
                errors += 1
            for fname, want in sorted(fields.items()):
                nfields += 1
                got = dfields.get(fname)
                if got != want:
                    print("%s.%s: spec [%d:%d] %s reset 0x%x, database %s" % (
                        where, fname, want[0], want[1], want[2], want[3],
                        "[%d:%d] %s reset 0x%x" % got if got else "has no such field"))
                    errors += 1
            for fname in sorted(set(dfields) - set(fields)):
                print("%s.%s: in the database, not in the spec" % (where, fname))
                errors += 1
    for unit in sorted(covered):
        spec_regs = set()
        for path in argv[2:]:
            spec_regs |= {r for (u, r) in load_spec(path, db.keys()) if u == unit}
        for reg in sorted(set(db[unit]) - spec_regs):
            print("%s: database register %s.%s is not in the spec" % (argv[1], unit, reg))
            errors += 1
    print("%d registers, %d fields of %s checked against the spec: %d difference(s)" % (
        nregs, nfields, ", ".join(sorted(covered)), errors))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

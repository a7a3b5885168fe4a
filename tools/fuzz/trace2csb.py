#!/usr/bin/env python3
"""Convert NVDLA register traces into seed inputs of the fuzz_csb fuzzer.

fuzz_csb input (tests/fuzz/fuzz_csb.c): one byte choosing the configuration
(0 nv_small, 1 nv_small_256, 2 nv_large), then 6-byte records
{register index into nvdla_regs[] (u16 LE), value (u32 LE)}; index 0xffff runs
the device.  A trace's reg_write lines become register records, each
intr_notify / poll_reg_equal a run record; memory commands are dropped (the
fuzzer fills some memory itself).  The register order is read from the
generated table src/regs/gen/nvdla_regs_table.c, so seeds follow the one
register database.

With --text, writes instead a normalised trace for the fuzz_trace fuzzer: the
register writes and waits rewritten one per line in dlasim's trace syntax, one
check_nothing per event, no memory commands and no comments.

usage: trace2csb.py [--config NAME] [--regs TABLE.c] [--text] OUT_DIR CASE.cfg...
"""
import argparse
import os
import re
import struct
import sys

CONFIGS = {"nv_small": 0, "nv_small_256": 1, "nv_large": 2}
RUN = 0xFFFF


def load_regs(table):
    """Register index by (unit, name), in the order of nvdla_regs[]."""
    text = open(table, encoding="utf-8").read()
    body = text[text.index("nvdla_regs[NVDLA_REG_COUNT]"):]
    index = {}
    for i, m in enumerate(re.finditer(r'\{"(\w+)", 0x[0-9a-f]+u, NVDLA_UNIT_(\w+),', body)):
        index[(m.group(2), m.group(1))] = i
    return index


def convert(cfg_path, config, regs):
    out = bytearray([CONFIGS[config]])
    write = re.compile(r"reg_write\(\s*NVDLA_(\w+)\.(\w+)\s*,\s*(0x[0-9a-fA-F]+|\d+)\s*\)")
    for line in open(cfg_path, encoding="utf-8", errors="replace"):
        line = line.split("//")[0].strip()
        m = write.match(line)
        if m:
            key = (m.group(1), m.group(2))
            if key not in regs:
                raise SystemExit("%s: unknown register NVDLA_%s.%s" % (cfg_path, *key))
            out += struct.pack("<HI", regs[key], int(m.group(3), 0) & 0xFFFFFFFF)
        elif line.startswith(("intr_notify", "poll_reg_equal")):
            out += struct.pack("<HI", RUN, 0)
    return bytes(out)


def convert_text(cfg_path):
    """The trace's writes and waits as normalised trace text."""
    write = re.compile(r"reg_write\(\s*(NVDLA_\w+\.\w+)\s*,\s*(0x[0-9a-fA-F]+|\d+)\s*\)")
    wait = re.compile(r"(intr_notify|poll_reg_equal)\(\s*([\w.]+)\s*,\s*(\w+)\s*\)")
    lines, events = [], []
    for line in open(cfg_path, encoding="utf-8", errors="replace"):
        line = line.split("//")[0].strip()
        m = write.match(line)
        if m:
            lines.append("reg_write(%s, 0x%x);" % (m.group(1), int(m.group(2), 0)))
            continue
        m = wait.match(line)
        if m:
            lines.append("%s(%s, %s);" % m.groups())
            if m.group(1) == "intr_notify":
                events.append(m.group(3))
    lines += ["check_nothing(%s);" % e for e in dict.fromkeys(events)]
    return ("\n".join(lines) + "\n").encode()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="nv_small", choices=sorted(CONFIGS))
    ap.add_argument("--regs", default="src/regs/gen/nvdla_regs_table.c")
    ap.add_argument("--text", action="store_true", help="normalised trace text for fuzz_trace")
    ap.add_argument("out_dir")
    ap.add_argument("cases", nargs="+")
    a = ap.parse_args()
    regs = load_regs(a.regs)
    os.makedirs(a.out_dir, exist_ok=True)
    for cfg in a.cases:
        name = os.path.splitext(os.path.basename(cfg))[0]
        if a.text:
            data = convert_text(cfg)
            out = os.path.join(a.out_dir, name + ".cfg")
        else:
            data = convert(cfg, a.config, regs)
            out = os.path.join(a.out_dir, "%s-%s" % (a.config, name))
        with open(out, "wb") as f:
            f.write(data)
        print("%s: %d bytes" % (name, len(data)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

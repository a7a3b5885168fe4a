#!/usr/bin/env python3
"""One-shot importer: NVDLA SystemRDL register files -> regdb/nvdla.xml.

Usage:
    python3 tools/regdb/rdl_import.py RDL_DIR [OUT_XML]

RDL_DIR is the folder holding NVDLA_<UNIT>.rdl (for instance the nv_small
branch's spec/manual).  It is an argument only: nothing of it is committed
except the facts written to the XML (names, offsets, bit ranges, access,
reset values, enum encodings).  Descriptions are NOT imported.

The XML is the source of truth afterwards; regenerate the C tables with
tools/regdb/gen_regs.py.  The curation rules applied here (group, kind,
access) are documented in regdb/README.md and in CURATION below.

Only the small SystemRDL subset used by NVDLA's files is understood:
property/regfile/reg/field/enum blocks, `name`/`desc` assignments,
`X->desc=` assignments, `default regwidth`, `@offset` and the addrmap.
Anything else stops the import with FILE:LINE.
"""

import os
import re
import sys
from xml.sax.saxutils import quoteattr

# Address map (spec 000 first table; RDL addrmap instances).  The RDL
# spells RUBIK as RBK: the domain is RUBIK, alias and C prefix RBK.
UNITS = [
    # (domain name, rdl name, base, alias, C prefix)
    ("CFGROM", "CFGROM", 0x00000, None, "CFGROM"),
    ("GLB", "GLB", 0x01000, None, "GLB"),
    ("MCIF", "MCIF", 0x02000, None, "MCIF"),
    ("CDMA", "CDMA", 0x03000, None, "CDMA"),
    ("CSC", "CSC", 0x04000, None, "CSC"),
    ("CMAC_A", "CMAC_A", 0x05000, None, "CMAC_A"),
    ("CMAC_B", "CMAC_B", 0x06000, None, "CMAC_B"),
    ("CACC", "CACC", 0x07000, None, "CACC"),
    ("SDP_RDMA", "SDP_RDMA", 0x08000, None, "SDP_RDMA"),
    ("SDP", "SDP", 0x09000, None, "SDP"),
    ("PDP_RDMA", "PDP_RDMA", 0x0A000, None, "PDP_RDMA"),
    ("PDP", "PDP", 0x0B000, None, "PDP"),
    ("CDP_RDMA", "CDP_RDMA", 0x0C000, None, "CDP_RDMA"),
    ("CDP", "CDP", 0x0D000, None, "CDP"),
    ("GEC", "GEC", 0x0E000, None, "GEC"),
    ("CVIF", "CVIF", 0x0F000, None, "CVIF"),
    ("BDMA", "BDMA", 0x10000, None, "BDMA"),
    ("RUBIK", "RBK", 0x11000, "RBK", "RBK"),
]

# Units with a single register set whatever their names say.
SINGLE_ONLY = {"CFGROM", "GLB", "MCIF", "CVIF", "GEC", "BDMA"}


class RdlError(Exception):
    pass


TOKEN_RE = re.compile(r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<comment>//[^\n]*)
  | (?P<string>"[^"]*")
  | (?P<num>[0-9]+'[dDhHbBoO][0-9a-fA-F_]+|0[xX][0-9a-fA-F_]+|[0-9]+)
  | (?P<ident>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<punct>->|[{}\[\]:;=@,])
""", re.VERBOSE)


def tokenize(path, text):
    toks = []
    pos = 0
    line = 1
    while pos < len(text):
        m = TOKEN_RE.match(text, pos)
        if not m:
            raise RdlError("%s:%d: unexpected character %r" % (path, line, text[pos]))
        kind = m.lastgroup
        val = m.group(kind)
        if kind not in ("ws", "comment"):
            toks.append((kind, val, line))
        line += val.count("\n")
        pos = m.end()
    toks.append(("eof", "", line))
    return toks


def parse_num(tok, path, line):
    s = tok.replace("_", "")
    m = re.fullmatch(r"([0-9]+)'([dhbo])([0-9a-f]+)", s, re.IGNORECASE)
    try:
        if m:
            base = {"d": 10, "h": 16, "b": 2, "o": 8}[m.group(2).lower()]
            v = int(m.group(3), base)
            if v >> int(m.group(1)):
                raise RdlError("%s:%d: %s does not fit its width" % (path, line, tok))
            return v
        return int(s, 0)
    except ValueError:
        raise RdlError("%s:%d: bad number %r" % (path, line, tok))


class Parser:
    def __init__(self, path, toks):
        self.path = path
        self.toks = toks
        self.i = 0

    def peek(self, k=0):
        return self.toks[self.i + k]

    def err(self, msg, tok=None):
        tok = tok or self.peek()
        return RdlError("%s:%d: %s (at %r)" % (self.path, tok[2], msg, tok[1]))

    def next(self):
        t = self.toks[self.i]
        self.i += 1
        return t

    def expect(self, kind, val=None):
        t = self.next()
        if t[0] != kind or (val is not None and t[1] != val):
            raise self.err("expected %s" % (val or kind), t)
        return t

    def accept(self, kind, val=None):
        t = self.peek()
        if t[0] == kind and (val is None or t[1] == val):
            self.i += 1
            return t
        return None

    def value(self):
        t = self.next()
        if t[0] == "num":
            return parse_num(t[1], self.path, t[2])
        if t[0] in ("string", "ident"):
            return t[1].strip('"') if t[0] == "string" else t[1]
        raise self.err("expected a value", t)

    def skip_block(self):
        """Skip a balanced { ... } block (property definitions)."""
        self.expect("punct", "{")
        depth = 1
        while depth:
            t = self.next()
            if t[0] == "eof":
                raise self.err("unterminated block", t)
            if t[1] == "{":
                depth += 1
            elif t[1] == "}":
                depth -= 1

    def parse_file(self):
        """Returns (regfile name, [regs], [(regfile, instance, addr)])."""
        regfile = None
        regs = []
        insts = []
        while self.peek()[0] != "eof":
            t = self.next()
            if t[1] == "property":
                self.expect("ident")
                self.skip_block()
                self.expect("punct", ";")
            elif t[1] == "regfile":
                regfile = self.expect("ident")[1]
                regs = self.parse_regfile()
                self.expect("punct", ";")
            elif t[1] == "addrmap":
                self.accept("ident")
                self.expect("punct", "{")
                while not self.accept("punct", "}"):
                    insts.append(self.parse_instance())
                self.accept("ident")
                self.expect("punct", ";")
            else:
                raise self.err("unexpected top-level token", t)
        return regfile, regs, insts

    def parse_instance(self):
        rf = self.expect("ident")[1]
        name = self.expect("ident")[1]
        self.expect("punct", "@")
        t = self.expect("num")
        self.expect("punct", ";")
        return rf, name, parse_num(t[1], self.path, t[2])

    def parse_regfile(self):
        self.expect("punct", "{")
        regs = []
        next_off = 0
        while not self.accept("punct", "}"):
            t = self.peek()
            if t[1] == "default":
                self.next()
                key = self.expect("ident")[1]
                self.expect("punct", "=")
                v = self.value()
                self.expect("punct", ";")
                if key == "regwidth" and v != 32:
                    raise self.err("only regwidth=32 is supported", t)
            elif t[1] == "reg":
                self.next()
                reg = self.parse_reg()
                reg["inst"] = self.expect("ident")[1]
                if self.accept("punct", "@"):
                    n = self.expect("num")
                    reg["offset"] = parse_num(n[1], self.path, n[2])
                else:
                    # SystemRDL: without @ the next 32-bit aligned address.
                    reg["offset"] = next_off
                    reg["implicit_offset"] = True
                next_off = reg["offset"] + 4
                self.expect("punct", ";")
                regs.append(reg)
            elif t[0] == "ident" and self.peek(1)[1] == "ident" and self.peek(2)[1] == "@":
                # A regfile instance inside the regfile's own file (GEC etc.)
                raise self.err("nested instance not supported", t)
            else:
                raise self.err("unexpected token in regfile", t)
        return regs

    def parse_reg(self):
        start = self.expect("punct", "{")
        reg = {"line": start[2], "fields": [], "enums": {}, "name": None}
        while not self.accept("punct", "}"):
            t = self.next()
            if t[1] in ("name", "desc") and self.peek()[1] == "=":
                self.next()
                v = self.value()
                self.expect("punct", ";")
                if t[1] == "name":
                    reg["name"] = v
            elif t[1] == "enum":
                ename = self.expect("ident")[1]
                reg["enums"][ename] = self.parse_enum()
                self.expect("punct", ";")
            elif t[1] == "field":
                reg["fields"].append(self.parse_field())
            elif t[0] == "ident" and self.peek()[1] == "->":
                self.next()
                self.expect("ident")
                self.expect("punct", "=")
                self.value()
                self.expect("punct", ";")
            else:
                raise self.err("unexpected token in reg", t)
        return reg

    def parse_enum(self):
        self.expect("punct", "{")
        entries = []
        while not self.accept("punct", "}"):
            name = self.expect("ident")
            self.expect("punct", "=")
            n = self.expect("num")
            width = None
            m = re.match(r"([0-9]+)'", n[1])
            if m:
                width = int(m.group(1))
            val = parse_num(n[1], self.path, n[2])
            if self.accept("punct", "{"):
                # { desc = "..."; }
                while not self.accept("punct", "}"):
                    self.next()
            self.expect("punct", ";")
            entries.append((name[1], val, width, name[2]))
        return entries

    def parse_field(self):
        self.expect("punct", "{")
        props = {}
        while not self.accept("punct", "}"):
            key = self.expect("ident")
            self.expect("punct", "=")
            props[key[1]] = self.value()
            self.expect("punct", ";")
        name = self.expect("ident")
        self.expect("punct", "[")
        hi = parse_num(self.expect("num")[1], self.path, name[2])
        lo = hi
        if self.accept("punct", ":"):
            lo = parse_num(self.expect("num")[1], self.path, name[2])
        self.expect("punct", "]")
        self.expect("punct", ";")
        if lo > hi:
            lo, hi = hi, lo
        return {"name": name[1], "low": lo, "high": hi, "props": props, "line": name[2]}


def load_unit(rdl_dir, rdl_name):
    path = os.path.join(rdl_dir, "NVDLA_%s.rdl" % rdl_name)
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    p = Parser(os.path.basename(path), tokenize(os.path.basename(path), text))
    return p.parse_file()


# ---------------------------------------------------------------------------
# Curation rules (see regdb/README.md, "Curation rules").

def reg_kind(unit, reg):
    if unit == "CFGROM":
        return "rom"
    if unit == "GLB":
        return {"S_INTR_MASK": "intr_mask", "S_INTR_SET": "intr_set",
                "S_INTR_STATUS": "intr_status"}.get(reg, "plain")
    if reg == "S_STATUS":
        return "status"
    if reg == "S_POINTER":
        return "pointer"
    if reg == "D_OP_ENABLE":
        return "op_enable"
    if unit in ("SDP", "CDP"):
        if reg == "S_LUT_ACCESS_CFG":
            return "lut_access_cfg"
        if reg == "S_LUT_ACCESS_DATA":
            return "lut_access_data"
    return "plain"


def field_access(unit, reg, props):
    sw = props.get("sw")
    if unit == "CFGROM":
        return "RO"
    if unit == "GLB" and reg == "S_INTR_STATUS":
        return "W1C"
    if unit == "GLB" and reg == "S_INTR_SET":
        return "W1S"
    acc = {"rw": "RW", "r": "RO", "w": "WO"}.get(sw)
    if acc is None:
        raise RdlError("%s.%s: unknown sw access %r" % (unit, reg, sw))
    return acc


def reg_groups(unit, regs):
    """group per register: dual from D_OP_ENABLE upward if S_POINTER exists."""
    names = {r["inst"]: r for r in regs}
    groups = {}
    if unit in SINGLE_ONLY or "S_POINTER" not in names:
        for r in regs:
            groups[r["inst"]] = "single"
        return groups
    if "D_OP_ENABLE" not in names:
        raise RdlError("%s: S_POINTER without D_OP_ENABLE" % unit)
    first_dual = names["D_OP_ENABLE"]["offset"]
    for r in regs:
        if r["inst"].startswith("S_"):
            g = "single"
        elif r["offset"] >= first_dual:
            g = "dual"
        else:
            raise RdlError("%s.%s: below D_OP_ENABLE but not S_*" % (unit, r["inst"]))
        if r["inst"].startswith("S_") and r["offset"] >= first_dual:
            raise RdlError("%s.%s: S_* register above D_OP_ENABLE" % (unit, r["inst"]))
        groups[r["inst"]] = g
    return groups


# Curation (regdb/README.md, "Device facts"): the GLB S_INTR_STATUS fields
# each unit raises when its group 0 completes (spec 000 GLB; group 1 raises
# the next bit of each).
DONE = {
    "CDMA": "CDMA_DAT_DONE_STATUS0 CDMA_WT_DONE_STATUS0",
    "CACC": "CACC_DONE_STATUS0",
    "SDP": "SDP_DONE_STATUS0",
    "PDP": "PDP_DONE_STATUS0",
    "CDP": "CDP_DONE_STATUS0",
    "BDMA": "BDMA_DONE_STATUS0",
    "RUBIK": "RUBIK_DONE_STATUS0",
}


def hexw(v, digits):
    return "0x%0*x" % (digits, v)


def emit(rdl_dir, out):
    lines = []
    w = lines.append
    w('<?xml version="1.0" encoding="UTF-8"?>')
    w("<!-- dlasim register database.  Imported once from NVDLA's SystemRDL")
    w("     (nvdla/hw branch nv_small, spec/manual/NVDLA_*.rdl) by")
    w("     tools/regdb/rdl_import.py, then curated by the rules in")
    w("     regdb/README.md.  Edit here; regenerate with `make regs`. -->")
    w('<database name="nvdla" source="nvdla/hw:nv_small:spec/manual" width="32" '
      'intrinfix="_DONE_STATUS">')
    for dom, rdl, base, alias, cpre in UNITS:
        rf, regs, insts = load_unit(rdl_dir, rdl)
        if rf != "regs_NVDLA_%s" % rdl:
            raise RdlError("NVDLA_%s.rdl: regfile is %r" % (rdl, rf))
        inst_base = [a for (f, n, a) in insts if f == rf]
        if inst_base != [base]:
            raise RdlError("NVDLA_%s.rdl: addrmap puts it at %r, expected 0x%x"
                           % (rdl, inst_base, base))
        groups = reg_groups(dom, regs)
        attrs = 'name="%s"' % dom
        if alias:
            attrs += ' alias="%s"' % alias
        if cpre != dom:
            attrs += ' cprefix="%s"' % cpre
        done = ' done="%s"' % DONE[dom] if dom in DONE else ""
        w('  <domain %s base="%s" rdl="NVDLA_%s.rdl"%s>' % (attrs, hexw(base, 5), rdl, done))
        for r in sorted(regs, key=lambda r: r["offset"]):
            name = r["inst"]
            if r["name"] is not None and r["name"] != name:
                raise RdlError("NVDLA_%s.rdl:%d: name %r != instance %r"
                               % (rdl, r["line"], r["name"], name))
            kind = reg_kind(dom, name)
            w('    <reg32 name="%s_0" offset="%s" group="%s" kind="%s">'
              % (name, hexw(r["offset"], 3), groups[name], kind))
            for f in sorted(r["fields"], key=lambda f: f["low"]):
                p = f["props"]
                acc = field_access(dom, name, p)
                reset = p.get("reset", 0)
                fattrs = 'name="%s" low="%d" high="%d" access="%s" reset="0x%x"' % (
                    f["name"], f["low"], f["high"], acc, reset)
                enc = p.get("encode")
                if enc is None:
                    w("      <bitfield %s/>" % fattrs)
                    continue
                if enc not in r["enums"]:
                    raise RdlError("NVDLA_%s.rdl:%d: unknown enum %s" % (rdl, f["line"], enc))
                w("      <bitfield %s>" % fattrs)
                for en, ev, ewidth, eline in r["enums"][enc]:
                    if ewidth is not None and ewidth != f["high"] - f["low"] + 1:
                        raise RdlError("NVDLA_%s.rdl:%d: %s is %d bits, field %s is %d"
                                       % (rdl, eline, en, ewidth, f["name"],
                                          f["high"] - f["low"] + 1))
                    w("        <value name=%s value=\"%d\"/>" % (quoteattr(en), ev))
                w("      </bitfield>")
            w("    </reg32>")
        w("  </domain>")
    w("</database>")
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def main(argv):
    if len(argv) not in (2, 3):
        sys.stderr.write("usage: rdl_import.py RDL_DIR [OUT_XML]\n")
        return 2
    out = argv[2] if len(argv) == 3 else "regdb/nvdla.xml"
    try:
        emit(argv[1], out)
    except (RdlError, OSError) as e:
        sys.stderr.write("rdl_import: %s\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/bin/sh
# Negative tests of tools/regdb/gen_regs.py: broken register databases must
# be rejected with FILE:LINE:COL messages, a non-zero exit and no output.
# Run from the repository root:  sh tests/unit/gen_regs_errors.sh
# Prints "N passed, N failed" and exits non-zero if any case failed.

GEN=${GEN:-tools/regdb/gen_regs.py}
PY=${PYTHON:-python3}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gen_regs_errors.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT INT TERM
pass=0
fail=0

# One register database around a body of <reg32> elements (line 3 onward).
db() {
    printf '<?xml version="1.0"?>\n<database name="t">\n<domain name="A" base="0x0">\n'
    cat
    printf '</domain>\n</database>\n'
}

# expect_error NAME LINE PATTERN: the XML on stdin must fail with an error
# at t.xml:LINE: whose text matches PATTERN (grep -E), and write nothing.
expect_error() {
    name=$1 line=$2 pattern=$3
    rm -rf "$TMP/out" "$TMP/doc.md"
    db > "$TMP/t.xml"
    "$PY" "$GEN" "$TMP/t.xml" "$TMP/out" "$TMP/doc.md" > "$TMP/stdout" 2> "$TMP/stderr"
    rc=$?
    if [ $rc -eq 0 ]; then
        echo "FAIL $name: exit status 0"; fail=$((fail + 1)); return
    fi
    if ! grep -Eq "^$TMP/t.xml:$line:[0-9]+: .*$pattern" "$TMP/stderr"; then
        echo "FAIL $name: no 't.xml:$line:COL: ...$pattern' in:"; sed 's/^/    /' "$TMP/stderr"
        fail=$((fail + 1)); return
    fi
    if [ -e "$TMP/out" ] || [ -e "$TMP/doc.md" ]; then
        echo "FAIL $name: output written despite errors"; fail=$((fail + 1)); return
    fi
    echo "ok   $name"; pass=$((pass + 1))
}

expect_error overlapping_fields 6 'field B \[7:4\] overlaps field A' <<'EOF'
<reg32 name="R_0" offset="0x0" group="single" kind="plain">
  <bitfield name="A" low="0" high="4" access="RW" reset="0x0"/>
  <bitfield name="B" low="4" high="7" access="RW" reset="0x0"/>
</reg32>
EOF

expect_error reset_too_wide 5 'reset 0x10 does not fit in 4 bit' <<'EOF'
<reg32 name="R_0" offset="0x0" group="single" kind="plain">
  <bitfield name="A" low="0" high="3" access="RW" reset="0x10"/>
</reg32>
EOF

expect_error field_beyond_32_bits 5 'high=32 is beyond bit 31' <<'EOF'
<reg32 name="R_0" offset="0x0" group="single" kind="plain">
  <bitfield name="A" low="16" high="32" access="RW" reset="0x0"/>
</reg32>
EOF

expect_error low_above_high 5 'low=5 above high=2' <<'EOF'
<reg32 name="R_0" offset="0x0" group="single" kind="plain">
  <bitfield name="A" low="5" high="2" access="RW" reset="0x0"/>
</reg32>
EOF

expect_error enum_too_wide 7 'value BIG=4 does not fit field A \(2 bit' <<'EOF'
<reg32 name="R_0" offset="0x0" group="single" kind="plain">
  <bitfield name="A" low="0" high="1" access="RW" reset="0x0">
    <value name="OK" value="3"/>
    <value name="BIG" value="4"/>
  </bitfield>
</reg32>
EOF

expect_error duplicate_register_name 7 'duplicate register name R_0' <<'EOF'
<reg32 name="R_0" offset="0x0" group="single" kind="plain">
  <bitfield name="A" low="0" high="0" access="RW" reset="0x0"/>
</reg32>
<reg32 name="R_0" offset="0x4" group="single" kind="plain">
  <bitfield name="A" low="0" high="0" access="RW" reset="0x0"/>
</reg32>
EOF

expect_error duplicate_offset 7 'duplicate offset 0x004 \(R_0 at line 4\)' <<'EOF'
<reg32 name="R_0" offset="0x4" group="single" kind="plain">
  <bitfield name="A" low="0" high="0" access="RW" reset="0x0"/>
</reg32>
<reg32 name="S_0" offset="0x4" group="single" kind="plain">
  <bitfield name="A" low="0" high="0" access="RW" reset="0x0"/>
</reg32>
EOF

expect_error duplicate_field 6 'duplicate field name A' <<'EOF'
<reg32 name="R_0" offset="0x0" group="single" kind="plain">
  <bitfield name="A" low="0" high="0" access="RW" reset="0x0"/>
  <bitfield name="A" low="1" high="1" access="RW" reset="0x0"/>
</reg32>
EOF

expect_error offset_outside_window 4 'offset 0x1000 outside' <<'EOF'
<reg32 name="R_0" offset="0x1000" group="single" kind="plain">
  <bitfield name="A" low="0" high="0" access="RW" reset="0x0"/>
</reg32>
EOF

expect_error unaligned_offset 4 'offset 0x6 is not 32-bit aligned' <<'EOF'
<reg32 name="R_0" offset="0x6" group="single" kind="plain">
  <bitfield name="A" low="0" high="0" access="RW" reset="0x0"/>
</reg32>
EOF

expect_error bad_group 4 "group='triple' is not one of" <<'EOF'
<reg32 name="R_0" offset="0x0" group="triple" kind="plain">
  <bitfield name="A" low="0" high="0" access="RW" reset="0x0"/>
</reg32>
EOF

expect_error bad_access 5 "access='RC' is not one of" <<'EOF'
<reg32 name="R_0" offset="0x0" group="single" kind="plain">
  <bitfield name="A" low="0" high="0" access="RC" reset="0x0"/>
</reg32>
EOF

expect_error unknown_attribute 4 'has unknown attribute colour' <<'EOF'
<reg32 name="R_0" offset="0x0" group="single" kind="plain" colour="red">
  <bitfield name="A" low="0" high="0" access="RW" reset="0x0"/>
</reg32>
EOF

expect_error bad_number 5 "reset='0xZZ' is not a number" <<'EOF'
<reg32 name="R_0" offset="0x0" group="single" kind="plain">
  <bitfield name="A" low="0" high="7" access="RW" reset="0xZZ"/>
</reg32>
EOF

expect_error missing_suffix 4 'must end in _0' <<'EOF'
<reg32 name="R" offset="0x0" group="single" kind="plain">
  <bitfield name="A" low="0" high="0" access="RW" reset="0x0"/>
</reg32>
EOF

expect_error c_name_collision 8 'generated C name NVDLA_A_R_0_A_B .* collides with value B' <<'EOF'
<reg32 name="R_0" offset="0x0" group="single" kind="plain">
  <bitfield name="A" low="0" high="0" access="RW" reset="0x0">
    <value name="B" value="1"/>
  </bitfield>
  <bitfield name="A_B" low="1" high="1" access="RW" reset="0x0"/>
</reg32>
EOF

expect_error dual_without_pointer 4 'dual register R_0 in A, which has no kind=pointer' <<'EOF'
<reg32 name="R_0" offset="0x8" group="dual" kind="plain">
  <bitfield name="A" low="0" high="0" access="RW" reset="0x0"/>
</reg32>
EOF

expect_error single_above_op_enable 13 'register D_X_0 must be dual' <<'EOF'
<reg32 name="S_POINTER_0" offset="0x4" group="single" kind="pointer">
  <bitfield name="PRODUCER" low="0" high="0" access="RW" reset="0x0"/>
</reg32>
<reg32 name="D_OP_ENABLE_0" offset="0x8" group="dual" kind="op_enable">
  <bitfield name="OP_EN" low="0" high="0" access="RW" reset="0x0"/>
</reg32>
<reg32 name="D_Y_0" offset="0xc" group="dual" kind="plain">
  <bitfield name="Y" low="0" high="0" access="RW" reset="0x0"/>
</reg32>
<reg32 name="D_X_0" offset="0x10" group="single" kind="plain">
  <bitfield name="X" low="0" high="0" access="RW" reset="0x0"/>
</reg32>
EOF

expect_error writable_rom 5 'field A of ROM register R_0 must be RO' <<'EOF'
<reg32 name="R_0" offset="0x0" group="single" kind="rom">
  <bitfield name="A" low="0" high="0" access="RW" reset="0x0"/>
</reg32>
EOF

expect_error malformed_xml 6 'XML: mismatched tag' <<'EOF'
<reg32 name="R_0" offset="0x0" group="single" kind="plain">
  <bitfield name="A" low="0" high="0" access="RW" reset="0x0">
</reg32>
EOF

# Positive control: a valid database generates all three files.
rm -rf "$TMP/out" "$TMP/doc.md"
db > "$TMP/t.xml" <<'EOF'
<reg32 name="R_0" offset="0x4" group="single" kind="plain">
  <bitfield name="A" low="0" high="3" access="RW" reset="0x5"/>
</reg32>
EOF
if "$PY" "$GEN" "$TMP/t.xml" "$TMP/out" "$TMP/doc.md" 2> "$TMP/stderr" &&
   grep -q '#define NVDLA_A_R_0_A__MASK 0x0000000fu' "$TMP/out/nvdla_regs.h" &&
   grep -q '"R_0", 0x00004u' "$TMP/out/nvdla_regs_table.c" &&
   [ -s "$TMP/doc.md" ]; then
    echo "ok   valid_database"; pass=$((pass + 1))
else
    echo "FAIL valid_database"; sed 's/^/    /' "$TMP/stderr"; fail=$((fail + 1))
fi

# Databases of other devices (regdb/rk3588.xml): C prefix, sparse address
# map, plain register names.  A bad layout value and domains out of address
# order are errors; a valid sparse database generates <prefix>_regs.h with
# a window table that skips the gap.
sparse_db() {  # $1 = layout, $2 = base of the second domain
    printf '<?xml version="1.0"?>\n<database name="x" cprefix="XY" layout="%s" regnames="plain" traceprefix="XY_">\n' "$1"
    printf '<domain name="A" base="0x0">\n<reg32 name="R" offset="0x4" group="single" kind="plain">\n'
    printf '  <bitfield name="F" low="0" high="1" access="RW" reset="0x1"/>\n</reg32>\n</domain>\n'
    printf '<domain name="B" base="%s">\n<reg32 name="S" offset="0x0" group="single" kind="plain">\n' "$2"
    printf '  <bitfield name="G" low="0" high="0" access="RO" reset="0x0"/>\n</reg32>\n</domain>\n</database>\n'
}
check_sparse() {  # name, layout, base, expected grep on stderr or "OK"
    rm -rf "$TMP/out" "$TMP/doc.md"
    sparse_db "$2" "$3" > "$TMP/s.xml"
    if [ "$4" = OK ]; then
        if "$PY" "$GEN" "$TMP/s.xml" "$TMP/out" "$TMP/doc.md" 2> "$TMP/stderr" &&
           grep -q '#define XY_B_S 0x03000u' "$TMP/out/xy_regs.h" &&
           grep -q 'XY_UNIT_A, -1, -1, XY_UNIT_B' "$TMP/out/xy_regs_table.c"; then
            echo "ok   $1"; pass=$((pass + 1))
        else
            echo "FAIL $1"; sed 's/^/    /' "$TMP/stderr"; fail=$((fail + 1))
        fi
    elif "$PY" "$GEN" "$TMP/s.xml" "$TMP/out" "$TMP/doc.md" 2> "$TMP/stderr"; then
        echo "FAIL $1: exit status 0"; fail=$((fail + 1))
    elif grep -Eq "$4" "$TMP/stderr" && [ ! -e "$TMP/out" ]; then
        echo "ok   $1"; pass=$((pass + 1))
    else
        echo "FAIL $1: no '$4' in:"; sed 's/^/    /' "$TMP/stderr"; fail=$((fail + 1))
    fi
}
check_sparse sparse_valid sparse 0x3000 OK
check_sparse sparse_bad_layout bogus 0x3000 "layout='bogus' is not one of dense, sparse"
check_sparse sparse_out_of_order sparse 0x0 "s.xml:8:[0-9]+: domain B: base 0x0 is not above"
check_sparse dense_with_gap dense 0x3000 "domains must be in address order with no gaps"

# Device facts (regdb/README.md "Device facts"): a domain's done bits name
# fields of the database's interrupt status register ending in 0, with the
# group-1 field of the same name ending in 1 beside it, opbit is one bit,
# regcmd targets are unique; a valid set lands in the unit table.
facts_db() {  # $1 = attributes of domain B
    printf '<?xml version="1.0"?>\n<database name="x" cprefix="XY" layout="sparse" regnames="plain" intrinfix="_">\n'
    printf '<domain name="A" base="0x0" regcmd="0x0100">\n<reg32 name="ST" offset="0x4" group="single" kind="intr_status">\n'
    printf '  <bitfield name="B_0" low="2" high="2" access="RO" reset="0x0"/>\n'
    printf '  <bitfield name="B_1" low="3" high="3" access="RO" reset="0x0"/>\n'
    printf '  <bitfield name="E_0" low="4" high="4" access="RO" reset="0x0"/>\n</reg32>\n</domain>\n'
    printf '<domain name="B" base="0x1000" %s>\n<reg32 name="S" offset="0x0" group="single" kind="plain">\n' "$1"
    printf '  <bitfield name="G" low="0" high="0" access="RW" reset="0x0"/>\n</reg32>\n</domain>\n</database>\n'
}
check_facts() {  # name, attributes, expected grep on stderr or on the table ("OK:<pattern>")
    rm -rf "$TMP/out" "$TMP/doc.md"
    facts_db "$2" > "$TMP/f.xml"
    case "$3" in
    OK:*)
        if "$PY" "$GEN" "$TMP/f.xml" "$TMP/out" "$TMP/doc.md" 2> "$TMP/stderr" &&
           grep -q "${3#OK:}" "$TMP/out/xy_regs_table.c"; then
            echo "ok   $1"; pass=$((pass + 1))
        else
            echo "FAIL $1"; sed 's/^/    /' "$TMP/stderr"; fail=$((fail + 1))
        fi ;;
    *)
        if "$PY" "$GEN" "$TMP/f.xml" "$TMP/out" "$TMP/doc.md" 2> "$TMP/stderr"; then
            echo "FAIL $1: exit status 0"; fail=$((fail + 1))
        elif grep -Eq "$3" "$TMP/stderr" && [ ! -e "$TMP/out" ]; then
            echo "ok   $1"; pass=$((pass + 1))
        else
            echo "FAIL $1: no '$3' in:"; sed 's/^/    /' "$TMP/stderr"; fail=$((fail + 1))
        fi ;;
    esac
}
check_facts facts_valid 'done="B_0" opbit="0x4" regcmd="0x0200"' \
    'OK:{"B", NULL, 0x01000u, 1, 1, 2, 1, {0x00000004u, 0x00000008u}, 0x00000004u, 0x0200u}'
# the word table: A's span (a hole at 0x0, ST at 0x4) then B's S
check_facts facts_word_table '' 'OK:^    65535, 0, 1,$'
check_facts facts_unknown_done 'done="C_0"' "f.xml:10:[0-9]+: done='C_0': C_0 is not a field of the interrupt status register \\(ST\\)"
check_facts facts_done_group1 'done="B_1"' "f.xml:10:[0-9]+: done='B_1': B_1 does not end in 0"
check_facts facts_no_group1_field 'done="E_0"' "f.xml:10:[0-9]+: done='E_0': E_1 is not a field of the interrupt status register \\(ST\\)"
check_facts facts_two_opbits 'opbit="0x6"' "f.xml:10:[0-9]+: opbit=0x6 is not a single bit"
check_facts facts_regcmd_twice 'regcmd="0x0100"' "f.xml:10:[0-9]+: regcmd=0x0100 is also A's"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

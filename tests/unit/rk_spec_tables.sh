#!/bin/sh
# regdb/rk3588.xml against the spec tables of PPU (spec 002) and DPU_RDMA
# (spec 003): every register, field, bit range, access type and reset value
# (tools/regdb/check_spec.py); and the checker itself catches a changed
# access type, a changed reset value and a missing register.
set -u
conf=${CONFORMANCE:-../shared/conformance/nvdla-traces}
spec=${SPEC:-${conf%/conformance/*}/spec}
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "PASS $1"; }
ko() { failed=$((failed + 1)); echo "FAIL $1"; }
ppu=$(ls "$spec"/002_*.txt 2>/dev/null | head -1)
rdma=$(ls "$spec"/003_*.txt 2>/dev/null | head -1)
if [ -z "$ppu" ] || [ -z "$rdma" ]; then
    ko "spec 002/003 not found in $spec (set SPEC)"; echo "$passed passed, $failed failed"; exit 1
fi
if out=$(python3 tools/regdb/check_spec.py regdb/rk3588.xml "$ppu" "$rdma" 2>&1); then
    ok "$out"
else
    ko "database differs from the spec:"; echo "$out"
fi
tmp=$(mktemp -d)
mutate() {  # name, sed expression on the PPU spec
    sed "$2" "$ppu" > "$tmp/ppu.md"
    if python3 tools/regdb/check_spec.py regdb/rk3588.xml "$tmp/ppu.md" "$rdma" > /dev/null 2>&1; then
        ko "checker missed: $1"
    else
        ok "checker catches: $1"
    fi
}
mutate "access type" 's/^| 3 | RW | 0x0 | `pointer_pp_mode`/| 3 | RO | 0x0 | `pointer_pp_mode`/'
mutate "reset value" 's/^| 2:0 | RW | 0x0 | `pad_value_1`/| 2:0 | RW | 0x1 | `pad_value_1`/'
mutate "missing register" 's/^## RKNN_ppu_misc_ctrl.*/## (removed)/'
mutate "bit range" 's/^| 12:0 | RW | 0x0 | `cube_in_width`/| 11:0 | RW | 0x0 | `cube_in_width`/'
rm -rf "$tmp"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/bin/sh
# RK3588 traces (tests/traces/rk3588, written by tools/rk/gen_trace_cases.py
# with CRCs from its own integer references): each passes on --config rk3588;
# a trace whose only checks are register reads is a valid test; an RK trace
# is refused on an NVDLA device; a wrong CRC fails.
set -u
dlasim=${DLASIM:-build/dlasim}
dir=tests/traces/rk3588
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "PASS $1"; }
ko() { failed=$((failed + 1)); echo "FAIL $1"; }
for c in conv_chain pointer_polls ppu_slave; do
    if out=$("$dlasim" trace --config rk3588 "$dir/$c/$c.cfg" 2>&1); then ok "$c"; else ko "$c: $out"; fi
done
out=$("$dlasim" trace --config rk3588 "$dir/pointer_polls/pointer_polls.cfg" 2>&1)
case "$out" in *"0 checks, 7 register reads"*) ok "poll-only trace counts its reads" ;;
    *) ko "poll-only trace: $out" ;; esac
if out=$("$dlasim" trace --suite "$dir" --config rk3588 2>&1); then ok "suite"; else ko "suite: $out"; fi
out=$("$dlasim" trace "$dir/conv_chain/conv_chain.cfg" 2>&1)
case "$out" in *"names RK3588 registers but the device is an NVDLA"*) ok "refused on nv_small" ;;
    *) ko "RK trace on nv_small: $out" ;; esac
tmp=$(mktemp -d)
cp "$dir"/ppu_slave/* "$tmp"/
sed -i 's/0x7c1a81e4/0x7c1a81e5/' "$tmp/ppu_slave.cfg"
if "$dlasim" trace --config rk3588 "$tmp/ppu_slave.cfg" > /dev/null 2>&1; then ko "wrong CRC passed"; else ok "wrong CRC fails"; fi
cp "$dir"/pointer_polls/* "$tmp"/
sed -i 's/RKNN_pc_interrupt_clear, 0x1ffff/RKNN_pc_interrupt_clear, 0x0/' "$tmp/pointer_polls.cfg"
if "$dlasim" trace --config rk3588 "$tmp/pointer_polls.cfg" > /dev/null 2>&1; then ko "failing poll passed"; else ok "failing poll fails"; fi
rm -rf "$tmp"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

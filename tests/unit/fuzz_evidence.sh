#!/bin/sh
# A failing fuzzer leaves evidence (tests/fuzz/run.sh, used by `make test`
# and `make fuzz-long`): its log and its crash input are kept under the
# output folder and the reproducer command is printed; a passing one reports
# runs and coverage.  Stand-in fuzzers play libFuzzer's part.
set -u
passed=0; failed=0
check() {  # name, status
    if [ "$2" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL $1"; fi
}
tmp=$(mktemp -d)
out="$tmp/out"
mkdir -p "$tmp/bin"
# a fuzzer that crashes: writes its input where -artifact_prefix says
cat > "$tmp/bin/fuzz_boom" <<'EOS'
#!/bin/sh
for a in "$@"; do case "$a" in -artifact_prefix=*) prefix=${a#-artifact_prefix=} ;; esac; done
printf 'bad input' > "${prefix}crash-0123abcd"
echo "==42== ERROR: libFuzzer: deadly signal"
echo "SUMMARY: libFuzzer: deadly signal"
echo "artifact_prefix='$prefix'; Test unit written to ${prefix}crash-0123abcd"
exit 1
EOS
# a fuzzer that finds nothing
cat > "$tmp/bin/fuzz_calm" <<'EOS'
#!/bin/sh
echo "#500	DONE   cov: 77 ft: 99 corp: 12/3456b lim: 4 exec/s: 0 rss: 30Mb"
echo "stat::number_of_executed_units: 500"
exit 0
EOS
chmod +x "$tmp/bin/fuzz_boom" "$tmp/bin/fuzz_calm"

res=$(SUMMARY=1 sh tests/fuzz/run.sh --runs 500 --seed 1 --out "$out" "$tmp/bin/fuzz_calm" \
      "$tmp/bin/fuzz_boom" 2>&1)
rc=$?
check "a failing target fails the run" "$([ "$rc" -ne 0 ]; echo $?)"
echo "$res" | grep -q "^PASS fuzz_calm: 500 runs, cov 77, ft 99, corpus 12/3456b"
check "a passing target reports runs and coverage" $?
echo "$res" | grep -q "^FAIL fuzz_boom: ==42== ERROR: libFuzzer: deadly signal"
check "the failure names libFuzzer's reason" $?
test -s "$out/logs/boom.log" && grep -q "deadly signal" "$out/logs/boom.log"
check "the failing fuzzer's log is kept" $?
test -s "$out/logs/calm.log"
check "the passing fuzzer's log is kept" $?
test "$(cat "$out/artifacts/boom-crash-0123abcd" 2>/dev/null)" = "bad input"
check "the crash input is kept" $?
grep -q "deadly signal" "$out/artifacts/boom-crash-0123abcd.log" 2> /dev/null
check "a copy of the log is kept beside the input" $?
echo "$res" | grep -qF "reproduce: $tmp/bin/fuzz_boom -rss_limit_mb=1024 -timeout=10 $out/artifacts/boom-crash-0123abcd"
check "the reproducer command is printed" $?
echo "$res" | grep -qE "^fuzz_boom +\? +\? +\? +\? +1$"
check "the summary counts the finding" $?
echo "$res" | grep -qE "^fuzz_calm +500 +77 +99 +12/3456b +0$"
check "the summary has executions, cov, ft, corpus" $?
[ "$failed" -eq 0 ] || printf '%s\n' "$res"
rm -rf "$tmp"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

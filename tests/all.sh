#!/bin/sh
# `make test`: build and run the whole suite twice (gcc plain, then clang with
# AddressSanitizer + UndefinedBehaviorSanitizer), the Slurm recipe on a
# one-node cluster (gcc build), run every fuzz target for a
# bounded number of runs, check the generated register files are up to date,
# and end with the total "N passed, N failed".
set -u
conf=${1:-../shared/conformance/nvdla-traces}
jobs=$(nproc 2>/dev/null || echo 2)
passed=0
failed=0
count() {  # add the last "N passed, N failed" line of file $1
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -1)
    p=$(echo "$line" | sed 's/ passed.*//'); f=$(echo "$line" | sed 's/.*passed, \([0-9]*\) failed.*/\1/')
    [ -n "$p" ] || { p=0; f=1; }
    passed=$((passed + p)); failed=$((failed + f))
}
one() {  # a single pass/fail check named $1, status $2
    if [ "$2" -eq 0 ]; then passed=$((passed + 1)); echo "PASS $1"
    else failed=$((failed + 1)); echo "FAIL $1"; fi
}
log=$(mktemp -d)

echo "== build (gcc)"
if make -s -j"$jobs" CC=gcc BUILD=build all tests > "$log/build.txt" 2>&1; then
    echo "== tests (gcc)"
    sh tests/run.sh build "$conf" | tee "$log/plain.txt"
    count "$log/plain.txt"
    echo "== Slurm: one-node cluster, Fashion-MNIST in 4 array tasks + merge (tests/slurm/run.sh)"
    CONFORMANCE="$conf" sh tests/slurm/run.sh build | tee "$log/slurm.txt"
    count "$log/slurm.txt"
else
    cat "$log/build.txt"; one "build (gcc)" 1
fi

echo "== build (clang, ASan+UBSan)"
if make -s -j"$jobs" CC=clang BUILD=build-san SAN=1 all tests > "$log/san-build.txt" 2>&1; then
    echo "== tests (clang, ASan+UBSan)"
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
        sh tests/run.sh build-san "$conf" | tee "$log/san.txt"
    count "$log/san.txt"
else
    cat "$log/san-build.txt"; one "build (clang, ASan+UBSan)" 1
fi

# Fuzzing: every target (tests/fuzz/fuzz_*.c) for a fixed number of runs
# from a fixed seed and a fresh corpus of the committed seeds, so the outcome
# does not depend on the machine's speed or on earlier runs; RSS limit 1 GB.
# A failure keeps its log and input under build-fuzz/test/ (logs/NAME.log,
# artifacts/NAME-<kind>-<sha1>) and prints the reproducer (tests/fuzz/run.sh).
fuzz_runs=${FUZZ_TEST_RUNS:-50000}
echo "== fuzz (libFuzzer, $fuzz_runs runs each from seed 1, -rss_limit_mb=1024)"
# The targets run $jobs at a time (xargs -P; each is one process with a fixed
# seed and run count: the same outcome in any order), their lines in order.
fuzz_one='bin=build-fuzz/$(basename "$1" .c); extra=""
    [ "$bin" = build-fuzz/fuzz_loadable ] && for d in PDP SDP CDP; do
        [ -d "$CONF/../nvdla-loadables/flatbufs/kmd/$d" ] &&
            extra="$extra --seeds loadable=$CONF/../nvdla-loadables/flatbufs/kmd/$d"
    done
    sh tests/fuzz/run.sh --runs "$RUNS" --seed 1 --corpus fresh --out build-fuzz/test $extra \
        "$bin" > "$LOG/${bin##*/}.txt" 2>&1
    echo $? > "$LOG/${bin##*/}.rc"'
if make -s -j"$jobs" fuzz > "$log/fuzz-build.txt" 2>&1; then
    ls tests/fuzz/fuzz_*.c | CONF=$conf RUNS=$fuzz_runs LOG=$log \
        xargs -P "$jobs" -n 1 sh -c "$fuzz_one" sh
    for src in tests/fuzz/fuzz_*.c; do
        name=$(basename "$src" .c)
        cat "$log/$name.txt" 2> /dev/null
        rc=$(cat "$log/$name.rc" 2> /dev/null)
        if [ "$rc" = 0 ]; then
            passed=$((passed + 1))
        else
            failed=$((failed + 1))
            [ -n "$rc" ] || echo "FAIL $name: no result (see $log)"
        fi
    done
else
    cat "$log/fuzz-build.txt"; one "fuzz build" 1
fi

echo "== public headers compile on their own (C11 and C++)"
hdr_ok=0
for h in include/dlasim/*.h; do
    printf '#include "%s"\nint main(void) { return 0; }\n' "${h#include/}" > "$log/h.c"
    gcc -std=c11 -Wall -Wextra -Werror -pedantic -Iinclude -c "$log/h.c" -o "$log/h.o" || hdr_ok=1
    if command -v g++ > /dev/null; then
        g++ -x c++ -Wall -Wextra -Werror -Iinclude -c "$log/h.c" -o "$log/h.o" || hdr_ok=1
    fi
done
one "public headers are self-contained" $hdr_ok

echo "== generated register files are up to date"
gen=$(mktemp -d)
python3 tools/regdb/gen_regs.py regdb/nvdla.xml "$gen" "$gen/registers.md" > /dev/null 2>&1 &&
    diff -q "$gen/nvdla_regs.h" src/regs/gen/nvdla_regs.h > /dev/null &&
    diff -q "$gen/nvdla_regs_table.c" src/regs/gen/nvdla_regs_table.c > /dev/null &&
    diff -q "$gen/registers.md" docs/registers.md > /dev/null &&
    python3 tools/regdb/gen_regs.py regdb/rk3588.xml "$gen" "$gen/registers-rk3588.md" > /dev/null 2>&1 &&
    diff -q "$gen/rk3588_regs.h" src/regs/gen/rk3588_regs.h > /dev/null &&
    diff -q "$gen/rk3588_regs_table.c" src/regs/gen/rk3588_regs_table.c > /dev/null &&
    python3 tools/regdb/gen_regs.py --index "$gen/regdb_all.c" regdb/nvdla.xml regdb/rk3588.xml \
        > /dev/null 2>&1 &&
    diff -q "$gen/regdb_all.c" src/regs/gen/regdb_all.c > /dev/null &&
    diff -q "$gen/registers-rk3588.md" docs/registers-rk3588.md > /dev/null
one "regdb regeneration (nvdla, rk3588) matches src/regs/gen and docs" $?
rm -rf "$gen" "$log"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

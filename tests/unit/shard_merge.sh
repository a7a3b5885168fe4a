#!/bin/sh
# `dlasim run --shard I/N` + `dlasim merge` without Slurm (docs/cluster.md):
# the merge of 3 shards prints exactly the single process's output (less its
# three wall-clock lines) and --json file; incomplete, missing, duplicated
# and foreign shards are refused naming the shard; re-running only the
# failed one completes the set; "I/N" is parsed strictly.  A small job: 40
# Fashion-MNIST test images, calibrated on 50 training images.  Needs DLASIM.
set -u
dlasim=${DLASIM:-build/dlasim}
data=${FMNIST:-/usr/share/datasets/fashion-mnist}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
passed=0; failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }
expect() {  # name, wanted exit status, text the output must contain, command...
    name=$1; want=$2; text=$3; shift 3
    out=$("$@" 2>&1); rc=$?
    if [ "$rc" -eq "$want" ] && printf '%s' "$out" | grep -qF -- "$text"; then ok
    else bad "$name (exit $rc): $out"; fi
}
job() {  # the job's command line; $1 = --count
    echo run models/fashion_mnist.onnx --calib "$data/train-images-idx3-ubyte.gz" --calib-count 50 \
        --input "$data/t10k-images-idx3-ubyte.gz" --labels "$data/t10k-labels-idx1-ubyte.gz" \
        --names models/fashion_mnist.names --compare-float --report --draw 3 --count "$1" --threads 1
}
# wall-clock lines: per machine, never merged
strip_times() { grep -v -E '^(calibrated on .* in [0-9.]+ s|INT8 on simulated .* in [0-9.]+ s .*|float reference: .* in [0-9.]+ s)$' "$1"; }

# shellcheck disable=SC2046
"$dlasim" $(job 40) --json "$tmp/single.json" > "$tmp/single.out" || bad "single run"
strip_times "$tmp/single.out" > "$tmp/single.txt"
[ "$(wc -l < "$tmp/single.out")" -eq $(($(wc -l < "$tmp/single.txt") + 3)) ] && ok ||
    bad "the single run prints three wall-clock lines"
for i in 0 1 2; do
    # shellcheck disable=SC2046
    "$dlasim" $(job 40) --shard $i/3 --shard-out "$tmp/s$i.jsonl" > "$tmp/log$i" || bad "shard $i/3"
done
"$dlasim" merge --json "$tmp/merged.json" "$tmp/s2.jsonl" "$tmp/s0.jsonl" "$tmp/s1.jsonl" \
    > "$tmp/merged.txt" || bad "merge of three shards"
cmp -s "$tmp/merged.txt" "$tmp/single.txt" && ok || bad "merged output differs from the single run"
cmp -s "$tmp/merged.json" "$tmp/single.json" && ok || bad "merged --json differs from the single run"
grep -q '^top-1 accuracy INT8 (nv_small): .* (.* / 40)$' "$tmp/merged.txt" && ok ||
    bad "merged output has no accuracy over 40 inputs"

expect "a missing shard is named" 2 "shard 1/3 is missing" \
    "$dlasim" merge "$tmp/s0.jsonl" "$tmp/s2.jsonl"
expect "a shard given twice is named" 2 "shard 1/3 is given twice" \
    "$dlasim" merge "$tmp/s0.jsonl" "$tmp/s1.jsonl" "$tmp/s1.jsonl" "$tmp/s2.jsonl"
head -n 5 "$tmp/s1.jsonl" > "$tmp/cut.jsonl"   # a task killed while writing
expect "an incomplete shard is named" 2 "shard 1/3 ($tmp/cut.jsonl) is incomplete" \
    "$dlasim" merge "$tmp/s0.jsonl" "$tmp/cut.jsonl" "$tmp/s2.jsonl"
: > "$tmp/empty.jsonl"
expect "an empty file is refused" 2 "empty.jsonl is empty" \
    "$dlasim" merge "$tmp/s0.jsonl" "$tmp/empty.jsonl" "$tmp/s2.jsonl"
expect "a file that is not a shard is refused" 2 "is not a dlasim shard file" \
    "$dlasim" merge "$tmp/s0.jsonl" models/fashion_mnist.names "$tmp/s2.jsonl"
# shellcheck disable=SC2046
"$dlasim" $(job 40) --shard 1/2 --shard-out "$tmp/half.jsonl" > /dev/null || bad "shard 1/2"
expect "shards of another split are refused" 2 "a set is split one way" \
    "$dlasim" merge "$tmp/s0.jsonl" "$tmp/half.jsonl" "$tmp/s2.jsonl"
# shellcheck disable=SC2046
"$dlasim" $(job 39) --shard 1/3 --shard-out "$tmp/other.jsonl" > /dev/null || bad "shard of 39"
expect "a shard of another job is refused" 2 "are shards of different jobs" \
    "$dlasim" merge "$tmp/s0.jsonl" "$tmp/other.jsonl" "$tmp/s2.jsonl"

# a shard that fails (here: its output cannot be written) is named; re-running
# only it completes the set
mv "$tmp/s1.jsonl" "$tmp/s1.good"
mkdir "$tmp/s1.jsonl"
# shellcheck disable=SC2046
expect "a shard that cannot write says so" 1 "shard output $tmp/s1.jsonl" \
    "$dlasim" $(job 40) --shard 1/3 --shard-out "$tmp/s1.jsonl"
rmdir "$tmp/s1.jsonl"
expect "the failed shard is named" 2 "shard 1/3 is missing" \
    "$dlasim" merge "$tmp"/s*.jsonl
# shellcheck disable=SC2046
"$dlasim" $(job 40) --shard 1/3 --shard-out "$tmp/s1.jsonl" > /dev/null || bad "re-run of shard 1/3"
"$dlasim" merge "$tmp"/s*.jsonl > "$tmp/again.txt" && cmp -s "$tmp/again.txt" "$tmp/single.txt" &&
    ok || bad "re-running only the failed shard does not complete the set"

# a shard killed while it works (as Slurm kills a task at its time limit): the
# header is written before the inputs run, the records and end line only after
# them (run_shard.c), so a kill in between leaves the header alone; the merge
# names it.  The kill's file is made from a finished shard's header, not by
# racing a kill against the run (300 inputs take ~15 ms on a fast host: a
# kill timed from outside landed after the end now and then)
# shellcheck disable=SC2046
"$dlasim" $(job 600) --shard 1/2 --shard-out "$tmp/whole1.jsonl" > /dev/null || bad "shard 1/2 of 600"
head -n 1 "$tmp/whole1.jsonl" > "$tmp/killed.jsonl"
# shellcheck disable=SC2046
"$dlasim" $(job 600) --shard 0/2 --shard-out "$tmp/half0.jsonl" > /dev/null || bad "shard 0/2 of 600"
expect "a killed shard is named" 2 "shard 1/2 ($tmp/killed.jsonl) is incomplete: 0 of 300 items and no end line" \
    "$dlasim" merge "$tmp/half0.jsonl" "$tmp/killed.jsonl"
"$dlasim" merge "$tmp/half0.jsonl" "$tmp/whole1.jsonl" > /dev/null && ok ||
    bad "the finished shard 1/2 of 600 merges"

for s in 3/3 1/0 -1/3 1/3x " 1/3" 1/ /3 1 0/100001 1//3; do
    # shellcheck disable=SC2046
    expect "--shard '$s' is refused" 2 "--shard" "$dlasim" $(job 40) --shard "$s" --shard-out "$tmp/x"
done
# shellcheck disable=SC2046
expect "--shard needs --shard-out" 2 "--shard I/N and --shard-out FILE go together" \
    "$dlasim" $(job 40) --shard 0/2
# trace --suite: shards of the conformance suite merge into the single
# process's table (its seconds aside) and exit status, here with one case
# made to fail by a wrong expected CRC
conf=${CONFORMANCE:-../shared/conformance/nvdla-traces}
if [ -d "$conf/nv_small" ]; then
    { cat tests/traces/nv_small.expect; echo "pdp_8x8x64_2x2_int8 0x12345678"; } > "$tmp/wrong.expect"
    set -- trace --suite "$conf/nv_small" --match 'pdp_*' --table --expect "$tmp/wrong.expect"
    no_seconds() { sed -E 's/\| +[0-9.]+ \|$/| - |/; s/^[0-9.]+ s in all/- s in all/' "$1"; }
    "$dlasim" "$@" > "$tmp/suite.out"; want=$?
    for i in 0 1 2 3; do
        "$dlasim" "$@" --shard $i/4 --shard-out "$tmp/t$i.jsonl" > /dev/null || bad "trace shard $i/4"
    done
    "$dlasim" merge "$tmp"/t*.jsonl > "$tmp/suite.merged"; got=$?
    [ "$want" -eq 1 ] && [ "$got" -eq 1 ] && ok || bad "trace exit status: single $want, merged $got"
    no_seconds "$tmp/suite.out" > "$tmp/suite.a"; no_seconds "$tmp/suite.merged" > "$tmp/suite.b"
    cmp -s "$tmp/suite.a" "$tmp/suite.b" && grep -q "pdp_8x8x64_2x2_int8 .*| FAIL\\* |" "$tmp/suite.b" && ok ||
        bad "merged suite table differs: $(diff "$tmp/suite.a" "$tmp/suite.b" | head -5)"
    expect "a missing trace shard is named" 2 "shard 3/4 is missing" \
        "$dlasim" merge "$tmp/t0.jsonl" "$tmp/t1.jsonl" "$tmp/t2.jsonl"
    expect "run and trace shards do not mix" 2 "is a shard of \`dlasim trace\`" \
        "$dlasim" merge "$tmp/s0.jsonl" "$tmp/t1.jsonl"
fi
# dlasim each: loadables over a list (one that cannot run on nv_small) and an
# estimate sweep over configurations, in shards, merge into exactly what one
# process prints, with its exit status
lds=${LOADABLES:-$conf/../nvdla-loadables}/flatbufs/kmd
if [ -d "$lds" ]; then
    printf '%s\n' "# loadables" "--config nv_small $lds/PDP/PDP_L0_0_small_fbuf" \
        "--config nv_small $lds/CDP/CDP_L0_0_small_fbuf" "" \
        "--config nv_small $lds/CONV/CONV_D_L0_0_small_fbuf" "--config nv_small $lds/NN/NN_L0_0_fbuf" \
        > "$tmp/loadables.list"
    "$dlasim" each "$tmp/loadables.list" -- "$dlasim" loadable {} > "$tmp/each.out"; want=$?
    for i in 0 1 2; do
        "$dlasim" each "$tmp/loadables.list" --shard $i/3 --shard-out "$tmp/each-$i.jsonl" \
            -- "$dlasim" loadable {} > /dev/null || bad "each shard $i/3"
    done
    "$dlasim" merge "$tmp"/each-*.jsonl > "$tmp/each.merged"; got=$?
    [ "$want" -eq 1 ] && [ "$got" -eq 1 ] && cmp -s "$tmp/each.out" "$tmp/each.merged" &&
        grep -q '^each: 4 items, 3 passed, 1 failed$' "$tmp/each.merged" && ok ||
        bad "each over loadables: exit $want/$got, $(diff "$tmp/each.out" "$tmp/each.merged" | head -5)"
fi
printf '%s\n' "--config nv_small --mem-bw 12.8" "--config nv_small --mem-bw 51.2" \
    "--config nv_large --network resnet50" > "$tmp/sweep.list"
"$dlasim" each "$tmp/sweep.list" -- "$dlasim" estimate {} > "$tmp/sweep.out" || bad "estimate sweep"
for i in 0 1; do
    "$dlasim" each "$tmp/sweep.list" --shard $i/2 --shard-out "$tmp/sweep-$i.jsonl" -- "$dlasim" estimate {} \
        > /dev/null || bad "sweep shard $i/2"
done
"$dlasim" merge "$tmp"/sweep-*.jsonl > "$tmp/sweep.merged" && cmp -s "$tmp/sweep.out" "$tmp/sweep.merged" &&
    [ "$(grep -c '^resnet50: .* fps' "$tmp/sweep.merged")" -eq 1 ] && ok ||
    bad "estimate sweep merge differs: $(diff "$tmp/sweep.out" "$tmp/sweep.merged" | head -5)"
# RTL grading in shards (tools/slurm/rtl-grade.sh): grade_one.sh per case
# under `dlasim each`, against a stand-in for the RTL runner (no RTL here):
# case a agrees, b disagrees (the RTL's CRC replaces dlasim's), c hangs.
# The merged RESULTS and the rewritten cases equal grade.sh's on one machine.
cat > "$tmp/fake-rtl-run.sh" <<'FAKE'
case $(basename "$1") in
a) echo "cycles_to_last_intr=100"; exit 0 ;;
b) echo "cycles_to_last_intr=200"; echo "CRC 0x1111 should have been bbbb2222, ..." >&2; exit 1 ;;
*) echo "timeout" >&2; exit 124 ;;
esac
FAKE
for set in one sharded; do
    for c in a b c; do
        mkdir -p "$tmp/$set/$c"; printf 'check_crc(out, 1, 0x0, 0x1111);\n' > "$tmp/$set/$c/$c.cfg"
    done
done
RTL_RUN="$tmp/fake-rtl-run.sh" sh tools/rtlgrade/grade.sh "$tmp/one" /nonexistent "$tmp/RESULTS.one" > /dev/null
for c in a b c; do echo "$tmp/sharded/$c"; done > "$tmp/cases.list"
for i in 0 1; do
    RTL_RUN="$tmp/fake-rtl-run.sh" "$dlasim" each "$tmp/cases.list" --shard $i/2 --shard-out "$tmp/grade-$i.jsonl" \
        -- sh tools/rtlgrade/grade_one.sh {} /nonexistent > /dev/null || bad "grading shard $i/2"
done
"$dlasim" merge "$tmp"/grade-*.jsonl | grep -v -e '^== ' -e '^each: ' > "$tmp/RESULTS.sharded"
cmp -s "$tmp/RESULTS.one" "$tmp/RESULTS.sharded" && grep -q '^b disagree rtl_crc=0xbbbb2222' "$tmp/RESULTS.one" &&
    grep -q '^c rtl-fail' "$tmp/RESULTS.one" && cmp -s "$tmp/one/b/b.cfg" "$tmp/sharded/b/b.cfg" &&
    grep -q '0xbbbb2222' "$tmp/sharded/b/b.cfg" && ok ||
    bad "sharded grading differs: $(diff "$tmp/RESULTS.one" "$tmp/RESULTS.sharded")"
expect "each needs a command" 2 "usage: dlasim each" "$dlasim" each "$tmp/sweep.list"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

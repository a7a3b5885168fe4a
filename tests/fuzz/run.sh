#!/bin/sh
# Run libFuzzer targets and keep the evidence of any finding.
#
#   tests/fuzz/run.sh [--runs N | --seconds N] [--seed S] [--rss MB] [--corpus fresh|keep]
#                     [--out DIR] [--seeds NAME=DIR]... TARGET...
#
# TARGET is a fuzzer binary (build-fuzz/fuzz_NAME).  Each runs with the
# committed seeds tests/fuzz/seeds/NAME/ (they include every fixed
# reproducer, so the seeds are replayed first), the --seeds folders given for
# NAME (read only: data that may not be copied into the tree) and a working
# corpus:
#   --corpus fresh  an empty temporary corpus: with --runs and --seed the
#                   outcome is deterministic (make test)
#   --corpus keep   DIR/corpus-NAME, kept and grown across runs (make fuzz-long)
# Always: -rss_limit_mb (default 1024), -timeout=10, -malloc_limit_mb equal to
# the rss limit, -reload=0 (the corpus is read once: no outcome depends on
# timing), and an ASan quarantine of 64 MB (ASAN_OPTIONS, unless set) so
# freed memory held for use-after-free detection does not eat the RSS limit.  The log goes to DIR/logs/NAME.log; a crash, leak, timeout or
# out-of-memory input is kept as DIR/artifacts/NAME-<kind>-<sha1>, with a copy
# of the log beside it (.log), and the reproducer command is printed.  One line per target:
#   PASS fuzz_NAME: R runs, cov C, ft F, corpus K
#   FAIL fuzz_NAME: <libFuzzer's reason> ... log ..., input ..., reproduce: ...
# and a summary table (target, executions, cov, ft, corpus, findings) when
# SUMMARY=1 is set in the environment.  Exit status 1 if any target failed.
set -u
runs=""; seconds=""; seed=1; rss=1024; corpus=fresh; out=build-fuzz; extra=""
while [ $# -gt 0 ]; do
    case "$1" in
    --runs) runs=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --rss) rss=$2; shift 2 ;;
    --corpus) corpus=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --seeds) extra="$extra $2"; shift 2 ;;  # NAME=DIR
    --) shift; break ;;
    -*) echo "tests/fuzz/run.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
[ $# -gt 0 ] || { echo "usage: tests/fuzz/run.sh [options] TARGET..." >&2; exit 2; }
mkdir -p "$out/logs" "$out/artifacts"
failed=0
table=""
for bin in "$@"; do
    name=$(basename "$bin"); name=${name#fuzz_}
    log="$out/logs/$name.log"
    seeds="tests/fuzz/seeds/$name"
    if [ "$corpus" = keep ]; then
        work="$out/corpus-$name"; mkdir -p "$work"
    else
        work=$(mktemp -d)
    fi
    set -- -seed="$seed" -rss_limit_mb="$rss" -malloc_limit_mb="$rss" -timeout=10 -reload=0 \
        -print_final_stats=1 -artifact_prefix="$out/artifacts/$name-"
    [ -n "$runs" ] && set -- "$@" -runs="$runs"
    [ -n "$seconds" ] && set -- "$@" -max_total_time="$seconds"
    [ -d "$seeds" ] || seeds=""
    for e in $extra; do
        [ "${e%%=*}" = "$name" ] && seeds="$seeds ${e#*=}"
    done
    before=$(ls "$out/artifacts" | grep "^$name-" | grep -vc '\.log$' || true)
    # shellcheck disable=SC2086
    ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=64} "$bin" "$@" "$work" $seeds > "$log" 2>&1
    rc=$?
    [ "$corpus" = keep ] || rm -rf "$work"
    done_line=$(grep -E '^#[0-9]+' "$log" | tail -1)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(echo "$done_line" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
    ft=$(echo "$done_line" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
    corp=$(echo "$done_line" | sed -n 's/.* corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p')
    findings=$(( $(ls "$out/artifacts" | grep "^$name-" | grep -vc '\.log$' || true) - before ))
    if [ "$rc" -eq 0 ]; then
        echo "PASS fuzz_$name: ${execs:-?} runs, cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?}"
    else
        failed=1
        reason=$(grep -m1 -E '==[0-9]+== ?ERROR|^SUMMARY|runtime error|Timeout|out-of-memory|deadly signal' "$log")
        input=$(sed -n 's/.*[Tt]est unit written to \(.*\)$/\1/p' "$log" | tail -1)
        echo "FAIL fuzz_$name: ${reason:-exit status $rc}"
        echo "     log: $log"
        if [ -n "$input" ]; then
            cp "$log" "$input.log" 2> /dev/null  # the log stays with its input
            echo "     input: $input (log: $input.log)"
            echo "     reproduce: $bin -rss_limit_mb=$rss -timeout=10 $input"
        else
            echo "     no input was written (see the log)"
        fi
        grep -E 'ERROR|SUMMARY|runtime error|#[0-9]+ in ' "$log" | head -12 | sed 's/^/     | /'
    fi
    table="$table$(printf '%-14s %12s %8s %8s %12s %8s' "fuzz_$name" "${execs:-?}" "${cov:-?}" \
        "${ft:-?}" "${corp:-?}" "$findings")
"
done
if [ "${SUMMARY:-0}" = 1 ]; then
    printf '\n%-14s %12s %8s %8s %12s %8s\n' target executions cov ft corpus findings
    printf '%s' "$table"
fi
exit $failed

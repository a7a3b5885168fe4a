#!/bin/sh
# `make rtl-grade` on a Slurm cluster (docs/cluster.md, tools/rtlgrade/README.md):
#
#   tools/slurm/rtl-grade.sh [-n N] [-o OUT] [--sbatch "OPTIONS"]   generate, submit
#   tools/slurm/rtl-grade.sh --install [-o OUT]                     after the merge job
#
# The cases are generated here (into OUT/cases, on a file system the nodes
# share), graded by `dlasim each` in N array tasks (one tools/rtlgrade/
# grade_one.sh per case) and merged; --install then turns the merged output
# into RESULTS (+ RESULTS.log) and installs the cases as `make rtl-grade`
# does.  BUILD (build), RTL (/tmp/rtl), SHARED (../shared) and RTL_RUN as for
# `make rtl-grade`; RTL must be the same path on every node.
set -eu
n=8; out=rtl-grade-shards; extra=""; install=0
build=${BUILD:-build}; rtl=${RTL:-/tmp/rtl}; shared=${SHARED:-../shared}
while [ $# -gt 0 ]; do
    case $1 in
    -n) n=$2; shift 2 ;;
    -o) out=$2; shift 2 ;;
    --sbatch) extra=$2; shift 2 ;;
    --install) install=1; shift ;;
    *) echo "rtl-grade.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ "$install" = 1 ]; then
    [ -f "$out/grade/merged.txt" ] || {
        echo "rtl-grade.sh: no $out/grade/merged.txt: has the merge job run? (build/dlasim merge $out/grade/shard-*.jsonl names a missing shard)" >&2
        exit 1; }
    grep -v -e '^== ' -e '^each: ' "$out/grade/merged.txt" > "$out/RESULTS"
    : > "$out/RESULTS.log"
    for e in "$out"/cases/*.err; do
        [ -f "$e" ] && { echo "== $(basename "$e" .err)"; cat "$e"; } >> "$out/RESULTS.log"
    done
    sh tools/rtlgrade/install.sh "$out/cases" "$out/RESULTS" tests/traces/rtl-graded
    exit 0
fi
[ -n "${RTL_RUN:-}" ] || [ -x "$rtl/hw/outdir/nv_small/verilator/VNV_nvdla" ] || {
    echo "rtl-grade.sh: no nv_small RTL simulator under $rtl (set RTL=DIR)" >&2; exit 2; }
export RTL_RUN=${RTL_RUN:-$(cd "$shared" && pwd)/tools/rtl-run.sh}
rm -rf "$out/cases"; mkdir -p "$out/cases"
/usr/bin/python3 tools/rtlgrade/gen.py "$out/cases" --dlasim "$build/dlasim" \
    --convcase "$build/rtlgrade/convcase" --imgcase "$build/rtlgrade/imgcase" > "$out/cases.names"
for d in "$out"/cases/*/; do echo "${d%/}"; done > "$out/cases.list"
echo "rtl-grade.sh: $(wc -l < "$out/cases.list") cases in $out/cases; grading in $n array tasks" >&2
tools/slurm/submit.sh -n "$n" -o "$out/grade" --dlasim "$build/dlasim" ${extra:+--sbatch "$extra"} -- \
    each "$out/cases.list" -- sh "$(pwd)/tools/rtlgrade/grade_one.sh" {} "$rtl"

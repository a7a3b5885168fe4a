#!/bin/sh
# Submit a bulk dlasim command to Slurm as a job array of N shards and a merge
# job that runs when all of them succeeded (docs/cluster.md).
#
#   tools/slurm/submit.sh [-n N] [-o OUT] [--only LIST] [--dlasim PATH]
#                         [--sbatch "OPTIONS"] -- COMMAND ARGS...
#
#   -n N          shards (array tasks 0..N-1; default 4)
#   -o OUT        folder for shard-I.jsonl, shard-I.log, merged.txt, merged.json
#                 (default dlasim-shards; on a real cluster: a shared file system)
#   --only LIST   re-submit only these shards (Slurm --array syntax, e.g. 2 or 1,3)
#                 and a new merge job: what completes a set after a failure
#   --dlasim PATH the CLI (default build/dlasim, made absolute)
#   --sbatch OPTS more sbatch options for every job, e.g. "--partition=cpu --time=2:00:00"
#
# Prints "ARRAYJOB MERGEJOB".  The merge job (--dependency=afterok) is
# cancelled by Slurm when a shard fails (--kill-on-invalid-dep=yes); then
# `dlasim merge OUT/shard-*.jsonl` names the failed shard and `--only` it.
set -eu
n=4; out=dlasim-shards; only=""; dlasim=build/dlasim; extra=""
while [ $# -gt 0 ]; do
    case $1 in
    -n) n=$2; shift 2 ;;
    -o) out=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --dlasim) dlasim=$2; shift 2 ;;
    --sbatch) extra=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "submit.sh: unknown option $1 (see the comment at the top)" >&2; exit 2 ;;
    esac
done
[ $# -gt 0 ] || { echo "submit.sh: no dlasim command after --" >&2; exit 2; }
case $n in ''|*[!0-9]*|0) echo "submit.sh: -n takes a positive count, got '$n'" >&2; exit 2 ;; esac
here=$(dirname "$0")
case $dlasim in /*) ;; *) dlasim=$(pwd)/$dlasim ;; esac
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ -z "$only" ]; then
    rm -f "$out"/shard-*.jsonl "$out"/merged.txt "$out"/merged.json  # a new job
    only=0-$((n - 1))
fi
# shellcheck disable=SC2086
array=$(sbatch --parsable $extra --array="$only" --output="$out/shard-%a.log" \
    "$here/shard.sbatch" "$out" "$n" "$dlasim" "$@")
array=${array%%;*}
# shellcheck disable=SC2086
merge=$(sbatch --parsable $extra --dependency=afterok:"$array" --kill-on-invalid-dep=yes \
    --output="$out/merge.log" "$here/merge.sbatch" "$out" "$dlasim")
echo "$array ${merge%%;*}"

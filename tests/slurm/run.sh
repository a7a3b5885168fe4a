#!/bin/sh
# The Slurm recipe on a one-node cluster started here (docs/cluster.md):
# munged, slurmctld and slurmd on localhost with a configuration, munge key,
# state and logs generated into a fresh temporary folder (free ports), all
# stopped at the end, also on failure or interrupt.  Installs Debian's
# slurmctld, slurmd, slurm-client and munge when root and missing.
#
# Checks: the Fashion-MNIST evaluation of `make demo` on the first $COUNT
# test images, split into 4 array tasks and merged by a job with
# --dependency=afterok, prints exactly what one `dlasim run` prints (less its
# three wall-clock lines) and the same --json file; a shard whose task fails
# makes Slurm cancel the merge job, `dlasim merge` names that shard, and
# re-submitting only it completes the set, again byte-identical.  Then a
# trace sweep (conformance sdp_* cases) in 3 tasks merges into the single
# process's table.
#
#   usage: tests/slurm/run.sh [BUILD]      (KEEP=1 keeps the temporary folder)
set -u
build=${1:-build}
count=${COUNT:-2000}
data=${FMNIST:-/usr/share/datasets/fashion-mnist}
dlasim=$(cd "$build" && pwd)/dlasim
top=$(pwd)
passed=0; failed=0
ok() { passed=$((passed + 1)); echo "PASS $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }
die() { echo "slurm test: $*" >&2; bad "$*"; echo "$passed passed, $failed failed"; exit 1; }

# ---- the packages ------------------------------------------------------------
missing=""
for c in slurmctld:slurmctld slurmd:slurmd sbatch:slurm-client munged:munge; do
    command -v "${c%%:*}" > /dev/null 2>&1 || PATH=$PATH:/usr/sbin command -v "${c%%:*}" > /dev/null 2>&1 ||
        missing="$missing ${c#*:}"
done
if [ -n "$missing" ]; then
    [ "$(id -u)" = 0 ] || die "needs Debian packages:$missing (sudo apt-get install$missing)"
    echo "slurm test: installing$missing"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
        --no-install-recommends $missing > /dev/null 2>&1 ||
        { apt-get update -qq > /dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install \
            -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends $missing > /dev/null; } ||
        die "apt-get install$missing failed"
fi
PATH=$PATH:/usr/sbin
[ "$(id -u)" = 0 ] || die "slurmd runs jobs as their user and must start as root"

# ---- the cluster ---------------------------------------------------------------
tmp=$(mktemp -d /tmp/dlasim-slurm.XXXXXX)
chmod 700 "$tmp"
pids=""
jobs=""
stop_cluster() {
    [ -z "$jobs" ] || scancel $jobs 2> /dev/null  # jobs left by a failure end with the cluster
    for p in $pids; do kill "$p" 2> /dev/null; done
    for p in $pids; do  # up to 10 s each, then KILL
        k=0
        while kill -0 "$p" 2> /dev/null && [ $k -lt 100 ]; do sleep 0.1; k=$((k + 1)); done
        kill -9 "$p" 2> /dev/null
    done
    pids=""
    if [ "${KEEP:-0}" = 1 ]; then echo "slurm test: kept $tmp"; else rm -rf "$tmp"; fi
}
trap 'stop_cluster' EXIT
trap 'exit 1' INT TERM HUP

# two free TCP ports (the kernel's choice, released just before the daemons bind)
ports=$(python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))') || die "no free ports"
ctld_port=${ports% *}; slurmd_port=${ports#* }
host=$(hostname -s)
cpus=$(nproc)
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/out"
cat > "$tmp/slurm.conf" <<EOF
ClusterName=dlasimtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$tmp/munge.sock
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MinJobAge=600
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=dlasim Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$tmp/slurm.conf"

dd if=/dev/urandom of="$tmp/munge.key" bs=1024 count=1 2> /dev/null
chmod 400 "$tmp/munge.key"
munged --foreground --force --key-file="$tmp/munge.key" --socket="$tmp/munge.sock" \
    --pid-file="$tmp/munged.pid" --log-file="$tmp/munged.log" --seed-file="$tmp/munge.seed" \
    > "$tmp/munged.out" 2>&1 &
pids="$!"
wait_for() {  # seconds, what, command...: until the command succeeds
    secs=$1; what=$2; shift 2
    k=0
    until "$@" > /dev/null 2>&1; do
        k=$((k + 1))
        [ $k -le $((secs * 5)) ] || return 1
        sleep 0.2
    done
    echo "slurm test: $what after $((k / 5)) s"
}
wait_for 20 "munged up" test -S "$tmp/munge.sock" ||
    die "munged did not start: $(cat "$tmp/munged.out" "$tmp/munged.log" 2> /dev/null | tail -5)"
slurmctld -D -f "$tmp/slurm.conf" > "$tmp/slurmctld.out" 2>&1 &
pids="$! $pids"
wait_for 60 "slurmctld answers" scontrol ping ||
    die "slurmctld did not start: $(tail -5 "$tmp/slurmctld.log" "$tmp/slurmctld.out" 2> /dev/null)"
slurmd -D -f "$tmp/slurm.conf" -N "$host" > "$tmp/slurmd.out" 2>&1 &
pids="$! $pids"
node_idle() { sinfo -h -n "$host" -o %t | grep -qx idle; }
wait_for 60 "node $host idle" node_idle ||
    die "slurmd did not register: $(sinfo -h -o '%n %t %E' 2>&1; tail -5 "$tmp/slurmd.log" 2> /dev/null)"

# ---- the jobs -----------------------------------------------------------------------
job_state() { scontrol show job -o "$1" 2> /dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | sort -u | tr '\n' ' '; }
job_done() {  # every task of job $1 has left the queue
    st=$(job_state "$1")
    [ -n "$st" ] && ! printf '%s' "$st" | grep -qE 'PENDING|RUNNING|CONFIGURING|COMPLETING'
}
wait_job() {  # job, seconds
    wait_for "$2" "job $1 ended" job_done "$1" || {
        bad "job $1 did not end within $2 s (state: $(job_state "$1"))"; return 1; }
    echo "slurm test: job $1: $(job_state "$1")"
}
strip_times() { grep -v -E '^(calibrated on .* in [0-9.]+ s|INT8 on simulated .* in [0-9.]+ s .*|float reference: .* in [0-9.]+ s)$' "$1"; }
set -- run "$top/models/fashion_mnist.onnx" --config nv_small \
    --calib "$data/train-images-idx3-ubyte.gz" --calib-count 1000 \
    --input "$data/t10k-images-idx3-ubyte.gz" --labels "$data/t10k-labels-idx1-ubyte.gz" \
    --names "$top/models/fashion_mnist.names" --compare-float --report --draw 4 --count "$count"
out=$tmp/out

t0=$(date +%s)
"$dlasim" "$@" --json "$tmp/single.json" > "$tmp/single.out" || die "the single-process run failed"
strip_times "$tmp/single.out" > "$tmp/single.txt"
echo "slurm test: single process: $(grep '^top-1 accuracy INT8' "$tmp/single.txt") ($(( $(date +%s) - t0 )) s)"

t0=$(date +%s)
ids=$(tools/slurm/submit.sh -n 4 -o "$out" --dlasim "$dlasim" -- "$@" --threads 1) ||
    die "sbatch failed"
array=${ids% *}; merge=${ids#* }; jobs="$jobs $array $merge"
wait_job "$merge" 600
[ "$(job_state "$array")" = "COMPLETED " ] && ok "4 array tasks completed" ||
    bad "array job $array: $(job_state "$array")"
[ "$(job_state "$merge")" = "COMPLETED " ] && ok "the afterok merge job completed" ||
    bad "merge job $merge: $(job_state "$merge") $(cat "$out/merge.log" 2> /dev/null)"
echo "slurm test: 4 shards and the merge on the cluster in $(( $(date +%s) - t0 )) s"
cmp "$out/merged.txt" "$tmp/single.txt" && ok "merged output = the single process's, byte for byte" ||
    bad "merged output differs from the single process's"
cmp "$out/merged.json" "$tmp/single.json" && ok "merged --json = the single process's" ||
    bad "merged --json differs"
grep -q "^top-1 accuracy INT8 (nv_small): .* / $count)\$" "$out/merged.txt" &&
    ok "merged: $(grep '^top-1 accuracy INT8' "$out/merged.txt")" || bad "no accuracy line in the merge"

# a task that fails: its output place is taken (a folder), so `dlasim run`
# cannot create its shard file
rm "$out/shard-2.jsonl" "$out/merged.txt" "$out/merged.json"
mkdir "$out/shard-2.jsonl"
ids=$(tools/slurm/submit.sh -n 4 -o "$out" --only 2 --dlasim "$dlasim" -- "$@" --threads 1) ||
    die "sbatch failed"
array=${ids% *}; merge=${ids#* }; jobs="$jobs $array $merge"
wait_job "$array" 300
wait_job "$merge" 60
[ "$(job_state "$array")" = "FAILED " ] && ok "the sabotaged task failed" ||
    bad "task 2 of $array: $(job_state "$array")"
[ "$(job_state "$merge")" = "CANCELLED " ] && ok "Slurm cancelled the merge job (afterok)" ||
    bad "merge job $merge: $(job_state "$merge")"
grep -q "shard output $out/shard-2.jsonl" "$out/shard-2.log" && ok "the task's log says why" ||
    bad "shard-2.log: $(tail -3 "$out/shard-2.log")"
rmdir "$out/shard-2.jsonl"
msg=$("$dlasim" merge "$out"/shard-*.jsonl 2>&1) && bad "merge of 3 of 4 shards succeeded" ||
    { printf '%s\n' "$msg" | grep -q "shard 2/4 is missing" && ok "merge names it: $(printf '%s' "$msg" | head -1)" ||
        bad "merge message: $msg"; }
ids=$(tools/slurm/submit.sh -n 4 -o "$out" --only 2 --dlasim "$dlasim" -- "$@" --threads 1) ||
    die "sbatch failed"
array=${ids% *}; merge=${ids#* }; jobs="$jobs $array $merge"
wait_job "$merge" 300
[ "$(job_state "$merge")" = "COMPLETED " ] && ok "re-running only shard 2 completes the set" ||
    bad "merge job $merge: $(job_state "$merge") $(cat "$out/merge.log" 2> /dev/null)"
cmp "$out/merged.txt" "$tmp/single.txt" && cmp "$out/merged.json" "$tmp/single.json" &&
    ok "the completed set merges byte-identical again" || bad "the completed set differs"

# a trace sweep (README): conformance cases in 3 array tasks and the merge,
# the same table as one process (per-case seconds aside)
conf=${CONFORMANCE:-$top/../shared/conformance/nvdla-traces}
if [ -d "$conf/nv_small" ]; then
    set -- trace --suite "$(cd "$conf/nv_small" && pwd)" --match 'sdp_*' --table \
        --expect "$top/tests/traces/nv_small.expect"
    no_seconds() { sed -E 's/\| +[0-9.]+ \|$/| - |/; s/^[0-9.]+ s in all/- s in all/' "$1"; }
    "$dlasim" "$@" > "$tmp/suite.out" || bad "the single-process suite failed"
    ids=$(tools/slurm/submit.sh -n 3 -o "$tmp/suite" --dlasim "$dlasim" -- "$@") || die "sbatch failed"
    array=${ids% *}; merge=${ids#* }; jobs="$jobs $array $merge"
    wait_job "$merge" 300
    no_seconds "$tmp/suite.out" > "$tmp/suite.a"
    no_seconds "$tmp/suite/merged.txt" > "$tmp/suite.b" 2> /dev/null
    [ "$(job_state "$merge")" = "COMPLETED " ] && cmp -s "$tmp/suite.a" "$tmp/suite.b" &&
        ok "trace sweep in 3 tasks: $(tail -1 "$tmp/suite.b"), the single process's table" ||
        bad "trace sweep: merge job $(job_state "$merge"), $(diff "$tmp/suite.a" "$tmp/suite.b" | head -5)"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

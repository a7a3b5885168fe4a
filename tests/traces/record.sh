#!/bin/sh
# Trace recording (`dlasim loadable --record-trace`): every case recorded
# from NVIDIA's nv_small regression loadables replays on a fresh dlasim
# device with all its checks passing, and NVIDIA's trace parser
# (nvdla/hw verif/tools/nvdla_trace_parser.py) accepts one recording and
# converts every command.  The parser is taken from NVDLA_TRACE_PARSER (a
# file) or the nvdla/hw git mirror NVDLA_HW_GIT (default
# /work/.mirror/nvdla+hw/repo, branch nv_small); without either that part is
# skipped with a message.
set -u
dlasim=${DLASIM:-build/dlasim}
conf=${CONFORMANCE:-../shared/conformance/nvdla-traces}
dir=${LOADABLES:-$conf/../nvdla-loadables}
hwgit=${NVDLA_HW_GIT:-/work/.mirror/nvdla+hw/repo}
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "PASS $1"; }
ko() { failed=$((failed + 1)); echo "FAIL $1"; }
if [ ! -d "$dir/flatbufs" ]; then
    echo "record: no loadables at $dir (set LOADABLES)"; echo "0 passed, 1 failed"; exit 1
fi
out=$(mktemp -d)
for k in CONV/CONV_D_L0_0 SDP/SDP_X1_L0_0 PDP/PDP_L0_0 CDP/CDP_L0_0; do
    name=$(basename "$k")
    if ! "$dlasim" loadable "$dir/flatbufs/kmd/${k}_small_fbuf" --record-trace "$out/$name" \
        > "$out/log" 2>&1; then
        ko "$name: recording failed: $(cat "$out/log")"; continue
    fi
    "$dlasim" trace --suite "$out/$name" > "$out/log" 2>&1
    line=$(tail -1 "$out/log")
    case "$line" in
        "0 passed"*|*" 0 passed"*) ko "$name: no case recorded" ;;
        *" 0 failed") ok "$name recording replays on a fresh device: $line" ;;
        *) ko "$name recording replay: $(cat "$out/log")" ;;
    esac
done

parser=${NVDLA_TRACE_PARSER:-}
if [ -z "$parser" ] && git --git-dir="$hwgit" cat-file -e nv_small:verif/tools/nvdla_trace_parser.py 2> /dev/null; then
    parser=$out/nvdla_trace_parser.py
    git --git-dir="$hwgit" show nv_small:verif/tools/nvdla_trace_parser.py > "$parser"
fi
case_dir=$out/CDP_L0_0/CDP_L0_0_000
if [ -z "$parser" ] || [ ! -f "$parser" ]; then
    echo "SKIP NVIDIA's trace parser: not found (set NVDLA_TRACE_PARSER=path/to/nvdla_trace_parser.py or NVDLA_HW_GIT=nvdla/hw git dir)"
elif [ ! -f "$case_dir/CDP_L0_0_000.cfg" ]; then
    ko "NVIDIA's trace parser: no recording to parse"
else
    mkdir -p "$out/parse"
    if (cd "$out/parse" && python3 "$parser" --file_path "$case_dir/CDP_L0_0_000.cfg") > "$out/log" 2>&1; then
        writes=$(grep -c '^reg_write' "$case_dir/CDP_L0_0_000.cfg")
        seq=$(grep -c '^WRITE' "$out/parse/trace_parser_cmd_sequence_command.log" 2> /dev/null)
        mems=$(grep -c '^mem_' "$case_dir/CDP_L0_0_000.cfg")
        memlog=$(grep -c . "$out/parse/trace_parser_cmd_memory_model_command.log" 2> /dev/null)
        crcs=$(grep -c '^check_crc' "$case_dir/CDP_L0_0_000.cfg")
        crclog=$(grep -c '^CHECK_CRC' "$out/parse/trace_parser_cmd_result_checker_command.log" 2> /dev/null)
        if [ "$writes" -gt 0 ] && [ "$writes" = "$seq" ] && [ "$mems" = "$memlog" ] && [ "$crcs" = "$crclog" ]; then
            ok "NVIDIA's trace parser accepts a recording ($writes writes, $mems memory commands, $crcs CRC checks)"
        else
            ko "NVIDIA's trace parser: $writes/$seq writes, $mems/$memlog memory commands, $crcs/$crclog checks"
        fi
    else
        ko "NVIDIA's trace parser failed: $(tail -3 "$out/log")"
    fi
fi
rm -rf "$out"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/bin/sh
# install.sh CASES_DIR RESULTS DEST: copy every graded case (not those the RTL failed to run)
# into DEST with its RTL CRC; convolution cases without their .dat files (tests/traces/
# rtl_graded.sh regenerates them); DEST/RESULTS gets the grading results.  Cases the RTL
# hangs on (`never`, `rtl-hang`) get "// expect: never completes": they pass when dlasim's
# device never completes them either (docs/trace-format.md).
set -eu
cases=$1; results=$2; dest=$3
# keep the hand-written list of known disagreements
keep=$(mktemp); [ -f "$dest/KNOWN_DISAGREEMENTS" ] && cp "$dest/KNOWN_DISAGREEMENTS" "$keep"
rm -rf "$dest"; mkdir -p "$dest"
[ -s "$keep" ] && cp "$keep" "$dest/KNOWN_DISAGREEMENTS"; rm -f "$keep"
while read -r c verdict rest; do
    [ "$verdict" = rtl-fail ] && continue
    mkdir -p "$dest/$c"
    cp "$cases/$c/$c.cfg" "$dest/$c/"
    case $verdict in never|rtl-hang)
        sed -i '2a // expect: never completes (graded: the nv_small RTL hangs on this programming)' "$dest/$c/$c.cfg" ;;
    esac
    grep -q '^// regenerate:' "$cases/$c/$c.cfg" || cp "$cases/$c"/*.dat "$dest/$c/"
done < "$results"
cp "$results" "$dest/RESULTS"
echo "install: $(ls -d "$dest"/*/ | wc -l) cases in $dest ($(grep -c ' agree' "$results") agree, $(grep -c ' disagree' "$results") disagree, $(grep -c ' never' "$results") never complete on both, $(grep -c ' rtl-hang' "$results") hang the RTL only, $(grep -c ' rtl-fail' "$results") dropped: the RTL failed)"

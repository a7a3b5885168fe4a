#!/bin/sh
# install_net.sh CASES_DIR RESULTS DEST: install the graded network-family cases (netcases.sh)
# into DEST, the .cfg only (tests/traces/rtl_graded_net.sh records the networks again for
# their .dat files), with DEST/RESULTS.  A case the RTL could not run is not installed; a
# case whose RTL CRC differs from dlasim's is installed with the RTL's (grade_one.sh wrote it)
# and must be listed in DEST/KNOWN_DISAGREEMENTS or fixed.  Cases of networks not graded in
# this run stay as they are (their RESULTS lines are kept).
set -eu
cases=$1; results=$2; dest=$3
mkdir -p "$dest"
nets=$(sed -n 's/^rg_net_\([a-z0-9]*\)_.*/\1/p' "$results" | sort -u)
keep=$(mktemp)
[ -f "$dest/RESULTS" ] && cp "$dest/RESULTS" "$keep"
for net in $nets; do
    rm -rf "$dest"/rg_net_"$net"_*
    sed -i "/^rg_net_${net}_/d" "$keep"
done
while read -r c verdict rest; do
    [ "$verdict" = rtl-fail ] && continue
    mkdir -p "$dest/$c"
    cp "$cases/$c/$c.cfg" "$dest/$c/"
done < "$results"
cat "$keep" "$results" | sort > "$dest/RESULTS"; rm -f "$keep"
echo "install_net: $(ls -d "$dest"/rg_net_*/ | wc -l) cases in $dest ($(grep -c ' agree' "$results") agree, $(grep -c ' disagree' "$results") disagree, $(grep -c ' rtl-fail' "$results") dropped: the RTL failed)"

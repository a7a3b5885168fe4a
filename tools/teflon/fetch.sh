#!/bin/sh
# Fetch Debian's arm64 TensorFlow Lite and Mesa Teflon packages (with their
# dependencies) into a cache folder and unpack them into a sysroot, through a
# private apt configuration: its own sources list, state and cache folders,
# so the machine's apt setup is read, never changed.  The archive is the one
# the machine's own apt sources name (the first Debian archive entry, not a
# security or updates one), with the suite changed to unstable, for arm64.
#
#   usage: tools/teflon/fetch.sh [CACHE]   (default $DLASIM_TEFLON_CACHE or
#                                           ~/.cache/dlasim/teflon)
# Prints what it does; exits 0 when CACHE/sysroot holds the packages.
# Re-running with a complete cache does nothing.
set -eu
cache=${1:-${DLASIM_TEFLON_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dlasim/teflon}}
pkgs="mesa-teflon-delegate libtensorflow-lite2.14.1 libtensorflow-lite-dev"
stamp="$cache/sysroot/.complete"
[ -f "$stamp" ] && exit 0

say() { echo "dlasim teflon: $*" >&2; }

# The archive of the machine's own apt sources (deb822 .sources or .list).
archive_url() {
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }' "$f"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }' "$f"
    done
}
url=$(archive_url | grep -v -e security -e updates | head -1)
[ -n "$url" ] || { say "no Debian archive found in /etc/apt/sources.list{,.d}"; exit 1; }
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

mkdir -p "$cache/apt/etc/preferences.d" "$cache/apt/state/lists/partial" \
    "$cache/apt/cache/archives/partial" "$cache/debs" "$cache/sysroot"
cat > "$cache/apt/etc/sources.list" <<LIST
deb [arch=arm64 signed-by=$keyring] $url unstable main
LIST
: > "$cache/apt/state/status"
set -- -o Dir::Etc::sourcelist="$cache/apt/etc/sources.list" -o Dir::Etc::sourceparts=- \
    -o Dir::Etc::preferencesparts="$cache/apt/etc/preferences.d" \
    -o Dir::State="$cache/apt/state" -o Dir::State::status="$cache/apt/state/status" \
    -o Dir::Cache="$cache/apt/cache" -o APT::Architecture=arm64 -o APT::Architectures=arm64 \
    -o Acquire::Languages=none -o Debug::NoLocking=1 -o APT::Sandbox::User=root

say "reading the arm64 package index of Debian unstable (private apt configuration in $cache/apt)"
apt-get "$@" -q update > "$cache/apt/update.log" 2>&1 || {
    cat "$cache/apt/update.log" >&2; say "apt-get update failed"; exit 1; }

# The packages and everything they depend on (no recommends), minus what an
# arm64 user-space sysroot does not need to run them.
deps=$(apt-cache "$@" depends --recurse --no-recommends --no-suggests --no-conflicts \
        --no-breaks --no-replaces --no-enhances $pkgs 2>/dev/null |
    grep -v '^ ' | grep -v '^<' | sort -u)
n=$(echo "$deps" | wc -l)
say "downloading $n arm64 packages ($pkgs and their dependencies) into $cache/debs"
(cd "$cache/debs" && apt-get "$@" -q download $deps > "$cache/apt/download.log" 2>&1) || {
    tail -20 "$cache/apt/download.log" >&2; say "apt-get download failed"; exit 1; }

say "unpacking them into $cache/sysroot"
for d in "$cache"/debs/*.deb; do
    dpkg-deb -x "$d" "$cache/sysroot"
done
# a merged-/usr root as every Debian system has (base-files makes these links,
# not the library packages): the arm64 loader is looked up as /lib/ld-linux-...
for d in lib bin sbin; do
    [ -e "$cache/sysroot/$d" ] || ln -s "usr/$d" "$cache/sysroot/$d"
done
touch "$stamp"
say "done: $(du -sh "$cache/sysroot" | cut -f1) in $cache/sysroot"

#!/bin/sh
# The library as others link it (issue 16):
#  - libdlasim.so exports only the API (nm -D: dlasim_* and nothing else),
#    its soname is libdlasim.so.MAJOR; libdlasim.a has no global symbol
#    outside the API either (internal names such as dla_error are local);
#  - `make install PREFIX=tmp` installs headers, both libraries, the preload
#    library and dlasim.pc; a program (tests/library/client.c) that defines
#    its own dla_error/dla_errf builds through pkg-config against the
#    installed shared library and, statically, against libdlasim.a, and runs.
# Needs DLASIM (the CLI; its folder is the build) and the build's compile
# flags (BUILD/obj/flags.txt: the same CC and SAN, so nothing is rebuilt).
set -u
build=$(dirname "${DLASIM:-build/dlasim}")
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "PASS $1"; }
ko() { failed=$((failed + 1)); echo "FAIL $1"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

so=$build/libdlasim.so
n=$(nm -D --defined-only "$so" | awk '{print $3}' | grep -c .)
others=$(nm -D --defined-only "$so" | awk '{print $3}' | grep -v '^dlasim_')
if [ "$n" -gt 50 ] && [ -z "$others" ]; then
    ok "libdlasim.so exports $n symbols, all dlasim_*"
else
    ko "libdlasim.so exports $n symbols; not API: $(echo $others | head -c 300)"
fi
soname=$(readelf -d "$so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
major=$(sed -n 's/^#define DLASIM_VERSION_MAJOR \([0-9]*\)/\1/p' include/dlasim/version.h)
[ "$soname" = "libdlasim.so.$major" ] && ok "soname $soname" || ko "soname '$soname', want libdlasim.so.$major"
glob=$(nm -g --defined-only "$build/libdlasim.a" | awk 'NF == 3 {print $3}' | grep -v '^dlasim_')
[ -z "$glob" ] && ok "libdlasim.a: every global symbol is dlasim_*" ||
    ko "libdlasim.a globals outside the API: $(echo $glob | head -c 300)"
pre=$(nm -D --defined-only "$build/libdlasim-nvdla.so" | awk '{print $3}' |
    grep -v '^dlasim_\|^open\|^openat\|^__open\|^close$\|^ioctl$\|^mmap\|^dup\|^fcntl')
[ -z "$pre" ] && ok "libdlasim-nvdla.so exports the API and the interposed calls only" ||
    ko "libdlasim-nvdla.so exports $(echo $pre | head -c 300)"

# install with the build's own compiler and sanitizer settings
flags=$(cat "$build/obj/flags.txt" 2>/dev/null)
cc=${flags%% *}
san=""
case "$flags" in *-fsanitize=*) san="-fsanitize=address,undefined" ;; esac
if make -s install BUILD="$build" CC="$cc" ${san:+SAN=1} PREFIX="$tmp/prefix" > "$tmp/install.log" 2>&1 &&
    [ -f "$tmp/prefix/include/dlasim/port.h" ] && [ -f "$tmp/prefix/include/dlasim/regs/nvdla_regs.h" ] &&
    [ -f "$tmp/prefix/lib/libdlasim.a" ] && [ -f "$tmp/prefix/lib/libdlasim-nvdla.so" ] &&
    [ -L "$tmp/prefix/lib/libdlasim.so" ]; then
    ok "make install PREFIX=tmp: headers, libraries, dlasim.pc"
else
    ko "make install: $(tail -5 "$tmp/install.log")"
fi
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
ver=$(pkg-config --modversion dlasim 2>&1)
# shared
if "$cc" -std=c11 -Wall -Wextra -Werror $san -o "$tmp/client" tests/library/client.c \
        $(pkg-config --cflags --libs dlasim) > "$tmp/cc.log" 2>&1 &&
    out=$(LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/client" "$ver" 2>&1) &&
    LD_LIBRARY_PATH="$tmp/prefix/lib" ldd "$tmp/client" | grep -q "libdlasim.so.$major => $tmp/prefix/lib/"; then
    ok "pkg-config (dlasim $ver), shared: $out"
else
    ko "pkg-config shared: $(cat "$tmp/cc.log") ${out:-}"
fi
# static: the archive and its Libs.private
if "$cc" -std=c11 -Wall -Wextra -Werror $san -o "$tmp/client-static" tests/library/client.c \
        $(pkg-config --cflags dlasim) "$tmp/prefix/lib/libdlasim.a" \
        $(pkg-config --static --libs-only-l dlasim | sed 's/-ldlasim//') > "$tmp/cc.log" 2>&1 &&
    out=$("$tmp/client-static" "$ver" 2>&1) && ! ldd "$tmp/client-static" | grep -q libdlasim; then
    ok "static libdlasim.a: $out"
else
    ko "static: $(cat "$tmp/cc.log") ${out:-}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

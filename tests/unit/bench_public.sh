#!/bin/sh
# The benchmarks use the public API only (issue 15; docs/architecture.md,
# "Folders and layers"): every #include "..." of a file under bench/ names a
# file of bench/ itself, a public header (include/dlasim/NAME.h) or a
# register map as `make install` installs it (dlasim/regs/NAME_regs.h, from
# src/regs/gen).  Checked two ways:
#   1. the include lines (and the check itself, on a file that breaks it);
#   2. every bench/*.c compiles (-fsyntax-only) with the public include path
#      alone: include/ and the installed register maps, no src/.
# Run from the repository root:  sh tests/unit/bench_public.sh
# Prints each violation and "N passed, N failed".
set -u
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }

# the quoted includes of file $1 that are not public; one per line
private_includes() {
    dir=$(dirname "$1")
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1" |
    while read -r name; do
        case "$name" in
        dlasim/regs/*_regs.h)
            [ -f "src/regs/gen/${name#dlasim/regs/}" ] && continue ;;
        dlasim/*)
            [ -f "include/$name" ] && continue ;;
        */*) ;;
        *)
            [ -f "$dir/$name" ] && continue ;;
        esac
        echo "$name"
    done
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the check catches what it should
mkdir -p "$tmp/probe"
printf '#include "dlasim/dlasim.h"\n#include "kernels/conv_s8.h"\n#include "regs/gen/nvdla_regs.h"\n' \
    > "$tmp/probe/x.c"
if [ "$(private_includes "$tmp/probe/x.c" | wc -l)" -eq 2 ]; then ok; else
    bad "the include check misses private headers"; fi

# 1. include lines
for f in bench/*.c bench/*.h; do
    [ -f "$f" ] || continue
    p=$(private_includes "$f")
    if [ -z "$p" ]; then ok; else
        for n in $p; do bad "$f includes \"$n\": not a public header (include/dlasim/*.h)"; done
    fi
done

# 2. compile with the public include path only
CC=${CC:-cc}
mkdir -p "$tmp/inc/dlasim/regs"
cp src/regs/gen/nvdla_regs.h src/regs/gen/rk3588_regs.h "$tmp/inc/dlasim/regs/"
for f in bench/*.c; do
    if out=$("$CC" -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -fsyntax-only \
                -Iinclude -I"$tmp/inc" "$f" 2>&1); then ok; else
        bad "$f does not compile with the public headers alone:"
        printf '%s\n' "$out" | head -5
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

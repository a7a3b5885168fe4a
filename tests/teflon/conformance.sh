#!/bin/sh
# The Teflon conformance subset of `make test` (docs/teflon.md): generated
# uint8/int8 TFLite models (tools/teflon/gen_models.py --subset quick) run on
# TFLite's CPU and through Debian's arm64 Mesa Teflon -> rocket ->
# libdlasim-rocket.so -> dlasim's RK3588 under qemu; each case within 2 of
# the CPU or a documented Mesa limitation (tests/teflon/known.txt).  The full
# sweep is `make teflon-sweep`.  The first run fetches Debian's packages
# into the cache (DLASIM_TEFLON_CACHE, default ~/.cache/dlasim/teflon).
# The arm64 side is the same in every build, so the sanitizer build skips it.
set -u
dlasim=${DLASIM:-build/dlasim}
case "$dlasim" in
    *build-san*) echo "teflon: skipped in the sanitizer build (the arm64 client is one build)"
                 echo "0 passed, 0 failed"; exit 0 ;;
esac
models=$(dirname "$dlasim")/teflon-models
/usr/bin/python3 tools/teflon/gen_models.py "$models" --subset quick > /dev/null || {
    echo "FAIL teflon: generating the models (needs python3-flatbuffers)"; echo "0 passed, 1 failed"; exit 1; }
sh tools/teflon/sweep.sh "$dlasim" "$models" tests/teflon/known.txt

#!/bin/sh
# Install the Debian packages dlasim needs to build and test, when missing
# (flatbuffers-compiler: flatc checks the loadable writer against loadable.fbs;
# qemu-user-static, the arm64 cross compilers and python3-flatbuffers: the Teflon
# conformance test, docs/teflon.md; libonnx-testdata: ONNX's operator tests; nodejs, npm: ONNX Runtime from npm, the
# float reference's independent check, tests/traces/onnx_ort.sh).
# As root this uses apt-get; otherwise it names what to install and fails.
set -u
need=""
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for pkg in make gcc clang libclang-rt-14-dev libcmocka-dev zlib1g-dev libmd-dev libjpeg62-turbo-dev python3 flatbuffers-compiler \
           libprotobuf-c-dev protobuf-c-compiler python3-onnx libpng-dev dataset-fashion-mnist \
           qemu-user-static gcc-aarch64-linux-gnu g++-aarch64-linux-gnu python3-flatbuffers \
           libonnx-testdata nodejs npm; do
    if [ "$pkg" = python3 ] && command -v python3 >/dev/null 2>&1; then continue; fi
    if [ "$pkg" = clang ] && command -v clang >/dev/null 2>&1; then continue; fi
    if [ "$pkg" = nodejs ] && command -v node >/dev/null 2>&1; then continue; fi
    if [ "$pkg" = npm ] && command -v npm >/dev/null 2>&1; then continue; fi
    have_pkg "$pkg" || need="$need $pkg"
done
[ -z "$need" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "deps: installing$need"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null && apt-get install -y -qq $need >/dev/null || {
        echo "deps: apt-get install$need failed" >&2; exit 1; }
else
    echo "deps: missing Debian packages:$need" >&2
    echo "deps: install them with: sudo apt-get install$need" >&2
    exit 1
fi

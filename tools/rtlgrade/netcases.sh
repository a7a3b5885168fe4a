#!/bin/sh
# netcases.sh DLASIM OUT [NET...]: the network family of the RTL-graded campaign.
# Compiles each network for nv_small, runs one deterministic input through it with
# `dlasim run --record-trace` and turns the recording into trace cases
# OUT/rg_net_<net>_<n>/ (one per hardware layer; a network the compiler splits
# around host-CPU layers gives rg_net_<net>_<sub>_<n>).  Each case's .cfg gets
#   // regenerate-net: <net>
#   // data cksum: <cksum of its .dat files, in mem_load order>
# so that tests/traces/rtl_graded_net.sh can rebuild the .dat files (the recorder
# writes every allocated region per case: ResNet-18 at 32x32 is ~0.7 GB) and
# check they are the ones the RTL was given.
#
# Networks (default: all):
#   fmnist       the demo's Fashion-MNIST CNN (models/fashion_mnist.onnx), 28x28
#   resnet18     ResNet-18, torchvision's layout (tools/models/make_resnet.py), 32x32
#   mobilenetv2  MobileNetV2 (tools/models/make_mobilenetv2.py), 32x32, its first two
#                rows of bottlenecks (the whole network is ~950 hardware layers: every
#                depthwise channel block is one), 1x1 to 1280, pooling, Gemm:
#                depthwise convolutions in channel blocks, residual add
#   shufflenet   torchvision's ShuffleNetV2 exported by torch (tests/models/
#                tv_shufflenet_v2.onnx), 64x64: channel split (Slice), Concat, depthwise
#   lrn          a convolution and an LRN (tests/models/op_lrn.onnx): CDP
#   avgpool leakyrelu multensor prelu grouped dilation padconv
#                the one- to three-layer operator models of tests/models (op_avgpool,
#                op_leakyrelu, op_mul_tensor, op_prelu, op_conv_grouped,
#                op_conv_stride_dilation, op_pad_conv), 12x12x8: the SDP and PDP
#                programmings the networks above do not make
# Needs /usr/bin/python3 with Debian's python3-onnx and python3-numpy.
set -eu
dlasim=$1; out=$2; shift 2
nets=${*:-fmnist resnet18 mobilenetv2 shufflenet lrn avgpool leakyrelu multensor prelu grouped dilation padconv}
top=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

# input bytes: a SHA-256 chain of the network's name (the same on every machine)
make_input() {
    /usr/bin/python3 -c 'import hashlib, sys
n, seed = int(sys.argv[1]), sys.argv[2].encode()
b, h = bytearray(), seed
while len(b) < n:
    h = hashlib.sha256(h).digest(); b += h
sys.stdout.buffer.write(bytes(b[:n]))' "$1" "$2" > "$3"
}

model_of() {
    case $1 in
    fmnist) echo "$top/models/fashion_mnist.onnx 784" ;;
    resnet18) /usr/bin/python3 "$top/tools/models/make_resnet.py" 18 "$work/resnet18.onnx" 32
              echo "$work/resnet18.onnx 3072" ;;
    mobilenetv2) /usr/bin/python3 "$top/tools/models/make_mobilenetv2.py" "$work/mobilenetv2.onnx" 32 2
                 echo "$work/mobilenetv2.onnx 3072" ;;
    shufflenet) echo "$top/tests/models/tv_shufflenet_v2.onnx 12288" ;;
    lrn) echo "$top/tests/models/op_lrn.onnx 1152" ;;
    avgpool|leakyrelu|prelu) echo "$top/tests/models/op_$1.onnx 1152" ;;
    multensor) echo "$top/tests/models/op_mul_tensor.onnx 1152" ;;
    grouped) echo "$top/tests/models/op_conv_grouped.onnx 1152" ;;
    dilation) echo "$top/tests/models/op_conv_stride_dilation.onnx 1152" ;;
    padconv) echo "$top/tests/models/op_pad_conv.onnx 1152" ;;
    *) echo "netcases: unknown network $1" >&2; return 2 ;;
    esac
}

# install one recorded case as OUT/NAME: rename it and its files, stamp the header
install_case() {
    src=$1; name=$2; net=$3
    old=$(basename "$src")
    mkdir -p "$out/$name"
    for f in "$src"/*.dat; do
        b=$(basename "$f"); mv "$f" "$out/$name/$name${b#"$old"}"
    done
    sum=$(sed -n 's/^mem_load(.*"\(.*\)");$/\1/p' "$src/$old.cfg" | sed "s/^$old/$name/" |
          awk -v d="$out/$name" '!seen[$0]++ {print d "/" $0}' | xargs cat | cksum | cut -d' ' -f1,2)
    { echo "// regenerate-net: $net"; echo "// data cksum: $sum"
      sed "s/$old/$name/g" "$src/$old.cfg"; } > "$out/$name/$name.cfg"
}

for net in $nets; do
    set -- $(model_of "$net")
    make_input "$2" "$net" "$work/$net.in"
    rec=$work/rec_$net
    "$dlasim" run "$1" --config nv_small --input "$work/$net.in" --record-trace "$rec" > "$work/$net.log" 2>&1 ||
        { echo "netcases: $net: dlasim run failed:" >&2; tail -5 "$work/$net.log" >&2; exit 1; }
    for c in "$rec"/*/*.cfg "$rec"/*/*/*.cfg; do
        [ -f "$c" ] || continue
        d=$(dirname "$c"); case_=$(basename "$d")
        sub=$(basename "$(dirname "$d")")
        if [ "$sub" = "rec_$net" ]; then name=rg_net_${net}_${case_##*_}
        else name=rg_net_${net}_${sub#net}_${case_##*_}; fi
        install_case "$d" "$name" "$net"
        echo "$name"
    done
    rm -rf "$rec"
done

#!/usr/bin/python3
"""Pre-quantized (QDQ) ONNX models made by PyTorch's own post-training
quantization, for the grading of dlasim's QDQ import against ONNX Runtime
(tools/models/qdq_grade.py; docs/compiler.md "Pre-quantized models").
Uses Debian's python3-torch / python3-torchvision (seen by /usr/bin/python3).

    /usr/bin/python3 tools/models/make_torch_qdq.py small OUT.onnx
        a small residual network (32x32 input, 8..32 channels) with every
        operator torch's quantized ResNet uses: Conv+BN+ReLU, MaxPool,
        residual add + ReLU, AveragePool, GlobalAveragePool, Flatten, Linear
        (the model `make test` keeps, tests/models/qdq_torch_small.onnx)
    /usr/bin/python3 tools/models/make_torch_qdq.py resnet18 OUT.onnx [SIZE]
        torchvision's quantizable ResNet-18 (1000 classes), SIZE x SIZE
        input (default 224)

Both: random seeded weights with random BatchNorm statistics (as the model
zoo's), eager-mode torch.ao.quantization (fuse, prepare, calibrate on 8
random images uniform in [0, 1), convert), exported by torch.onnx.export at
opset 13, which writes QuantizeLinear / DequantizeLinear around each
operator.  The quantization configuration is torch's default form:
activations quint8 per_tensor_affine (MinMaxObserver; a tensor after a
ReLU gets zero point 0, others a zero point anywhere in 0..255: dlasim
folds it into biases, pad values and SDP offsets, docs/compiler.md), with
ONNX Runtime then folding every Relu into its integer QLinearConv /
QLinearAdd; weights qint8 per_channel_symmetric (zero point 0) in 7 bits
(-64..63): ONNX Runtime's uint8 x int8 kernels on x86 without VNNI add
pairs of products in 16-bit saturating arithmetic (VPMADDUBSW), so
full-range int8 weights against uint8 codes near 255 saturate there and
ORT's own int8 result is wrong; 7-bit weights are the usual workaround
(torch's fbgemm configuration halves the activations' range instead,
reduce_range).  --w8 makes full-range weights (dlasim takes them; the
grading against ORT then measures ORT's saturation).  --symmetric makes
the earlier form, activations per_tensor_symmetric (zero point 128),
where ORT cannot fold a Relu before a QuantizeLinear and runs those
layers in float32.
"""
import sys

import torch
from torch import nn
from torch.ao import quantization as tq
from torchvision.models import quantization as qm


def randomize_bn(model, gen):
    for mod in model.modules():
        if isinstance(mod, nn.BatchNorm2d):
            c = mod.num_features
            mod.weight.data = 0.5 + torch.rand(c, generator=gen)
            mod.bias.data = 0.2 * torch.randn(c, generator=gen)
            mod.running_mean.data = 0.1 * torch.randn(c, generator=gen)
            mod.running_var.data = 0.5 + torch.rand(c, generator=gen)


class Block(nn.Module):
    """A residual block as torchvision's quantizable BasicBlock builds it."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
        self.add_relu = nn.quantized.FloatFunctional()

    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.add_relu.add_relu(y, x if self.down is None else self.down(x))

    def fuse(self):
        tq.fuse_modules(self, [["conv1", "bn1", "relu"], ["conv2", "bn2"]], inplace=True)
        if self.down is not None:
            tq.fuse_modules(self.down, [["0", "1"]], inplace=True)


class SmallResNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv1 = nn.Conv2d(3, 8, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = Block(8, 8, 1)
        self.layer2 = Block(8, 16, 2)
        self.pool = nn.AvgPool2d(2, 2)
        self.layer3 = Block(16, 32, 1)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, num_classes)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(self.quant(x)))))
        x = self.layer3(self.pool(self.layer2(self.layer1(x))))
        x = torch.flatten(self.avgpool(x), 1)
        return self.dequant(self.fc(x))

    def fuse_model(self):
        tq.fuse_modules(self, [["conv1", "bn1", "relu"]], inplace=True)
        for b in (self.layer1, self.layer2, self.layer3):
            b.fuse()


def qconfig(w8, symmetric):
    scheme = torch.per_tensor_symmetric if symmetric else torch.per_tensor_affine
    act = tq.MinMaxObserver.with_args(dtype=torch.quint8, qscheme=scheme)
    wmin, wmax = (-128, 127) if w8 else (-64, 63)
    wt = tq.PerChannelMinMaxObserver.with_args(dtype=torch.qint8, qscheme=torch.per_channel_symmetric,
                                               quant_min=wmin, quant_max=wmax)
    return tq.QConfig(activation=act, weight=wt)


def quantize_and_export(model, size, out, w8, symmetric):
    gen = torch.Generator().manual_seed(1)
    randomize_bn(model, gen)
    model.eval()
    model.fuse_model()
    model.qconfig = qconfig(w8, symmetric)
    tq.prepare(model, inplace=True)
    with torch.no_grad():
        for _ in range(8):
            model(torch.rand(1, 3, size, size, generator=gen))
    tq.convert(model, inplace=True)
    x = torch.rand(1, 3, size, size, generator=gen)
    torch.onnx.export(model, x, out, opset_version=13, input_names=["input"], output_names=["output"])


def main():
    torch.manual_seed(0)
    torch.backends.quantized.engine = "qnnpack"
    torch.set_num_threads(1)
    args = [a for a in sys.argv[1:] if a not in ("--w8", "--symmetric")]
    w8, sym = "--w8" in sys.argv, "--symmetric" in sys.argv
    if len(args) < 2 or args[0] not in ("small", "resnet18"):
        sys.exit("usage: make_torch_qdq.py small|resnet18 OUT.onnx [SIZE] [--w8] [--symmetric]")
    kind, out = args[0], args[1]
    if kind == "small":
        quantize_and_export(SmallResNet(), 32, out, w8, sym)
    else:
        size = int(args[2]) if len(args) > 2 else 224
        quantize_and_export(qm.resnet18(weights=None, quantize=False), size, out, w8, sym)


if __name__ == "__main__":
    main()

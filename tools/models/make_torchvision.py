#!/usr/bin/python3
"""torchvision models exported to ONNX as a user would export them: random
weights (seeded), eval mode, plain torch.onnx.export at opset 13, batch 1.
Uses Debian's python3-torch and python3-torchvision (seen by /usr/bin/python3).

    /usr/bin/python3 tools/models/make_torchvision.py zoo DIR [NAME...]
        the model-zoo table's models (make zoo), 224x224 (segmentation 256x256)
    /usr/bin/python3 tools/models/make_torchvision.py small DIR
        the small low-resolution variants `make test` keeps (tests/models/tv_*.onnx)

Each model is written as DIR/NAME.onnx; an existing file is kept.
"""
import os
import sys

import torch
import torchvision
from torchvision import models
from torchvision.models import segmentation


class Out(torch.nn.Module):
    """The 'out' tensor of a segmentation model (which returns a dict)."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x)["out"]


def lraspp(width_mult=1.0, num_classes=21):
    from torchvision.models.segmentation.lraspp import _lraspp_mobilenetv3
    backbone = models.mobilenet_v3_large(width_mult=width_mult, dilated=True)
    return Out(_lraspp_mobilenetv3(backbone, num_classes))


ZOO = {
    "resnet18": (lambda: models.resnet18(), 224),
    "resnet50": (lambda: models.resnet50(), 224),
    "mobilenet_v2": (lambda: models.mobilenet_v2(), 224),
    "mobilenet_v3_small": (lambda: models.mobilenet_v3_small(), 224),
    "mobilenet_v3_large": (lambda: models.mobilenet_v3_large(), 224),
    "efficientnet_b0": (lambda: models.efficientnet_b0(), 224),
    "squeezenet1_1": (lambda: models.squeezenet1_1(), 224),
    "shufflenet_v2_x1_0": (lambda: models.shufflenet_v2_x1_0(), 224),
    "densenet121": (lambda: models.densenet121(), 224),
    "vgg11": (lambda: models.vgg11(), 224),
    "googlenet": (lambda: models.googlenet(aux_logits=False, init_weights=True), 224),
    "mnasnet0_5": (lambda: models.mnasnet0_5(), 224),
    "regnet_x_400mf": (lambda: models.regnet_x_400mf(), 224),
    "lraspp_mobilenet_v3_large": (lambda: lraspp(), 256),
}

# Small variants for `make test`: few weights (the .onnx files are committed),
# low resolution, the same operators and export paths as the zoo's models.
SMALL = {
    "tv_mobilenet_v3_small": (lambda: models.mobilenet_v3_small(width_mult=0.25, num_classes=10), 64),
    "tv_shufflenet_v2": (lambda: models.shufflenetv2.ShuffleNetV2([2, 1, 1], [8, 16, 32, 64, 64],
                                                                   num_classes=10), 64),
    "tv_densenet": (lambda: models.DenseNet(growth_rate=4, block_config=(2, 10), num_init_features=8,
                                            bn_size=2, num_classes=10), 32),

    "tv_lraspp": (lambda: lraspp(width_mult=0.1, num_classes=3), 64),
}


def export(name, make, size, out_dir):
    path = os.path.join(out_dir, name + ".onnx")
    if os.path.exists(path):
        return path
    torch.manual_seed(1)
    net = make().eval()
    with torch.no_grad():
        for mod in net.modules():  # random BN statistics, as trained nets have
            if isinstance(mod, torch.nn.BatchNorm2d):
                mod.running_mean.uniform_(-0.1, 0.1)
                mod.running_var.uniform_(0.5, 1.5)
        x = torch.rand(1, 3, size, size)
        torch.onnx.export(net, x, path, opset_version=13, input_names=["input"],
                          output_names=["output"])
    return path


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("zoo", "small"):
        sys.exit(__doc__)
    table = ZOO if sys.argv[1] == "zoo" else SMALL
    out_dir = sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    names = sys.argv[3:] or list(table)
    for name in names:
        make, size = table[name]
        print(export(name, make, size, out_dir), flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Train the small Fashion-MNIST CNN that `make demo` runs, and export it as ONNX.

Uses Debian's python3-torch and dataset-fashion-mnist only (no downloads).
CPU-only, one thread, a few epochs: about 91 % test accuracy.

    nice /usr/bin/python3 tools/models/train_fashion_mnist.py [--epochs 4] \
        [--out models/fashion_mnist.onnx]

The network (28x28x1 input, pixels scaled to [0, 1]):
    Conv 3x3 16 + BatchNorm + Relu, MaxPool 2x2,
    Conv 3x3 32 + BatchNorm + Relu, MaxPool 2x2,
    Flatten, Gemm 1568->64 + Relu, Gemm 64->10   (logits; no softmax)
BatchNormalization is kept in the exported graph (the compiler folds it).
"""
import argparse
import gzip
import struct

import numpy as np
import torch
import torch.nn as nn

DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    magic, = struct.unpack(">I", raw[:4])
    ndim = magic & 0xFF
    dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
            nn.MaxPool2d(2))
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(32 * 7 * 7, 64), nn.ReLU(), nn.Linear(64, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


def accuracy(net, x, y):
    net.eval()
    with torch.no_grad():
        pred = torch.cat([net(x[i:i + 1000]).argmax(1) for i in range(0, len(x), 1000)])
    return (pred == y).float().mean().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--out", default="models/fashion_mnist.onnx")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    xtr = torch.tensor(read_idx(DATA + "/train-images-idx3-ubyte.gz"), dtype=torch.float32)
    ytr = torch.tensor(read_idx(DATA + "/train-labels-idx1-ubyte.gz"), dtype=torch.int64)
    xte = torch.tensor(read_idx(DATA + "/t10k-images-idx3-ubyte.gz"), dtype=torch.float32)
    yte = torch.tensor(read_idx(DATA + "/t10k-labels-idx1-ubyte.gz"), dtype=torch.int64)
    xtr = (xtr / 255.0).unsqueeze(1)
    xte = (xte / 255.0).unsqueeze(1)
    net = Net()
    opt = torch.optim.Adam(net.parameters(), lr=2e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.3)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(args.epochs):
        net.train()
        perm = torch.randperm(len(xtr))
        for i in range(0, len(xtr), 128):
            idx = perm[i:i + 128]
            opt.zero_grad()
            loss = loss_fn(net(xtr[idx]), ytr[idx])
            loss.backward()
            opt.step()
        sched.step()
        print(f"epoch {epoch + 1}: test accuracy {100 * accuracy(net, xte, yte):.2f} %", flush=True)
    net.eval()
    torch.onnx.export(net, torch.zeros(1, 1, 28, 28), args.out, input_names=["image"],
                      output_names=["logits"], opset_version=13,
                      training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Writes the TorchScript + ONNX fixture pairs under tests/data/torch/.

Each pair is made from the same PyTorch module (fixed seed), so the LibTorch runner on the .pt file
and ONNX Runtime / parity's ref runner on the .onnx file must agree. Next to each pair go the input
and PyTorch's own output as ONNX TensorProto files (<name>.input_<i>.pb, <name>.output_<i>.pb).

Needs Debian's python3-torch (1.13) and python3-onnx: run with /usr/bin/python3.
"""
import os
import sys

import onnx
import torch
from onnx import numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "torch")


class ConvReluLinear(torch.nn.Module):
    """conv + relu + linear: the classic small CNN head."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, kernel_size=3, padding=1)
        self.fc = torch.nn.Linear(4 * 8 * 8, 10)

    def forward(self, x):
        y = torch.relu(self.conv(x))
        return self.fc(torch.flatten(y, 1))


class TwoHeads(torch.nn.Module):
    """Two outputs (a tuple): exercises --torch-output-names."""

    def forward(self, x):
        return torch.relu(x) * 2.0, x.sum(dim=1)


class Embedding(torch.nn.Module):
    """int64 input: exercises dtypes other than float32."""

    def __init__(self):
        super().__init__()
        self.table = torch.nn.Embedding(10, 4)

    def forward(self, ids):
        return self.table(ids)


class AttentionBlocks(torch.nn.Module):
    """Two pre-norm transformer blocks with dynamic batch and sequence axes.

    Traced with symbolic shapes, every reshape becomes a Shape -> Gather -> Unsqueeze -> Concat ->
    Reshape chain (and LayerNorm/GELU decompose into many small ops): a model whose shape subgraphs
    only fold once the input shape is fixed (`surgeon sanitize --override-input-shapes
    --fold-constants`).
    """

    def __init__(self, dim=32, heads=4, hidden=64, blocks=2):
        super().__init__()
        self.heads = heads
        self.layers = torch.nn.ModuleList()
        for _ in range(blocks):
            self.layers.append(torch.nn.ModuleDict({
                "norm1": torch.nn.LayerNorm(dim),
                "qkv": torch.nn.Linear(dim, 3 * dim),
                "proj": torch.nn.Linear(dim, dim),
                "norm2": torch.nn.LayerNorm(dim),
                "fc1": torch.nn.Linear(dim, hidden),
                "fc2": torch.nn.Linear(hidden, dim),
            }))

    def attention(self, layer, x):
        b, s, d = x.shape
        qkv = layer["qkv"](x).reshape(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        weights = torch.softmax(q @ k.transpose(-2, -1) / (d // self.heads) ** 0.5, dim=-1)
        return layer["proj"]((weights @ v).transpose(1, 2).reshape(b, s, d))

    def forward(self, x):
        for layer in self.layers:
            x = x + self.attention(layer, layer["norm1"](x))
            x = x + layer["fc2"](torch.nn.functional.gelu(layer["fc1"](layer["norm2"](x))))
        return x


class DenseBlocks(torch.nn.Module):
    """Two DenseNet dense blocks and a transition, built as torchvision builds them (each layer
    concatenates all earlier feature maps): the Concats whose inputs ref writes into one shared
    buffer (batch 1: the slices of a channel Concat are contiguous), behind BatchNorm + Relu and 1x1 / 3x3
    convolutions, with channel counts that are no multiple of 8.
    """

    def __init__(self, stem=10, growth=6, bn_size=2, layers=(3, 2), classes=5):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, stem, kernel_size=3, padding=1, bias=False)
        self.blocks = torch.nn.ModuleList()
        self.transitions = torch.nn.ModuleList()
        channels = stem
        for b, count in enumerate(layers):
            block = torch.nn.ModuleList()
            for i in range(count):
                block.append(torch.nn.Sequential(
                    torch.nn.BatchNorm2d(channels + i * growth), torch.nn.ReLU(),
                    torch.nn.Conv2d(channels + i * growth, bn_size * growth, kernel_size=1, bias=False),
                    torch.nn.BatchNorm2d(bn_size * growth), torch.nn.ReLU(),
                    torch.nn.Conv2d(bn_size * growth, growth, kernel_size=3, padding=1, bias=False)))
            self.blocks.append(block)
            channels += count * growth
            if b + 1 < len(layers):
                self.transitions.append(torch.nn.Sequential(
                    torch.nn.BatchNorm2d(channels), torch.nn.ReLU(),
                    torch.nn.Conv2d(channels, channels // 2, kernel_size=1, bias=False),
                    torch.nn.AvgPool2d(kernel_size=2, stride=2)))
                channels //= 2
        self.norm = torch.nn.BatchNorm2d(channels)
        self.fc = torch.nn.Linear(channels, classes)
        # Trained-looking statistics, so that folding or fusing BatchNorm wrongly shows.
        for m in self.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.normal_(0, 0.2)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.data.uniform_(0.5, 1.5)
                m.bias.data.normal_(0, 0.2)

    def forward(self, x):
        x = self.stem(x)
        for b, block in enumerate(self.blocks):
            features = [x]
            for layer in block:
                features.append(layer(torch.cat(features, 1)))
            x = torch.cat(features, 1)
            if b < len(self.transitions):
                x = self.transitions[b](x)
        x = torch.relu(self.norm(x))
        return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1))


def save_tensor(array, path):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array).SerializeToString())


def export(name, module, inputs, input_names, output_names, dynamic_axes):
    module.eval()
    scripted = torch.jit.script(module)
    scripted.save(os.path.join(OUT, name + ".pt"))
    onnx_path = os.path.join(OUT, name + ".onnx")
    torch.onnx.export(module, inputs, onnx_path, opset_version=13, input_names=input_names,
                      output_names=output_names, dynamic_axes=dynamic_axes)
    onnx.checker.check_model(onnx.load(onnx_path))
    with torch.no_grad():
        outputs = module(*inputs)
    if isinstance(outputs, torch.Tensor):
        outputs = (outputs,)
    for i, t in enumerate(inputs):
        save_tensor(t.numpy(), os.path.join(OUT, "%s.input_%d.pb" % (name, i)))
    for i, t in enumerate(outputs):
        save_tensor(t.numpy(), os.path.join(OUT, "%s.output_%d.pb" % (name, i)))


def export_onnx_only(name, module, inputs, input_names, output_names, dynamic_axes):
    """ONNX (traced, shapes symbolic) plus input and PyTorch output; no TorchScript file."""
    module.eval()
    onnx_path = os.path.join(OUT, name + ".onnx")
    torch.onnx.export(module, inputs, onnx_path, opset_version=13, input_names=input_names,
                      output_names=output_names, dynamic_axes=dynamic_axes)
    onnx.checker.check_model(onnx.load(onnx_path))
    with torch.no_grad():
        outputs = module(*inputs)
    for i, t in enumerate(inputs):
        save_tensor(t.numpy(), os.path.join(OUT, "%s.input_%d.pb" % (name, i)))
    save_tensor(outputs.numpy(), os.path.join(OUT, "%s.output_0.pb" % name))


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)
    export("conv_relu_linear", ConvReluLinear(), (torch.randn(2, 3, 8, 8),), ["x"], ["logits"],
           {"x": {0: "batch"}, "logits": {0: "batch"}})
    export("two_heads", TwoHeads(), (torch.randn(2, 5),), ["x"], ["doubled_relu", "row_sum"], None)
    export("embedding", Embedding(), (torch.tensor([[1, 2, 3], [9, 0, 4]], dtype=torch.int64),), ["ids"],
           ["vectors"], None)
    export_onnx_only("attention_blocks", AttentionBlocks(), (torch.randn(2, 8, 32),), ["x"], ["y"],
                     {"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}})
    export_onnx_only("dense_blocks", DenseBlocks(), (torch.randn(1, 3, 16, 16),), ["x"], ["logits"], None)
    print("wrote fixtures to", os.path.normpath(OUT))


if __name__ == "__main__":
    sys.exit(main())

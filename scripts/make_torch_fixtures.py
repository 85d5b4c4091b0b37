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


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)
    export("conv_relu_linear", ConvReluLinear(), (torch.randn(2, 3, 8, 8),), ["x"], ["logits"],
           {"x": {0: "batch"}, "logits": {0: "batch"}})
    export("two_heads", TwoHeads(), (torch.randn(2, 5),), ["x"], ["doubled_relu", "row_sum"], None)
    export("embedding", Embedding(), (torch.tensor([[1, 2, 3], [9, 0, 4]], dtype=torch.int64),), ["ids"],
           ["vectors"], None)
    print("wrote fixtures to", os.path.normpath(OUT))


if __name__ == "__main__":
    sys.exit(main())

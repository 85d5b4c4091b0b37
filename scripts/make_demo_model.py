#!/usr/bin/python3
"""Builds models/demo.onnx: a tiny image classifier (Conv, BatchNorm, Relu, MaxPool, Gemm,
Softmax) with fixed-seed random weights, small enough to commit (~55 KB).

Usage: /usr/bin/python3 scripts/make_demo_model.py [OUTPUT]   (default: models/demo.onnx)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build():
    rng = np.random.RandomState(2024)

    def init(name, *shape, scale=0.1):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    initializers = [
        init("conv1.weight", 16, 3, 3, 3, scale=0.3),
        init("conv1.bias", 16),
        numpy_helper.from_array((1.0 + 0.1 * rng.standard_normal(16)).astype(np.float32), "bn1.scale"),
        init("bn1.bias", 16),
        init("bn1.mean", 16),
        numpy_helper.from_array((0.5 + rng.random_sample(16)).astype(np.float32), "bn1.var"),
        init("conv2.weight", 16, 16, 3, 3, scale=0.1),
        init("conv2.bias", 16),
        init("fc.weight", 10, 1024, scale=0.05),
        init("fc.bias", 10),
    ]
    nodes = [
        helper.make_node("Conv", ["input", "conv1.weight", "conv1.bias"], ["conv1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["conv1", "bn1.scale", "bn1.bias", "bn1.mean", "bn1.var"], ["bn1"],
                         name="bn1", epsilon=1e-5),
        helper.make_node("Relu", ["bn1"], ["relu1"], name="relu1"),
        helper.make_node("MaxPool", ["relu1"], ["pool1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["pool1", "conv2.weight", "conv2.bias"], ["conv2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv2"], ["relu2"], name="relu2"),
        helper.make_node("MaxPool", ["relu2"], ["pool2"], name="pool2", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["pool2"], ["flat"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes,
        "parity_demo",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10])],
        initializers,
    )
    model = helper.make_model(graph, producer_name="parity make_demo_model.py",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    return model


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "models", "demo.onnx")
    onnx.save(build(), out)
    print(f"wrote {out} ({os.path.getsize(out)} bytes)")


if __name__ == "__main__":
    main()

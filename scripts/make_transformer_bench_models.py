#!/usr/bin/python3
"""Builds two small opset-23 models for timing parity's transformer kernels (random weights, seed 0):

- llama_block.onnx: a Llama-style decoder block with a KV cache. RMSNormalization -> q/k/v
  projections -> RotaryEmbedding (position_ids) -> Attention (grouped-query heads 8/2, causal,
  past_key/past_value in, present out) -> output projection + residual -> RMSNormalization ->
  MLP with Gelu(approximate="tanh") -> residual. Inputs x [1, T, 256], position_ids [1, T],
  past_key/past_value [1, 2, P, 32] (T and P dynamic).
- groupnorm_block.onnx: Conv -> GroupNormalization-21 (32 groups) -> Gelu -> Conv, as in a
  diffusion UNet's resnet block. Input x [1, 64, 32, 32].
- rms_norm.onnx, gelu.onnx, gelu_tanh.onnx: one node each on x [1, 512, 2048], so that the
  model's latency is the kernel's.

Usage: /usr/bin/python3 scripts/make_transformer_bench_models.py OUTPUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HIDDEN, Q_HEADS, KV_HEADS, HEAD = 256, 8, 2, 32
MLP = 1024
MAX_POSITIONS = 4096


def llama_block(rng):
    def weight(name, *shape, scale=0.05):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    inv_freq = 1.0 / (10000 ** (np.arange(0, HEAD, 2, dtype=np.float64) / HEAD))
    angles = np.outer(np.arange(MAX_POSITIONS), inv_freq)
    inits = [
        numpy_helper.from_array((1 + 0.1 * rng.standard_normal(HIDDEN)).astype(np.float32), "norm1.scale"),
        numpy_helper.from_array((1 + 0.1 * rng.standard_normal(HIDDEN)).astype(np.float32), "norm2.scale"),
        weight("wq", HIDDEN, Q_HEADS * HEAD), weight("wk", HIDDEN, KV_HEADS * HEAD),
        weight("wv", HIDDEN, KV_HEADS * HEAD), weight("wo", Q_HEADS * HEAD, HIDDEN),
        weight("w_up", HIDDEN, MLP), weight("w_down", MLP, HIDDEN),
        numpy_helper.from_array(np.cos(angles).astype(np.float32), "cos_cache"),
        numpy_helper.from_array(np.sin(angles).astype(np.float32), "sin_cache"),
    ]
    nodes = [
        helper.make_node("RMSNormalization", ["x", "norm1.scale"], ["h1"], name="norm1", epsilon=1e-6),
        helper.make_node("MatMul", ["h1", "wq"], ["q"], name="q_proj"),
        helper.make_node("MatMul", ["h1", "wk"], ["k"], name="k_proj"),
        helper.make_node("MatMul", ["h1", "wv"], ["v"], name="v_proj"),
        helper.make_node("RotaryEmbedding", ["q", "cos_cache", "sin_cache", "position_ids"], ["q_rot"], name="rope_q",
                         num_heads=Q_HEADS),
        helper.make_node("RotaryEmbedding", ["k", "cos_cache", "sin_cache", "position_ids"], ["k_rot"], name="rope_k",
                         num_heads=KV_HEADS),
        # Attention takes 3-D Q/K/V with q_num_heads/kv_num_heads; the cache is 4-D.
        helper.make_node("Attention", ["q_rot", "k_rot", "v", "", "past_key", "past_value"],
                         ["attn", "present_key", "present_value"], name="attention", is_causal=1,
                         q_num_heads=Q_HEADS, kv_num_heads=KV_HEADS),
        helper.make_node("MatMul", ["attn", "wo"], ["o"], name="o_proj"),
        helper.make_node("Add", ["x", "o"], ["r1"], name="residual1"),
        helper.make_node("RMSNormalization", ["r1", "norm2.scale"], ["h2"], name="norm2", epsilon=1e-6),
        helper.make_node("MatMul", ["h2", "w_up"], ["up"], name="up_proj"),
        helper.make_node("Gelu", ["up"], ["act"], name="gelu", approximate="tanh"),
        helper.make_node("MatMul", ["act", "w_down"], ["down"], name="down_proj"),
        helper.make_node("Add", ["r1", "down"], ["y"], name="residual2"),
    ]
    inputs = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "T", HIDDEN]),
        helper.make_tensor_value_info("position_ids", TensorProto.INT64, [1, "T"]),
        helper.make_tensor_value_info("past_key", TensorProto.FLOAT, [1, KV_HEADS, "P", HEAD]),
        helper.make_tensor_value_info("past_value", TensorProto.FLOAT, [1, KV_HEADS, "P", HEAD]),
    ]
    outputs = [
        helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "T", HIDDEN]),
        helper.make_tensor_value_info("present_key", TensorProto.FLOAT, [1, KV_HEADS, "S", HEAD]),
        helper.make_tensor_value_info("present_value", TensorProto.FLOAT, [1, KV_HEADS, "S", HEAD]),
    ]
    return helper.make_graph(nodes, "llama_block", inputs, outputs, inits)


def groupnorm_block(rng):
    c = 64
    inits = [
        numpy_helper.from_array((rng.standard_normal((c, c, 3, 3)) * 0.05).astype(np.float32), "conv1.w"),
        numpy_helper.from_array((rng.standard_normal((c, c, 3, 3)) * 0.05).astype(np.float32), "conv2.w"),
        numpy_helper.from_array((1 + 0.1 * rng.standard_normal(c)).astype(np.float32), "gn.scale"),
        numpy_helper.from_array((0.1 * rng.standard_normal(c)).astype(np.float32), "gn.bias"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "conv1.w"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("GroupNormalization", ["c1", "gn.scale", "gn.bias"], ["n"], name="group_norm", num_groups=32),
        helper.make_node("Gelu", ["n"], ["a"], name="gelu"),
        helper.make_node("Conv", ["a", "conv2.w"], ["y"], name="conv2", pads=[1, 1, 1, 1]),
    ]
    shape = [1, c, 32, 32]
    return helper.make_graph(nodes, "groupnorm_block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                             [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], inits)


def single_node(rng, op, **attributes):
    shape = [1, 512, 2048]
    inputs = ["x"]
    inits = []
    if op == "RMSNormalization":
        inits.append(numpy_helper.from_array((1 + 0.1 * rng.standard_normal(shape[-1])).astype(np.float32), "scale"))
        inputs.append("scale")
    node = helper.make_node(op, inputs, ["y"], name=op.lower(), **attributes)
    return helper.make_graph([node], op.lower(), [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                             [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], inits)


def save(graph, path):
    # Built with libonnx 1.12's helpers, which predate opset 23: the checker is not run.
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)], producer_name="parity-bench")
    model.ir_version = 10
    onnx.save(model, path)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    rng = np.random.RandomState(0)
    save(llama_block(rng), os.path.join(out, "llama_block.onnx"))
    save(groupnorm_block(rng), os.path.join(out, "groupnorm_block.onnx"))
    save(single_node(rng, "RMSNormalization", epsilon=1e-6), os.path.join(out, "rms_norm.onnx"))
    save(single_node(rng, "Gelu"), os.path.join(out, "gelu.onnx"))
    save(single_node(rng, "Gelu", approximate="tanh"), os.path.join(out, "gelu_tanh.onnx"))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Writes model_with_custom_op.onnx: x -> test.parity::AddOne -> Relu -> Mul(2) -> y, a model with a
custom-domain op that the test extension gives to parity's ref runner and to ONNX Runtime.
Usage: make_model_with_custom_op.py [OUT]"""
import sys

import onnx
from onnx import TensorProto, helper

shape = [2, 3, 4]
graph = helper.make_graph(
    nodes=[
        helper.make_node("AddOne", ["x"], ["x_plus_one"], name="add_one", domain="test.parity"),
        helper.make_node("Relu", ["x_plus_one"], ["relu"], name="relu"),
        helper.make_node("Mul", ["relu", "two"], ["y"], name="double"),
    ],
    name="model_with_custom_op",
    inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
    outputs=[helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
    initializer=[helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])],
)
model = helper.make_model(
    graph,
    opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("test.parity", 1)],
    producer_name="make_model_with_custom_op.py",
)
model.ir_version = 8
onnx.save(model, sys.argv[1] if len(sys.argv) > 1 else "model_with_custom_op.onnx")

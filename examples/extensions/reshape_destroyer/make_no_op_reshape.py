#!/usr/bin/python3
"""Writes no_op_reshape.onnx: one Reshape whose constant target shape equals its input's shape (a
no-op the reshape_destroyer loader turns into Identity). Usage: make_no_op_reshape.py [OUT]"""
import sys

import onnx
from onnx import TensorProto, helper

shape = [1, 3, 5, 5]
graph = helper.make_graph(
    nodes=[helper.make_node("Reshape", ["X", "new_shape"], ["Y"], name="no_op_reshape")],
    name="no_op_reshape",
    inputs=[helper.make_tensor_value_info("X", TensorProto.FLOAT, shape)],
    outputs=[helper.make_tensor_value_info("Y", TensorProto.FLOAT, shape)],
    initializer=[helper.make_tensor("new_shape", TensorProto.INT64, [len(shape)], shape)],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_no_op_reshape.py")
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1] if len(sys.argv) > 1 else "no_op_reshape.onnx")

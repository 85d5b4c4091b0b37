#!/usr/bin/python3
"""Small models for the tests of Polygraphy's command-line habits (tests/cli/polygraphy_habits_test.cpp).

Run with Debian's python3-onnx: /usr/bin/python3 scripts/make_polygraphy_cli_fixtures.py
Writes tests/data/polygraphy_cli/*.onnx (a few hundred bytes each).
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "polygraphy_cli")


def save(model, name, ir_version):
    # onnx 1.12 knows IR 8 at most; newer exporters write 9 and 10, which is the point here.
    model.ir_version = ir_version
    onnx.save(model, os.path.join(OUT, name))


def ir9_relu():
    """y = Relu(x + W): a valid IR 9 model."""
    w = numpy_helper.from_array(np.array([[1, -2], [3, -4]], dtype=np.float32), "W")
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "W"], ["sum"], name="add0"),
         helper.make_node("Relu", ["sum"], ["y"], name="relu0")],
        "ir9_relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])],
        [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def ir9_lint_errors():
    """Two nodes libonnx rejects (Relu with two inputs, Transpose with a float 'perm') between valid
    ones, and a graph output without a shape, which is not an error."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x", "x"], ["r"], name="bad_relu"),
         helper.make_node("Abs", ["x"], ["a"], name="good_abs"),
         helper.make_node("Transpose", ["a"], ["t"], name="bad_transpose", perm=1.5),
         helper.make_node("Neg", ["a"], ["z"], name="good_neg")],
        "ir9_lint_errors",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
        [helper.make_tensor_value_info("r", TensorProto.FLOAT, [2, 2]),
         helper.make_tensor_value_info("t", TensorProto.FLOAT, [2, 2]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def ir9_unused_input():
    """ir9_relu plus a graph input nothing reads: --cleanup keeps it, as Polygraphy's does."""
    model = ir9_relu()
    model.graph.input.append(helper.make_tensor_value_info("unused", TensorProto.FLOAT, [1]))
    return model


def weight_patterns():
    """What Polygraphy's weight-strip strips (W_*) and keeps (K_*): weights of MatMul, Gemm (bias
    too), Conv, a QuantizeLinear -> DequantizeLinear -> MatMul weight, a Transpose -> MatMul weight
    and a custom op's float input are stripped; an Add's weight, a small Gather table, Q/DQ scales
    and a custom op's uint8 input stay. W_sparse (MatMul B, axis 0) and W_conv (axis 1) are 2:4 sparse."""
    rng = np.random.RandomState(3)

    def dense(*shape):
        # No zeros at all, so no group of four is accidentally sparse.
        return (rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1, 1], size=shape)).astype(np.float32)

    sparse = dense(8, 8)
    sparse[[1, 2, 4, 7], :] = 0  # two zeros in every group of four rows (K axis of MatMul's B)
    conv = dense(4, 4, 1, 1)
    conv[:, [0, 3]] = 0  # two zeros in every group of four input channels
    inits = [
        numpy_helper.from_array(dense(8, 8), "W_mm"),
        numpy_helper.from_array(sparse, "W_sparse"),
        numpy_helper.from_array(dense(4, 8), "W_gemm"),
        numpy_helper.from_array(dense(4), "W_gemm_bias"),
        numpy_helper.from_array(dense(4, 4), "W_qf"),
        numpy_helper.from_array(np.array(0.05, dtype=np.float32), "K_scale"),
        numpy_helper.from_array(np.array(0, dtype=np.int8), "K_zero_point"),
        numpy_helper.from_array(dense(4, 4), "W_t"),
        numpy_helper.from_array(dense(4), "K_add"),
        numpy_helper.from_array(dense(10, 4), "K_table"),
        numpy_helper.from_array(np.array([3], dtype=np.int64), "K_index"),
        numpy_helper.from_array(dense(4), "W_custom"),
        numpy_helper.from_array(np.arange(4, dtype=np.uint8), "K_u8"),
        numpy_helper.from_array(conv, "W_conv"),
    ]
    nodes = [
        helper.make_node("MatMul", ["x", "W_mm"], ["a"], name="mm"),
        helper.make_node("MatMul", ["a", "W_sparse"], ["b"], name="mm_sparse"),
        helper.make_node("Gemm", ["b", "W_gemm", "W_gemm_bias"], ["c"], name="gemm", transB=1),
        helper.make_node("QuantizeLinear", ["W_qf", "K_scale", "K_zero_point"], ["wq"], name="q"),
        helper.make_node("DequantizeLinear", ["wq", "K_scale", "K_zero_point"], ["wdq"], name="dq"),
        helper.make_node("MatMul", ["c", "wdq"], ["d"], name="mm_qdq"),
        helper.make_node("Transpose", ["W_t"], ["wt"], name="transpose", perm=[1, 0]),
        helper.make_node("MatMul", ["d", "wt"], ["e"], name="mm_t"),
        helper.make_node("Add", ["e", "K_add"], ["f"], name="add"),
        helper.make_node("Gather", ["K_table", "K_index"], ["g"], name="gather"),
        helper.make_node("Add", ["f", "g"], ["h"], name="add_g"),
        helper.make_node("MyScale", ["h", "W_custom", "K_u8"], ["y"], name="custom", domain="parity.test"),
        helper.make_node("Conv", ["x2", "W_conv"], ["y2"], name="conv"),
    ]
    graph = helper.make_graph(
        nodes, "weight_patterns",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8]),
         helper.make_tensor_value_info("x2", TensorProto.FLOAT, [1, 4, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4]),
         helper.make_tensor_value_info("y2", TensorProto.FLOAT, [1, 4, 3, 3])],
        inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("parity.test", 1)])


def inspect_cases():
    """inspect model's layout: a Constant node (no inputs), an If with two subgraphs, an
    initializer whose values print in numpy's nested form, and an output without a shape."""
    const = helper.make_node("Constant", [], ["c"], name="const",
                             value=numpy_helper.from_array(np.ones((2, 2), dtype=np.float32)))
    then_graph = helper.make_graph([helper.make_node("Identity", ["c"], ["then_out"])], "then_body", [],
                                   [helper.make_tensor_value_info("then_out", TensorProto.FLOAT, [2, 2])])
    else_graph = helper.make_graph([helper.make_node("Add", ["c", "W"], ["else_out"])], "else_body", [],
                                   [helper.make_tensor_value_info("else_out", TensorProto.FLOAT, [2, 2])])
    branch = helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_graph, else_branch=else_graph)
    graph = helper.make_graph(
        [const, branch], "inspect_cases",
        [helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([[1.5, 2], [-0.25, 4]], dtype=np.float32), "W")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def incompatible_shapes():
    """An Add of [2, 3] and [4, 5] (node 'bad_add') between valid nodes: libonnx's checker accepts
    it, only shape inference sees the error, and lint must name the node."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["a"], ["ra"], name="relu_a"),
         helper.make_node("Add", ["ra", "b"], ["s"], name="bad_add"),
         helper.make_node("Neg", ["s"], ["y"], name="neg")],
        "incompatible_shapes",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [4, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def attr_order():
    """A Gemm whose attributes are stored transB, beta, alpha (helper.make_node would sort them):
    inspect model must print them in the file's order, as Polygraphy does."""
    node = helper.make_node("Gemm", ["a", "W", "C"], ["y"], name="gemm")
    node.attribute.extend([helper.make_attribute("transB", 1), helper.make_attribute("beta", 0.5),
                           helper.make_attribute("alpha", 2.0)])
    graph = helper.make_graph(
        [node], "attr_order",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])],
        [numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(3, 2), "W"),
         numpy_helper.from_array(np.ones(3, dtype=np.float32), "C")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def unbounded_dds():
    """Data-dependent sizes: Range's limit 'limit' and Tile's repeats 'reps' are computed at run
    time (unbounded); a Range with a constant limit and one whose limit comes out of a Min are not.
    y = Conv(Reshape(Range(0, max(x), 1))) mirrors the shape of Polygraphy's own test model."""
    inits = [
        numpy_helper.from_array(np.array(0, dtype=np.int64), "zero"),
        numpy_helper.from_array(np.array(1, dtype=np.int64), "one"),
        numpy_helper.from_array(np.array(4, dtype=np.int64), "four"),
        numpy_helper.from_array(np.array([1, 1, -1, 1], dtype=np.int64), "shape4d"),
        numpy_helper.from_array(np.full((2, 1, 1, 1), 0.5, dtype=np.float32), "W"),
    ]
    nodes = [
        helper.make_node("ReduceMax", ["x"], ["xmax"], name="reduce", keepdims=0),
        helper.make_node("Cast", ["xmax"], ["limit"], name="cast_limit", to=TensorProto.INT64),
        helper.make_node("Range", ["zero", "limit", "one"], ["r"], name="range"),
        helper.make_node("Cast", ["r"], ["rf"], name="cast_r", to=TensorProto.FLOAT),
        helper.make_node("Reshape", ["rf", "shape4d"], ["r4"], name="reshape"),
        helper.make_node("Conv", ["r4", "W"], ["y"], name="conv"),
        helper.make_node("Cast", ["counts"], ["reps"], name="cast_reps", to=TensorProto.INT64),
        helper.make_node("Tile", ["t", "reps"], ["tiled"], name="tile"),
        helper.make_node("Range", ["zero", "four", "one"], ["fixed"], name="range_const"),
        helper.make_node("Min", ["limit", "four"], ["small"], name="min_limit"),
        helper.make_node("Range", ["zero", "small", "one"], ["bounded"], name="range_bounded"),
    ]
    graph = helper.make_graph(
        nodes, "unbounded_dds",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4]),
         helper.make_tensor_value_info("t", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("counts", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("tiled", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("fixed", TensorProto.INT64, None),
         helper.make_tensor_value_info("bounded", TensorProto.INT64, None)],
        inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def save_with_external_weights(model, name):
    """Every initializer in NAME.data beside the model."""
    data = os.path.join(OUT, name + ".data")
    if os.path.exists(data):
        os.remove(data)  # onnx appends to an existing side file
    onnx.save(model, os.path.join(OUT, name), save_as_external_data=True, all_tensors_to_one_file=True,
              location=name + ".data", size_threshold=0)


def plugin_subgraphs():
    """Four Mul -> Add -> LeakyRelu chains for `plugin` patterns: the first two match a pattern that
    asks alpha < 0.5; the third has alpha 0.9; the fourth's Add output is also read by a Neg outside
    the chain, so replacing it would break the graph."""
    nodes = []
    prev = "x"
    for k, alpha in enumerate([0.1, 0.2, 0.9, 0.1]):
        nodes += [helper.make_node("Mul", [prev, "scale"], [f"m{k}"], name=f"mul{k}"),
                  helper.make_node("Add", [f"m{k}", "bias"], [f"a{k}"], name=f"add{k}"),
                  helper.make_node("LeakyRelu", [f"a{k}"], [f"y{k}"], name=f"act{k}", alpha=alpha)]
        prev = f"y{k}"
    nodes.append(helper.make_node("Neg", ["a3"], ["z"], name="neg"))
    graph = helper.make_graph(
        nodes, "plugin_subgraphs",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y3", TensorProto.FLOAT, [1, 4]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 4])],
        [numpy_helper.from_array(np.array([0.5, -1, 2, 1.5], dtype=np.float32), "scale"),
         numpy_helper.from_array(np.array([0.1, 0.2, -0.3, 0], dtype=np.float32), "bias")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def main():
    os.makedirs(OUT, exist_ok=True)
    save(ir9_relu(), "ir9_relu.onnx", 9)
    save(ir9_relu(), "ir10_relu.onnx", 10)
    save(ir9_unused_input(), "ir9_unused_input.onnx", 9)
    save(incompatible_shapes(), "incompatible_shapes.onnx", 8)
    save(inspect_cases(), "inspect_cases.onnx", 8)
    save(weight_patterns(), "weight_patterns.onnx", 8)
    save(ir9_lint_errors(), "ir9_lint_errors.onnx", 9)
    save(attr_order(), "attr_order.onnx", 8)
    save(unbounded_dds(), "unbounded_dds.onnx", 8)
    save(plugin_subgraphs(), "plugin_subgraphs.onnx", 8)
    save_with_external_weights(attr_order(), "external_weights.onnx")


if __name__ == "__main__":
    main()

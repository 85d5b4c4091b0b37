"""Polygraphy's backends: loaders and runners per runtime (onnx, onnxrt, ref, plan, common)."""

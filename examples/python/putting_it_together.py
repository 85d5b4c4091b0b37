"""Polygraphy's "Putting It All Together" (seed 000) without TensorFlow: the ONNX model comes from a
file instead of a frozen TensorFlow graph, and the TensorFlow runner is left out."""
from parity.backend.onnx import OnnxFromPath, BytesFromOnnx
from parity.backend.onnxrt import OnnxrtRunner, SessionFromOnnxBytes
from parity.backend.plan import PlanRunner as TrtRunner, EngineFromNetwork, NetworkFromOnnxBytes
from parity.comparator import Comparator, DataLoader

# Convert the model into the various formats we care about.
export_serialized_onnx = BytesFromOnnx(OnnxFromPath("identity.onnx"))
build_onnxrt_session = SessionFromOnnxBytes(export_serialized_onnx)
build_engine = EngineFromNetwork(NetworkFromOnnxBytes(export_serialized_onnx))

# We want to run the model with ONNX Runtime and parity's engine.
runners = [
    OnnxrtRunner(build_onnxrt_session),
    TrtRunner(build_engine),
]

# For this model, assume inputs need to be bounded.
data_loader = DataLoader(int_range=(0, 2), float_range=(0.0, 2.0))

# Finally, run and check accuracy.
run_results = Comparator.run(runners, data_loader=data_loader)
assert bool(Comparator.compare_accuracy(run_results))

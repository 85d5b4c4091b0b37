"""
Calibrates an int8 plan in Python, the way a Polygraphy script calibrates a TensorRT engine:
a Calibrator over an iterable of feed dicts, handed to CreateConfig(int8=True, calibrator=...).
The first build runs the calibration and writes the cache; the second build reads the cache.
"""
import numpy as np
from parity.backend.plan import Calibrator, CreateConfig, EngineFromNetwork, NetworkFromOnnxPath, PlanRunner as TrtRunner
from parity.logger import G_LOGGER


# Any iterable or generator of feed dicts (input name -> numpy array) serves as calibration data.
def calibration_batches():
    rng = np.random.default_rng(0)
    for _ in range(4):
        yield {"x": rng.random((1, 1, 2, 2), dtype=np.float32)}


def build_and_check(calibrator):
    build_engine = EngineFromNetwork(NetworkFromOnnxPath("identity.onnx"), config=CreateConfig(int8=True, calibrator=calibrator))
    with G_LOGGER.verbosity(G_LOGGER.VERBOSE), TrtRunner(build_engine) as runner:
        inp_data = np.ones(shape=(1, 1, 2, 2), dtype=np.float32)
        outputs = runner.infer({"x": inp_data})
        assert np.array_equal(outputs["y"], inp_data)  # an identity model has no int8 layer to round


def main():
    build_and_check(Calibrator(data_loader=calibration_batches(), cache="identity-calib.cache"))
    # The cache now exists: this build reads it and never iterates its data loader.
    build_and_check(Calibrator(data_loader=iter(()), cache="identity-calib.cache"))
    print("Calibration succeeded!")


if __name__ == "__main__":
    main()

"""Plans (parity's engine) through Polygraphy's TensorRT-shaped loaders, and func.extend."""
import numpy as np
import pytest

import parity
import parity.tools
from parity import func
from parity.backend.common import BytesFromPath
from parity.backend.onnx import BytesFromOnnx, ModifyOutputs, OnnxFromPath, SaveOnnx
from parity.backend.plan import (BuilderFlag, CalibrationAlgoType, Calibrator, CreateConfig, EngineFromBytes,
                                 EngineFromNetwork, NetworkFromOnnxBytes, NetworkFromOnnxPath, PlanRunner, Profile,
                                 SaveEngine)
from parity.comparator import DataLoader
from parity.backend.ref import RefRunner


def demo_input(seed=0):
    return np.random.default_rng(seed).random((1, 3, 32, 32), dtype=np.float32)


def test_build_save_load_and_run(demo_model, tmp_path):
    plan_path = tmp_path / "demo.plan"
    build = SaveEngine(EngineFromNetwork(NetworkFromOnnxPath(demo_model), config=CreateConfig()), path=plan_path)
    x = demo_input()
    with PlanRunner(build) as runner:
        built = runner.infer({"input": x})["probs"]
    assert plan_path.stat().st_size > 0
    with PlanRunner(EngineFromBytes(BytesFromPath(plan_path))) as runner:
        loaded = runner.infer({"input": x})["probs"]
    np.testing.assert_array_equal(built, loaded)
    with RefRunner(str(demo_model)) as ref:
        np.testing.assert_allclose(loaded, ref.infer({"input": x})["probs"], atol=1e-5)


def test_fp16_plan_is_close(demo_model):
    config = CreateConfig(fp16=True)
    assert config.fp16 and not config.int8
    x = demo_input(1)
    with PlanRunner(EngineFromNetwork(NetworkFromOnnxBytes(BytesFromOnnx(OnnxFromPath(demo_model))), config)) as runner:
        half = runner.infer({"input": x})["probs"]
    with RefRunner(str(demo_model)) as ref:
        np.testing.assert_allclose(half, ref.infer({"input": x})["probs"], atol=1e-2)


def calibration_feeds(count=8):
    for seed in range(count):
        yield {"input": demo_input(100 + seed)}


def test_int8_plan_calibrates_on_the_data_loader_and_reuses_its_cache(demo_model, tmp_path, capfd):
    cache = tmp_path / "demo.cache"
    plan_path = tmp_path / "demo.int8.plan"
    calibrator = Calibrator(data_loader=calibration_feeds(), cache=cache)
    build = SaveEngine(EngineFromNetwork(NetworkFromOnnxPath(demo_model), CreateConfig(int8=True, calibrator=calibrator)),
                       path=plan_path)
    x = demo_input(3)
    with PlanRunner(build) as runner:
        quantized = runner.infer({"input": x})["probs"]
    assert cache.stat().st_size > 0
    with RefRunner(str(demo_model)) as ref:
        exact = ref.infer({"input": x})["probs"]
    np.testing.assert_allclose(quantized, exact, atol=0.05)
    assert not np.array_equal(quantized, exact)  # int8 layers ran: not the fp32 result

    # The plan's layers are int8, as `inspect model --show layers` reports them.
    capfd.readouterr()
    assert parity.tools.main(["inspect", "model", str(plan_path), "--show", "layers"]) == 0
    assert "precision int8" in capfd.readouterr().out

    def never_read():
        raise AssertionError("the calibration cache should have been used")
        yield  # pragma: no cover

    cached = CreateConfig(int8=True, calibrator=Calibrator(data_loader=never_read(), cache=cache))
    with PlanRunner(EngineFromNetwork(NetworkFromOnnxPath(demo_model), cached)) as runner:
        np.testing.assert_array_equal(runner.infer({"input": x})["probs"], quantized)


def read_cache_scales(path):
    lines = path.read_text().splitlines()
    pairs = (line.rsplit(": ", 1) for line in lines[1:] if line)
    return lines[0], {name: float(np.array(int(bits, 16), np.uint32).view(np.float32)) for name, bits in pairs}


def feeds_with_outliers(count=4):
    rng = np.random.default_rng(7)
    for _ in range(count):
        x = rng.standard_normal((1, 3, 32, 32)).astype(np.float32) * 0.1
        x[0, 0, 0, :4] = 4.0
        yield {"input": x}


def test_int8_calibrators_and_data_loaders(demo_model, tmp_path):
    x = demo_input(4)
    with RefRunner(str(demo_model)) as ref:
        exact = ref.infer({"input": x})["probs"]
    algos = (CalibrationAlgoType.MINMAX_CALIBRATION, CalibrationAlgoType.ENTROPY_CALIBRATION_2)
    for algo in algos:
        loader = DataLoader(seed=5, iterations=4, val_range=(0.0, 1.0))
        config = CreateConfig(int8=True, calibrator=Calibrator(loader, algo=algo))
        with PlanRunner(EngineFromNetwork(NetworkFromOnnxPath(demo_model), config)) as runner:
            np.testing.assert_allclose(runner.infer({"input": x})["probs"], exact, atol=0.05)

    # On inputs with a few outliers entropy calibration clips ranges that min-max keeps whole: its
    # scales are never larger and the input's is far smaller. A generator is read once, so this
    # also checks that entropy's second pass over the feeds sees them all again.
    caches = {}
    for algo in algos:
        cache = tmp_path / f"{algo.value}.cache"
        config = CreateConfig(int8=True, calibrator=Calibrator(feeds_with_outliers(), cache=cache, algo=algo))
        with PlanRunner(EngineFromNetwork(NetworkFromOnnxPath(demo_model), config)):
            pass
        caches[algo.value] = read_cache_scales(cache)
    (minmax_header, minmax), (entropy_header, entropy) = caches["minmax"], caches["entropy"]
    assert "minmax" in minmax_header and "entropy" in entropy_header
    assert minmax.keys() == entropy.keys() and "input" in minmax
    assert all(entropy[name] <= minmax[name] * (1 + 1e-6) for name in minmax)
    assert entropy["input"] < minmax["input"] / 4


def test_int8_calibration_errors_are_python_exceptions(demo_model, tmp_path):
    with pytest.raises(TypeError, match="path"):
        Calibrator(calibration_feeds(), cache=open(tmp_path / "f", "wb"))
    with pytest.raises(ValueError):
        Calibrator(calibration_feeds(), algo="percentile")
    wrong = [{"input": np.zeros((1, 3, 8, 8), np.float32)}]
    config = CreateConfig(int8=True, calibrator=Calibrator(wrong))
    with pytest.raises(parity.ParityError, match="input"):
        PlanRunner(EngineFromNetwork(NetworkFromOnnxPath(demo_model), config)).activate()
    other = tmp_path / "other.cache"
    other.write_text("not a calibration cache\n")
    config = CreateConfig(int8=True, calibrator=Calibrator(calibration_feeds(), cache=other))
    with pytest.raises(parity.ParityError, match="other.cache"):
        PlanRunner(EngineFromNetwork(NetworkFromOnnxPath(demo_model), config)).activate()


def test_profiles_reach_the_builder(demo_model):
    profile = Profile().add("input", min=(1, 3, 32, 32), opt=(1, 3, 32, 32), max=(1, 3, 32, 32))
    with PlanRunner(EngineFromNetwork(NetworkFromOnnxPath(demo_model), CreateConfig(profiles=[profile]))) as runner:
        assert runner.infer({"input": demo_input()})["probs"].shape == (1, 10)
    bad = Profile().add("nope", min=(1,), opt=(1,), max=(1,))
    with pytest.raises(parity.ParityError, match="nope"):
        PlanRunner(EngineFromNetwork(NetworkFromOnnxPath(demo_model), CreateConfig(profiles=[bad]))).activate()


def test_func_extend_modifies_in_place_or_replaces(demo_model):
    @func.extend(NetworkFromOnnxPath(demo_model))
    def renamed(builder, network, parser):
        network.name = "renamed-by-extend"

    builder, network, parser = renamed()
    assert network.name == "renamed-by-extend" and network.inputs == ["input"]
    assert parser.source == str(demo_model)

    @func.extend(CreateConfig())
    def fp16_config(config):
        config.set_flag(BuilderFlag.FP16)

    assert fp16_config().fp16 and not fp16_config().bf16
    with PlanRunner(EngineFromNetwork(renamed, config=fp16_config)) as runner:
        assert runner.infer({"input": demo_input()})["probs"].shape == (1, 10)

    @func.extend(OnnxFromPath(demo_model))
    def replaced(model):
        return ModifyOutputs(model, outputs=["mark", "all"])()

    assert len(replaced().outputs) > 1
    from parity.constants import MARK_ALL

    assert ModifyOutputs(OnnxFromPath(demo_model), outputs=MARK_ALL)().outputs == replaced().outputs
    with RefRunner(replaced) as runner:
        outputs = runner.infer({"input": demo_input()})
    assert len(outputs) == len(replaced().outputs)


def test_save_onnx_and_interop_with_the_onnx_package(demo_model, tmp_path):
    import onnx
    path = tmp_path / "copy.onnx"
    SaveOnnx(OnnxFromPath(demo_model), path)()
    proto = onnx.load(str(path))
    assert [n.op_type for n in proto.graph.node] == [op for _, op in OnnxFromPath(demo_model)().nodes]
    with RefRunner(proto) as runner:  # an onnx.ModelProto is a model too
        assert runner.infer({"input": demo_input()})["probs"].shape == (1, 10)

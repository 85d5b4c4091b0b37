"""Runners from Python: inference, metadata, bad feeds raise (never crash), errors keep the C++ text."""
import threading
import time

import numpy as np
import pytest

import parity
from parity.backend.onnx import OnnxFromPath
from parity.backend.onnxrt import OnnxrtRunner, SessionFromOnnx
from parity.backend.ref import RefRunner

FEED_SHAPE = (1, 3, 32, 32)


def demo_feed(seed=0):
    return {"input": np.random.default_rng(seed).random(FEED_SHAPE, dtype=np.float32)}


def test_ref_and_ort_agree_on_the_demo_model(demo_model):
    feed = demo_feed()
    with RefRunner(OnnxFromPath(demo_model)) as ref, OnnxrtRunner(SessionFromOnnx(str(demo_model))) as ort:
        ref_out = ref.infer(feed)
        ort_out = ort.infer(feed)
    assert list(ref_out) == ["probs"]
    assert ref_out["probs"].shape == (1, 10) and ref_out["probs"].dtype == np.float32
    np.testing.assert_allclose(ref_out["probs"], ort_out["probs"], atol=1e-5)
    assert abs(float(ref_out["probs"].sum()) - 1.0) < 1e-4  # softmax


def test_fp64_oracle_is_close_to_fp32(demo_model):
    feed = demo_feed(3)
    with RefRunner(str(demo_model)) as fp32, RefRunner(str(demo_model), precision="fp64") as fp64:
        np.testing.assert_allclose(fp32.infer(feed)["probs"], fp64.infer(feed)["probs"], atol=1e-5)


def test_input_metadata_and_inference_time(demo_model):
    with RefRunner(str(demo_model)) as runner:
        metadata = runner.get_input_metadata()
        assert list(metadata) == ["input"]
        assert metadata["input"].dtype == np.float32 and metadata["input"].shape == FEED_SHAPE
        runner.infer(demo_feed())
        assert 0 < runner.last_inference_time() < 1


def test_outputs_are_copies_unless_asked(demo_model):
    with RefRunner(str(demo_model)) as runner:
        first = runner.infer(demo_feed(1))["probs"]
        kept = first.copy()
        runner.infer(demo_feed(2))
        np.testing.assert_array_equal(first, kept)
        view = runner.infer(demo_feed(1), copy_outputs=False)["probs"]
        np.testing.assert_array_equal(view, kept)


def test_a_read_only_feed_is_lent_without_a_copy(demo_model):
    x = demo_feed()["input"]
    x.setflags(write=False)
    with RefRunner(str(demo_model)) as runner:
        assert runner.infer({"input": x})["probs"].shape == (1, 10)


@pytest.mark.parametrize(
    "feed, error, text",
    [
        ({"input": np.zeros(FEED_SHAPE, dtype=np.float64)}, parity.ParityError, "float64"),
        ({}, parity.ParityError, "input"),
        ({"input": np.zeros((1, 3, 32, 64), dtype=np.float32)[..., ::2]}, ValueError, "not C-contiguous"),
        ({"input": [[0.0] * 32]}, TypeError, "not a numpy.ndarray"),
        ({"input": np.zeros((1, 3, 16, 16), dtype=np.float32)}, parity.ParityError, "shape"),
        ([np.zeros(FEED_SHAPE, dtype=np.float32)], TypeError, "not a dict"),
    ],
    ids=["wrong-dtype", "missing-input", "non-contiguous", "list-feed", "wrong-shape", "not-a-dict"],
)
def test_bad_feeds_raise_one_line(demo_model, feed, error, text):
    with RefRunner(str(demo_model)) as runner:
        with pytest.raises(error) as raised:
            runner.infer(feed)
        message = str(raised.value)
        assert text in message and "\n" not in message
        # The runner is still usable after the error.
        assert runner.infer(demo_feed())["probs"].shape == (1, 10)


def test_inactive_and_closed_runners_raise(demo_model):
    runner = RefRunner(str(demo_model))
    with pytest.raises(parity.ParityError):
        runner.infer(demo_feed())
    with runner:
        pass
    with pytest.raises(parity.ParityError):
        runner.infer(demo_feed())
    runner._native.close()
    with pytest.raises(ValueError, match="closed"):
        runner.infer(demo_feed())


def test_a_missing_model_raises_the_cli_message(tmp_path):
    with pytest.raises(parity.ParityError) as raised:
        with RefRunner(OnnxFromPath(tmp_path / "absent.onnx")):
            pass
    assert "absent.onnx" in str(raised.value) and "\n" not in str(raised.value)


def test_a_python_error_in_a_loader_propagates(demo_model):
    def loader():
        raise KeyError("from the loader")

    with pytest.raises(KeyError, match="from the loader"):
        RefRunner(loader).activate()


def test_the_gil_is_released_during_inference(mobilenet):
    """A Python thread keeps running while another thread is inside infer().

    The calls repeat until their interiors add up to a fraction of a second, so a fast CPU cannot make
    the window too short to tell. A held GIL could only let a tick in just after the start time is
    taken, before the C++ call begins, so the first millisecond of each call is not counted.
    """
    rng = np.random.default_rng(0)
    with RefRunner(str(mobilenet)) as runner:
        name = list(runner.get_input_metadata())[0]
        feed = {name: rng.random((1, 3, 224, 224), dtype=np.float32)}
        runner.infer(feed)
        ticks = []
        stop = threading.Event()

        def count():
            while not stop.is_set():
                ticks.append(time.perf_counter())
                time.sleep(0.0005)

        thread = threading.Thread(target=count)
        thread.start()
        time.sleep(0.01)
        interiors = []
        while sum(end - begin for begin, end in interiors) < 0.25 and len(interiors) < 400:
            start = time.perf_counter()
            runner.infer(feed)
            interiors.append((start + 0.001, time.perf_counter()))
        stop.set()
        thread.join()
    inside = [t for t in ticks if any(begin < t < end for begin, end in interiors)]
    covered = sum(max(0.0, end - begin) for begin, end in interiors)
    assert covered > 0.05, f"{len(interiors)} inferences gave only {covered:.3f} s to tell"
    assert len(inside) >= 5, f"{len(inside)} ticks of the other thread in {covered:.3f} s inside infer()"


def test_infer_overhead_over_the_cpp_call_is_not_gross():
    """The binding adds no copy or re-validation per infer().

    The 20 us target is bench/python_overhead.py's, measured the same way on an idle machine; this
    bound only has to hold under a loaded test run.
    """
    import statistics

    from parity import _parity
    from conftest import SOURCE_DIR

    feed = {"x": np.ones((1, 1, 2, 2), dtype=np.float32)}
    with RefRunner(str(SOURCE_DIR / "examples" / "python" / "identity.onnx")) as runner:
        python_times = []
        for _ in range(500):
            start = time.perf_counter()
            runner.infer(feed)
            python_times.append(time.perf_counter() - start)
        native = statistics.median(_parity.time_native_infer(runner._native, feed, 500))
    overhead = statistics.median(python_times) - native
    assert overhead < 100e-6, f"{overhead * 1e6:.1f} us over the C++ call"


def test_a_model_with_external_data_runs_from_its_path():
    from conftest import SOURCE_DIR

    model = SOURCE_DIR / "tests" / "data" / "polygraphy_cli" / "external_weights.onnx"
    with RefRunner(OnnxFromPath(model)) as ref, OnnxrtRunner(SessionFromOnnx(OnnxFromPath(model))) as ort:
        metadata = ref.get_input_metadata()
        feed = {name: np.ones([d or 1 for d in meta.shape], dtype=meta.dtype) for name, meta in metadata.items()}
        ref_out, ort_out = ref.infer(feed), ort.infer(feed)
    for name in ref_out:
        np.testing.assert_allclose(ref_out[name], ort_out[name], atol=1e-5)


def test_runners_take_the_names_they_are_given(demo_model):
    from parity.comparator import Comparator

    runners = [RefRunner(str(demo_model), name="mine"), OnnxrtRunner(SessionFromOnnx(str(demo_model)), name="theirs")]
    assert [r.name for r in runners] == ["mine", "theirs"]
    assert Comparator.run(runners).keys() == ["mine", "theirs"]
    assert RefRunner(str(demo_model)).name.startswith("ref-runner-N")


class IdentityInPython(__import__("parity.backend.base", fromlist=["BaseRunner"]).BaseRunner):
    """Polygraphy's custom runner: the identity model's job, in numpy."""

    def __init__(self, result=None):
        super().__init__(prefix="identity-py")
        self.result = result
        self.activations = 0

    def activate_impl(self):
        self.activations += 1

    def get_input_metadata_impl(self):
        from parity.backend.base import TensorMetadata

        return TensorMetadata().add("x", np.float32, (1, 1, 2, 2))

    def infer_impl(self, feed_dict):
        return self.result(feed_dict) if self.result else {"y": feed_dict["x"].copy()}


def test_a_runner_written_in_python_joins_the_comparator():
    from conftest import SOURCE_DIR
    from parity.comparator import Comparator

    custom = IdentityInPython()
    assert custom.name.startswith("identity-py-runner-N")
    results = Comparator.run([RefRunner(str(SOURCE_DIR / "examples" / "python" / "identity.onnx")), custom])
    assert custom.activations == 1
    assert bool(Comparator.compare_accuracy(results))
    with custom:
        with pytest.raises(parity.ParityError, match="float64"):
            custom.infer({"x": np.zeros((1, 1, 2, 2))})  # checked against its metadata first


@pytest.mark.parametrize("result, error", [
    (lambda feed: {"y": [1, 2]}, TypeError),
    (lambda feed: None, TypeError),
    (lambda feed: 1 / 0, ZeroDivisionError),
])
def test_a_python_runner_that_misbehaves_raises(result, error):
    with IdentityInPython(result) as runner:
        with pytest.raises(error):
            runner.infer({"x": np.zeros((1, 1, 2, 2), np.float32)})

"""Comparator, DataLoader and RunResults: Polygraphy's values and files."""
import base64
import io
import json
import subprocess

import numpy as np
import pytest

import parity
from parity.backend.onnxrt import OnnxrtRunner, SessionFromOnnx
from parity.backend.ref import RefRunner
from parity.backend.base import TensorMetadata
from parity.comparator import Comparator, CompareFunc, DataLoader, RunResults

from conftest import PARITY_BINARY, POLYGRAPHY_FILES


def polygraphy_array(encoded):
    return np.load(io.BytesIO(base64.b64decode(encoded["array"])), allow_pickle=False)


def fixture_metadata():
    return (TensorMetadata()
            .add("x", np.float32, (1, 3, 4, 4))
            .add("ids", np.int64, (2, 3))
            .add("mask", np.bool_, (5,))
            .add("h", np.float16, (3,))
            .add("k", np.int32, (4,)))


def test_data_loader_gives_polygraphys_values_bit_for_bit():
    expected = json.loads((POLYGRAPHY_FILES / "inputs_seed1.json").read_text())
    loader = DataLoader(seed=1, iterations=2, val_range={"ids": (0, 10), "k": (-5, 5)},
                        input_metadata=fixture_metadata())
    feeds = list(loader)
    assert len(feeds) == 2
    for iteration, feed in enumerate(feeds):
        assert list(feed) == ["x", "ids", "mask", "h", "k"]
        for name, array in feed.items():
            want = polygraphy_array(expected[iteration][name])
            assert array.dtype == want.dtype and array.shape == want.shape, name
            assert array.tobytes() == want.tobytes(), f"iteration {iteration} input {name}"


def test_int_and_float_ranges_apply_by_dtype():
    loader = DataLoader(int_range=(3, 3), float_range=(-2.0, -2.0), input_metadata=fixture_metadata())
    feed = loader[0]
    assert (feed["ids"] == 3).all() and (feed["k"] == 3).all()
    assert (feed["x"] == -2.0).all() and (feed["h"] == -2.0).all()


def test_a_data_loader_without_inputs_says_so():
    with pytest.raises(ValueError, match="input_metadata"):
        DataLoader()[0]


def run_demo(demo_model, data_loader):
    runners = [RefRunner(str(demo_model)), OnnxrtRunner(SessionFromOnnx(str(demo_model)))]
    return Comparator.run(runners, data_loader=data_loader)


def test_run_and_compare_accuracy(demo_model):
    results = run_demo(demo_model, DataLoader(iterations=3))
    assert len(results) == 2
    names = results.keys()
    assert names[0].startswith("ref-runner-") and names[1].startswith("ort-runner-")
    assert len(results[names[0]]) == 3 and results[0][2]["probs"].shape == (1, 10)
    accuracy = Comparator.compare_accuracy(results, compare_func=CompareFunc.simple(atol=1e-4))
    assert bool(accuracy) and accuracy.stats() == (3, 0, 3) and accuracy.percentage() == 1.0
    strict = Comparator.compare_accuracy(results, compare_func=CompareFunc.simple(atol=0.0, rtol=0.0))
    assert strict.stats()[2] == 3
    assert Comparator.validate(results)


def test_run_takes_any_iterable_of_feeds(demo_model):
    feeds = [{"input": np.full((1, 3, 32, 32), v, dtype=np.float32)} for v in (0.0, 0.5)]
    results = run_demo(demo_model, iter(feeds))
    assert len(results[0]) == 2 and len(results[1]) == 2


def test_a_bad_feed_in_a_data_loader_raises(demo_model):
    with pytest.raises(TypeError, match="feed 1 of the data loader"):
        run_demo(demo_model, [{"input": np.zeros((1, 3, 32, 32), np.float32)}, {"input": "text"}])


def test_saved_results_read_back_in_parity_inspect_data(demo_model, tmp_path):
    results = run_demo(demo_model, DataLoader(iterations=2))
    path = tmp_path / "outputs.json"
    results.save(path)
    document = json.loads(path.read_text())
    assert document["polygraphy_class"] == "RunResults" and len(document["lst"]) == 2
    probs = polygraphy_array(document["lst"][0][1][1]["outputs"]["probs"]["values"])
    np.testing.assert_array_equal(probs, results[0][1]["probs"])
    shown = subprocess.run([str(PARITY_BINARY), "inspect", "data", str(path), "--show-values"],
                           capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert results.keys()[0] in shown.stdout and "probs" in shown.stdout
    again = RunResults.load(path)
    assert again.keys() == results.keys()
    np.testing.assert_array_equal(again[1][0]["probs"], results[1][0]["probs"])


def test_polygraphys_run_results_load():
    results = RunResults.load(POLYGRAPHY_FILES / "run_results.json")
    assert results.keys() == ["onnxrt-runner-N0-01/02/26-10:00:00", "trt-runner-N0-01/02/26-10:00:01"]
    for _, iterations in results.items():
        assert iterations[0]["y"].shape == (1, 3, 4, 4) and iterations[0]["y"].dtype == np.float32
    assert len(Comparator.compare_accuracy(results)) == 1


def test_results_built_in_python_save(tmp_path):
    results = RunResults()
    results.append("custom", [{"y": np.arange(6, dtype=np.int64).reshape(2, 3)}])
    results.save(tmp_path / "custom.json")
    np.testing.assert_array_equal(RunResults.load(tmp_path / "custom.json")["custom"][0]["y"],
                                  np.arange(6).reshape(2, 3))


def test_loading_a_missing_file_raises_one_line(tmp_path):
    with pytest.raises(parity.ParityError) as raised:
        RunResults.load(tmp_path / "nothing.json")
    assert "nothing.json" in str(raised.value) and "\n" not in str(raised.value)


def test_save_inputs_path_writes_the_feeds_used(demo_model, tmp_path):
    loader = DataLoader(iterations=2, input_metadata=TensorMetadata().add("input", np.float32, (1, 3, 32, 32)))
    path = tmp_path / "inputs.json"
    results = Comparator.run([RefRunner(str(demo_model))], data_loader=loader, save_inputs_path=path)
    assert len(results[0]) == 2
    saved = json.loads(path.read_text())
    np.testing.assert_array_equal(polygraphy_array(saved[1]["input"]), loader[1]["input"])
    with pytest.raises(ValueError, match="save_inputs_path"):
        Comparator.run([RefRunner(str(demo_model))], save_inputs_path=path)


def test_foreign_runners_and_subprocesses_are_refused(demo_model):
    with pytest.raises(TypeError, match="parity's runners"):
        Comparator.run([object()])
    with pytest.raises(ValueError, match="use-subprocess"):
        Comparator.run([RefRunner(str(demo_model))], use_subprocess=True)

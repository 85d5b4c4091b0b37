"""Runs each example script as a user would (python3 script.py in a scratch folder with identity.onnx)
and checks what it leaves behind with the parity CLI."""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
PARITY_BINARY = os.environ.get("PARITY_BINARY")


@pytest.fixture
def scratch(tmp_path):
    shutil.copy(HERE / "identity.onnx", tmp_path / "identity.onnx")
    return tmp_path


def run_example(name, folder):
    shutil.copy(HERE / name, folder / name)
    result = subprocess.run([sys.executable, name], cwd=folder, capture_output=True, text=True)
    assert result.returncode == 0, f"{name} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def parity(*args, cwd):
    assert PARITY_BINARY, "$PARITY_BINARY is not set: run the examples through CTest"
    return subprocess.run([PARITY_BINARY, *args], cwd=cwd, capture_output=True, text=True)


def test_build_and_run_then_load_and_run(scratch):
    assert "Inference succeeded!" in run_example("build_and_run.py", scratch)
    assert (scratch / "identity.engine").stat().st_size > 0
    assert "Inference succeeded!" in run_example("load_and_run.py", scratch)
    shown = parity("inspect", "model", "identity.engine", cwd=scratch)
    assert shown.returncode == 0 and "y" in shown.stdout, shown.stdout + shown.stderr


def test_compare_backends_saves_results_parity_reads(scratch):
    run_example("compare_backends.py", scratch)
    shown = parity("inspect", "data", "inference_results.json", cwd=scratch)
    assert shown.returncode == 0, shown.stderr
    assert "Run Results (2 runners)" in shown.stdout
    assert "ort-runner" in shown.stdout and "ref-runner" in shown.stdout


def test_int8_calibration_writes_and_reuses_its_cache(scratch):
    assert "Calibration succeeded!" in run_example("int8_calibration.py", scratch)
    assert (scratch / "identity-calib.cache").stat().st_size > 0


def test_validate_on_dataset(scratch):
    assert "Validation succeeded!" in run_example("validate_on_dataset.py", scratch)


def test_interop_with_func_extend(scratch):
    out = run_example("interop_func_extend.py", scratch)
    assert "Network name: MyIdentity" in out and "Inference succeeded!" in out


def test_putting_it_all_together(scratch):
    run_example("putting_it_together.py", scratch)


def test_navigator_torch_export_makes_a_package_parity_reads(scratch):
    run_example("navigator_torch_export.py", scratch)
    status = parity("package", "status", "example_pyt.nav", cwd=scratch)
    assert status.returncode == 0, status.stdout + status.stderr
    onnx_ort = [line for line in status.stdout.splitlines() if line.split()[:2] == ["onnx", "ort"]]
    assert onnx_ort and "yes" in onnx_ort[0].split(), status.stdout  # set_verified reached the package

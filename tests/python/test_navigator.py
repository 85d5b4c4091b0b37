"""parity.navigator: torch.export through parity's pipeline, the PackageDescriptor and .nav packages."""
import subprocess

import numpy as np
import pytest
import torch

import parity
import parity.navigator as nav

from conftest import PARITY_BINARY


class TwoInputs(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.linear = torch.nn.Linear(4, 3)

    def forward(self, x, y):
        return torch.relu(self.linear(x)) + y


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    samples = [(torch.rand(2, 4), torch.rand(2, 3)) for _ in range(4)]
    workspace = tmp_path_factory.mktemp("nav") / "two_inputs.nav.workspace"
    return nav.torch.export(model=TwoInputs().eval(), model_name="two_inputs", dataloader=samples, workspace=workspace,
                            input_names=("x", "y"), output_names=("z",), dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}},
                            target_formats=[nav.Format.TORCHSCRIPT, nav.Format.ONNX, nav.Format.PLAN_FP32],
                            runtimes=[nav.RuntimeProvider.CPU, nav.RuntimeProvider.REF, nav.RuntimeProvider.TORCHSCRIPT],
                            profiling=False)


def test_export_passes_on_the_runtimes_asked(package):
    assert package.get_status(nav.Format.ONNX)
    assert package.get_status(nav.Format.ONNX, nav.RuntimeProvider.CPU)
    assert package.get_status(nav.Format.PLAN_FP32, nav.RuntimeProvider.REF)
    assert set(package.get_formats_status()) == {"torchscript", "onnx", "plan-fp32"}
    cells = {(f, r): steps for f, r, steps in package.cells()}
    assert cells[("onnx", "ort")]["correctness"] == "OK"
    # The traced module on LibTorch, fed by the ONNX export's input names and checked against the
    # ONNX source's outputs ("z"), which TorchScript itself does not name.
    assert cells[("torchscript", "torch")]["conversion"] == "OK"
    assert cells[("torchscript", "torch")]["correctness"] == "OK"
    assert package.get_status(nav.Format.TORCHSCRIPT, nav.RuntimeProvider.TORCHSCRIPT)
    assert not any(f == "torchscript" and r != "torch" for f, r, _ in package.cells())
    assert (package.workspace / "export" / "two_inputs.pt").is_file()  # the traced TorchScript copy


@pytest.mark.parametrize("format, runtime", [(nav.Format.ONNX, nav.RuntimeProvider.CPU),
                                             (nav.Format.TORCHSCRIPT, nav.RuntimeProvider.TORCHSCRIPT)])
def test_a_format_runner_matches_torch(package, format, runtime):
    x, y = torch.rand(3, 4), torch.rand(3, 3)
    with torch.no_grad():
        expected = TwoInputs().eval()(x, y).numpy()
    with package.get_runner(format, runtime) as runner:
        outputs = runner.infer({"x": x.numpy(), "y": y.numpy()})
    # TorchScript names no outputs: its one output is the ONNX export's "z".
    np.testing.assert_allclose(outputs.get("z", next(iter(outputs.values()))), expected, atol=1e-5)


def test_the_torchscript_model_loads_in_torch_like_the_module(package):
    x, y = torch.rand(3, 4), torch.rand(3, 3)
    loaded = torch.jit.load(str(package.get_model(nav.Format.TORCHSCRIPT)))
    with torch.no_grad():
        np.testing.assert_allclose(loaded(x, y).numpy(), TwoInputs().eval()(x, y).numpy(), atol=1e-6)


class RenamedInputs(torch.nn.Module):
    def forward(self, image, bias):
        return torch.tanh(image) * 2 + bias, image.sum(dim=1, keepdim=True)


def test_torchscript_is_fed_by_position_when_the_export_renames_inputs(tmp_path):
    torch.manual_seed(1)
    samples = [(torch.rand(1, 5), torch.rand(1, 5)) for _ in range(3)]
    package = nav.torch.export(model=RenamedInputs(), model_name="renamed", dataloader=samples,
                               workspace=tmp_path / "renamed.nav.workspace", input_names=("input__0", "input__1"),
                               output_names=("scaled", "total"), target_formats=[nav.Format.ONNX, nav.Format.TORCHSCRIPT],
                               runtimes=[nav.RuntimeProvider.REF, nav.RuntimeProvider.TORCHSCRIPT], profiling=True)
    cells = {(f, r): steps for f, r, steps in package.cells()}
    assert cells[("torchscript", "torch")]["correctness"] == "OK", cells
    assert cells[("torchscript", "torch")]["performance"] == "OK", cells
    perf = package.get_formats_performance()
    assert "torchscript" in perf


def test_unknown_formats_and_unverifiable_cells_raise(package):
    with pytest.raises(parity.ParityError):
        package.get_model("not-a-format")
    with pytest.raises(parity.ParityError):
        package.set_verified(nav.Format.ONNX_FP16, nav.RuntimeProvider.CPU)


def test_save_load_and_cli_status(package, tmp_path):
    package.set_verified(nav.Format.ONNX, nav.RuntimeProvider.CPU)
    path = tmp_path / "two_inputs.nav"
    package.save(path)
    status = subprocess.run([str(PARITY_BINARY), "package", "status", str(path)], capture_output=True, text=True)
    assert status.returncode == 0, status.stderr
    row = [line.split() for line in status.stdout.splitlines() if line.split()[:2] == ["onnx", "ort"]]
    assert row and "yes" in row[0]
    loaded = nav.load(path, workspace=tmp_path / "loaded")
    assert loaded.get_status(nav.Format.ONNX, nav.RuntimeProvider.CPU)
    assert str(loaded.get_model(nav.Format.ONNX)).startswith(str(tmp_path / "loaded"))


def test_an_empty_dataloader_is_refused():
    with pytest.raises(ValueError, match="no samples"):
        nav.torch.export(model=TwoInputs(), dataloader=[])

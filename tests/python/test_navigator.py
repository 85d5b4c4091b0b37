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
                            target_formats=[nav.Format.ONNX, nav.Format.PLAN_FP32],
                            runtimes=[nav.RuntimeProvider.CPU, nav.RuntimeProvider.REF], profiling=False)


def test_export_passes_on_the_runtimes_asked(package):
    assert package.get_status(nav.Format.ONNX)
    assert package.get_status(nav.Format.ONNX, nav.RuntimeProvider.CPU)
    assert package.get_status(nav.Format.PLAN_FP32, nav.RuntimeProvider.REF)
    assert set(package.get_formats_status()) == {"onnx", "plan-fp32"}
    cells = {(f, r): steps for f, r, steps in package.cells()}
    assert cells[("onnx", "ort")]["correctness"] == "OK"
    assert (package.workspace / "export" / "two_inputs.pt").is_file()  # the traced TorchScript copy


def test_a_format_runner_matches_torch(package):
    x, y = torch.rand(3, 4), torch.rand(3, 3)
    with torch.no_grad():
        expected = TwoInputs().eval()(x, y).numpy()
    with package.get_runner(nav.Format.ONNX, nav.RuntimeProvider.CPU) as runner:
        outputs = runner.infer({"x": x.numpy(), "y": y.numpy()})
    np.testing.assert_allclose(outputs["z"], expected, atol=1e-5)


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

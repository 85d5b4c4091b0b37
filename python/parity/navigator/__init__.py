"""Model Navigator's API on parity's navigator (``parity optimize`` and ``parity package``).

``parity.navigator.torch.export(model=..., dataloader=...)`` exports a live PyTorch module and
runs parity's optimize pipeline on it; the ``PackageDescriptor`` it returns reports each format's
status, gives runners of the formats, records the user's verification and saves the ``.nav``
package that ``parity package status`` reads; ``load`` opens such a package again.
"""
import enum
import os
import tempfile

from parity import _parity
from parity.backend.base import BaseRunner


class Format(str, enum.Enum):
    """The formats parity's navigator produces (``--target-formats``)."""

    ONNX = "onnx"
    ONNX_SANITIZED = "onnx-sanitized"
    ONNX_FP16 = "onnx-fp16"
    TORCHSCRIPT = "torchscript"
    PLAN_FP32 = "plan-fp32"
    PLAN_FP16 = "plan-fp16"
    PLAN_BF16 = "plan-bf16"
    PLAN_INT8 = "plan-int8"


class RuntimeProvider(str, enum.Enum):
    """Where a format runs: Model Navigator's names mapped to parity's runners."""

    CPU = "ort"          # ONNX Runtime's CPU execution provider
    ONNXRUNTIME = "ort"
    REF = "ref"          # parity's own executor (and its plans)
    PARITY = "ref"
    OPENCV = "opencv"
    PYTORCH = "torch"
    TORCHSCRIPT = "torch"


def _name(value):
    return value.value if isinstance(value, enum.Enum) else str(value)


class _PackageRunner(BaseRunner):
    """A runner of one format of a package (inactive until used)."""


class PackageDescriptor:
    """A navigator workspace: the formats made from one model, their tests and the user's verdicts."""

    def __init__(self, workspace):
        self._native = workspace if isinstance(workspace, _parity.PackageDescriptor) else \
            _parity.PackageDescriptor(os.fspath(workspace))

    @property
    def workspace(self):
        return self._native.workspace

    def get_status(self, format, runtime=None):
        """True when the format passed conversion and correctness (on ``runtime``, or on any)."""
        return self._native.get_status(_name(format), None if runtime is None else _name(runtime))

    def get_formats_status(self):
        """{format: passed on some runtime}."""
        return self._native.get_formats_status()

    def get_formats_performance(self):
        """{format: lowest p50 latency at batch size 1, in ms}."""
        return self._native.get_formats_performance()

    def get_model(self, format):
        """The path of the format's model file."""
        return self._native.get_model(_name(format))

    def get_runner(self, format, runtime):
        """An inactive runner of ``runtime`` over the format's model (a context manager)."""
        return _PackageRunner(self._native.get_runner(_name(format), _name(runtime)))

    def set_verified(self, format, runtime, verified=True):
        """Records that the user verified the format on ``runtime`` (status.yaml)."""
        self._native.set_verified(_name(format), _name(runtime), verified)

    def cells(self):
        """(format, runtime, {step: state}) for every format x runtime."""
        return self._native.cells()

    def save(self, path, keep_workspace=True, override=False, save_data=True):
        """Writes the ``.nav`` package."""
        self._native.save(os.fspath(path), save_data, override)


def load(path, workspace=None, retest=True):
    """Opens a ``.nav`` package: unpacked into ``workspace`` (default: a new temporary folder) and,
    unless ``retest=False``, tested again there."""
    target = workspace if workspace is not None else tempfile.mkdtemp(prefix="parity-nav-")
    return PackageDescriptor(_parity.PackageDescriptor.load(os.fspath(path), os.fspath(target), retest))


from parity.navigator import torch  # noqa: E402  (Model Navigator's nav.torch)

__all__ = ["Format", "RuntimeProvider", "PackageDescriptor", "load", "torch"]

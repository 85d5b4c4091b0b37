"""parity's own ONNX runtime (``--ref``), with its fp64 oracle mode."""
from parity import _parity
from parity.backend.base import BaseRunner, call_loader, model_folder


class RefRunner(BaseRunner):
    """Runs an ONNX model (a path, bytes, a model or a loader of one) with parity's executor.

    ``precision="fp64"`` computes every floating operation in double (the oracle); ``threads``
    sets the kernels' threads; ``kernels`` is ``"optimized"`` or ``"reference"``.
    """

    def __init__(self, model, precision="fp32", threads=None, kernels=None, name=None):
        options = ["--precision", precision]
        if threads:
            options += ["--threads", str(threads)]
        if kernels:
            options += ["--kernels", kernels]
        super().__init__(_parity.make_onnx_runner("ref", lambda: call_loader(model), options, model_folder(model),
                                                  name or ""))

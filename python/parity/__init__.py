"""parity for Python: Polygraphy's and Model Navigator's Python APIs on parity's C++ core.

The modules follow Polygraphy's layout, so a Polygraphy script runs after changing its import
lines (and ``TrtRunner`` to ``PlanRunner``)::

    from parity.backend.onnxrt import OnnxrtRunner, SessionFromOnnx
    from parity.backend.plan import EngineFromNetwork, NetworkFromOnnxPath, PlanRunner
    from parity.comparator import Comparator, CompareFunc, DataLoader

``parity.navigator`` has Model Navigator's ``torch.export`` and packages, ``parity.tools.main``
runs any parity command in this process. Errors of parity's C++ library arrive as
``parity.ParityError`` (a ``RuntimeError``) with the same one-line message the CLI prints.
"""
from parity._parity import ParityError

__all__ = ["ParityError"]

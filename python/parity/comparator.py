"""Polygraphy's comparator: ``Comparator``, ``CompareFunc``, ``DataLoader``, ``RunResults``."""
import os

from parity import _parity
from parity.backend.base import TensorMetadata

IterationResult = _parity.IterationResult
AccuracyResult = _parity.AccuracyResult
OutputCompareResult = _parity.OutputCompareResult


class DataLoader:
    """Seeded random inputs, bit-identical to Polygraphy's DataLoader (numpy's RandomState).

    ``val_range`` is a ``(min, max)`` pair or ``{input: (min, max)}`` with ``""`` as the default
    (default ``(0.0, 1.0)``); ``int_range`` and ``float_range`` apply to integer and floating
    inputs. ``input_metadata`` lets it generate without a runner (``data_loader[i]``).
    """

    def __init__(self, seed=None, iterations=None, input_metadata=None, int_range=None, float_range=None,
                 val_range=None, data_loader_backend_module=None):
        metadata = None
        if input_metadata is not None:
            metadata = input_metadata.entries() if isinstance(input_metadata, TensorMetadata) else input_metadata
        self._knows_inputs = metadata is not None
        self._native = _parity.DataLoader(1 if seed is None else int(seed), 1 if iterations is None else int(iterations),
                                          val_range, int_range, float_range, metadata)

    @property
    def input_metadata(self):
        return None

    @input_metadata.setter
    def input_metadata(self, metadata):
        self._knows_inputs = True
        self._native.input_metadata = metadata.entries() if isinstance(metadata, TensorMetadata) else metadata

    def __len__(self):
        return len(self._native)

    def __getitem__(self, index):
        return self._native[index]

    def __iter__(self):
        return (self._native[i] for i in range(len(self._native)))


class RunResults:
    """Per-runner results in run order: ``[(runner_name, [IterationResult, ...]), ...]``."""

    def __init__(self, native=None):
        self._native = native if native is not None else _parity.RunResults()

    def keys(self):
        return self._native.keys()

    def values(self):
        return [self._native.runner_iterations(i) for i in range(len(self._native))]

    def items(self):
        return list(zip(self.keys(), self.values()))

    def __len__(self):
        return len(self._native)

    def __iter__(self):
        return iter(self.items())

    def __contains__(self, runner_name):
        return runner_name in self.keys()

    def __getitem__(self, key):
        """The iterations of a runner, by name or by position."""
        if isinstance(key, int):
            return self._native.runner_iterations(key)
        names = self.keys()
        if key not in names:
            raise KeyError(f"no runner named '{key}' in these results; runners: {', '.join(names)}")
        return self._native.runner_iterations(names.index(key))

    def append(self, runner_name, iterations):
        """Adds a runner's iterations: a list of ``{output: numpy.ndarray}``."""
        self._native.add_iterations(runner_name, [dict(it) if not isinstance(it, dict) else it for it in iterations])

    def save(self, dest):
        """Writes Polygraphy's RunResults JSON (``run --save-outputs``)."""
        self._native.save(os.fspath(dest))

    @staticmethod
    def load(src):
        """Reads a RunResults JSON file written by parity or Polygraphy."""
        return RunResults(_parity.RunResults.load(os.fspath(src)))


class CompareFunc:
    """Functions comparing two runners' outputs (Polygraphy's CompareFunc)."""

    @staticmethod
    def simple(check_shapes=None, rtol=None, atol=None, fail_fast=None, find_output_func=None, check_error_stat=None,
               infinities_compare_equal=None, save_heatmaps=None, show_heatmaps=None, save_error_metrics_plot=None,
               show_error_metrics_plot=None, error_quantile=None):
        """Absolute and relative error against ``atol`` and ``rtol`` (floats or ``{output: float}``)."""
        return _parity.compare_func_simple(True if check_shapes is None else check_shapes, rtol, atol, bool(fail_fast),
                                           check_error_stat, bool(infinities_compare_equal), error_quantile)

    @staticmethod
    def indices(index_tolerance=None, fail_fast=None):
        """Compares index outputs (top-k results) allowing ``index_tolerance`` positions of movement."""
        return _parity.compare_func_indices(index_tolerance, bool(fail_fast))


class Comparator:
    """Runs runners on the same inputs and compares their outputs."""

    @staticmethod
    def run(runners, data_loader=None, warm_up=None, use_subprocess=None, save_inputs_path=None):
        """Runs every runner (activated for the run) on each feed of ``data_loader``: a
        ``DataLoader`` (default: seed 1, one iteration) or any iterable of feed dicts.
        ``save_inputs_path`` writes the feeds used (Polygraphy's inputs JSON)."""
        if use_subprocess:
            raise ValueError("Comparator.run(use_subprocess=True) is not available from Python: run "
                             "parity.tools.main(['run', MODEL, ..., '--use-subprocess']) instead")
        for runner in runners:
            if not hasattr(runner, "_native"):
                raise TypeError(f"Comparator.run takes parity's runners (parity.backend.*), not a {type(runner).__name__}")
        was_active = [r for r in runners if r.is_active]
        for runner in was_active:
            runner.deactivate()
        if save_inputs_path is not None:
            if data_loader is None or (isinstance(data_loader, DataLoader) and not data_loader._knows_inputs):
                raise ValueError("save_inputs_path needs a data loader whose feeds are known before the run: "
                                 "a list of feeds, or a DataLoader given input_metadata")
            data_loader = list(data_loader)
            _parity.save_inputs(data_loader, os.fspath(save_inputs_path))
        loader = data_loader._native if isinstance(data_loader, DataLoader) else data_loader
        try:
            return RunResults(_parity.comparator_run([r._native for r in runners], loader, int(warm_up or 0)))
        finally:
            for runner in was_active:
                runner.activate()

    @staticmethod
    def compare_accuracy(run_results, fail_fast=False, comparisons=None, compare_func=None):
        """Compares each runner with the next (or the ``comparisons`` pairs of indices); the result
        is truthy when every output of every iteration matched."""
        return _parity.compare_accuracy(run_results._native, compare_func, comparisons, bool(fail_fast))

    @staticmethod
    def validate(run_results, check_inf=None, check_nan=None, fail_fast=None):
        """True when no output has a NaN (or an Inf, with ``check_inf``)."""
        return _parity.validate(run_results._native, bool(check_inf), True if check_nan is None else check_nan,
                                bool(fail_fast))

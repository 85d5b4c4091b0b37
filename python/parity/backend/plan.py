"""parity's engine (plans), in the shape of Polygraphy's backend.trt: a network is parity's
editable ONNX graph, an engine is a built plan, ``PlanRunner`` takes ``TrtRunner``'s place.

As in Polygraphy, the network loaders return ``(builder, network, parser)``; ``EngineFromNetwork``
takes that triple or a lone network (any model: path, bytes, ``OnnxModel``, ``onnx.ModelProto``).
``BuilderFlag`` and ``CreateConfig.set_flag`` stand where TensorRT's are, so a script written
against ``tensorrt`` runs with ``from parity.backend import plan as trt``.
"""
import enum
import os

from parity import _parity
from parity.backend.base import BaseLoader, BaseRunner, call_loader
from parity.backend.onnx import onnx_from_path


class BuilderFlag(enum.Enum):
    """Reduced precisions a plan's layers may use (TensorRT's builder flags that parity has)."""

    FP16 = "fp16"
    BF16 = "bf16"
    INT8 = "int8"


class Builder:
    """What builds plans: parity plans a network directly, so the builder only makes configs."""

    def create_builder_config(self):
        return CreateConfig()()


class OnnxParser:
    """The parser a network came from: the ONNX source it was read from."""

    def __init__(self, source):
        self.source = source


def _network_triple(network, source):
    return Builder(), network, OnnxParser(source)


def network_from_onnx_path(path):
    """``(builder, network, parser)`` of an ONNX file; the network is parity's graph (``name``,
    ``inputs``, ``outputs``, ``nodes``, ``mark_outputs``)."""
    return _network_triple(onnx_from_path(path), os.fspath(path))


class NetworkFromOnnxPath(BaseLoader):
    """Parses an ONNX file into a network when called."""

    def __init__(self, path, flags=None, plugin_instancenorm=None, strongly_typed=None):
        self.path = os.fspath(path)

    def call_impl(self):
        return network_from_onnx_path(self.path)


class NetworkFromOnnxBytes(BaseLoader):
    """Parses serialized ONNX (bytes or a loader of them) into a network when called."""

    def __init__(self, model_bytes, flags=None, plugin_instancenorm=None, strongly_typed=None):
        self.model_bytes = model_bytes

    def call_impl(self):
        return _network_triple(_parity.onnx_from_bytes(call_loader(self.model_bytes)), "bytes")


class Profile(dict):
    """An optimization profile: ``{input: bounds}`` with ``min``, ``opt`` and ``max`` shapes."""

    class Bounds:
        def __init__(self, min, opt, max):
            self.min, self.opt, self.max = tuple(min), tuple(opt), tuple(max)

    def add(self, name, min, opt, max):
        self[name] = Profile.Bounds(min, opt, max)
        return self


class CalibrationAlgoType(enum.Enum):
    """The int8 calibrators parity has, under TensorRT's names (both entropy calibrators are parity's
    entropy calibrator)."""

    MINMAX_CALIBRATION = "minmax"
    ENTROPY_CALIBRATION = "entropy"
    ENTROPY_CALIBRATION_2 = "entropy"


class Calibrator:
    """int8 calibration for ``CreateConfig(int8=True, calibrator=...)``, as Polygraphy's: the feeds of
    ``data_loader`` (any iterable of feed dicts, or a ``DataLoader``) run through the fp32 model when
    the plan is built, and each tensor's range becomes its int8 scale. With ``cache`` (a path), an
    existing cache file is used instead of calibrating, and a new one is written after calibrating;
    a cache made for another model is refused. ``algo`` picks the calibrator
    (``CalibrationAlgoType`` or ``"minmax"``/``"entropy"``; default min-max, as ``convert --int8``)."""

    def __init__(self, data_loader, cache=None, BaseClass=None, batch_size=None, quantile=None,
                 regression_cutoff=None, algo=None):
        if cache is not None and not isinstance(cache, (str, os.PathLike)):
            raise TypeError("parity's Calibrator takes the calibration cache as a path, not a file object")
        self.data_loader = data_loader
        self.cache = os.fspath(cache) if cache is not None else None
        self.algorithm = CalibrationAlgoType(algo).value if algo is not None else "minmax"


class CreateConfig(BaseLoader):
    """The builder config: which precisions layers may use, the int8 calibrator, the optimization
    profiles, the plan's threads and fusion. Fields are attributes, as on Polygraphy's config."""

    def __init__(self, fp16=False, bf16=False, int8=False, profiles=None, calibrator=None, threads=1, fuse=True,
                 **unsupported):
        self.fp16, self.bf16, self.int8 = bool(fp16), bool(bf16), bool(int8)
        self.profiles = profiles
        self.calibrator = calibrator
        self.threads = int(threads)
        self.fuse = bool(fuse)

    def call_impl(self, *args):
        return self

    def set_flag(self, flag):
        """Enables a ``BuilderFlag``."""
        setattr(self, BuilderFlag(flag).value, True)

    def clear_flag(self, flag):
        setattr(self, BuilderFlag(flag).value, False)

    def get_flag(self, flag):
        return getattr(self, BuilderFlag(flag).value)


def engine_from_network(network, config=None):
    """Builds the plan of a network: a ``(builder, network, parser)`` triple, a network or any model,
    or a loader of one of them."""
    network = call_loader(network)
    if isinstance(network, tuple):
        network = network[1]
    return _parity.build_plan(network, call_loader(config) if config is not None else None)


class EngineFromNetwork(BaseLoader):
    """Builds a plan from a network loader when called."""

    def __init__(self, network, config=None, save_timing_cache=None):
        self.network = network
        self.config = config

    def call_impl(self):
        return engine_from_network(self.network, self.config)


class EngineFromBytes(BaseLoader):
    """Loads a plan from its bytes (or a loader of them) when called."""

    def __init__(self, serialized_engine, runtime=None):
        self.serialized_engine = serialized_engine

    def call_impl(self):
        return _parity.plan_from_bytes(call_loader(self.serialized_engine))


class EngineFromPath(BaseLoader):
    """Maps a plan file when called."""

    def __init__(self, path, runtime=None):
        self.path = os.fspath(path)

    def call_impl(self):
        return _parity.plan_from_path(self.path)


def bytes_from_engine(engine):
    """The plan file's bytes."""
    return call_loader(engine).serialize()


class SaveEngine(BaseLoader):
    """Saves the plan a loader returns to ``path`` and passes it on."""

    def __init__(self, engine, path):
        self.engine = engine
        self.path = os.fspath(path)

    def call_impl(self):
        engine = call_loader(self.engine)
        engine.save(self.path)
        return engine


class PlanRunner(BaseRunner):
    """Runs a plan (an engine, its bytes, or a loader of either) with parity's executor."""

    def __init__(self, engine, name=None, optimization_profile=None):
        super().__init__(_parity.make_plan_runner(lambda: call_loader(engine), name or ""))

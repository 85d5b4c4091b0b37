"""ONNX model loaders (Polygraphy's backend.onnx). Models are ``parity._parity.OnnxModel``s
(``name``, ``inputs``, ``outputs``, ``nodes``, ``mark_outputs``, ``SerializeToString``); an
``onnx.ModelProto`` or serialized bytes is accepted wherever a model is."""
import os

from parity import _parity
from parity.backend.base import BaseLoader, call_loader

OnnxModel = _parity.OnnxModel


def onnx_from_path(path):
    """Reads an ONNX model file."""
    return _parity.onnx_from_path(os.fspath(path))


def bytes_from_onnx(model):
    """The serialized model."""
    return _parity.bytes_from_onnx(model)


def save_onnx(model, path):
    """Writes the model to ``path`` and returns it."""
    _parity.save_onnx(model, os.fspath(path))
    return model


def modify_outputs(model, outputs=None, exclude_outputs=None):
    """Sets the graph outputs: names, or ``["mark", "all"]`` (``constants.MARK_ALL``) for every value."""
    from parity.constants import MARK_ALL

    outputs = ["mark", "all"] if outputs == MARK_ALL else list(outputs or [])
    model = _parity.to_onnx_model(model).copy()
    model.mark_outputs(outputs, list(exclude_outputs or []))
    return model


class OnnxFromPath(BaseLoader):
    """Loads an ONNX model from a file when called."""

    def __init__(self, path, external_data_dir=None):
        self.path = os.fspath(path)

    def call_impl(self):
        return onnx_from_path(self.path)


class OnnxFromBytes(BaseLoader):
    """Parses a serialized model (bytes, or a loader of them) when called."""

    def __init__(self, serialized_onnx):
        self.serialized_onnx = serialized_onnx

    def call_impl(self):
        return _parity.onnx_from_bytes(call_loader(self.serialized_onnx))


class BytesFromOnnx(BaseLoader):
    """Serializes the model a loader returns."""

    def __init__(self, model):
        self.model = model

    def call_impl(self):
        return bytes_from_onnx(call_loader(self.model))


class SaveOnnx(BaseLoader):
    """Saves the model a loader returns and passes it on."""

    def __init__(self, model, path, external_data_path=None, size_threshold=None, all_tensors_to_one_file=None):
        self.model = model
        self.path = os.fspath(path)

    def call_impl(self):
        return save_onnx(call_loader(self.model), self.path)


class ModifyOutputs(BaseLoader):
    """Changes the graph outputs of the model a loader returns (see ``modify_outputs``)."""

    def __init__(self, model, outputs=None, exclude_outputs=None, copy=None):
        self.model = model
        self.outputs = outputs
        self.exclude_outputs = exclude_outputs

    def call_impl(self):
        return modify_outputs(call_loader(self.model), self.outputs, self.exclude_outputs)

"""ONNX Runtime (Polygraphy's backend.onnxrt), through parity's ort runner."""
from parity import _parity
from parity.backend.base import BaseLoader, BaseRunner, call_loader, model_folder


class SessionFromOnnx(BaseLoader):
    """An ONNX Runtime session description from a model: a path, bytes, a model or a loader of
    one. The session itself is made when the runner activates."""

    def __init__(self, model_bytes, providers=None, threads=None):
        self.model = model_bytes
        self.threads = threads

    def call_impl(self):
        return self

    def options(self):
        return ["--ort-threads", str(self.threads)] if self.threads else []


SessionFromOnnxBytes = SessionFromOnnx


class OnnxrtRunner(BaseRunner):
    """Runs a model with ONNX Runtime (parity's ``--ort``)."""

    def __init__(self, sess, name=None):
        session = sess if isinstance(sess, SessionFromOnnx) else SessionFromOnnx(sess)
        model = session.model
        super().__init__(_parity.make_onnx_runner("ort", lambda: call_loader(model), session.options(),
                                                  model_folder(model), name or ""))

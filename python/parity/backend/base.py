"""What every loader and runner shares (Polygraphy's backend/base)."""
from parity import _parity


class BaseLoader:
    """A lazy loader: nothing happens until it is called (``loader()`` returns the model)."""

    def __call__(self, *args, **kwargs):
        return self.call_impl(*args, **kwargs)

    def call_impl(self):
        raise NotImplementedError


def call_loader(value):
    """What a loader argument stands for: called when callable, else taken as it is."""
    if callable(value) and not isinstance(value, (_parity.OnnxModel, _parity.Plan, bytes, str)):
        return value()
    return value


def model_folder(model):
    """The folder a model's external data resolves against: that of the file a path or a path-based
    loader names ("" when the model comes from elsewhere)."""
    import os

    if isinstance(model, (str, os.PathLike)):
        return os.path.dirname(os.path.abspath(os.fspath(model)))
    path = getattr(model, "path", None)
    if isinstance(path, str) and path.endswith(".onnx"):
        return os.path.dirname(os.path.abspath(path))
    inner = getattr(model, "model", None)
    return model_folder(inner) if inner is not None and inner is not model else ""


class BaseRunner:
    """A runner over one of parity's runtimes; use it as a context manager::

        with OnnxrtRunner(SessionFromOnnx("model.onnx")) as runner:
            outputs = runner.infer({"x": x})

    A runner of your own (Polygraphy's "custom runner") subclasses it and implements
    ``get_input_metadata_impl()`` (a ``TensorMetadata``) and ``infer_impl(feed_dict)`` (a dict of
    numpy arrays), and ``activate_impl()`` / ``deactivate_impl()`` when it needs set-up; it calls
    ``super().__init__(name=name, prefix="my-runner")`` and then joins ``Comparator.run`` like
    parity's own runners, its feeds checked against its metadata first.

    ``infer`` takes a dict of C-contiguous numpy arrays (borrowed, not copied) and returns a dict of
    numpy arrays; it raises on a missing input, a wrong dtype or shape, a feed that is not a numpy
    array, and on a runner that is not active. The GIL is released while the model runs.
    """

    def __init__(self, native=None, name=None, prefix=None):
        if native is None:
            native = _parity.make_python_runner(self, name or "", prefix or "custom")
        self._native = native

    @property
    def name(self):
        return self._native.name

    @property
    def is_active(self):
        return self._native.is_active

    def activate(self):
        """Loads the model and prepares the runtime (expensive: do it once)."""
        self._native.activate()

    def deactivate(self):
        """Releases the runtime."""
        self._native.deactivate()

    def __enter__(self):
        self.activate()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if self._native.is_active:
            self.deactivate()

    def get_input_metadata(self):
        """Input names, dtypes and shapes (``None`` for a dynamic dimension)."""
        return TensorMetadata(self._native.get_input_metadata())

    def get_input_metadata_impl(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement get_input_metadata_impl()")

    def infer_impl(self, feed_dict):
        raise NotImplementedError(f"{type(self).__name__} does not implement infer_impl()")

    def infer(self, feed_dict, check_inputs=True, copy_outputs=True):
        """Runs one inference. ``copy_outputs=False`` returns views of the runner's own buffers, which
        the next ``infer`` may overwrite (Polygraphy's ``copy_outputs_to_host``)."""
        return self._native.infer(feed_dict, check_inputs, copy_outputs)

    def last_inference_time(self):
        """Seconds the last ``infer`` spent in the runtime."""
        return self._native.last_inference_time()


class TensorMetadata(dict):
    """Polygraphy's TensorMetadata: ``{name: (dtype, shape)}`` in input order."""

    class Meta(tuple):
        @property
        def dtype(self):
            return self[0]

        @property
        def shape(self):
            return self[1]

    def __init__(self, entries=()):
        super().__init__()
        for name, dtype, shape in entries:
            self.add(name, dtype, shape)

    def add(self, name, dtype, shape):
        self[name] = TensorMetadata.Meta((dtype, shape))
        return self

    def entries(self):
        return [(name, meta[0], meta[1]) for name, meta in self.items()]

    def __repr__(self):
        return "{" + ", ".join(f"{n} [dtype={m[0]}, shape={m[1]}]" for n, m in self.items()) + "}"

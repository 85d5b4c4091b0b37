"""Polygraphy's ``func`` helpers."""
import functools


def extend(loader):
    """Decorator: a loader whose result ``fn`` sees first (Polygraphy's ``func.extend``).

    The decorated function receives what ``loader()`` returns (unpacked when it is a tuple); when
    it returns nothing, the loader's result is kept (``fn`` may have modified it in place),
    otherwise what it returns replaces it::

        @func.extend(NetworkFromOnnxPath("model.onnx"))
        def load_network(network):
            network.name = "renamed"
    """

    def decorate(fn):
        @functools.wraps(fn)
        def extended():
            result = loader() if callable(loader) else loader
            returned = fn(*result) if isinstance(result, tuple) else fn(result)
            return result if returned is None else returned

        return extended

    return decorate

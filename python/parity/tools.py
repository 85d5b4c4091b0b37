"""parity's command-line tools in this process."""
import os

from parity import _parity


def main(argv):
    """Runs a parity command (``["run", "model.onnx", "--ref", "--ort"]``) and returns its exit code.

    The command prints to this process's stdout and stderr, as ``parity`` would; ``argv`` does not
    include the program name.
    """
    return _parity.cli_main([os.fspath(arg) if hasattr(arg, "__fspath__") else str(arg) for arg in argv])

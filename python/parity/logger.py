"""Polygraphy's ``G_LOGGER``, writing through parity's logger (the CLI's output and levels)."""
import contextlib

from parity import _parity


class Logger:
    """The process-wide logger; severities are Polygraphy's (higher is more severe)."""

    ULTRA_VERBOSE = 5
    SUPER_VERBOSE = 10
    EXTRA_VERBOSE = 20
    VERBOSE = 30
    INFO = 40
    START = 50
    FINISH = 51
    PASS = 52
    WARNING = 60
    ERROR = 70
    CRITICAL = 80

    @property
    def module_severity(self):
        """The current threshold: messages below it are dropped."""
        return _parity.severity()

    @module_severity.setter
    def module_severity(self, severity):
        _parity.set_severity_level(int(severity))

    severity = module_severity

    @contextlib.contextmanager
    def verbosity(self, severity=VERBOSE):
        """Sets the threshold for the duration of a ``with`` block."""
        previous = _parity.severity()
        _parity.set_severity_level(int(severity))
        try:
            yield
        finally:
            _parity.set_severity_level(previous)

    def _log(self, severity, message):
        _parity.log(severity, str(message() if callable(message) else message))

    def ultra_verbose(self, message):
        self._log(self.ULTRA_VERBOSE, message)

    def super_verbose(self, message):
        self._log(self.SUPER_VERBOSE, message)

    def extra_verbose(self, message):
        self._log(self.EXTRA_VERBOSE, message)

    def verbose(self, message):
        self._log(self.VERBOSE, message)

    def info(self, message):
        self._log(self.INFO, message)

    def start(self, message):
        self._log(self.START, message)

    def finish(self, message):
        self._log(self.FINISH, message)

    def warning(self, message):
        self._log(self.WARNING, message)

    def error(self, message):
        self._log(self.ERROR, message)

    def critical(self, message):
        """Logs the message and raises ``parity.ParityError`` with it, as Polygraphy does."""
        self._log(self.CRITICAL, message)
        raise _parity.ParityError(str(message))


G_LOGGER = Logger()

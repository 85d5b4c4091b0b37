"""parity.tools.main: the CLI in-process, and the logger."""
import subprocess
import sys

from parity import tools
from parity.logger import G_LOGGER

from conftest import DEMO_MODEL


def run_python(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_a_command_runs_in_process_and_returns_its_code():
    result = run_python(
        "from parity import tools; import sys; "
        f"sys.exit(tools.main(['run', r'{DEMO_MODEL}', '--ref', '--ort']))")
    assert result.returncode == 0, result.stderr
    assert "PASSED" in result.stdout


def test_bad_arguments_give_one_line_and_code_1():
    result = run_python("from parity import tools; import sys; sys.exit(tools.main(['run', 'absent.onnx', '--ref']))")
    assert result.returncode == 1
    assert "absent.onnx" in result.stdout + result.stderr


def test_logger_verbosity_is_scoped():
    before = G_LOGGER.module_severity
    with G_LOGGER.verbosity(G_LOGGER.VERBOSE):
        assert G_LOGGER.module_severity == G_LOGGER.VERBOSE
    assert G_LOGGER.module_severity == before
    assert tools.main(["--version"]) == 0

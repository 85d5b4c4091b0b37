"""Shared fixtures of the Python suites (run by CTest: python.*; PYTHONPATH names the build's package)."""
import os
import pathlib

import pytest


def _env_path(name):
    value = os.environ.get(name)
    assert value, f"${name} is not set: run these tests through CTest (ctest -R '^python\\.')"
    return pathlib.Path(value)


SOURCE_DIR = _env_path("PARITY_SOURCE_DIR")
PARITY_BINARY = _env_path("PARITY_BINARY")
DEMO_MODEL = SOURCE_DIR / "models" / "demo.onnx"
POLYGRAPHY_FILES = SOURCE_DIR / "tests" / "data" / "polygraphy_files"
MOBILENET = SOURCE_DIR / ".cache" / "bench-models" / "mobilenet_v2.onnx"


@pytest.fixture
def demo_model():
    assert DEMO_MODEL.is_file(), DEMO_MODEL
    return DEMO_MODEL


@pytest.fixture
def mobilenet():
    assert MOBILENET.is_file(), f"{MOBILENET} is missing: run scripts/setup.sh"
    return MOBILENET

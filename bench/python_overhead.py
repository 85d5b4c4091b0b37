"""What `import parity` adds to parity's C++ calls, measured side by side in one process.

1. A tiny model's infer(): RefRunner.infer() from Python (numpy feed in, numpy outputs out) against
   Runner::infer called in a C++ loop on the same runner and feed (parity._parity.time_native_infer);
   the medians' difference is the binding's overhead (the issue asks for at most 20 us).
2. Comparator.run over ITERATIONS iterations of MobileNetV2 with parity's DataLoader against the
   CLI doing the same (`parity run MODEL --ref --iterations N`), wall time of each, best of ROUNDS.

Usage: PYTHONPATH=build/python /usr/bin/python3 bench/python_overhead.py [BUILD_DIR]
Environment: ITERATIONS (100), ROUNDS (3), CALLS (2000).
"""
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

from parity import _parity
from parity.backend.ref import RefRunner
from parity.comparator import Comparator, DataLoader
from parity.logger import G_LOGGER

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILD = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "build")
CALLS = int(os.environ.get("CALLS", 2000))
ITERATIONS = int(os.environ.get("ITERATIONS", 100))
ROUNDS = int(os.environ.get("ROUNDS", 3))


def cpu_model():
    for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def infer_overhead():
    model = ROOT / "examples" / "python" / "identity.onnx"
    feed = {"x": np.ones((1, 1, 2, 2), dtype=np.float32)}
    with RefRunner(str(model)) as runner:
        for _ in range(200):
            runner.infer(feed)
        python_times, native_times = [], []
        for _ in range(5):  # interleaved, so load changes hit both
            for _ in range(CALLS // 5):
                start = time.perf_counter()
                runner.infer(feed)
                python_times.append(time.perf_counter() - start)
            native_times += _parity.time_native_infer(runner._native, feed, CALLS // 5)
    python_us = statistics.median(python_times) * 1e6
    native_us = statistics.median(native_times) * 1e6
    return python_us, native_us


def comparator_against_cli():
    model = ROOT / ".cache" / "bench-models" / "mobilenet_v2.onnx"
    parity = BUILD / "bin" / "parity"
    python_best = cli_best = float("inf")
    for _ in range(ROUNDS):
        start = time.perf_counter()
        with G_LOGGER.verbosity(G_LOGGER.WARNING):
            Comparator.run([RefRunner(str(model))], data_loader=DataLoader(iterations=ITERATIONS))
        python_best = min(python_best, time.perf_counter() - start)
        start = time.perf_counter()
        subprocess.run([str(parity), "run", str(model), "--ref", "--iterations", str(ITERATIONS), "-q"],
                       check=True, stdout=subprocess.DEVNULL)
        cli_best = min(cli_best, time.perf_counter() - start)
    return python_best, cli_best


def main():
    print(f"CPU: {cpu_model()} ({os.cpu_count()} cores visible), load average {os.getloadavg()[0]:.2f}")
    python_us, native_us = infer_overhead()
    print(f"identity.onnx infer, median of {CALLS}: Python {python_us:.2f} us, C++ {native_us:.2f} us, "
          f"overhead {python_us - native_us:.2f} us")
    python_s, cli_s = comparator_against_cli()
    print(f"MobileNetV2 x {ITERATIONS} iterations, best of {ROUNDS}: Comparator.run {python_s:.3f} s, "
          f"parity run (CLI process) {cli_s:.3f} s")


if __name__ == "__main__":
    main()

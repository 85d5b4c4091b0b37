#!/usr/bin/python3
"""Input files for the ported Polygraphy CLI cases (tests/data/polygraphy_port/cases.yaml).

Polygraphy's tests build these with numpy and polygraphy.json.save_json at test time; parity's driver
reads them as data. Run with Debian's python3-numpy: /usr/bin/python3 scripts/make_polygraphy_port_inputs.py
Writes tests/data/polygraphy_port/inputs/*.json (Polygraphy's JSON: each array is base64 of np.save bytes).
"""
import base64
import io
import json
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "polygraphy_port", "inputs")


def encode(array):
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return {"array": base64.b64encode(buffer.getvalue()).decode(), "polygraphy_class": "ndarray"}


def save(feeds, name):
    with open(os.path.join(OUT, name), "w") as f:
        json.dump([{k: encode(v) for k, v in feed.items()} for feed in feeds], f, indent=4)


os.makedirs(OUT, exist_ok=True)
# test_check.py::test_data_dependent_errors_caught: the If condition, true and false.
save([{"cond": np.array((True,))}], "cond_true.json")
save([{"cond": np.array((False,))}], "cond_false.json")
# test_debug.py::test_reduce_custom_data_multibranch_input: X0 float32, Y0 float64 (numpy's default).
save([{"X0": np.array([3.14159265], dtype=np.float32), "Y0": np.array([2.7749389])}], "reducable_custom_inputs.json")

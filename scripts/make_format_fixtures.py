#!/usr/bin/python3
"""Regenerates tests/data/formats/: arrays saved by numpy itself plus the statistics, histograms
and str() text numpy/Polygraphy print for them, so parity's C++ tests can check that they match
without Python. Run with /usr/bin/python3 (needs numpy); the outputs are committed.

ml_dtypes.zip holds what numpy.save writes for ml_dtypes' types (ml_dtypes itself is not packaged
for Debian 12, so its one visible difference from a plain void array, the descr, is applied here):
ml_dtypes registers bfloat16 and every 1-byte type but float8_e5m2 with kind 'V' and native byte
order, so numpy records dtype.str '<V2'/'<V1'; float8_e5m2 has kind 'f' ('<f1'). Each element is
one byte as ml_dtypes holds it: the float8 bit pattern, or a 4-/2-bit value in the low bits with
the upper bits zero (ml_dtypes' intN/float4 store). The Polygraphy inputs files feed the inputs
of ONNX 1.23's Cast test models (read from .cache/onnx-testdata-1.23, unpacked to one element per
byte) the way Polygraphy's JSON encoder stores an ndarray: base64 of numpy.save's bytes."""
import base64
import io
import json
import os
import sys
import zipfile

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "formats")


# ---- what Polygraphy computes (polygraphy/comparator/util.py), written against numpy directly
def cast_up(a):
    if a.dtype == np.float16:
        return a.astype(np.float32)
    if a.dtype in (np.int8, np.uint8, np.int16, np.uint16):
        return a.astype(np.int32)
    if a.dtype == np.uint32:
        return a.astype(np.int64)
    return a


def unravel(index, shape):
    out = []
    index = int(index)
    for dim in reversed(shape):
        out.insert(0, index % dim)
        index //= dim
    return tuple(out)


def stats_text(a):
    empty = a.size == 0
    up = cast_up(a)
    with np.errstate(all="ignore"):
        mean = np.mean(a, dtype=np.float32)
        std = 0 if empty else np.std(up)
        var = 0 if empty else np.var(up)
        med = 0 if empty else np.median(up)
        mn = 0 if empty else np.amin(up).item()
        mx = 0 if empty else np.amax(up).item()
        amin = 0 if empty else unravel(np.argmin(up), up.shape)
        amax = 0 if empty else unravel(np.argmax(up), up.shape)
        mag = np.mean(np.abs(a), dtype=np.float32)
        s = (f"mean={mean:.5g}, std-dev={std:.5g}, var={var:.5g}, median={med:.5g}, min={mn:.5g} at {amin}, "
             f"max={mx:.5g} at {amax}, avg-magnitude={mag:.5g}")
        if a.dtype != bool:
            q = (lambda p: np.inf) if empty else (lambda p: np.quantile(a, p))
            s += f", p90={q(0.9):.5g}, p95={q(0.95):.5g}, p99={q(0.99):.5g}"
    return s


def histogram_text(a):
    if a.dtype == bool:
        return ""
    try:
        hist, edges = np.histogram(a, bins=10)
    except (ValueError, RuntimeError):
        return ""
    top = cast_up(hist).max() if hist.size else 0
    if not top:
        return "None"
    edges = [f"{e:.3g}" for e in edges]
    w1 = max(len(e) for e in edges)
    w2 = max(len(e) for e in edges[1:])
    lines = ["---- Histogram ----", f"{'Bin Range':{w1 + w2 + 5}}|  Num Elems | Visualization"]
    for num, lo, hi in zip(hist, edges, edges[1:]):
        lines.append(f"({lo:<{w1}}, {hi:<{w2}}) | {num:10} | {'#' * int(40 * float(num) / float(top))}")
    return "\n".join(lines)


def cases():
    rng = np.random.RandomState(7)
    c = {}
    c["f32_small"] = rng.random_sample((1, 3, 4, 4)).astype(np.float32)
    c["f32_signed"] = (rng.standard_normal((5, 7)) * 3).astype(np.float32)
    c["f32_big"] = (rng.standard_normal(20011) * np.exp(rng.standard_normal(20011))).astype(np.float32)
    c["f32_const"] = np.full((4,), 0.3, np.float32)
    c["f32_nan"] = np.array([1.0, np.nan, -2.0, 3.5], np.float32)
    c["f32_inf"] = np.array([1.0, np.inf, -2.0], np.float32)
    c["f32_empty"] = np.zeros((2, 0, 3), np.float32)
    c["f32_scalar"] = np.array(2.5, np.float32)
    c["f32_tiny"] = np.array([1e-7, 2e-6, 3.5e-9, 1e3], np.float32)
    c["f64_mixed"] = rng.standard_normal((3, 11)) * 1e4
    c["f16_vals"] = (rng.standard_normal((6, 9)) * 10).astype(np.float16)
    c["f16_big"] = (rng.random_sample(9000) * 100).astype(np.float16)
    c["i8"] = rng.randint(-128, 128, (4, 6)).astype(np.int8)
    c["i8_min"] = np.array([-128, 5, 127, -128], np.int8)
    c["u8"] = rng.randint(0, 256, (3, 5)).astype(np.uint8)
    c["i16"] = rng.randint(-30000, 30000, (17,)).astype(np.int16)
    c["u16"] = rng.randint(0, 65535, (2, 8)).astype(np.uint16)
    c["i32"] = rng.randint(-5, 6, (4,)).astype(np.int32)
    c["u32"] = rng.randint(0, 2**32 - 1, (9,), dtype=np.uint32)
    c["i64"] = rng.randint(-(2**40), 2**40, (3, 3)).astype(np.int64)
    c["i64_const"] = np.array([40], np.int64)
    c["u64"] = rng.randint(0, 2**62, (5,), dtype=np.uint64)
    c["bool_vals"] = rng.random_sample((5, 4)) > 0.4
    c["bool_scalar"] = np.array(True)
    return c


def np_save_bytes(a, **kw):
    f = io.BytesIO()
    np.save(f, a, allow_pickle=False, **kw)
    return f.getvalue()


def main():
    os.makedirs(OUT, exist_ok=True)
    c = cases()
    np.savez_compressed(os.path.join(OUT, "stats_cases.npz"), **c)
    opts = dict(edgeitems=3, linewidth=75)
    with open(os.path.join(OUT, "stats_expected.txt"), "w") as out:
        for name, a in c.items():
            np.set_printoptions(**opts)
            out.write(f"=== {name}\n{stats_text(a)}\n--- histogram\n{histogram_text(a)}\n--- str\n{str(a)}\n")
            # `inspect data -n 1 --line-width 40`, and `-n -1 --line-width -1` for small arrays.
            np.set_printoptions(edgeitems=1, linewidth=40)
            out.write(f"--- str_n1_w40\n{str(a)}\n")
            if a.size <= 100:
                np.set_printoptions(edgeitems=sys.maxsize, linewidth=sys.maxsize)
                out.write(f"--- str_all\n{str(a)}\n")
        np.set_printoptions(edgeitems=3, linewidth=75)

    # .npy files exactly as numpy writes them, one per dtype, plus odd headers for the reader.
    dtypes = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float16", "float32", "float64", "complex64", "complex128"]
    rng = np.random.RandomState(3)
    class FixedDateZip(zipfile.ZipFile):
        # A fixed timestamp keeps the regenerated archive byte-identical.
        def writestr(self, name, data):
            super().writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data)

    with FixedDateZip(os.path.join(OUT, "npy_by_dtype.zip"), "w") as z:
        for dt in dtypes:
            for shape_name, shape in [("scalar", ()), ("vec", (5,)), ("mat", (2, 3)), ("empty", (0, 4)),
                                      ("wide", (1,) * 30), ("long", (1234567890123, 0))]:
                v = rng.standard_normal(shape) * 50 if shape else np.array(rng.standard_normal() * 50)
                if dt.startswith("complex"):
                    v = v + 1j * v[...] / 3
                a = np.asarray(v).astype(dt)
                z.writestr(f"{dt}_{shape_name}.npy", np_save_bytes(a))
        f = np.asfortranarray(np.arange(24, dtype=np.int32).reshape(2, 3, 4))
        z.writestr("fortran_int32_2x3x4.npy", np_save_bytes(f))
        z.writestr("fortran_int32_2x3x4_c.npy", np_save_bytes(np.ascontiguousarray(f)))
        a = np.arange(6, dtype=np.float32).reshape(2, 3)
        b = io.BytesIO()
        np.lib.format.write_array(b, a, version=(2, 0))
        z.writestr("v2_float32_2x3.npy", b.getvalue())
        b = io.BytesIO()
        np.lib.format.write_array(b, a, version=(3, 0))
        z.writestr("v3_float32_2x3.npy", b.getvalue())
        z.writestr("big_endian_f4.npy", np_save_bytes(a.astype(">f4")))
        z.writestr("big_endian_i1.npy", np_save_bytes(np.arange(3, dtype=">i1")))
        z.writestr("unicode.npy", np_save_bytes(np.array(["ab", "c"])))
    np.savez(os.path.join(OUT, "stored.npz"), b=np.arange(4, dtype=np.int16), a=np.ones((2, 2), np.float32))
    np.savez_compressed(os.path.join(OUT, "compressed.npz"), b=np.arange(4, dtype=np.int16),
                        a=np.ones((2, 2), np.float32))


# ml_dtypes name, bits per element, numpy descr as ml_dtypes' dtype.str gives it.
ML_DTYPES = [("float8_e4m3fn", 8, "<V1"), ("float8_e4m3fnuz", 8, "<V1"), ("float8_e5m2", 8, "<f1"),
             ("float8_e5m2fnuz", 8, "<V1"), ("float8_e8m0fnu", 8, "<V1"), ("float4_e2m1fn", 4, "<V1"),
             ("int4", 4, "<V1"), ("uint4", 4, "<V1"), ("int2", 2, "<V1"), ("uint2", 2, "<V1")]


def ml_dtypes_npy(patterns, descr, shape):
    """numpy.save's bytes for an ml_dtypes array holding these element bytes."""
    width = 2 if descr == "<V2" else 1
    raw = np.asarray(patterns, dtype=np.uint16 if width == 2 else np.uint8).reshape(shape)
    data = np_save_bytes(raw.view(f"V{width}"))
    plain = f"'|V{width}'".encode()
    assert data.count(plain) == 1
    return data.replace(plain, f"'{descr}'".encode())


def varint(b, i):
    value, shift = 0, 0
    while True:
        c = b[i]
        i += 1
        value |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return value, i


def proto_fields(b):
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, i = varint(b, i)
        elif wire == 2:
            n, i = varint(b, i)
            value, i = b[i:i + n], i + n
        else:
            n = 8 if wire == 1 else 4
            value, i = b[i:i + n], i + n
        yield field, value


def tensor_proto_elements(path, bits):
    """dims and one byte per element of a TensorProto whose raw_data packs `bits`-bit elements."""
    dims, raw = [], b""
    for field, value in proto_fields(open(path, "rb").read()):
        if field == 1:
            dims.append(value)
        elif field == 9:
            raw = value
    n = int(np.prod(dims))
    per_byte = 8 // bits
    mask = (1 << bits) - 1
    return dims, [(raw[i // per_byte] >> (bits * (i % per_byte))) & mask for i in range(n)]


def polygraphy_inputs_json(name, npy_bytes):
    arr = {"array": base64.b64encode(npy_bytes).decode(), "polygraphy_class": "ndarray"}
    return json.dumps([{name: arr}], indent=4)


def write_ml_dtypes_fixtures():
    testdata = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".cache", "onnx-testdata-1.23", "node")
    cast_tests = {"float8_e4m3fn": "test_cast_FLOAT8E4M3FN_to_FLOAT", "float8_e5m2": "test_cast_FLOAT8E5M2_to_FLOAT",
                  "float8_e4m3fnuz": "test_cast_FLOAT8E4M3FNUZ_to_FLOAT",
                  "float8_e5m2fnuz": "test_cast_FLOAT8E5M2FNUZ_to_FLOAT",
                  "float8_e8m0fnu": "test_cast_e8m0_FLOAT8E8M0_to_FLOAT", "float4_e2m1fn": "test_cast_FLOAT4E2M1_to_FLOAT",
                  "int4": "test_cast_INT4_to_FLOAT", "uint4": "test_cast_UINT4_to_FLOAT",
                  "int2": "test_cast_INT2_to_FLOAT", "uint2": "test_cast_UINT2_to_FLOAT"}

    class FixedDateZip(zipfile.ZipFile):
        def writestr(self, name, data):
            super().writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data)

    with FixedDateZip(os.path.join(OUT, "ml_dtypes.zip"), "w") as z:
        for name, bits, descr in ML_DTYPES:
            # Every bit pattern of the type, as a (count/4, 4) matrix.
            count = 1 << bits
            z.writestr(f"{name}.npy", ml_dtypes_npy(list(range(count)), descr, (count // 4, 4)))
            dims, elements = tensor_proto_elements(
                os.path.join(testdata, cast_tests[name], "test_data_set_0", "input_0.pb"), bits)
            z.writestr(f"{cast_tests[name]}.inputs.json",
                       polygraphy_inputs_json("input", ml_dtypes_npy(elements, descr, tuple(dims))))
        z.writestr("bfloat16.npy", ml_dtypes_npy([0x0000, 0x3F80, 0xC040, 0x7F80, 0x7FC0, 0x0001], "<V2", (2, 3)))


if __name__ == "__main__":
    if sys.argv[1:] == ["--ml-dtypes"]:
        write_ml_dtypes_fixtures()
    else:
        main()
        write_ml_dtypes_fixtures()

#!/usr/bin/python3
"""Writes ONNX-backend-style single-node cases (model.onnx + test_data_set_0/*.pb) whose expected
outputs come from PyTorch (float64), an oracle independent of the ONNX reference data.

Run with the system python (needs python3-onnx, python3-numpy, python3-torch):
    /usr/bin/python3 tests/runtime/ops/data/generate_nn_torch_cases.py
"""
import os
import shutil

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn_torch")
rng = np.random.default_rng(1234)


def rand(*shape):
    return rng.uniform(-1, 1, size=shape).astype(np.float32)


def t64(a):
    return torch.from_numpy(np.asarray(a).astype(np.float64))


def write_case(name, op, inputs, outputs, opset, **attrs):
    """inputs/outputs: lists of (name, array or None for an omitted optional input)."""
    d = os.path.join(OUT, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    in_names = [n if a is not None else "" for n, a in inputs]
    node = helper.make_node(op, in_names, [n for n, _ in outputs], **attrs)
    def vi(n, a):
        return helper.make_tensor_value_info(n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(a.dtype)], a.shape)
    graph = helper.make_graph([node], name, [vi(n, a) for n, a in inputs if a is not None],
                              [vi(n, a) for n, a in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(model, os.path.join(d, "model.onnx"))
    k = 0
    for n, a in inputs:
        if a is None:
            continue
        with open(os.path.join(d, "test_data_set_0", f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
        k += 1
    for k, (n, a) in enumerate(outputs):
        with open(os.path.join(d, "test_data_set_0", f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())


def f32(t):
    return t.detach().numpy().astype(np.float32)


def conv_cases():
    x, w, b = rand(2, 4, 7, 9), rand(6, 2, 3, 2), rand(6)
    y = F.conv2d(t64(x), t64(w), t64(b), stride=(2, 1), padding=(1, 1), dilation=(1, 2), groups=2)
    write_case("conv2d_groups_dilation", "Conv", [("x", x), ("w", w), ("b", b)], [("y", f32(y))], 11,
               group=2, strides=[2, 1], pads=[1, 1, 1, 1], dilations=[1, 2])
    x, w = rand(1, 4, 5, 6, 7), rand(4, 1, 2, 3, 3)
    y = F.conv3d(t64(x), t64(w), None, stride=(1, 2, 1), padding=(0, 1, 2), dilation=(2, 1, 1), groups=4)
    write_case("conv3d_depthwise", "Conv", [("x", x), ("w", w)], [("y", f32(y))], 11,
               group=4, strides=[1, 2, 1], pads=[0, 1, 2, 0, 1, 2], dilations=[2, 1, 1])
    x, w, b = rand(1, 4, 5, 6), rand(4, 3, 3, 3), rand(6)
    y = F.conv_transpose2d(t64(x), t64(w), t64(b), stride=2, padding=1, output_padding=1, groups=2, dilation=(2, 1))
    write_case("convtranspose2d_groups_dilation_outpad", "ConvTranspose", [("x", x), ("w", w), ("b", b)],
               [("y", f32(y))], 11, group=2, strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1],
               dilations=[2, 1])
    x, w = rand(2, 3, 8), rand(3, 2, 4)
    y = F.conv_transpose1d(t64(x), t64(w), None, stride=3, padding=2)
    write_case("convtranspose1d_stride3", "ConvTranspose", [("x", x), ("w", w)], [("y", f32(y))], 11,
               strides=[3], pads=[2, 2])


def pool_cases():
    x = rand(2, 3, 9, 8)
    y, idx = F.max_pool2d(t64(x), 3, stride=2, padding=1, dilation=(1, 2), ceil_mode=True, return_indices=True)
    plane = x.shape[2] * x.shape[3]
    offs = (np.arange(2 * 3).reshape(2, 3, 1, 1) * plane)
    write_case("maxpool2d_ceil_dilation_indices", "MaxPool", [("x", x)],
               [("y", f32(y)), ("i", (idx.numpy() + offs).astype(np.int64))], 12,
               kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], dilations=[1, 2], ceil_mode=1)
    y = F.avg_pool2d(t64(x), (3, 2), stride=(2, 3), padding=(1, 1), ceil_mode=True, count_include_pad=True)
    write_case("avgpool2d_ceil_include_pad", "AveragePool", [("x", x)], [("y", f32(y))], 11,
               kernel_shape=[3, 2], strides=[2, 3], pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=1)
    y = F.avg_pool2d(t64(x), 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)
    write_case("avgpool2d_ceil_exclude_pad", "AveragePool", [("x", x)], [("y", f32(y))], 11,
               kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)
    y = F.lp_pool2d(t64(np.abs(x)), 3, 2, stride=2)
    write_case("lppool2d_p3", "LpPool", [("x", np.abs(x))], [("y", f32(y))], 11,
               kernel_shape=[2, 2], strides=[2, 2], p=3)
    x3 = rand(1, 2, 5, 6, 7)
    y = F.max_pool3d(t64(x3), (2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0))
    write_case("maxpool3d_pads", "MaxPool", [("x", x3)], [("y", f32(y))], 12,
               kernel_shape=[2, 3, 2], strides=[1, 2, 2], pads=[1, 1, 0, 1, 1, 0])


def norm_cases():
    x = rand(3, 4, 5, 6)
    s, b = rand(5, 6), rand(5, 6)
    y = F.layer_norm(t64(x), (5, 6), t64(s), t64(b), eps=1e-3)
    write_case("layernorm_axis2", "LayerNormalization", [("x", x), ("s", s), ("b", b)], [("y", f32(y))], 17,
               axis=2, epsilon=1e-3)
    s, b = rand(4), rand(4)
    y = F.instance_norm(t64(x), weight=t64(s), bias=t64(b), eps=1e-4)
    write_case("instancenorm", "InstanceNormalization", [("x", x), ("s", s), ("b", b)], [("y", f32(y))], 6,
               epsilon=1e-4)
    mean, var = rand(4), np.abs(rand(4)) + 0.1
    rm, rv = t64(mean).clone(), t64(var).clone()
    y = F.batch_norm(t64(x), rm, rv, t64(s), t64(b), training=True, momentum=0.1, eps=1e-5)
    # ONNX keeps momentum * running + (1 - momentum) * batch with the biased batch variance;
    # PyTorch updates with the unbiased one, so compute the running stats in numpy.
    xd = x.astype(np.float64)
    bm, bv = xd.mean(axis=(0, 2, 3)), xd.var(axis=(0, 2, 3))
    write_case("batchnorm_training", "BatchNormalization",
               [("x", x), ("s", s), ("b", b), ("m", mean), ("v", var)],
               [("y", f32(y)), ("rm", (mean * 0.9 + bm * 0.1).astype(np.float32)),
                ("rv", (var * 0.9 + bv * 0.1).astype(np.float32))], 15, training_mode=1, momentum=0.9)
    y = F.local_response_norm(t64(x), 3, alpha=2e-2, beta=0.6, k=1.5)
    write_case("lrn_size3", "LRN", [("x", x)], [("y", f32(y))], 13, size=3, alpha=2e-2, beta=0.6, bias=1.5)


def resize_cases():
    x = rand(1, 2, 5, 7)
    sizes = np.array([1, 2, 8, 4], dtype=np.int64)
    y = F.interpolate(t64(x), size=(8, 4), mode="bilinear", align_corners=False)
    write_case("resize_linear_half_pixel_mixed", "Resize", [("x", x), ("roi", None), ("scales", None), ("sizes", sizes)],
               [("y", f32(y))], 13, mode="linear")
    y = F.interpolate(t64(x), size=(8, 4), mode="bilinear", align_corners=True)
    write_case("resize_linear_align_corners", "Resize", [("x", x), ("roi", None), ("scales", None), ("sizes", sizes)],
               [("y", f32(y))], 13, mode="linear", coordinate_transformation_mode="align_corners")
    y = F.interpolate(t64(x), size=(8, 4), mode="bicubic", align_corners=False)
    write_case("resize_cubic_half_pixel", "Resize", [("x", x), ("roi", None), ("scales", None), ("sizes", sizes)],
               [("y", f32(y))], 13, mode="cubic")
    y = F.interpolate(t64(x), size=(8, 4), mode="nearest")
    write_case("resize_nearest_asymmetric_floor", "Resize", [("x", x), ("roi", None), ("scales", None),
               ("sizes", sizes)], [("y", f32(y))], 13, mode="nearest",
               coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    scales = np.array([1, 1, 2, 2], dtype=np.float32)
    y = F.interpolate(t64(x), scale_factor=2, mode="nearest")
    write_case("resize_opset11_nearest_scales", "Resize", [("x", x), ("roi", np.zeros(0, np.float32)),
               ("scales", scales)], [("y", f32(y))], 11, mode="nearest",
               coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    small = x[:, :1, :3, :3].copy()
    write_case("resize_opset10_linear", "Resize", [("x", small), ("scales", scales)],
               [("y", f32(asymmetric_linear(small, 2)))], 10, mode="linear")


def asymmetric_linear(x, s):
    """Opset-10 linear: asymmetric coordinates x/s with edge clamping (numpy, float64)."""
    n, c, h, w = x.shape
    oh, ow = h * s, w * s
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            yi, xj = i / s, j / s
            y0, x0 = int(np.floor(yi)), int(np.floor(xj))
            y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
            ly, lx = yi - y0, xj - x0
            out[:, :, i, j] = (x[:, :, y0, x0] * (1 - ly) * (1 - lx) + x[:, :, y0, x1] * (1 - ly) * lx +
                               x[:, :, y1, x0] * ly * (1 - lx) + x[:, :, y1, x1] * ly * lx)
    return torch.from_numpy(out)


def grid_sample_cases():
    x = rand(2, 3, 5, 6)
    grid = rand(2, 4, 7, 2) * 1.4  # some points fall outside [-1, 1]
    for mode in ["bilinear", "nearest", "bicubic"]:
        for pad in ["zeros", "border", "reflection"]:
            for align in [0, 1]:
                y = F.grid_sample(t64(x), t64(grid), mode=mode, padding_mode=pad, align_corners=bool(align))
                write_case(f"gridsample_{mode}_{pad}_{align}", "GridSample", [("x", x), ("grid", grid)],
                           [("y", f32(y))], 16, mode=mode, padding_mode=pad, align_corners=align)


def onnx_lstm_weights(mod, hidden, bidirectional):
    """torch gate order i,f,g,o -> ONNX i,o,f,c; returns W, R, B stacked per direction."""
    perm = np.concatenate([np.arange(0, hidden), np.arange(3 * hidden, 4 * hidden),
                           np.arange(hidden, 2 * hidden), np.arange(2 * hidden, 3 * hidden)])
    return stack_weights(mod, bidirectional, perm)


def onnx_gru_weights(mod, hidden, bidirectional):
    """torch gate order r,z,n -> ONNX z,r,h."""
    perm = np.concatenate([np.arange(hidden, 2 * hidden), np.arange(0, hidden), np.arange(2 * hidden, 3 * hidden)])
    return stack_weights(mod, bidirectional, perm)


def stack_weights(mod, bidirectional, perm):
    ws, rs, bs = [], [], []
    for suffix in ["", "_reverse"] if bidirectional else [""]:
        w = getattr(mod, "weight_ih_l0" + suffix).detach().numpy()[perm]
        r = getattr(mod, "weight_hh_l0" + suffix).detach().numpy()[perm]
        b = np.concatenate([getattr(mod, "bias_ih_l0" + suffix).detach().numpy()[perm],
                            getattr(mod, "bias_hh_l0" + suffix).detach().numpy()[perm]])
        ws.append(w), rs.append(r), bs.append(b)
    return (np.stack(ws).astype(np.float32), np.stack(rs).astype(np.float32), np.stack(bs).astype(np.float32))


def recurrent_cases():
    torch.manual_seed(0)
    seq, batch, inp, hidden = 5, 3, 4, 6
    x = rand(seq, batch, inp)
    for kind in ["LSTM", "GRU", "RNN"]:
        mod = getattr(torch.nn, kind)(inp, hidden, bidirectional=True).double()
        h0 = rand(2, batch, hidden)
        c0 = rand(2, batch, hidden)
        if kind == "LSTM":
            y, (yh, yc) = mod(t64(x), (t64(h0), t64(c0)))
            w, r, b = onnx_lstm_weights(mod, hidden, True)
            inputs = [("x", x), ("w", w), ("r", r), ("b", b), ("lens", None), ("h0", h0), ("c0", c0)]
            outputs = [("y", None), ("yh", f32(yh)), ("yc", f32(yc))]
            attrs = {}
        elif kind == "GRU":
            y, yh = mod(t64(x), t64(h0))
            w, r, b = onnx_gru_weights(mod, hidden, True)
            inputs = [("x", x), ("w", w), ("r", r), ("b", b), ("lens", None), ("h0", h0)]
            outputs = [("y", None), ("yh", f32(yh))]
            attrs = {"linear_before_reset": 1}
        else:
            y, yh = mod(t64(x), t64(h0))
            w, r, b = stack_weights(mod, True, np.arange(hidden))
            inputs = [("x", x), ("w", w), ("r", r), ("b", b), ("lens", None), ("h0", h0)]
            outputs = [("y", None), ("yh", f32(yh))]
            attrs = {}
        # torch Y is [seq, batch, 2 * hidden]; ONNX is [seq, 2, batch, hidden].
        y_onnx = f32(y).reshape(seq, batch, 2, hidden).transpose(0, 2, 1, 3).copy()
        outputs[0] = ("y", y_onnx)
        write_case(f"{kind.lower()}_bidirectional_torch", kind, inputs, outputs, 14, hidden_size=hidden,
                   direction="bidirectional", **attrs)


def misc_cases():
    x = rand(2, 8, 3, 4)
    y = F.pixel_shuffle(t64(x), 2)
    write_case("depthtospace_crd_pixel_shuffle", "DepthToSpace", [("x", x)], [("y", f32(y))], 13,
               blocksize=2, mode="CRD")
    sig = rand(2, 50, 1)
    win = np.hanning(12).astype(np.float32)
    spec = torch.stft(t64(sig[:, :, 0]), n_fft=12, hop_length=5, win_length=12, window=t64(win), center=False,
                      onesided=True, return_complex=True)  # [batch, bins, frames]
    out = torch.view_as_real(spec).permute(0, 2, 1, 3)
    write_case("stft_hanning_onesided", "STFT", [("signal", sig), ("step", np.array(5, dtype=np.int64)),
               ("window", win)], [("y", f32(out))], 17)
    x = rand(3, 10, 2)
    ref = np.fft.fft(x[..., 0].astype(np.float64) + 1j * x[..., 1], n=16, axis=1)[:, :16]
    write_case("dft_complex_padded", "DFT", [("x", x), ("n", np.array(16, dtype=np.int64))],
               [("y", np.stack([ref.real, ref.imag], axis=-1).astype(np.float32))], 17, axis=1)


if __name__ == "__main__":
    shutil.rmtree(OUT, ignore_errors=True)
    conv_cases()
    pool_cases()
    norm_cases()
    resize_cases()
    grid_sample_cases()
    recurrent_cases()
    misc_cases()
    print("wrote", len(os.listdir(OUT)), "cases to", OUT)

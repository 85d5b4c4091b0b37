"""Model Navigator's ``nav.torch.export``: a live PyTorch module through parity's navigator."""
import pathlib
import shutil
import tempfile

from parity import _parity, tools


def _to_numpy(sample):
    import torch as _torch

    if isinstance(sample, _torch.Tensor):
        return sample.detach().cpu().contiguous().numpy()
    return sample


def _as_tuple(sample):
    return tuple(sample) if isinstance(sample, (tuple, list)) else (sample,)


def export(model, dataloader, model_name=None, workspace=None, override_workspace=False, sample_count=10, opset=None,
           input_names=None, output_names=None, dynamic_axes=None, target_formats=None, runtimes=None, batch_dim=0,
           atol=None, rtol=None, profiling=True, verbose=False, debug=False):
    """Exports ``model`` and runs parity's optimize pipeline on it; returns a ``PackageDescriptor``.

    The module is exported with PyTorch's own ``torch.onnx.export`` (``opset``, ``input_names``,
    ``output_names``, ``dynamic_axes``) from the first sample of ``dataloader`` (an iterable of
    tensors or tuples of tensors); up to ``sample_count`` samples become the workspace's samples
    and the source's reference outputs. The module is also traced (``torch.jit.trace``) on that
    sample: the ``torchscript`` format, fed and read in the ONNX export's input and output order and
    tested on LibTorch (``RuntimeProvider.TORCHSCRIPT``). The pipeline then makes ``target_formats``
    (default: every format) and tests each on ``runtimes`` (default: every available runner),
    recording everything in ``workspace`` (default ``<model_name>.nav.workspace`` in a temporary folder).
    The traced copy is also kept in the workspace's ``export/`` folder.
    """
    import torch as _torch

    model_name = model_name or type(model).__name__
    samples = []
    for sample in dataloader:
        samples.append(_as_tuple(sample))
        if len(samples) >= max(1, int(sample_count)):
            break
    if not samples:
        raise ValueError("the dataloader gave no samples")
    first = samples[0]
    names = list(input_names) if input_names else [f"input__{i}" for i in range(len(first))]
    if len(names) != len(first):
        raise ValueError(f"{len(names)} input_names for samples of {len(first)} tensors")

    root = pathlib.Path(workspace) if workspace is not None else pathlib.Path(tempfile.mkdtemp(prefix="parity-nav-")) / \
        f"{model_name}.nav.workspace"
    export_dir = pathlib.Path(tempfile.mkdtemp(prefix=f"parity-export-{model_name}-"))
    onnx_path = export_dir / f"{model_name}.onnx"
    with _torch.no_grad():
        model_args = first if len(first) > 1 else first[0]
        _torch.onnx.export(model, model_args, str(onnx_path), opset_version=opset or 13, input_names=names,
                           output_names=list(output_names) if output_names else None,
                           dynamic_axes=dict(dynamic_axes) if dynamic_axes else None)
        traced = _torch.jit.trace(model, first)
        traced.save(str(export_dir / f"{model_name}.pt"))

    feeds = [{name: _to_numpy(t) for name, t in zip(names, sample)} for sample in samples]
    samples_path = export_dir / "samples.json"
    _parity.save_inputs(feeds, str(samples_path))

    traced_path = export_dir / f"{model_name}.pt"
    argv = ["optimize", str(onnx_path), "--workspace", str(root), "--samples", str(samples_path),
            "--sample-count", str(len(feeds)), "--torchscript", str(traced_path)]
    if override_workspace:
        argv.append("--override-workspace")
    if batch_dim is None:
        argv += ["--batch-dim", "none"]
    else:
        argv += ["--batch-dim", str(batch_dim)]
    if target_formats:
        argv += ["--target-formats", *[getattr(f, "value", f) for f in target_formats]]
    if runtimes:
        argv += ["--runners", *dict.fromkeys(getattr(r, "value", r) for r in runtimes)]
    if atol is not None:
        argv += ["--atol", str(atol)]
    if rtol is not None:
        argv += ["--rtol", str(rtol)]
    if not profiling:
        argv.append("--no-profiling")
    if verbose or debug:
        argv.append("--verbose")
    code = tools.main(argv)
    if code != 0:
        raise _parity.ParityError(f"parity optimize failed (exit code {code}) for {model_name}: see its output above")
    (root / "export").mkdir(exist_ok=True)
    shutil.copy2(traced_path, root / "export" / f"{model_name}.pt")

    from parity.navigator import PackageDescriptor

    return PackageDescriptor(root)

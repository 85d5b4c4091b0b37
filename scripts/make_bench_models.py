#!/usr/bin/python3
"""Exports the torchvision benchmark models to ONNX: ResNet-50, MobileNetV2 and a ViT-Tiny-sized
VisionTransformer, all with random weights (fixed seed), static batch 1, 1x3x224x224 input.

They go to .cache/bench-models/ (git-ignored: ResNet-50 alone is ~100 MB). A model already there
is kept, so a second run takes well under a second. Latency does not depend on the weights' values,
so random weights measure the same work as trained ones.

Needs Debian's python3-torch, python3-torchvision and python3-onnx: run with /usr/bin/python3.
Usage: scripts/make_bench_models.py [OUT_DIR [MODEL...]]  (MODEL: resnet50, mobilenet_v2, vit_tiny; all by default)
"""
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OPSET = 17
SEED = 0


def vit_tiny():
    from torchvision.models import VisionTransformer

    import torch

    # ViT-Ti/16 (DeiT-Tiny's shape): 12 layers, 3 heads, width 192, MLP 768, 224x224 images.
    model = VisionTransformer(image_size=224, patch_size=16, num_layers=12, num_heads=3, hidden_dim=192,
                              mlp_dim=768, num_classes=1000)
    # torchvision zero-initializes the classifier, which would make every logit 0 and any
    # --ref --ort comparison on this model pass whatever the kernels compute.
    torch.nn.init.normal_(model.heads.head.weight, std=0.02)
    torch.nn.init.normal_(model.heads.head.bias, std=0.02)
    return model


def resnet50():
    from torchvision.models import resnet50 as make

    return make(weights=None)


def mobilenet_v2():
    from torchvision.models import mobilenet_v2 as make

    return make(weights=None)


MODELS = {"resnet50": resnet50, "mobilenet_v2": mobilenet_v2, "vit_tiny": vit_tiny}


def inline_identity_initializers(model):
    """torch.onnx shares equal weights through Identity nodes on an initializer; OpenCV DNN 4.6 cannot
    import those, so each becomes an initializer of its own under the Identity's output name."""
    graph = model.graph
    initializers = {t.name: t for t in graph.initializer}
    for node in [n for n in graph.node if n.op_type == "Identity" and n.input[0] in initializers]:
        copy = graph.initializer.add()
        copy.CopyFrom(initializers[node.input[0]])
        copy.name = node.output[0]
        graph.node.remove(node)


def export(name, make, out_dir):
    path = os.path.join(out_dir, name + ".onnx")
    if os.path.exists(path):
        return path, False
    import warnings

    import torch  # only when exporting: importing torch alone takes seconds

    # ViT's shape asserts trace as constants (static batch 1 is intended): not worth a warning.
    warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)

    torch.manual_seed(SEED)
    model = make().eval()
    image = torch.rand(1, 3, 224, 224)
    tmp = path + ".tmp"
    with torch.no_grad():
        torch.onnx.export(model, image, tmp, input_names=["input"], output_names=["logits"], opset_version=OPSET,
                          do_constant_folding=True)
    import onnx

    model = onnx.load(tmp)
    inline_identity_initializers(model)
    onnx.checker.check_model(model)
    onnx.save(model, tmp)
    os.replace(tmp, path)  # only a complete, checked model gets the final name
    return path, True


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".cache", "bench-models")
    names = sys.argv[2:] or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        sys.exit("make_bench_models.py: unknown model " + ", ".join(unknown) + " (known: " + ", ".join(MODELS) + ")")
    os.makedirs(out_dir, exist_ok=True)
    for name in names:
        make = MODELS[name]
        path, made = export(name, make, out_dir)
        print(("wrote " if made else "kept  ") + os.path.relpath(path))


if __name__ == "__main__":
    main()

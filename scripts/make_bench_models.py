#!/usr/bin/python3
"""Exports the benchmark models to ONNX: torchvision and torch.nn architectures across families
(classic CNN, Inception, RegNet, depthwise/squeeze-excitation, ConvNeXt, dense concat, channel
shuffle, segmentation with Resize, detection with RoiAlign/NMS, 3-D conv, recurrent GRU/LSTM,
encoder transformers, a windowed-attention vision transformer (Swin), a BERT-style encoder, a
seq2seq encoder-decoder, a decoder with KV-cache inputs), all with random weights (fixed seed), static batch 1,
opset 17.

They go to .cache/bench-models/ (git-ignored: ResNet-50 alone is ~100 MB). A model already there
is kept, so a second run takes well under a second. Latency does not depend on the weights' values,
so random weights measure the same work as trained ones.

Needs Debian's python3-torch, python3-torchvision and python3-onnx: run with /usr/bin/python3.
Usage: scripts/make_bench_models.py [OUT_DIR] [NAME...]   (no NAME: every model; --list: the names)
The load-time models (LOAD_MODELS: vgg11_bn, 531 MB) are exported only when named.
"""
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OPSET = 17
SEED = 0


class Spec:
    """A model to export: its factory and example inputs as (name, shape, dtype, high) tuples
    (`high`: integer inputs are drawn from [0, high))."""

    def __init__(self, make, inputs=(("input", (1, 3, 224, 224), "float", None),), outputs=("logits",)):
        self.make = make
        self.inputs = inputs
        self.outputs = outputs


def torchvision_model(name, **kwargs):
    def make():
        import torchvision.models

        return getattr(torchvision.models, name)(weights=None, **kwargs)

    return make


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


def googlenet():
    """GoogLeNet (Inception v1) as it runs for inference: no auxiliary classifiers."""
    import torchvision.models

    return torchvision.models.googlenet(weights=None, aux_logits=False, init_weights=True)


def lraspp_mobilenet_v3():
    """Semantic segmentation: MobileNetV3-Large backbone, LR-ASPP head, bilinear Resize back up."""
    from torchvision.models.segmentation import lraspp_mobilenet_v3_large

    import torch

    class Logits(torch.nn.Module):  # the dict output traces as its one tensor
        def __init__(self):
            super().__init__()
            self.net = lraspp_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=21)

        def forward(self, x):
            return self.net(x)["out"]

    return Logits()


def roi_detector():
    """Two-stage detection head in miniature: a ResNet-18 trunk, RoiAlign over fixed boxes, a box
    classifier, and NonMaxSuppression over the boxes' scores."""
    import torch
    import torchvision

    class RoiDetector(torch.nn.Module):
        def __init__(self):
            super().__init__()
            trunk = torchvision.models.resnet18(weights=None)
            self.trunk = torch.nn.Sequential(*list(trunk.children())[:-3])  # stride 16, 256 channels
            self.head = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(256 * 7 * 7, 256), torch.nn.ReLU(),
                                            torch.nn.Linear(256, 1))
            g = torch.Generator().manual_seed(SEED)
            xy = torch.rand(64, 2, generator=g) * 160
            wh = torch.rand(64, 2, generator=g) * 96 + 16
            self.register_buffer("boxes", torch.cat([torch.zeros(64, 1), xy, (xy + wh).clamp(max=224)], dim=1))

        def forward(self, x):
            features = self.trunk(x)
            rois = torchvision.ops.roi_align(features, self.boxes, output_size=7, spatial_scale=1 / 16,
                                             sampling_ratio=2, aligned=True)
            scores = self.head(rois).sigmoid().flatten()
            keep = torchvision.ops.nms(self.boxes[:, 1:], scores, 0.5)
            return scores, keep

    return RoiDetector()


def r3d_18():
    from torchvision.models.video import r3d_18 as make

    return make(weights=None)


def gru_tagger():
    """Sequence tagger: token embedding, a 2-layer bidirectional GRU, a per-token classifier."""
    import torch

    class GruTagger(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(5000, 128)
            self.rnn = torch.nn.GRU(128, 256, num_layers=2, bidirectional=True, batch_first=True)
            self.classify = torch.nn.Linear(512, 20)

        def forward(self, tokens):
            out, _ = self.rnn(self.embed(tokens))
            return self.classify(out)

    return GruTagger()


def lstm_lm():
    """Language model: token embedding, a 2-layer LSTM, a vocabulary projection."""
    import torch

    class LstmLm(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(5000, 256)
            self.rnn = torch.nn.LSTM(256, 512, num_layers=2, batch_first=True)
            self.project = torch.nn.Linear(512, 5000)

        def forward(self, tokens):
            out, _ = self.rnn(self.embed(tokens))
            return self.project(out)

    return LstmLm()


def bert_mini():
    """BERT-style encoder (BERT-mini's shape: 4 layers, width 256, 4 heads, MLP 1024, GELU, post-norm),
    token + position embeddings, an additive attention mask from the 0/1 mask input."""
    import torch

    class BertMini(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens = torch.nn.Embedding(30522, 256)
            self.positions = torch.nn.Embedding(512, 256)
            self.norm = torch.nn.LayerNorm(256)
            layer = torch.nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, activation="gelu", batch_first=True)
            self.encoder = torch.nn.TransformerEncoder(layer, 4, enable_nested_tensor=False)
            self.pool = torch.nn.Linear(256, 256)

        def forward(self, input_ids, attention_mask):
            positions = torch.arange(input_ids.shape[1]).unsqueeze(0)
            h = self.norm(self.tokens(input_ids) + self.positions(positions))
            # Additive float mask, [B*heads, S, S], as BERT exports build it.
            bias = (1.0 - attention_mask.float())[:, None, :] * -10000.0
            bias = bias.expand(-1, input_ids.shape[1], -1).repeat_interleave(4, dim=0)
            h = self.encoder(h, mask=bias)
            return torch.tanh(self.pool(h[:, 0]))

    return BertMini()


def transformer_encoder():
    """Plain torch.nn.TransformerEncoder over a feature sequence (6 layers, width 512, 8 heads, ReLU)."""
    import torch

    layer = torch.nn.TransformerEncoderLayer(512, 8, 2048, dropout=0.0, batch_first=True)
    return torch.nn.TransformerEncoder(layer, 6, enable_nested_tensor=False)


SEQ2SEQ_VOCAB, SEQ2SEQ_SOURCE, SEQ2SEQ_TARGET = 4000, 32, 16


def seq2seq_transformer():
    """Translation-style encoder-decoder (torch.nn.Transformer: 3 + 3 layers, width 256, 4 heads, MLP
    1024): source and target token embeddings, a causal mask over the target, a vocabulary
    projection of every target position."""
    import torch

    class Seq2Seq(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.source = torch.nn.Embedding(SEQ2SEQ_VOCAB, 256)
            self.target = torch.nn.Embedding(SEQ2SEQ_VOCAB, 256)
            self.transformer = torch.nn.Transformer(256, 4, 3, 3, 1024, dropout=0.0, batch_first=True)
            self.project = torch.nn.Linear(256, SEQ2SEQ_VOCAB)
            causal = torch.nn.Transformer.generate_square_subsequent_mask(SEQ2SEQ_TARGET)
            self.register_buffer("causal", causal)

        def forward(self, source_ids, target_ids):
            out = self.transformer(self.source(source_ids), self.target(target_ids), tgt_mask=self.causal)
            return self.project(out)

    return Seq2Seq()


DECODER_LAYERS, DECODER_HEADS, DECODER_WIDTH, DECODER_PAST = 4, 8, 512, 127


def kv_decoder():
    """GPT-style decoder step with a KV cache: one new token attends to DECODER_PAST cached
    positions per layer; outputs the logits and every layer's updated key and value cache."""
    import math

    import torch

    heads, width = DECODER_HEADS, DECODER_WIDTH
    head_dim = width // heads

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = torch.nn.LayerNorm(width)
            self.qkv = torch.nn.Linear(width, 3 * width)
            self.proj = torch.nn.Linear(width, width)
            self.ln2 = torch.nn.LayerNorm(width)
            self.mlp = torch.nn.Sequential(torch.nn.Linear(width, 4 * width), torch.nn.GELU(approximate="tanh"),
                                           torch.nn.Linear(4 * width, width))

        def forward(self, x, past_k, past_v):
            b, s, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(width, dim=2)
            q, k, v = (t.view(b, s, heads, head_dim).transpose(1, 2) for t in (q, k, v))
            k = torch.cat([past_k, k], dim=2)
            v = torch.cat([past_v, v], dim=2)
            attn = torch.softmax(q @ k.transpose(2, 3) / math.sqrt(head_dim), dim=-1)
            y = (attn @ v).transpose(1, 2).reshape(b, s, width)
            x = x + self.proj(y)
            return x + self.mlp(self.ln2(x)), k, v

    class Decoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens = torch.nn.Embedding(8000, width)
            self.positions = torch.nn.Embedding(1024, width)
            self.blocks = torch.nn.ModuleList(Block() for _ in range(DECODER_LAYERS))
            self.ln = torch.nn.LayerNorm(width)
            self.head = torch.nn.Linear(width, 8000, bias=False)

        def forward(self, input_ids, *past):
            start = past[0].shape[2]
            positions = torch.arange(start, start + input_ids.shape[1]).unsqueeze(0)
            x = self.tokens(input_ids) + self.positions(positions)
            present = []
            for i, block in enumerate(self.blocks):
                x, k, v = block(x, past[2 * i], past[2 * i + 1])
                present += [k, v]
            return (self.head(self.ln(x)), *present)

    return Decoder()


def kv_decoder_spec():
    cache = (1, DECODER_HEADS, DECODER_PAST, DECODER_WIDTH // DECODER_HEADS)
    inputs = [("input_ids", (1, 1), "int64", 8000)]
    outputs = ["logits"]
    for i in range(DECODER_LAYERS):
        inputs += [(f"past_key_{i}", cache, "float", None), (f"past_value_{i}", cache, "float", None)]
        outputs += [f"present_key_{i}", f"present_value_{i}"]
    return Spec(kv_decoder, tuple(inputs), tuple(outputs))


TOKENS_64 = (("tokens", (1, 64), "int64", 5000),)
MODELS = {
    # Classic CNNs.
    "resnet50": Spec(torchvision_model("resnet50")),
    "resnet18": Spec(torchvision_model("resnet18")),
    "squeezenet1_1": Spec(torchvision_model("squeezenet1_1")),
    # Inception branches (concat of 1x1 / 3x3 / 5x5 / pool), grouped-conv RegNet with SE.
    "googlenet": Spec(googlenet),
    "regnet_y_400mf": Spec(torchvision_model("regnet_y_400mf")),
    # Depthwise separable, squeeze-excitation, SiLU / HardSwish / HardSigmoid.
    "mobilenet_v2": Spec(torchvision_model("mobilenet_v2")),
    "mobilenet_v3_large": Spec(torchvision_model("mobilenet_v3_large")),
    "efficientnet_b0": Spec(torchvision_model("efficientnet_b0")),
    # 7x7 depthwise + LayerNorm + GELU MLP blocks.
    "convnext_tiny": Spec(torchvision_model("convnext_tiny")),
    # Dense concat, channel shuffle.
    "densenet121": Spec(torchvision_model("densenet121")),
    "shufflenet_v2_x1_0": Spec(torchvision_model("shufflenet_v2_x1_0")),
    # Segmentation (Resize), detection (RoiAlign, NonMaxSuppression), video (3-D conv).
    "lraspp_mobilenet_v3": Spec(lraspp_mobilenet_v3, outputs=("out",)),
    "roi_detector": Spec(roi_detector, outputs=("scores", "keep")),
    "r3d_18": Spec(r3d_18, inputs=(("input", (1, 3, 4, 56, 56), "float", None),)),
    # Recurrent.
    "gru_tagger": Spec(gru_tagger, inputs=TOKENS_64),
    "lstm_lm": Spec(lstm_lm, inputs=TOKENS_64),
    # Transformers: ViT, Swin (shifted windows), a plain encoder, BERT-style, a seq2seq
    # encoder-decoder, a decoder step with a KV cache.
    "vit_tiny": Spec(vit_tiny),
    "swin_t": Spec(torchvision_model("swin_t")),
    "transformer_encoder": Spec(transformer_encoder, inputs=(("features", (1, 128, 512), "float", None),),
                                outputs=("encoded",)),
    "bert_mini": Spec(bert_mini, inputs=(("input_ids", (1, 128), "int64", 30522),
                                         ("attention_mask", (1, 128), "int64", 2)), outputs=("pooled",)),
    "seq2seq_transformer": Spec(seq2seq_transformer,
                                inputs=(("source_ids", (1, SEQ2SEQ_SOURCE), "int64", SEQ2SEQ_VOCAB),
                                        ("target_ids", (1, SEQ2SEQ_TARGET), "int64", SEQ2SEQ_VOCAB))),
    "kv_decoder": kv_decoder_spec(),
}
# Exported only when named (not by `make bench`, not by --list): the load-time benchmark
# (bench/load_time.sh) times loading and the first result of a model whose weights dominate.
LOAD_MODELS = {
    "vgg11_bn": Spec(torchvision_model("vgg11_bn")),  # 531 MB of weights, 507 MB of them in 3 Gemms
}


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


def example_inputs(spec):
    import torch

    tensors = []
    for _, shape, dtype, high in spec.inputs:
        if dtype == "int64":
            tensors.append(torch.randint(0, high, shape, dtype=torch.int64))
        else:
            tensors.append(torch.rand(*shape))
    return tuple(tensors)


def export(name, spec, out_dir):
    path = os.path.join(out_dir, name + ".onnx")
    if os.path.exists(path):
        return path, False
    import warnings

    import torch  # only when exporting: importing torch alone takes seconds

    # Shape asserts and Python ints trace as constants (static batch 1 is intended).
    warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
    warnings.filterwarnings("ignore", category=UserWarning)

    torch.manual_seed(SEED)
    model = spec.make().eval()
    inputs = example_inputs(spec)
    tmp = path + ".tmp"
    # With gradients enabled: torch.nn's transformer layers then skip their fused inference path
    # (aten::_transformer_encoder_layer_fwd), which has no ONNX export.
    with torch.enable_grad():
        torch.onnx.export(model, inputs, tmp, input_names=[i[0] for i in spec.inputs], output_names=list(spec.outputs),
                          opset_version=OPSET, do_constant_folding=True)
    import onnx

    model = onnx.load(tmp)
    inline_identity_initializers(model)
    onnx.checker.check_model(model)
    onnx.save(model, tmp)
    os.replace(tmp, path)  # only a complete, checked model gets the final name
    return path, True


def main():
    args = sys.argv[1:]
    if args == ["--list"]:
        print("\n".join(MODELS))
        return
    out_dir = args[0] if args else os.path.join(ROOT, ".cache", "bench-models")
    names = args[1:] or list(MODELS)
    known = {**MODELS, **LOAD_MODELS}
    unknown = [n for n in names if n not in known]
    if unknown:
        sys.exit(f"make_bench_models.py: unknown model {', '.join(unknown)} (known: {', '.join(known)})")
    os.makedirs(out_dir, exist_ok=True)
    for name in names:
        path, made = export(name, known[name], out_dir)
        print(("wrote " if made else "kept  ") + os.path.relpath(path), flush=True)


if __name__ == "__main__":
    main()

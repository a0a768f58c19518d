"""Why one ONNX Runtime path is faster than another: the embedding model encoded with PyTorch and
with ONNX variants that differ in one thing at a time (the export, graph optimization, threads,
execution mode, tokenizer call, padding, batch size, IO binding, pooling in numpy or in the graph,
int8 quantization), reporting texts/s, the ratio to PyTorch and the min cosine against PyTorch.

The machine may be shared with other processes, so every round runs PyTorch and each variant
once, in turn (A, B, C, A, B, C, ...), and the figures are medians over the rounds; the ratio is
the median of each round's ratio to that round's PyTorch run. The texts are generated from a
seed (nothing is read from the network), and the exports go to a scratch directory.

    .venv/bin/python -m benchmarks.onnx_probe --texts 2000 --rounds 3
    .venv/bin/python -m benchmarks.onnx_probe --variants project,raw,fused --json out.json
    .venv/bin/python -m benchmarks.onnx_probe --query          # single short query latency
    .venv/bin/python -m benchmarks.onnx_probe --list

What it found on the 2-core machine (shared, 200 texts, medians of 3 interleaved rounds): the old
backend ran the fused session inside sentence-transformers' loop (torch tensors in and out, and
ONNX Runtime's spinning thread pool beside torch's on the same two cores) and was 0.95x PyTorch;
the session behind a numpy pipeline (one fast-tokenizer batch call, sorted by token count, padded
to each batch's longest, mean pooling in numpy) with spin-waiting off is 1.27x at min cosine
1.000000, and 4.7 ms p50 for one short query (PyTorch: 137 ms under the same load). Per-channel
int8 with the FFN output projections kept float is 1.80x at min cosine 0.9958; quantizing every
MatMul falls to 0.988 (per-tensor: 0.888).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

# Archival prose: the words the demo records are made of, so that token counts per word (and so
# the sequence lengths the model sees) are like the build's chunk texts.
_WORDS = (  # noqa: SIM905 (a paragraph reads better than a 170-item list)
    "the of and to in for with on by from at as records correspondence files reports memoranda "
    "minutes letters photographs maps surveys case office regional district county state federal "
    "agency bureau department division administration authority commission board service "
    "committee relocation farm security drought loans families resettled homesteads inspection "
    "construction levees river flood control harbor navigation census enumeration district "
    "veterans pensions claims land entries patents allotments tribal agencies schools hospitals "
    "naval ships logbooks muster rolls courts proceedings dockets indictments naturalization "
    "petitions immigration passenger lists customs collectors lighthouse keepers weather "
    "observations forest rangers grazing permits irrigation projects dams reclamation highway "
    "bridges railroad rates tariffs treaties embassy consular dispatches war production rationing "
    "price ceilings labor disputes strikes arbitration wages hours employment relief works "
    "progress conservation corps camps enrollees telegrams cables orders circulars bulletins "
    "budget estimates appropriations audits vouchers payrolls contracts bids specifications "
    "drawings blueprints aerial negatives prints lantern slides motion pictures sound recordings "
    "transcripts interviews testimony hearings investigations inquiries complaints grievances"
).split()
_PLACES = (
    "Fairview, Kansas",
    "Denver, Colorado",
    "Cedar Falls, Iowa",
    "Marshall, Texas",
    "Port Royal, South Carolina",
    "Helena, Montana",
    "Bangor, Maine",
    "Tucson, Arizona",
)
_NAMES = ("Harold Whitcomb", "Edith Lindqvist", "José Nuñez", "Zoë Ångström", "Otis McAllister")


def make_texts(n: int, seed: int = 7, min_words: int = 50, max_words: int = 250) -> list[str]:
    """`n` demo-like record texts of `min_words`..`max_words` words, the same for a seed."""
    rng = random.Random(seed)
    texts = []
    for i in range(n):
        words = rng.randint(min_words, max_words)
        year = rng.randint(1880, 1975)
        head = (
            f"{rng.choice(['Series', 'File Unit', 'Item'])}: "
            f"{rng.choice(_WORDS).title()} {rng.choice(_WORDS)} of the "
            f"{rng.choice(_WORDS).title()} {rng.choice(['Office', 'Bureau', 'Division'])}, "
            f"{year}-{year + rng.randint(0, 12)}. Volume {rng.randint(1, 400)}, "
            f"naId {10_000_000 + i * 37}."
        )
        body: list[str] = []
        while len(body) < words:
            sentence = [rng.choice(_WORDS) for _ in range(rng.randint(6, 18))]
            if rng.random() < 0.3:
                sentence.insert(rng.randrange(len(sentence)), rng.choice(_PLACES))
            if rng.random() < 0.2:
                sentence.insert(rng.randrange(len(sentence)), rng.choice(_NAMES))
            if rng.random() < 0.3:
                sentence.append(f"{rng.randint(1, 12)}/{rng.randint(1, 28)}/{year}")
            body.extend([*" ".join(sentence).capitalize().split(), "."])
        texts.append(head + " " + " ".join(body[:words]).replace(" .", "."))
    return texts


# ---------------------------------------------------------------------------------- exports


def _st_model(model: str | None = None) -> Any:
    from nara_kg.embedding.encoder import DEFAULT_MODEL, Embedder

    return Embedder(model=model or DEFAULT_MODEL, backend="torch")._load()


def _hf_model(st: Any) -> Any:
    return getattr(st[0], "model", None) or st[0].auto_model


@dataclass(frozen=True)
class Export:
    """One way of writing the model to ONNX."""

    attention: str = "eager"  # the attention implementation traced: eager or sdpa
    opset: int = 17
    pooled: bool = False  # mean pooling + L2 normalization inside the graph
    fuse: int | None = None  # ONNX Runtime transformer optimizer level (None: not run)
    fuse_attention: bool = True
    quantize: dict[str, Any] | None = None  # quantize_dynamic keyword arguments

    @property
    def name(self) -> str:
        parts = [f"{self.attention}-op{self.opset}"]
        if self.pooled:
            parts.append("pooled")
        if self.fuse is not None:
            parts.append(f"fused{self.fuse}" + ("" if self.fuse_attention else "-noattn"))
        if self.quantize is not None:
            parts.append("int8-" + _quant_label(self.quantize))
        return "_".join(parts)


def _quant_label(options: dict[str, Any]) -> str:
    bits = ["pc" if options.get("per_channel") else "pt"]
    if options.get("reduce_range"):
        bits.append("rr")
    excluded = options.get("exclude") or ()
    if excluded:
        bits.append("x" + "+".join(excluded))
    if options.get("op_types"):
        bits.append("+".join(options["op_types"]))
    return "-".join(bits)


def export_onnx(st: Any, spec: Export, out_dir: Path) -> Path:
    """Write `spec`'s ONNX file under `out_dir` (once; reused when present)."""
    import torch

    target = out_dir / f"{spec.name}.onnx"
    if target.is_file():
        return target
    if spec.quantize is not None:
        return _quantize(export_onnx(st, replace(spec, quantize=None), out_dir), spec, target)
    if spec.fuse is not None:
        raw = export_onnx(st, replace(spec, fuse=None, fuse_attention=True), out_dir)
        return _fuse(raw, st, spec, target)
    model = _hf_model(st)
    setter = getattr(model, "set_attn_implementation", None)
    if setter is not None:
        setter(spec.attention)
    features = st.preprocess(make_texts(3, seed=1))
    names = [k for k in ("input_ids", "attention_mask", "token_type_ids") if k in features]
    pooled = spec.pooled

    class Wrapped(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            kwargs = dict(zip(names, inputs, strict=True))
            hidden = self.model(**kwargs, return_dict=True).last_hidden_state
            if not pooled:
                return hidden
            mask = kwargs["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            summed = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(summed, p=2.0, dim=1)

    output = "sentence_embedding" if pooled else "last_hidden_state"
    axes: dict[str, dict[int, str]] = {n: {0: "batch", 1: "sequence"} for n in names}
    axes[output] = {0: "batch"} if pooled else {0: "batch", 1: "sequence"}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            Wrapped().eval(),
            tuple(features[n] for n in names),
            str(target),
            dynamo=False,
            input_names=names,
            output_names=[output],
            dynamic_axes=axes,
            opset_version=spec.opset,
            do_constant_folding=True,
        )
    if setter is not None:
        setter("sdpa")
    return target


def _fuse(raw: Path, st: Any, spec: Export, target: Path) -> Path:
    from onnxruntime.transformers import optimizer
    from onnxruntime.transformers.fusion_options import FusionOptions

    config = _hf_model(st).config
    options = FusionOptions("bert")
    options.enable_attention = spec.fuse_attention
    optimized = optimizer.optimize_model(
        str(raw),
        model_type="bert",
        num_heads=int(config.num_attention_heads),
        hidden_size=int(config.hidden_size),
        optimization_options=options,
        opt_level=spec.fuse,
    )
    optimized.save_model_to_file(str(target))
    return target


def _quantize(source: Path, spec: Export, target: Path) -> Path:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    options = dict(spec.quantize or {})
    excluded: list[str] = []
    model = onnx.load(str(source))
    for node in model.graph.node:
        if node.op_type not in ("MatMul", "Attention", "Gather"):
            continue
        for pattern in options.get("exclude") or ():
            if _matches(node.name, node, pattern, model):
                excluded.append(node.name)
    quantize_dynamic(
        str(source),
        str(target),
        per_channel=bool(options.get("per_channel")),
        reduce_range=bool(options.get("reduce_range")),
        weight_type=QuantType.QInt8,
        op_types_to_quantize=list(options.get("op_types") or ["MatMul"]),
        nodes_to_exclude=excluded,
        # The fused operators are outside the ONNX domain, where shape inference finds no types.
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
    )
    return target


def _layer_of(node: Any) -> int | None:
    for text in (node.name, *node.input, *node.output):
        marker = "layer."
        at = text.find(marker)
        if at >= 0:
            digits = ""
            for ch in text[at + len(marker) :]:
                if not ch.isdigit():
                    break
                digits += ch
            if digits:
                return int(digits)
    return None


def _matches(name: str, node: Any, pattern: str, model: Any) -> bool:
    """Exclusion patterns: `first`/`last` (the first/last encoder layer), `ffn-out` (every
    layer's FFN output projection, whose inputs after GELU are the widest-ranged), `ffn`
    (both FFN projections), `attn-out` (attention output projections), `L<i>` (layer i)."""
    layer = _layer_of(node)
    text = " ".join((name, *node.input, *node.output))
    if pattern == "first":
        return layer == 0
    if pattern == "last":
        return layer == _last_layer(model)
    if pattern.startswith("L") and pattern[1:].isdigit():
        return layer == int(pattern[1:])
    if pattern == "ffn-out":
        return "output/dense" in text.replace(".", "/") and "attention" not in text
    if pattern == "ffn":
        flat = text.replace(".", "/")
        return ("intermediate/dense" in flat) or (
            "output/dense" in flat and "attention" not in flat
        )
    if pattern == "attn-out":
        return "attention/output/dense" in text.replace(".", "/")
    return False


def _last_layer(model: Any) -> int:
    layers = [_layer_of(n) for n in model.graph.node]
    return max((x for x in layers if x is not None), default=0)


# ---------------------------------------------------------------------------------- sessions


@dataclass(frozen=True)
class Session:
    """ONNX Runtime session settings."""

    level: str = "all"  # disable, basic, extended, all
    intra: int = 2
    inter: int = 1
    parallel: bool = False  # ORT_PARALLEL execution mode
    spin: bool = True  # intra-op threads spin-wait between ops

    @property
    def name(self) -> str:
        name = f"{self.level}-t{self.intra}"
        if self.inter != 1:
            name += f"-i{self.inter}"
        if self.parallel:
            name += "-par"
        if not self.spin:
            name += "-nospin"
        return name


def open_session(path: Path, spec: Session) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = {
        "disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
        "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
    }[spec.level]
    options.intra_op_num_threads = spec.intra
    options.inter_op_num_threads = spec.inter
    options.execution_mode = (
        ort.ExecutionMode.ORT_PARALLEL if spec.parallel else ort.ExecutionMode.ORT_SEQUENTIAL
    )
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spec.spin else "0")
    options.log_severity_level = 3
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


# ---------------------------------------------------------------------------------- runners


@dataclass(frozen=True)
class Runner:
    """How texts reach the session and vectors come back."""

    batch: int = 64
    tokenizer: str = "rust"  # rust: tokenizers.Tokenizer.encode_batch; hf: the transformers call
    order: str = "tokens"  # tokens: sort by token count; chars: by text length; none
    pad: str = "longest"  # longest in the batch, or "max" (always max_seq_length)
    iobinding: bool = False

    @property
    def name(self) -> str:
        name = f"b{self.batch}-{self.tokenizer}-sort{self.order}-pad{self.pad}"
        return name + ("-iob" if self.iobinding else "")


class Encoder:
    """A session with the tokenizer and pooling around it (numpy, no torch at run time)."""

    def __init__(self, st: Any, session: Any, runner: Runner, pooled: bool) -> None:
        from tokenizers import Tokenizer

        self.session = session
        self.runner = runner
        self.pooled = pooled
        self.max_length = int(st.max_seq_length)
        self.hf = st.tokenizer
        model_dir = Path(st.tokenizer.name_or_path)
        self.rust = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.rust.no_padding()
        self.rust.enable_truncation(self.max_length)
        self.pad_id = int(st.tokenizer.pad_token_id or 0)
        self.input_names = [i.name for i in session.get_inputs()]

    def _features(self, texts: list[str]) -> dict[str, np.ndarray]:
        if self.runner.tokenizer == "hf":
            padding: Any = "max_length" if self.runner.pad == "max" else True
            enc = self.hf(
                texts,
                padding=padding,
                truncation=True,
                max_length=self.max_length,
                return_tensors="np",
            )
            return {n: np.asarray(enc[n], dtype=np.int64) for n in self.input_names}
        encodings = self.rust.encode_batch(texts)
        width = self.max_length if self.runner.pad == "max" else max(len(e.ids) for e in encodings)
        ids = np.full((len(texts), width), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(texts), width), dtype=np.int64)
        for row, e in enumerate(encodings):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
        out = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.input_names:
            out["token_type_ids"] = np.zeros_like(ids)
        return out

    def _run(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
        if not self.runner.iobinding:
            return self.session.run(None, feeds)[0]
        binding = self.session.io_binding()
        for name, value in feeds.items():
            binding.bind_cpu_input(name, value)
        binding.bind_output(self.session.get_outputs()[0].name)
        self.session.run_with_iobinding(binding)
        return binding.copy_outputs_to_cpu()[0]

    def encode(self, texts: list[str]) -> np.ndarray:
        order: list[int]
        if self.runner.order == "tokens":
            lengths = [len(e.ids) for e in self.rust.encode_batch(texts)]
            order = sorted(range(len(texts)), key=lambda i: -lengths[i])
        elif self.runner.order == "chars":
            order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        else:
            order = list(range(len(texts)))
        out = np.empty((len(texts), 0), dtype=np.float32)
        chunks = []
        for start in range(0, len(texts), self.runner.batch):
            batch = [texts[i] for i in order[start : start + self.runner.batch]]
            feeds = self._features(batch)
            result = self._run(feeds)
            if not self.pooled:
                mask = feeds["attention_mask"][..., None].astype(np.float32)
                result = (result * mask).sum(1) / np.maximum(mask.sum(1), 1e-9)
                result /= np.linalg.norm(result, axis=1, keepdims=True)
            chunks.append(result)
        out = np.empty((len(texts), chunks[0].shape[1]), dtype=np.float32)
        out[order] = np.concatenate(chunks)
        return out


# ---------------------------------------------------------------------------------- variants


@dataclass(frozen=True)
class Variant:
    name: str
    what: str
    export: Export | None = None  # None: not a numpy-pipeline variant
    session: Session = field(default_factory=Session)
    runner: Runner = field(default_factory=Runner)
    embedder: dict[str, Any] | None = None  # an `Embedder` with these arguments instead


RAW = Export()
FUSED = Export(fuse=1)
PCQ = {"per_channel": True}


def _variants() -> dict[str, Variant]:
    v = [
        Variant("torch", "PyTorch via SentenceTransformer.encode, batch 64", embedder={}),
        Variant(
            "project", "the project's ONNX backend as configured", embedder={"backend": "onnx"}
        ),
        Variant(
            "project-int8", "the project's opt-in int8 backend", embedder={"backend": "onnx-int8"}
        ),
        Variant("raw", "plain export (eager, opset 17), ORT_ENABLE_ALL, 2 threads", RAW),
        Variant("raw-sdpa", "export traced with sdpa attention", Export(attention="sdpa")),
        Variant("raw-op14", "plain export at opset 14", Export(opset=14)),
        Variant("raw-1t", "plain export, 1 intra-op thread", RAW, Session(intra=1)),
        Variant("raw-nospin", "plain export, no spin-waiting", RAW, Session(spin=False)),
        Variant("raw-basic", "plain export, ORT_ENABLE_BASIC", RAW, Session(level="basic")),
        Variant("raw-ext", "plain export, ORT_ENABLE_EXTENDED", RAW, Session(level="extended")),
        Variant(
            "raw-par", "plain export, ORT_PARALLEL, 2 inter", RAW, Session(inter=2, parallel=True)
        ),
        Variant(
            "raw-hf",
            "plain export, transformers tokenizer call",
            RAW,
            runner=Runner(tokenizer="hf"),
        ),
        Variant(
            "raw-sortchars", "plain export, sorted by characters", RAW, runner=Runner(order="chars")
        ),
        Variant("raw-unsorted", "plain export, input order", RAW, runner=Runner(order="none")),
        Variant("raw-padmax", "plain export, padded to 256", RAW, runner=Runner(pad="max")),
        Variant("raw-b16", "plain export, batch 16", RAW, runner=Runner(batch=16)),
        Variant("raw-b32", "plain export, batch 32", RAW, runner=Runner(batch=32)),
        Variant("raw-b128", "plain export, batch 128", RAW, runner=Runner(batch=128)),
        Variant("raw-iob", "plain export, IO binding", RAW, runner=Runner(iobinding=True)),
        Variant("raw-pooled", "plain export with pooling in the graph", Export(pooled=True)),
        Variant("fused", "ORT transformer optimizer level 1 (the old project recipe)", FUSED),
        Variant("fused-2", "optimizer level 2", Export(fuse=2)),
        Variant("fused-99", "optimizer level 99", Export(fuse=99)),
        Variant(
            "fused-noattn",
            "optimizer without attention fusion",
            Export(fuse=1, fuse_attention=False),
        ),
        Variant("fused-1t", "fused, 1 intra-op thread", FUSED, Session(intra=1)),
        Variant("fused-nospin", "fused, no spin-waiting", FUSED, Session(spin=False)),
        Variant("fused-b32", "fused, batch 32", FUSED, runner=Runner(batch=32)),
        Variant("fused-b16", "fused, batch 16", FUSED, runner=Runner(batch=16)),
        Variant("fused-pooled", "fused with pooling in the graph", Export(pooled=True, fuse=1)),
        Variant("int8-pt", "int8 dynamic, per-tensor, MatMul", Export(fuse=1, quantize={})),
        Variant("int8-pc", "int8 dynamic, per-channel, MatMul", Export(fuse=1, quantize=PCQ)),
        Variant("int8-raw-pc", "int8 per-channel on the plain export", Export(quantize=PCQ)),
    ]
    for exclude in (
        ("ffn-out",),
        ("first", "last"),
        ("last",),
        ("first",),
        ("ffn-out", "last"),
        ("ffn",),
    ):
        q = {**PCQ, "exclude": exclude}
        v.append(
            Variant(
                "int8-pc-x" + "+".join(exclude),
                f"int8 per-channel, {exclude} kept float",
                Export(fuse=1, quantize=q),
            )
        )
    v.append(
        Variant(
            "int8-pc-rr",
            "int8 per-channel, reduce_range",
            Export(fuse=1, quantize={**PCQ, "reduce_range": True}),
        )
    )
    return {x.name: x for x in v}


VARIANTS = _variants()
DEFAULT_SET = ("torch", "project", "raw", "fused", "raw-1t", "raw-nospin", "raw-hf", "raw-padmax")


def build(variant: Variant, st: Any, scratch: Path) -> Callable[[list[str]], np.ndarray]:
    if variant.embedder is not None:
        from nara_kg.embedding.encoder import Embedder

        embedder = Embedder(**variant.embedder)
        embedder._load()
        return embedder.encode
    assert variant.export is not None
    path = export_onnx(st, variant.export, scratch)
    encoder = Encoder(
        st, open_session(path, variant.session), variant.runner, variant.export.pooled
    )
    return encoder.encode


def probe(
    names: list[str], texts: list[str], rounds: int, scratch: Path, log: Callable[[str], None]
) -> list[dict[str, Any]]:
    st = _st_model()
    encoders: dict[str, Callable[[list[str]], np.ndarray]] = {}
    for name in ["torch", *[n for n in names if n != "torch"]]:
        started = time.perf_counter()
        encoders[name] = build(VARIANTS[name], st, scratch)
        encoders[name](texts[:8])  # warm-up
        log(f"ready {name} ({time.perf_counter() - started:.1f} s)")
    reference: np.ndarray | None = None
    seconds: dict[str, list[float]] = {n: [] for n in encoders}
    cpu_seconds: dict[str, list[float]] = {n: [] for n in encoders}
    cosines: dict[str, float] = {}
    for r in range(rounds):
        for name, encode in encoders.items():
            cpu0 = time.process_time()
            t0 = time.perf_counter()
            vectors = encode(texts)
            took = time.perf_counter() - t0
            cpu = time.process_time() - cpu0
            seconds[name].append(took)
            cpu_seconds[name].append(cpu)
            if name == "torch" and reference is None:
                reference = vectors
            assert reference is not None
            cosines[name] = float(np.min(np.sum(vectors * reference, axis=1)))
            log(f"round {r + 1} {name}: {len(texts) / took:.1f} texts/s (cpu {cpu / took:.2f})")
    rows = []
    for name, runs in seconds.items():
        ratios = [t / s for t, s in zip(seconds["torch"], runs, strict=True)]
        rows.append(
            {
                "variant": name,
                "what": VARIANTS[name].what,
                "texts_per_second": round(len(texts) / statistics.median(runs), 1),
                "ratio_to_torch": round(statistics.median(ratios), 3),
                "min_cosine": round(cosines[name], 6),
                # Under contention wall time measures the share of the cores a run got; CPU time
                # measures the work (spin-waiting included).
                "texts_per_cpu_second": round(len(texts) / statistics.median(cpu_seconds[name]), 1),
                "runs_seconds": [round(x, 2) for x in runs],
            }
        )
    return rows


# ---------------------------------------------------------------------------------- query latency


QUERY = "letters about drought relief loans in Kansas 1936"


def query_latency(
    scratch: Path, calls: int, log: Callable[[str], None], rounds: int = 3
) -> list[dict[str, Any]]:
    """p50/p95 of encoding one short query, per configuration, interleaved over `rounds`."""
    from nara_kg.embedding.encoder import Embedder

    st = _st_model()
    candidates: dict[str, Callable[[list[str]], Any]] = {}
    torch_embedder = Embedder()
    candidates["torch (Embedder.encode)"] = torch_embedder.encode
    for intra in (1, 2):
        for spin in (True, False):
            s = Session(intra=intra, spin=spin)
            for label, spec in (("raw", RAW), ("fused", FUSED)):
                path = export_onnx(st, spec, scratch)
                enc = Encoder(st, open_session(path, s), Runner(batch=1), False)
                candidates[f"onnx {label} {s.name}"] = enc.encode
    project = Embedder(backend="onnx")
    candidates["project onnx (Embedder.encode)"] = project.encode
    candidates["project onnx-int8 (Embedder.encode)"] = Embedder(backend="onnx-int8").encode
    query_encode = getattr(project, "encode_query", None)
    if query_encode is not None:
        candidates["project onnx (Embedder.encode_query)"] = lambda t: query_encode(t[0])
    times: dict[str, list[float]] = {n: [] for n in candidates}
    for fn in candidates.values():
        for _ in range(10):
            fn([QUERY])
    per_round = max(1, calls // rounds)
    for _ in range(rounds):
        for name, fn in candidates.items():
            for _ in range(per_round):
                t0 = time.perf_counter()
                fn([QUERY])
                times[name].append((time.perf_counter() - t0) * 1000)
    rows = []
    for name, ms in times.items():
        ordered = sorted(ms)
        rows.append(
            {
                "encoder": name,
                "calls": len(ms),
                "p50_ms": round(ordered[len(ms) // 2], 2),
                "p95_ms": round(ordered[min(len(ms) - 1, int(len(ms) * 0.95))], 2),
                "max_ms": round(ordered[-1], 2),
            }
        )
        log(f"{name}: p50 {rows[-1]['p50_ms']} ms, p95 {rows[-1]['p95_ms']} ms")
    return rows


# ---------------------------------------------------------------------------------- CLI


def _table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return ""
    keys = [k for k in rows[0] if k not in ("runs_seconds", "what")]
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(str(r[k]) for k in keys) + " |" for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--variants", default=",".join(DEFAULT_SET))
    parser.add_argument("--scratch", type=Path, default=None, help="keep the exports here")
    parser.add_argument("--query", action="store_true", help="single short query latency")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args(argv)
    if args.list:
        for v in VARIANTS.values():
            print(f"{v.name:24} {v.what}")
        return 0
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="onnx-probe-") as tmp:
        scratch = args.scratch or Path(tmp)
        scratch.mkdir(parents=True, exist_ok=True)
        result: dict[str, Any] = {"cpu_count": os.cpu_count()}
        if args.query:
            result["query"] = query_latency(scratch, args.calls, log, args.rounds)
            print(_table(result["query"]))
        else:
            names = [n.strip() for n in args.variants.split(",") if n.strip()]
            unknown = [n for n in names if n not in VARIANTS]
            if unknown:
                parser.error(f"unknown variants {unknown}; see --list")
            texts = make_texts(args.texts, args.seed)
            result["texts"] = len(texts)
            result["rounds"] = args.rounds
            result["variants"] = probe(names, texts, args.rounds, scratch, log)
            print(_table(result["variants"]))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The ONNX Runtime backend of the embedding model: exported from the local weights once, cached,
never downloaded.

sentence-transformers' own `backend="onnx"` goes through `optimum-onnx`, whose releases pin
`transformers<4.58` (this project runs transformers 5), so the project exports the model itself:
the Hugging Face encoder inside the `SentenceTransformer` is exported with PyTorch's TorchScript
ONNX exporter (eager attention, so that ONNX Runtime's transformer optimizer can fuse attention,
GELU and layer norms), verified against PyTorch on probe texts, and cached under
``var/models/<model>-onnx-<digest>/model.onnx`` (``NARA_KG_MODEL_CACHE`` overrides ``var/models``).

At run time PyTorch is not on the path (`OnnxSentenceEncoder`): one batch call of the model's own
fast tokenizer, texts sorted by token count so that each batch pads only to its own longest text,
the session, then pooling and normalization in numpy. Running the session inside
sentence-transformers' loop instead (torch tensors in and out, torch's thread pool and ONNX
Runtime's both spinning on the same cores) made ONNX slower than PyTorch on a 2-core machine;
`benchmarks/onnx_probe.py` measures each difference. Pipelines other than
transformer -> pooling -> normalize keep sentence-transformers' loop with the session in place of
the PyTorch encoder.

``backend="onnx-int8"`` (opt-in) runs a dynamic int8 quantization of the same export: weights per
output channel, activations per batch, with each layer's FFN output projection kept in float
(quantized too, min cosine to PyTorch falls from 0.996 to 0.988). It is checked on export
against PyTorch (`MIN_INT8_COSINE`); its vectors are close but not identical, so it has its own
model key and never mixes with float vectors.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from nara_kg.embedding.backend import SentenceModel
from nara_kg.embedding.model_files import (
    declared_dimension,
    declared_max_tokens,
    quiet_transformers,
    transformer_folder,
)

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

#: Bump when the export recipe changes: a new recipe gets a new cache directory.
EXPORT_RECIPE = "ts-eager-fused-v1"
ONNX_FILE = "model.onnx"
INT8_FILE = "model.int8.onnx"
EXPORT_INFO_FILE = "export.json"
INT8_INFO_FILE = "export.int8.json"
#: The exported model must reproduce the PyTorch vectors at least this closely, or it is not used.
MIN_EXPORT_COSINE = 0.9999
#: The int8 model's floor (on the probe texts; the benchmark measures it on its sample).
MIN_INT8_COSINE = 0.99
#: The MatMuls the int8 model keeps in float: each layer's FFN output projection, whose input
#: (after GELU) has the widest range.
INT8_KEEP_FLOAT = "ffn-output"
#: ONNX Runtime's graph optimizer level transformer fusion runs at (1: fusions only, portable).
FUSION_LEVEL = 1
_PROBE_TEXTS = (
    "Letters of the War Relocation Authority, 1942-1946.",
    "Minutes",
    "Series: Case files of the Farm Security Administration regional office in Denver, "
    "Colorado, documenting loans to families resettled after the 1936 drought, with "
    "correspondence, inspection reports and photographs of the new homesteads.",
)
_POOLING_MODES = ("mean", "cls", "max")


def model_cache_root() -> Path:
    from nara_kg.settings import model_cache_dir

    return model_cache_dir()


def export_dir_for(model_path: Path, name: str | None = None) -> Path:
    """The cache directory of one model's export: the model's name plus a digest of its weights
    and configuration, the export recipe and the ONNX Runtime version."""
    import onnxruntime

    digest = hashlib.sha256(f"{EXPORT_RECIPE}|ort {onnxruntime.__version__}".encode())
    for path in sorted(model_path.rglob("*")):
        if not path.is_file() or path.suffix in {".md", ".txt"}:
            continue
        if path.suffix in {".json", ".cfg"}:
            digest.update(path.read_bytes())
        else:
            digest.update(f"{path.relative_to(model_path)}:{path.stat().st_size}".encode())
    label = (name or model_path.name).rstrip("/").rsplit("/", 1)[-1]
    return model_cache_root() / f"{label}-onnx-{digest.hexdigest()[:12]}"


def session_options(threads: int = 0, spinning: bool = False) -> Any:
    """ONNX Runtime session options: every graph optimization, `threads` intra-op threads
    (0: one per core), one inter-op thread. Spin-waiting is off by default: between the
    session's operators the caller tokenizes and pools, and on a machine shared with other
    processes a spinning pool takes cores they, or this process's own work, need."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads if threads > 0 else _cores()
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
    options.log_severity_level = 3
    return options


def _cores() -> int:
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)


def _session(onnx_path: Path, device: str, threads: int = 0) -> Any:
    import onnxruntime as ort

    providers = ["CPUExecutionProvider"]
    if device.startswith("cuda") and "CUDAExecutionProvider" in ort.get_available_providers():
        providers.insert(0, "CUDAExecutionProvider")
    return ort.InferenceSession(str(onnx_path), session_options(threads), providers=providers)


class OnnxSentenceEncoder:
    """The parts of the `SentenceTransformer` interface the project uses (`encode`, `tokenizer`,
    `max_seq_length`, the embedding dimension), with ONNX Runtime as the encoder and numpy
    around it. Vectors agree with sentence-transformers' to a cosine of 0.9999+."""

    def __init__(
        self,
        session: Any,
        tokenizer: Any,
        max_seq_length: int,
        dimension: int,
        pooling: str = "mean",
        normalize: bool = True,
        *,
        engine: Any = None,
        pad_id: int | None = None,
        tokenizer_folder: Path | None = None,
    ) -> None:
        """`tokenizer` is the model's transformers tokenizer, or None with `engine` (its
        `tokenizers.Tokenizer`), `pad_id` and `tokenizer_folder`, from which `tokenizer` is
        loaded only if something asks for it (importing transformers took most of a load)."""
        from tokenizers import Tokenizer

        if pooling not in _POOLING_MODES:
            raise ValueError(f"pooling {pooling!r} is not one of {_POOLING_MODES}")
        if tokenizer is None and (engine is None or pad_id is None or tokenizer_folder is None):
            raise ValueError("without a tokenizer, give its engine, pad id and folder")
        self.session = session
        self._tokenizer = tokenizer
        self._tokenizer_folder = tokenizer_folder
        self.max_seq_length = int(max_seq_length)
        self.dimension = int(dimension)
        self.pooling = pooling
        self.normalize = normalize
        self.input_names = [i.name for i in session.get_inputs()]
        # A copy of the fast tokenizer's engine: its own truncation and padding settings (the
        # model's tokenizer.json ships padding to 128) never leak into `tokenizer`.
        source = engine if tokenizer is None else tokenizer.backend_tokenizer
        self._fast = Tokenizer.from_str(source.to_str())
        self._fast.no_padding()
        self._fast.enable_truncation(self.max_seq_length)
        self._pad_id = (
            int(tokenizer.pad_token_id or 0) if tokenizer is not None else int(pad_id or 0)
        )

    @property
    def tokenizer(self) -> Any:
        """The model's transformers tokenizer (`PreTrainedTokenizerFast`), loaded on first use."""
        if self._tokenizer is None:
            quiet_transformers()
            from transformers import PreTrainedTokenizerFast

            self._tokenizer = PreTrainedTokenizerFast.from_pretrained(str(self._tokenizer_folder))
        return self._tokenizer

    def get_embedding_dimension(self) -> int:
        return self.dimension

    get_sentence_embedding_dimension = get_embedding_dimension

    def _batch(self, token_ids: Sequence[Sequence[int]]) -> dict[str, np.ndarray]:
        width = max(1, max(len(ids) for ids in token_ids))
        ids = np.full((len(token_ids), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(token_ids), width), dtype=np.int64)
        for row, text_ids in enumerate(token_ids):
            ids[row, : len(text_ids)] = text_ids
            mask[row, : len(text_ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        return {name: feeds[name] for name in self.input_names}

    def _pool(self, hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if self.pooling == "cls":
            return hidden[:, 0]
        weights = mask[..., None].astype(hidden.dtype)
        if self.pooling == "max":
            return np.where(weights > 0, hidden, np.finfo(hidden.dtype).min).max(axis=1)
        return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)

    def encode(
        self,
        sentences: str | Sequence[str],
        batch_size: int = 32,
        show_progress_bar: bool | None = None,
        convert_to_numpy: bool = True,
        normalize_embeddings: bool = False,
        token_ids: Sequence[Sequence[int] | None] | None = None,
        **_: Any,
    ) -> np.ndarray:
        """Vectors of `sentences` in their order (one vector for a single string).

        `token_ids`, where given for a text (special tokens included, no longer than
        `max_seq_length`), are that text's tokens: the caller has tokenized it already."""
        single = isinstance(sentences, str)
        texts = [sentences] if isinstance(sentences, str) else list(sentences)
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        if texts:
            given: list[Sequence[int] | None] = (
                list(token_ids) if token_ids is not None else [None] * len(texts)
            )
            if len(given) != len(texts):
                raise ValueError(f"{len(given)} token id lists for {len(texts)} texts")
            missing = [i for i, ids in enumerate(given) if ids is None]
            tokenized = self._fast.encode_batch([texts[i] for i in missing]) if missing else []
            for i, encoding in zip(missing, tokenized, strict=True):
                given[i] = encoding.ids
            ids_of = cast(list[Sequence[int]], given)  # every None was filled just above
            order = sorted(range(len(texts)), key=lambda i: -len(ids_of[i]))
            step = max(1, batch_size)
            for start in range(0, len(order), step):
                rows = order[start : start + step]
                feeds = self._batch([ids_of[i] for i in rows])
                hidden = self.session.run(None, feeds)[0]
                out[rows] = self._pool(hidden, feeds["attention_mask"])
            if self.normalize or normalize_embeddings:
                out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out[0] if single else out


def _plain_pipeline(st: SentenceTransformer) -> tuple[str, bool] | None:
    """(pooling mode, normalize) when `st` is transformer -> pooling [-> normalize] with a pooling
    mode `OnnxSentenceEncoder` reproduces; None for anything else."""
    modules = list(st)
    if len(modules) not in (2, 3) or type(modules[0]).__name__ != "Transformer":
        return None
    pooling: Any = modules[1]
    if type(pooling).__name__ != "Pooling":
        return None
    config = pooling.get_config_dict()
    mode = config.get("pooling_mode")
    if mode not in _POOLING_MODES or not config.get("include_prompt", True):
        return None
    if len(modules) == 3 and type(modules[2]).__name__ != "Normalize":
        return None
    return str(mode), len(modules) == 3


class OnnxEncoder:
    """Stands in for the Hugging Face encoder inside the sentence-transformers `Transformer`
    module: it takes the same features and returns `last_hidden_state` from ONNX Runtime."""

    def __init__(self, session: Any, config: Any) -> None:
        self.session = session
        self.config = config
        self.input_names = [i.name for i in session.get_inputs()]

    def run(self, features: dict[str, Any]) -> np.ndarray:
        feeds = {
            name: np.asarray(features[name].cpu().numpy(), dtype=np.int64)
            for name in self.input_names
        }
        return self.session.run(None, feeds)[0]


def _make_module(encoder: OnnxEncoder) -> Any:
    import torch

    class OnnxEncoderModule(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder
            self.config = encoder.config

        def forward(self, **features: Any) -> dict[str, Any]:
            hidden = self.encoder.run(features)
            return {"last_hidden_state": torch.from_numpy(hidden)}

    return OnnxEncoderModule()


def _encoder_of(st: SentenceTransformer) -> Any:
    first = st[0]
    model = getattr(first, "model", None) or getattr(first, "auto_model", None)
    if model is None:
        raise ValueError("the ONNX backend needs a sentence-transformers Transformer module first")
    return first, model


def export_model(st: SentenceTransformer, target_dir: Path) -> dict[str, Any]:
    """Export the encoder of `st` to `target_dir/model.onnx`, fuse it with ONNX Runtime's
    transformer optimizer where the architecture allows, and verify it against PyTorch.
    The file appears atomically, so concurrent processes never read half an export."""
    import torch

    _, model = _encoder_of(st)
    reference = st.encode(
        list(_PROBE_TEXTS), convert_to_numpy=True, normalize_embeddings=True, batch_size=8
    )
    features = st.preprocess(list(_PROBE_TEXTS))
    input_names = [k for k, v in features.items() if isinstance(v, torch.Tensor)]

    class Wrapped(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            kwargs = dict(zip(input_names, inputs, strict=True))
            return self.model(**kwargs, return_dict=True).last_hidden_state

    setter = getattr(model, "set_attn_implementation", None)
    if setter is not None:
        # The eager attention graph is the one ONNX Runtime's optimizer fuses.
        with contextlib.suppress(Exception):
            setter("eager")
    target_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target_dir, prefix=".export-") as tmp:
        raw = Path(tmp) / "raw.onnx"
        axes = {name: {0: "batch", 1: "sequence"} for name in input_names}
        axes["last_hidden_state"] = {0: "batch", 1: "sequence"}
        # The tracer warns about every shape-dependent branch of the attention code; the
        # export is verified against PyTorch below, which is the check that matters.
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                Wrapped().eval(),
                tuple(features[name] for name in input_names),
                str(raw),
                dynamo=False,
                input_names=input_names,
                output_names=["last_hidden_state"],
                dynamic_axes=axes,
                opset_version=17,
                do_constant_folding=True,
            )
        final = raw
        fused: dict[str, int] = {}
        try:
            from onnxruntime.transformers import optimizer

            config = model.config
            optimized = optimizer.optimize_model(
                str(raw),
                model_type="bert",
                num_heads=int(config.num_attention_heads),
                hidden_size=int(config.hidden_size),
                opt_level=FUSION_LEVEL,
            )
            fused = {k: int(v) for k, v in optimized.get_fused_operator_statistics().items() if v}
            final = Path(tmp) / "fused.onnx"
            optimized.save_model_to_file(str(final))
        except Exception:  # an architecture the optimizer does not know: the plain export runs
            final = raw
        vectors = _encode_with(st, _session(final, "cpu"), list(_PROBE_TEXTS))
        min_cosine = float(np.min(np.sum(vectors * reference, axis=1)))
        if min_cosine < MIN_EXPORT_COSINE:
            raise RuntimeError(
                f"the ONNX export of {st[0]} does not reproduce the PyTorch vectors "
                f"(min cosine {min_cosine:.6f} < {MIN_EXPORT_COSINE}); use backend 'torch'"
            )
        info = {
            "recipe": EXPORT_RECIPE,
            "fused_operators": fused,
            "probe_min_cosine": min_cosine,
            "torch": torch.__version__,
        }
        (Path(tmp) / EXPORT_INFO_FILE).write_text(json.dumps(info, indent=2) + "\n")
        os.replace(Path(tmp) / EXPORT_INFO_FILE, target_dir / EXPORT_INFO_FILE)
        os.replace(final, target_dir / ONNX_FILE)
    return info


def int8_nodes_to_exclude(onnx_path: Path) -> list[str]:
    """The FFN output projections of `onnx_path` (`layer.N/output/dense`, not the attention
    output's `layer.N/attention/output/dense`)."""
    import onnx

    graph = onnx.load(str(onnx_path), load_external_data=False).graph
    return [
        node.name
        for node in graph.node
        if node.op_type == "MatMul"
        and "/output/dense" in node.name.replace(".", "/")
        and "attention" not in node.name
    ]


def quantize_model(st: SentenceTransformer, target_dir: Path) -> dict[str, Any]:
    """Quantize `target_dir/model.onnx` to `target_dir/model.int8.onnx` (dynamic int8, weights per
    channel, `INT8_KEEP_FLOAT` kept in float) and verify it against PyTorch (`MIN_INT8_COSINE`)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    reference = st.encode(
        list(_PROBE_TEXTS), convert_to_numpy=True, normalize_embeddings=True, batch_size=8
    )
    source = target_dir / ONNX_FILE
    excluded = int8_nodes_to_exclude(source)
    with tempfile.TemporaryDirectory(dir=target_dir, prefix=".quantize-") as tmp:
        final = Path(tmp) / INT8_FILE
        quantize_dynamic(
            str(source),
            str(final),
            per_channel=True,
            weight_type=QuantType.QInt8,
            op_types_to_quantize=["MatMul"],
            nodes_to_exclude=excluded,
            # The fused operators are outside the ONNX domain: shape inference finds no types.
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
        vectors = _encode_with(st, _session(final, "cpu"), list(_PROBE_TEXTS))
        min_cosine = float(np.min(np.sum(vectors * reference, axis=1)))
        if min_cosine < MIN_INT8_COSINE:
            raise RuntimeError(
                f"the int8 model of {st[0]} is too far from the PyTorch vectors "
                f"(min cosine {min_cosine:.6f} < {MIN_INT8_COSINE}); use backend 'onnx'"
            )
        info = {
            "recipe": EXPORT_RECIPE,
            "scheme": f"dynamic int8, per-channel weights, MatMul only, {INT8_KEEP_FLOAT} float",
            "kept_float": excluded,
            "probe_min_cosine": min_cosine,
        }
        (Path(tmp) / INT8_INFO_FILE).write_text(json.dumps(info, indent=2) + "\n")
        os.replace(Path(tmp) / INT8_INFO_FILE, target_dir / INT8_INFO_FILE)
        os.replace(final, target_dir / INT8_FILE)
    return info


def _encode_with(st: SentenceTransformer, session: Any, texts: list[str]) -> np.ndarray:
    """Vectors of `texts` with `session` as the encoder, for verifying an export."""
    import torch

    first, _ = _encoder_of(st)
    encoder = OnnxEncoder(session, None)
    features = st.preprocess(texts)
    hidden = torch.from_numpy(encoder.run(features))
    out = {**features, first.module_output_name: hidden}
    for module in list(st)[1:]:
        out = module(out)
    vectors = out["sentence_embedding"].detach().numpy()
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


#: Pooling config flags of sentence-transformers and the mode `OnnxSentenceEncoder` runs.
_POOLING_FLAGS = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_max_tokens": "max",
}
_OTHER_POOLING_FLAGS = (
    "pooling_mode_mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens",
    "pooling_mode_lasttoken",
)


def _plain_pipeline_from_files(model_path: Path) -> tuple[str, bool] | None:
    """What `_plain_pipeline` finds, read from modules.json and the pooling config alone: (the
    pooling mode, normalize) for transformer -> pooling [-> normalize]; None otherwise."""
    try:
        modules = json.loads((model_path / "modules.json").read_text(encoding="utf-8"))
        kinds = [str(m["type"]).rsplit(".", 1)[-1] for m in modules]
        if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
            return None
        config = json.loads(
            (model_path / modules[1]["path"] / "config.json").read_text(encoding="utf-8")
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    modes = [mode for flag, mode in _POOLING_FLAGS.items() if config.get(flag)]
    if len(modes) != 1 or any(config.get(flag) for flag in _OTHER_POOLING_FLAGS):
        return None
    if not config.get("include_prompt", True):
        return None
    return modes[0], len(kinds) == 3


def _load_from_files(
    model_path: Path, onnx_path: Path, device: str, threads: int
) -> OnnxSentenceEncoder | None:
    """The cached export with the model's tokenizer and pooling read from its files, without
    importing sentence-transformers (and with it PyTorch): that import took 6 s in every build
    step that encodes. None when the export is not cached or the pipeline is not plain."""
    plain = _plain_pipeline_from_files(model_path)
    folder = transformer_folder(model_path)
    dimension, max_length = declared_dimension(model_path), declared_max_tokens(model_path)
    if plain is None or folder is None or not dimension or not max_length:
        return None
    if not onnx_path.is_file():
        return None
    if not (folder / "tokenizer.json").is_file():
        return None
    from tokenizers import Tokenizer

    engine = Tokenizer.from_file(str(folder / "tokenizer.json"))
    pad_id = pad_token_id(folder, engine)
    if pad_id is None:
        return None
    pooling, normalize = plain
    session = _session(onnx_path, device, threads)
    return OnnxSentenceEncoder(
        session,
        None,
        max_length,
        dimension,
        pooling,
        normalize,
        engine=engine,
        pad_id=pad_id,
        tokenizer_folder=folder,
    )


def pad_token_id(folder: Path, engine: Any) -> int | None:
    """The id of the padding token the model's files name (special tokens map, else tokenizer
    config), or None when they name none the engine knows."""
    for name in ("special_tokens_map.json", "tokenizer_config.json"):
        try:
            token = json.loads((folder / name).read_text(encoding="utf-8")).get("pad_token")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(token, dict):
            token = token.get("content")
        if isinstance(token, str) and (token_id := engine.token_to_id(token)) is not None:
            return int(token_id)
    return None


def load_onnx_sentence_transformer(
    model_path: Path,
    device: str = "cpu",
    name: str | None = None,
    *,
    threads: int = 0,
    int8: bool = False,
) -> OnnxSentenceEncoder | SentenceTransformer:
    """The model at `model_path` with its encoder in ONNX Runtime (`threads` intra-op threads,
    0: one per core; `int8`: the quantized model): an `OnnxSentenceEncoder`, or for pipelines it
    does not reproduce a `SentenceTransformer` whose encoder module runs the session. The ONNX
    file is exported on first use and read from the cache afterwards."""
    target = export_dir_for(model_path, name)
    cached = _load_from_files(
        model_path, target / (INT8_FILE if int8 else ONNX_FILE), device, threads
    )
    if cached is not None:
        return cached
    quiet_transformers()
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(str(model_path), device="cpu")
    first, model = _encoder_of(st)
    if not (target / ONNX_FILE).is_file():
        export_model(st, target)
    onnx_file = ONNX_FILE
    if int8:
        if not (target / INT8_FILE).is_file():
            quantize_model(st, target)
        onnx_file = INT8_FILE
    session = _session(target / onnx_file, device, threads)
    plain = _plain_pipeline(st)
    if plain is not None:
        pooling, normalize = plain
        getter = getattr(st, "get_embedding_dimension", None) or (
            st.get_sentence_embedding_dimension
        )
        dimension, max_length = getter(), st.max_seq_length
        if not dimension or not max_length:
            raise ValueError(f"model {model_path} reports no dimension or maximum length")
        return OnnxSentenceEncoder(
            session, st.tokenizer, int(max_length), int(dimension), pooling, normalize
        )
    # Swap the PyTorch encoder out (its weights are freed); everything else stays as loaded.
    first.model = _make_module(OnnxEncoder(session, model.config))
    return st


@dataclass(frozen=True)
class OnnxBackend:
    """The `ModelBackend` of `onnx` (float) and `onnx-int8` (`int8`)."""

    int8: bool = False

    def load(self, path: Path, *, device: str, name: str, threads: int) -> SentenceModel:
        return cast(
            SentenceModel,
            load_onnx_sentence_transformer(
                path, device=device, name=name, threads=threads, int8=self.int8
            ),
        )

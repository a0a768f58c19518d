"""The ONNX Runtime backend of the embedding model: exported from the local weights once, cached,
never downloaded.

sentence-transformers' own `backend="onnx"` goes through `optimum-onnx`, whose releases pin
`transformers<4.58` (this project runs transformers 5), so the project exports the model itself:
the Hugging Face encoder inside the `SentenceTransformer` is exported with PyTorch's TorchScript
ONNX exporter (eager attention, so that ONNX Runtime's transformer optimizer can fuse attention,
GELU and layer norms), verified against PyTorch on probe texts, and cached under
``var/models/<model>-onnx-<digest>/model.onnx`` (``NARA_KG_MODEL_CACHE`` overrides ``var/models``).

At run time only the encoder runs in ONNX Runtime; tokenization, length-sorted batching, pooling
and normalization stay sentence-transformers' own, so both backends see exactly the same inputs
and the vectors agree to a cosine of 0.9999+ (checked on export, and in tests).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

#: Bump when the export recipe changes: a new recipe gets a new cache directory.
EXPORT_RECIPE = "ts-eager-fused-v1"
ONNX_FILE = "model.onnx"
EXPORT_INFO_FILE = "export.json"
#: The exported model must reproduce the PyTorch vectors at least this closely, or it is not used.
MIN_EXPORT_COSINE = 0.9999
_PROBE_TEXTS = (
    "Letters of the War Relocation Authority, 1942-1946.",
    "Minutes",
    "Series: Case files of the Farm Security Administration regional office in Denver, "
    "Colorado, documenting loans to families resettled after the 1936 drought, with "
    "correspondence, inspection reports and photographs of the new homesteads.",
)


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


def _session(onnx_path: Path, device: str) -> Any:
    import onnxruntime as ort
    import torch

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # The same thread budget as the PyTorch backend, so the two compare like for like.
    options.intra_op_num_threads = max(1, torch.get_num_threads())
    options.log_severity_level = 3
    providers = ["CPUExecutionProvider"]
    if device.startswith("cuda") and "CUDAExecutionProvider" in ort.get_available_providers():
        providers.insert(0, "CUDAExecutionProvider")
    return ort.InferenceSession(str(onnx_path), options, providers=providers)


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
                opt_level=1,
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


def _encode_with(st: SentenceTransformer, session: Any, texts: list[str]) -> np.ndarray:
    """Vectors of `texts` with `session` as the encoder (used to verify an export)."""
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


def load_onnx_sentence_transformer(
    model_path: Path, device: str = "cpu", name: str | None = None
) -> SentenceTransformer:
    """A `SentenceTransformer` for `model_path` whose encoder runs in ONNX Runtime; the ONNX
    file is exported on first use and read from the cache afterwards."""
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(str(model_path), device="cpu")
    first, model = _encoder_of(st)
    target = export_dir_for(model_path, name)
    if not (target / ONNX_FILE).is_file():
        export_model(st, target)
    module = _make_module(OnnxEncoder(_session(target / ONNX_FILE, device), model.config))
    # Swap the PyTorch encoder out (its weights are freed); everything else stays as loaded.
    first.model = module
    return st

"""The ONNX Runtime backend reproduces the PyTorch vectors and is exported once, offline."""

from __future__ import annotations

import importlib.util
import json
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from nara_kg.embedding.encoder import Embedder, resolve_model_path
from nara_kg.embedding.onnx_backend import OnnxSentenceEncoder

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("onnxruntime") is None or importlib.util.find_spec("onnx") is None,
    reason="the ONNX backend needs the onnxruntime and onnx packages, which are not installed",
)

TEXTS = [
    "Minutes",
    "Letters of the War Relocation Authority, 1942-1946.",
    "Photograph of the county courthouse in Fairview, Kansas",
    "Series: Case files of the Farm Security Administration regional office, documenting "
    "loans to families resettled after the 1936 drought, with correspondence, inspection "
    "reports and photographs of the new homesteads. " * 2,
    # Longer than the model's 256 tokens: both backends must truncate it the same way.
    "Report on the construction of levees along the river, with maps and surveys. " * 40,
    "Ünïcödé names: Zoë Ångström, José Nuñez — and an en dash, 1890\u20131910.",
]


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    """PyTorch: the reference the ONNX backends are checked against (the default is ONNX)."""
    return Embedder(backend="torch")


@pytest.fixture(scope="module")
def onnx_embedder() -> Embedder:
    return Embedder(backend="onnx")


def test_onnx_vectors_match_pytorch(embedder: Embedder, onnx_embedder: Embedder) -> None:
    torch_vectors = embedder.encode(TEXTS)
    onnx_vectors = onnx_embedder.encode(TEXTS)
    assert onnx_vectors.shape == torch_vectors.shape == (len(TEXTS), 384)
    cosines = np.sum(torch_vectors * onnx_vectors, axis=1)
    assert cosines.min() >= 0.999, cosines
    assert np.allclose(np.linalg.norm(onnx_vectors, axis=1), 1.0, atol=1e-4)


def test_onnx_backend_keeps_the_model_interface(
    embedder: Embedder, onnx_embedder: Embedder
) -> None:
    assert onnx_embedder.dimension == embedder.dimension
    assert onnx_embedder.max_tokens == embedder.max_tokens
    assert onnx_embedder.count_tokens(TEXTS[3]) == embedder.count_tokens(TEXTS[3])
    # The backend is part of the key: switching it re-embeds rather than mixing vectors.
    assert onnx_embedder.key != embedder.key
    assert ":onnx:" in onnx_embedder.key


def test_export_is_cached(onnx_embedder: Embedder) -> None:
    from nara_kg.embedding.onnx_backend import EXPORT_INFO_FILE, ONNX_FILE, export_dir_for

    onnx_embedder.encode(["warm"])
    target = export_dir_for(resolve_model_path(onnx_embedder.model), onnx_embedder.model)
    assert (target / ONNX_FILE).is_file()
    assert (target / EXPORT_INFO_FILE).is_file()
    exported_at = (target / ONNX_FILE).stat().st_mtime_ns
    again = Embedder(backend="onnx")
    again.encode(["warm"])
    assert (target / ONNX_FILE).stat().st_mtime_ns == exported_at  # loaded, not re-exported


def _fast_model(embedder: Embedder) -> OnnxSentenceEncoder:
    model = embedder._load()
    assert isinstance(model, OnnxSentenceEncoder), type(model)
    return model


def test_default_model_runs_without_sentence_transformers_loop(onnx_embedder: Embedder) -> None:
    model = _fast_model(onnx_embedder)
    assert model.pooling == "mean" and model.normalize


def test_batches_sorted_padded_and_restored_to_input_order(onnx_embedder: Embedder) -> None:
    model = _fast_model(onnx_embedder)
    texts = [TEXTS[4], TEXTS[0], TEXTS[3], TEXTS[1], TEXTS[5], TEXTS[2]]
    batched = model.encode(texts, batch_size=4, normalize_embeddings=True)
    alone = np.stack([model.encode(text, normalize_embeddings=True) for text in texts])
    # Each text padded next to longer ones gives its own vector, in its own row.
    assert batched.shape == (len(texts), 384)
    assert np.allclose(batched, alone, atol=1e-5)
    assert model.encode([]).shape == (0, 384)


def test_tokens_match_sentence_transformers(embedder: Embedder, onnx_embedder: Embedder) -> None:
    model = _fast_model(onnx_embedder)
    torch_model: Any = embedder._load()
    features = torch_model.preprocess(TEXTS)
    mask = features["attention_mask"].numpy()
    for row, encoding in enumerate(model._fast.encode_batch(TEXTS)):
        assert encoding.ids == list(features["input_ids"].numpy()[row, : int(mask[row].sum())])
    assert max(len(e.ids) for e in model._fast.encode_batch(TEXTS)) == embedder.max_tokens
    # The copy's settings stay its own: the shared tokenizer still counts past the limit.
    assert onnx_embedder.count_tokens(TEXTS[4]) > embedder.max_tokens


class _FakeSession:
    """Hidden states that are the token id in every dimension: pooling is checkable by hand."""

    def get_inputs(self) -> list[Any]:
        return [SimpleNamespace(name="input_ids"), SimpleNamespace(name="attention_mask")]

    def run(self, _: Any, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        ids = feeds["input_ids"].astype(np.float32)
        return [np.repeat(ids[..., None], 4, axis=2)]


@pytest.mark.parametrize("pooling", ["mean", "cls", "max"])
def test_pooling_ignores_padding(embedder: Embedder, pooling: str) -> None:
    tokenizer = embedder._load().tokenizer
    model = OnnxSentenceEncoder(_FakeSession(), tokenizer, 256, 4, pooling, normalize=False)
    texts = ["Minutes", TEXTS[3]]
    vectors = model.encode(texts, batch_size=2)
    ids = [tokenizer(text, truncation=True, max_length=256)["input_ids"] for text in texts]

    def expected(token_values: np.ndarray) -> Any:
        if pooling == "cls":
            return token_values[0]
        return token_values.max() if pooling == "max" else token_values.mean()

    for row, token_ids in enumerate(ids):
        assert np.allclose(vectors[row], expected(np.array(token_ids, dtype=np.float32)))
    with pytest.raises(ValueError, match="pooling"):
        OnnxSentenceEncoder(_FakeSession(), tokenizer, 256, 4, "weightedmean")


def test_other_pipelines_keep_the_sentence_transformers_loop() -> None:
    from nara_kg.embedding.onnx_backend import _plain_pipeline

    def module(kind: str, **config: Any) -> Any:
        return type(kind, (), {"get_config_dict": lambda self: config})()

    transformer = module("Transformer")
    mean = module("Pooling", pooling_mode="mean")
    assert _plain_pipeline([transformer, mean, module("Normalize")]) == ("mean", True)  # type: ignore[arg-type]
    assert _plain_pipeline([transformer, mean]) == ("mean", False)  # type: ignore[arg-type]
    assert _plain_pipeline([transformer, mean, module("Dense")]) is None  # type: ignore[arg-type]
    weighted = module("Pooling", pooling_mode="weightedmean")
    assert _plain_pipeline([transformer, weighted]) is None  # type: ignore[arg-type]


def test_session_threads_and_spinning() -> None:
    from nara_kg.embedding.onnx_backend import session_options

    options = session_options(3)
    assert options.intra_op_num_threads == 3
    assert options.inter_op_num_threads == 1
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert session_options(0).intra_op_num_threads >= 1
    spinning = session_options(1, spinning=True)
    assert spinning.get_session_config_entry("session.intra_op.allow_spinning") == "1"


def test_embedder_threads_reach_the_session() -> None:
    options = _fast_model(Embedder(backend="onnx", threads=1)).session.get_session_options()
    assert options.intra_op_num_threads == 1


def test_int8_backend_is_opt_in_close_and_keyed_apart(embedder: Embedder) -> None:
    from nara_kg.embedding.onnx_backend import (
        INT8_FILE,
        INT8_INFO_FILE,
        MIN_INT8_COSINE,
        export_dir_for,
    )

    int8 = Embedder(backend="onnx-int8")
    vectors = int8.encode(TEXTS)
    cosines = np.sum(vectors * embedder.encode(TEXTS), axis=1)
    assert cosines.min() >= MIN_INT8_COSINE, cosines
    assert ":onnx-int8:" in int8.key
    target = export_dir_for(resolve_model_path(int8.model), int8.model)
    info = json.loads((target / INT8_INFO_FILE).read_text())
    assert (target / INT8_FILE).is_file() and info["kept_float"]
    assert info["probe_min_cosine"] >= MIN_INT8_COSINE


def test_a_cached_export_loads_from_files_as_sentence_transformers_would(
    onnx_embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nara_kg.embedding import onnx_backend

    onnx_embedder.encode(["warm"])  # the export is cached from here on
    path = resolve_model_path(onnx_embedder.model)
    from_files = onnx_backend.load_onnx_sentence_transformer(path, name=onnx_embedder.model)
    monkeypatch.setattr(onnx_backend, "_load_from_files", lambda *args: None)
    through_library = onnx_backend.load_onnx_sentence_transformer(path, name=onnx_embedder.model)
    assert isinstance(from_files, OnnxSentenceEncoder)
    assert isinstance(through_library, OnnxSentenceEncoder)
    for name in ("max_seq_length", "dimension", "pooling", "normalize", "_pad_id"):
        assert getattr(from_files, name) == getattr(through_library, name), name
    assert np.array_equal(from_files.encode(TEXTS), through_library.encode(TEXTS))


def test_the_default_backend_encodes_without_importing_pytorch(onnx_embedder: Embedder) -> None:
    import subprocess
    import sys

    onnx_embedder.encode(["warm"])  # the export is cached from here on
    probe = (
        "import sys\n"
        "from nara_kg.embedding.encoder import Embedder\n"
        "vector = Embedder().encode(['Letters, 1942'])[0]\n"
        "print(len(vector), 'torch' in sys.modules, 'sentence_transformers' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    ).stdout.split()
    assert out == ["384", "False", "False"]


def test_the_cached_export_loads_without_transformers(onnx_embedder: Embedder) -> None:
    """Importing transformers was most of a model load (1.3 of 1.6 s in every step that encodes);
    the cached export needs only tokenizers and ONNX Runtime, and transformers' tokenizer comes
    when something asks for it, with the same padding id."""
    import subprocess
    import sys

    onnx_embedder.encode(["the export is cached"])
    probe = (
        "import sys\n"
        "from nara_kg.embedding.encoder import Embedder\n"
        "model = Embedder(backend='onnx')._load()\n"
        "model.encode(['Minutes of the board'])\n"
        "assert 'transformers' not in sys.modules, 'transformers was imported'\n"
        "pad = model._pad_id\n"
        "assert model.tokenizer.pad_token_id == pad, (model.tokenizer.pad_token_id, pad)\n"
        "assert 'transformers' in sys.modules\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_pad_token_id_is_read_from_the_model_files(tmp_path: Any) -> None:
    from nara_kg.embedding.onnx_backend import pad_token_id

    engine = SimpleNamespace(token_to_id=lambda token: {"[PAD]": 0, "<pad>": 1}.get(token))
    assert pad_token_id(tmp_path, engine) is None
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"pad_token": "<pad>"}))
    assert pad_token_id(tmp_path, engine) == 1
    (tmp_path / "special_tokens_map.json").write_text(
        json.dumps({"pad_token": {"content": "[PAD]", "lstrip": False}})
    )
    assert pad_token_id(tmp_path, engine) == 0


def test_ids_counted_for_chunking_are_encoded_without_tokenizing_again(
    onnx_embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = onnx_embedder.encode(TEXTS)
    counts = onnx_embedder.count_tokens_many(TEXTS, remember=True)
    assert counts == [onnx_embedder.count_tokens(text) for text in TEXTS]
    # The text past the model's limit is truncated by the model, so its ids are not kept.
    assert set(onnx_embedder._remembered_ids) == set(TEXTS) - {TEXTS[4]}
    model = _fast_model(onnx_embedder)
    tokenized: list[str] = []
    encode_batch = model._fast.encode_batch

    def recording(texts: list[str]) -> Any:
        tokenized.extend(texts)
        return encode_batch(texts)

    monkeypatch.setattr(model, "_fast", SimpleNamespace(encode_batch=recording))
    vectors = onnx_embedder.encode(TEXTS)
    assert tokenized == [TEXTS[4]]
    assert np.array_equal(vectors, reference)
    assert not onnx_embedder._remembered_ids  # used once, then let go


def test_ids_are_kept_only_when_asked(onnx_embedder: Embedder) -> None:
    onnx_embedder.count_tokens_many(TEXTS)
    assert not onnx_embedder._remembered_ids


def test_kept_ids_are_bounded_oldest_out(
    onnx_embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nara_kg.embedding import encoder

    monkeypatch.setattr(encoder, "REMEMBERED_TOKEN_IDS", 2)
    onnx_embedder.count_tokens_many(TEXTS[:4], remember=True)
    assert list(onnx_embedder._remembered_ids) == TEXTS[2:4]
    onnx_embedder._remembered_ids.clear()


def test_forget_token_ids_lets_go_of_ids_no_encode_used(onnx_embedder: Embedder) -> None:
    onnx_embedder.count_tokens_many(TEXTS[:3], remember=True)
    assert onnx_embedder._remembered_ids
    onnx_embedder.forget_token_ids()
    assert not onnx_embedder._remembered_ids
    # Encoding afterwards tokenizes afresh and gives the same vectors as with kept ids.
    kept = onnx_embedder.count_tokens_many(TEXTS[:3], remember=True)
    with_ids = onnx_embedder.encode(TEXTS[:3])
    onnx_embedder.forget_token_ids()
    assert kept and np.allclose(onnx_embedder.encode(TEXTS[:3]), with_ids, atol=1e-6)

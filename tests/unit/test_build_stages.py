"""Stage loops of `nara_kg.build` and the report generation order, with the Neo4j side faked
(the real side is covered by the integration tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nara_kg.build import embeddings as build_embeddings
from nara_kg.generation.report_order import same_level_batches
from nara_kg.ingest.inputs import file_id_of


def test_context_batches_never_mix_levels_and_stay_bounded() -> None:
    communities = [
        {"id": f"{level}-{i}", "level": level, "size": size}
        for level, sizes in ((0, [2] * 7), (1, [5, 9, 30]), (2, [44]))
        for i, size in enumerate(sizes)
    ]
    batches = list(same_level_batches(communities, max_communities=3, max_members=20))
    assert [[c["id"] for c in b] for b in batches] == [
        ["0-0", "0-1", "0-2"],
        ["0-3", "0-4", "0-5"],
        ["0-6"],
        ["1-0", "1-1"],
        ["1-2"],  # alone over the member bound: still read, on its own
        ["2-0"],
    ]


class FakeEmbedder:
    key = "fake:torch:0"
    dimension = 2

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.array([[float(len(t)), 1.0] for t in texts])


def test_embedding_goes_longest_first_in_pages_and_writes_every_page(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = {f"c{i}": "x" * ((i * 37) % 23 + 1) for i in range(10)}
    stored: dict[str, Any] = {}

    def fetch_pending(
        driver: Any, database: str, model: str, limit: int, after: str = ""
    ) -> list[dict[str, Any]]:
        rows = [
            {"id": cid, "text": text, "hash": f"h{cid}"}
            for cid, text in sorted(texts.items())
            if cid not in stored and cid > after
        ]
        return rows[:limit]

    def write_vectors(driver: Any, database: str, model: str, rows: list[dict[str, Any]]) -> int:
        for row in rows:
            stored[row["id"]] = row["vector"]
        return len(rows)

    monkeypatch.setattr(build_embeddings.embedding_cypher, "fetch_pending", fetch_pending)
    monkeypatch.setattr(build_embeddings.embedding_cypher, "write_vectors", write_vectors)
    monkeypatch.setattr(
        build_embeddings.embedding_cypher, "count_pending", lambda *a: len(texts) - len(stored)
    )
    embedder = FakeEmbedder()
    result = build_embeddings.embed_pending(
        None,  # type: ignore[arg-type]
        "db",
        embedder,  # type: ignore[arg-type]
        page_size=3,
        round_size=7,
    )
    assert result.embedded == 10 and set(stored) == set(texts)
    assert all(stored[cid][0] == len(text) for cid, text in texts.items())
    # Two rounds (7 + 3 pending); within a round, pages of 3 go longest first.
    assert [len(call) for call in embedder.calls] == [3, 3, 1, 3]
    first_round = [len(t) for call in embedder.calls[:3] for t in call]
    assert first_round == sorted(first_round, reverse=True)


def test_a_failed_vector_write_stops_the_run_with_its_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = [{"id": f"c{i}", "text": "x" * (i + 1), "hash": "h"} for i in range(6)]

    def write_vectors(driver: Any, database: str, model: str, page: list[dict[str, Any]]) -> int:
        raise ConnectionError("bolt went away")

    monkeypatch.setattr(build_embeddings.embedding_cypher, "fetch_pending", lambda *a: rows)
    monkeypatch.setattr(build_embeddings.embedding_cypher, "write_vectors", write_vectors)
    monkeypatch.setattr(build_embeddings.embedding_cypher, "count_pending", lambda *a: len(rows))
    embedder = FakeEmbedder()
    with pytest.raises(ConnectionError, match="bolt went away"):
        build_embeddings.embed_pending(None, "db", embedder, page_size=2)  # type: ignore[arg-type]
    # The error surfaced at the next page, not after encoding everything.
    assert len(embedder.calls) == 2


def test_each_vector_part_is_read_once_and_only_the_rest_is_encoded(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # 30 chunks in 3 files, 2 of whose parts hold vectors; chunk ids interleave the files, so
    # every round of pending chunks touches every part.
    files = ["a.jsonl", "b.jsonl", "c.jsonl"]
    chunks = {f"c{i:02d}": files[i % 3] for i in range(30)}
    stored: dict[str, Any] = {}
    reads: list[Path] = []

    def pending_rows(after: str, limit: int, with_text: bool) -> list[dict[str, Any]]:
        rows = [
            {"id": cid, "hash": f"h{cid}", "file": file, **({"text": cid} if with_text else {})}
            for cid, file in sorted(chunks.items())
            if cid not in stored and cid > after
        ]
        return rows[:limit]

    def read_part(path: Path, model_key: str) -> dict[tuple[str, str], Any]:
        reads.append(path)
        if path.name == file_id_of("c.jsonl"):
            return {}
        return {
            (cid, f"h{cid}"): np.array([9.0, 9.0])
            for cid, file in chunks.items()
            if file_id_of(file) == path.name
        }

    monkeypatch.setattr(
        build_embeddings.embedding_cypher,
        "fetch_pending",
        lambda d, db, m, limit, after="": pending_rows(after, limit, True),
    )
    monkeypatch.setattr(
        build_embeddings.embedding_cypher,
        "fetch_pending_keys",
        lambda d, db, m, limit, after="": pending_rows(after, limit, False),
    )

    part_pages: list[int] = []

    def write_vectors(d: Any, db: str, m: str, rows: list[dict[str, Any]]) -> int:
        stored.update((row["id"], row["vector"]) for row in rows)
        if all(list(row["vector"]) == [9.0, 9.0] for row in rows):
            part_pages.append(len(rows))
        return len(rows)

    monkeypatch.setattr(build_embeddings.embedding_cypher, "write_vectors", write_vectors)
    monkeypatch.setattr(
        build_embeddings.embedding_cypher, "count_pending", lambda *a: len(chunks) - len(stored)
    )
    monkeypatch.setattr(build_embeddings, "read_vector_part", read_part)

    class Layout:
        pending_vectors = tmp_path / "pending-vectors.sqlite"

        def vector_part(self, part: str) -> Path:
            return Path(part)

    embedder = FakeEmbedder()
    result = build_embeddings.embed_pending(
        None,  # type: ignore[arg-type]
        "db",
        embedder,  # type: ignore[arg-type]
        layout=Layout(),  # type: ignore[arg-type]
        page_size=4,
        round_size=7,
    )
    assert sorted(p.name for p in reads) == sorted(file_id_of(f) for f in files)
    assert result.from_parts == 20 and result.encoded == 10 and set(stored) == set(chunks)
    # Pages fill across parts (10 + 10 vectors): five writes of 4, not 4 + 4 + 2 per part.
    assert part_pages == [4, 4, 4, 4, 4]
    assert all(list(stored[cid]) == [9.0, 9.0] for cid, f in chunks.items() if f != "c.jsonl")
    # The pending keys were spilled to a scratch file for the pass, not kept after it.
    assert not Layout.pending_vectors.exists()

"""text_embeddings' whole path reads the pending chunks' keys round by round into a scratch
file and hands them back a part at a time: every key once, under the part of its file (a zip
member under its archive), stubs left out, and the scratch file gone afterwards."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nara_kg.build import embeddings
from nara_kg.ingest.inputs import file_id_of


def test_pending_keys_come_back_grouped_by_part_and_the_scratch_is_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = [
        {"id": "01-0", "hash": "h1", "file": "b.jsonl"},
        {"id": "02-0", "hash": "h2", "file": "a.jsonl"},
        {"id": "03-0", "hash": "h3", "file": None},
        {"id": "04-0", "hash": "h4", "file": "b.jsonl"},
        {"id": "05-0", "hash": "h5", "file": "archive.zip!inner.jsonl"},
        {"id": "06-0", "hash": "h6", "file": "a.jsonl"},
    ]
    reads: list[str] = []

    def fetch(
        _driver: Any, _database: str, _model: str, limit: int, after: str = ""
    ) -> list[dict[str, Any]]:
        reads.append(after)
        return [k for k in keys if k["id"] > after][:limit]

    monkeypatch.setattr(embeddings.embedding_cypher, "fetch_pending_keys", fetch)
    scratch = tmp_path / "pending.sqlite"
    groups = embeddings.pending_by_part(None, "neo4j", "model", 2, scratch)  # type: ignore[arg-type]
    found = {part: chunk_keys for part, chunk_keys in groups}
    assert found == {
        file_id_of("a.jsonl"): [("02-0", "h2"), ("06-0", "h6")],
        file_id_of("b.jsonl"): [("01-0", "h1"), ("04-0", "h4")],
        file_id_of("archive.zip"): [("05-0", "h5")],
    }
    # Rounds of two keys each, walking upwards, until a round comes back empty.
    assert reads == ["", "02-0", "04-0", "06-0"]
    assert not scratch.exists()


def test_the_scratch_is_removed_when_the_walk_stops_early(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [{"id": f"{n:02d}-0", "hash": "h", "file": f"f{n % 3}.jsonl"} for n in range(9)]
    monkeypatch.setattr(
        embeddings.embedding_cypher,
        "fetch_pending_keys",
        lambda _d, _db, _m, limit, after="": [r for r in rows if r["id"] > after][:limit],
    )
    scratch = tmp_path / "pending.sqlite"
    groups = embeddings.pending_by_part(None, "neo4j", "model", 4, scratch)  # type: ignore[arg-type]
    next(groups)
    assert scratch.exists()
    groups.close()
    assert not scratch.exists()

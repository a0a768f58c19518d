"""Incremental rebuilds converge to exactly the graph a full rebuild from scratch gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nara_kg.build import embeddings as build_embeddings
from nara_kg.demo import generate_demo_data
from nara_kg.graph import embeddings
from nara_kg.graph.fingerprint import graph_fingerprint
from nara_kg.graph.nodes import node_counts
from tests.graph_helpers import metadata_of, scalar

pytestmark = pytest.mark.integration


def shard_with_items(data: Path) -> Path:
    for path in sorted(data.rglob("*.jsonl")):
        if '"levelOfDescription": "item"' in path.read_text():
            return path
    raise AssertionError("no shard with items")


def change_one_file(path: Path) -> dict[str, Any]:
    """Edit one record's title, delete another record, add a new one, all in one file."""
    lines = path.read_text().splitlines()
    items = [i for i, line in enumerate(lines) if '"levelOfDescription": "item"' in line]
    edited, deleted, template = items[0], items[1], items[2]
    record = json.loads(lines[edited])
    record["record"]["title"] = "Ledger of lighthouse keepers at Quillon Point"
    lines[edited] = json.dumps(record)
    deleted_id = json.loads(lines[deleted])["record"]["naId"]
    added = json.loads(lines[template])
    added["record"]["naId"] = 999_000_001
    added["record"]["title"] = "Survey of the abandoned salt works at Marrow Creek"
    lines.append(json.dumps(added))
    del lines[deleted]
    path.write_text("\n".join(lines) + "\n")
    return {"edited": record["record"]["naId"], "deleted": deleted_id, "added": 999_000_001}


def counts_shown(graph_nodes: dict[str, Any]) -> dict[str, int]:
    return {row["type.measure"]: row["count"] for row in graph_nodes["graph_counts"]}


def test_incremental_equals_full_rebuild_and_recovers_from_a_crash(
    graph_builder: Any, neo4j_driver: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    generate_demo_data(data, records=120, seed=21)
    first = graph_builder(data, tmp_path / "work", wipe_first=True)
    before = graph_fingerprint(neo4j_driver, "neo4j")
    assert metadata_of(first, "graph_nodes")["graph_counts_from"] == "graph"

    shard = shard_with_items(data)
    changed = change_one_file(shard)
    lines_in_shard = len(shard.read_text().splitlines())
    incremental = graph_builder(data, tmp_path / "work")
    after_incremental = graph_fingerprint(neo4j_driver, "neo4j")
    assert after_incremental["sha256"] != before["sha256"]

    parsed = metadata_of(incremental, "parsed_records")
    assert parsed["files_parsed"] == 1 and parsed["files_skipped_unchanged"] >= 1
    chunked = metadata_of(incremental, "chunks")
    assert chunked["files_chunked"] == 1
    assert chunked["files_reused_unchanged"] == parsed["files_skipped_unchanged"]
    nodes = metadata_of(incremental, "graph_nodes")
    assert nodes["records_removed"] == 1
    # The node counts shown are the last run's plus this run's difference (no read of every
    # node), and equal what such a read finds.
    assert nodes["graph_counts_from"] == "difference"
    counted = {row["type.measure"]: row["count"] for row in nodes["graph_counts"]}
    assert counted == node_counts(neo4j_driver, "neo4j")
    counted_first = {
        row["type.measure"]: row["count"]
        for row in metadata_of(first, "graph_nodes")["graph_counts"]
    }
    assert counted["item.records"] == counted_first["item.records"]  # one deleted, one added
    # The deleted record's nodes took their relationships with them; the relationship writers
    # still apply the change set (their counts less those) instead of reading the graph back.
    for writer in (
        "next_relationships",
        "includes_relationships",
        "authority_relationships",
        "entity_mentions",
    ):
        assert metadata_of(incremental, writer)["existing_state_from"] == "changes", writer
    # Only records of the changed file are rewritten (lines after the deleted one moved, so
    # their line_num changed); every other file's records are untouched.
    assert 2 <= nodes["records_written"] <= lines_in_shard
    # Only the chunks whose text changed were embedded again: every chunk of the edited record
    # (its title is in each chunk's header) and of the added one, nothing else.
    changed_chunks = scalar(
        neo4j_driver,
        "MATCH (c:Chunk) WHERE c.naId IN $ids RETURN count(c)",
        ids=[changed["edited"], changed["added"]],
    )
    assert metadata_of(incremental, "text_embeddings")["embedded"] == changed_chunks
    assert (
        scalar(neo4j_driver, "MATCH (c:Chunk {naId: $id}) RETURN count(c)", id=changed["deleted"])
        == 0
    )
    assert scalar(
        neo4j_driver,
        "MATCH (c:Chunk {naId: $id, chunkSeqId: 0}) RETURN c.title",
        id=changed["added"],
    ).startswith("Survey of the abandoned salt works")

    graph_builder(data, tmp_path / "work-full", wipe_first=True)
    assert graph_fingerprint(neo4j_driver, "neo4j") == after_incremental

    # A build from scratch killed midway: nodes written, some of the vectors stored, the steps
    # after the embeddings never run. Re-running it must give what an uninterrupted build gives.
    change_one_file(shard_with_items(data))
    real_fetch, real_write = embeddings.fetch_pending, embeddings.write_vectors
    writes = {"n": 0}

    def small_pages(driver: Any, database: str, model_key: str, limit: int, after: str = "") -> Any:
        return real_fetch(driver, database, model_key, min(limit, 40), after)

    def dying_write(*args: Any, **kwargs: Any) -> Any:
        writes["n"] += 1
        if writes["n"] > 2:
            raise RuntimeError("killed midway")
        return real_write(*args, **kwargs)

    monkeypatch.setattr(embeddings, "fetch_pending", small_pages)
    monkeypatch.setattr(embeddings, "write_vectors", dying_write)
    monkeypatch.setattr(build_embeddings, "VECTOR_PAGE_SIZE", 40)
    with pytest.raises(AssertionError, match="text_embeddings"):
        graph_builder(data, tmp_path / "work-crash", wipe_first=True)
    # Two pages landed (of the vectors copied from the per-file parts; the retries fail at once).
    stored = scalar(
        neo4j_driver, "MATCH (c:recordWithText) WHERE c.textEmbedding IS NOT NULL RETURN count(c)"
    )
    total = scalar(neo4j_driver, "MATCH (c:recordWithText) RETURN count(c)")
    assert 0 < stored < total
    monkeypatch.undo()
    graph_builder(data, tmp_path / "work-crash")
    resumed = graph_fingerprint(neo4j_driver, "neo4j")

    graph_builder(data, tmp_path / "work-scratch", wipe_first=True)
    assert graph_fingerprint(neo4j_driver, "neo4j") == resumed

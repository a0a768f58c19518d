"""A build where nothing changed touches no record in any graph writer; a one-record edit in one
file touches that record and the neighbours whose edges follow from it, and the graph still
equals the one a build from scratch gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graph_assets.common import RECORDS_TOUCHED
from nara_kg.demo import generate_demo_data
from nara_kg.graph.fingerprint import graph_fingerprint
from nara_kg.model.schema import AUTHORITY_RELATIONSHIPS
from tests.graph_helpers import metadata_of, scalar
from tests.integration.test_incremental import shard_with_items

pytestmark = pytest.mark.integration

#: The writers that apply record_selection's change set.
WRITERS = (
    "graph_nodes",
    "text_embeddings",
    "next_relationships",
    "includes_relationships",
    "authority_relationships",
    "entity_mentions",
)


def edit_one_title(path: Path) -> int:
    """Retitle one item in place (no line moves); returns its naId."""
    lines = path.read_text().splitlines()
    index = next(i for i, line in enumerate(lines) if '"levelOfDescription": "item"' in line)
    record = json.loads(lines[index])
    record["record"]["title"] = "Register of ferry tolls collected at Hollin Ford"
    lines[index] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")
    return int(record["record"]["naId"])


def test_nothing_changed_touches_nothing_and_one_edit_touches_its_record(
    graph_builder: Any, neo4j_driver: Any, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    generate_demo_data(data, records=120, seed=21)
    full = graph_builder(data, tmp_path / "work", wipe_first=True)
    for writer in WRITERS:
        assert metadata_of(full, writer)[RECORDS_TOUCHED] > 0, writer

    again = graph_builder(data, tmp_path / "work")
    selection = metadata_of(again, "record_selection")
    assert selection[RECORDS_TOUCHED] == 0 and selection["files_changed"] == 0
    for writer in WRITERS:
        assert metadata_of(again, writer)[RECORDS_TOUCHED] == 0, writer

    shard = shard_with_items(data)
    edited = edit_one_title(shard)
    changed = graph_builder(data, tmp_path / "work")
    selection = metadata_of(changed, "record_selection")
    assert selection["files_changed"] == 1
    assert (selection["records_added"], selection["records_changed"]) == (0, 1)
    assert selection["records_removed"] == 0
    # Only the edited file's records were read to find the change.
    assert 1 < selection[RECORDS_TOUCHED] < metadata_of(changed, "record_selection")["records"]
    for writer in ("graph_nodes", "text_embeddings", "next_relationships"):
        assert metadata_of(changed, writer)[RECORDS_TOUCHED] == 1, writer
    children = scalar(
        neo4j_driver,
        "MATCH (:Chunk {naId: $id, chunkSeqId: 0})-[:Includes]->(c) RETURN count(c)",
        id=edited,
    )
    assert metadata_of(changed, "includes_relationships")[RECORDS_TOUCHED] == 1 + children
    citing = scalar(
        neo4j_driver,
        "MATCH (:Chunk {naId: $id, chunkSeqId: 0})-[r]->(c) WHERE type(r) IN $types "
        "RETURN count(DISTINCT c)",
        id=edited,
        types=[rel.value for rel in AUTHORITY_RELATIONSHIPS],
    )
    assert metadata_of(changed, "authority_relationships")[RECORDS_TOUCHED] == 1 + citing
    chunks = scalar(neo4j_driver, "MATCH (c:Chunk {naId: $id}) RETURN count(c)", id=edited)
    assert metadata_of(changed, "text_embeddings")["embedded"] == chunks
    assert metadata_of(changed, "entity_mentions")["chunks_relinked"] == chunks
    # The edited record's chunks and those of the records below it, linked again; no others.
    below = scalar(
        neo4j_driver,
        "MATCH (:Chunk {naId: $id, chunkSeqId: 0})-[:Includes*]->(c) RETURN count(DISTINCT c)",
        id=edited,
    )
    mentions = metadata_of(changed, "entity_mentions")
    assert mentions["sync_mode"] == "changes"
    assert mentions[RECORDS_TOUCHED] == 1 + below
    # The label score read again only the relinked records' mentions, not every label's.
    assert mentions["label_records_read"] <= 1 + below < mentions["labelled_records"]
    assert mentions["chunks"] == chunks
    assert scalar(
        neo4j_driver, "MATCH (c:Chunk {naId: $id, chunkSeqId: 0}) RETURN c.title", id=edited
    ).startswith("Register of ferry tolls")

    # Reports are made again for the communities holding the record or a neighbour whose
    # edges changed with it, and for their parents; the other communities keep theirs.
    reports = metadata_of(changed, "community_reports")
    assert reports["scoped_by_change"] is True
    holding = scalar(
        neo4j_driver,
        "MATCH (:Chunk {naId: $id, chunkSeqId: 0})-[:IN_COMMUNITY*]->(c) RETURN count(c)",
        id=edited,
    )
    assert holding <= reports["communities_in_scope"] < reports["communities"]
    assert reports[RECORDS_TOUCHED] < metadata_of(full, "community_reports")[RECORDS_TOUCHED]

    incremental = graph_fingerprint(neo4j_driver, "neo4j")
    scratch = graph_builder(data, tmp_path / "work-scratch", wipe_first=True)
    assert graph_fingerprint(neo4j_driver, "neo4j") == incremental
    assert label_score(changed) == label_score(scratch)


def label_score(result: Any) -> tuple[float, float, int]:
    found = metadata_of(result, "entity_mentions")
    return found["label_precision"], found["label_recall"], found["labelled_records"]

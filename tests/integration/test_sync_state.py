"""A by-difference writer takes its last complete write for the graph's state while the graph
still holds it, and reads the graph back otherwise: after an edit by hand, a run that died part
way, a wiped database, or when told to (the full rebuild)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nara_kg.build import sync_state
from nara_kg.build.edge_sync import sync_edges
from nara_kg.build.mention_sync import MENTIONS_CONCERN, sync_mentions
from nara_kg.graph.mentions import existing_mentions
from nara_kg.graph.relationships import (
    count_statement,
    edge_concern,
    existing_edges,
)
from nara_kg.ingest.layout import WorkLayout
from nara_kg.model.schema import Label, Prop, Rel
from tests.graph_helpers import wipe

pytestmark = pytest.mark.integration

#: Chunk ids as the pipeline names them (`<naId>-<seq>`): the writers note the records at the
#: ends of what they write for graph_communities.
CHUNKS = ["101-0", "102-0", "103-0", "104-0"]


@pytest.fixture
def chunks(neo4j_driver: Any) -> Any:
    wipe(neo4j_driver)
    neo4j_driver.execute_query(
        f"UNWIND $ids AS id CREATE (:{Label.CHUNK} {{{Prop.CHUNK_ID}: id}})", ids=CHUNKS
    )
    return neo4j_driver


def _run(driver: Any, query: str, **params: Any) -> None:
    driver.execute_query(query, params)


def test_edges_come_from_the_snapshot_until_the_graph_is_edited_by_hand(
    chunks: Any, tmp_path: Path
) -> None:
    layout = WorkLayout(tmp_path)
    first = sync_edges(chunks, "neo4j", Rel.NEXT, {("101-0", "102-0")}, layout)
    assert first.existing_from == "graph" and first.added == 1

    second = sync_edges(chunks, "neo4j", Rel.NEXT, {("101-0", "102-0"), ("102-0", "103-0")}, layout)
    assert second.existing_from == "snapshot" and (second.added, second.removed) == (1, 0)

    # Deleted by hand: the count no longer matches, so the graph is read and the edge restored.
    _run(chunks, f"MATCH (:{Label.CHUNK} {{{Prop.CHUNK_ID}: '101-0'}})-[r:{Rel.NEXT}]->() DELETE r")
    third = sync_edges(chunks, "neo4j", Rel.NEXT, {("101-0", "102-0"), ("102-0", "103-0")}, layout)
    assert third.existing_from == "graph" and third.added == 1
    assert existing_edges(chunks, "neo4j", Rel.NEXT) == {("101-0", "102-0"), ("102-0", "103-0")}

    # Told not to trust it (the full rebuild), it reads the graph even when it could.
    told = sync_edges(chunks, "neo4j", Rel.NEXT, {("102-0", "103-0")}, layout, trust_snapshot=False)
    assert told.existing_from == "graph" and told.removed == 1


def test_a_write_that_died_part_way_or_another_database_is_never_trusted(
    chunks: Any, tmp_path: Path
) -> None:
    layout = WorkLayout(tmp_path)
    desired = {("101-0", "102-0")}
    sync_edges(chunks, "neo4j", Rel.INCLUDES, desired, layout)
    sync_state.SyncedSet(
        chunks, "neo4j", layout, edge_concern(Rel.INCLUDES), count_statement(Rel.INCLUDES)
    ).begin()
    # ... the run dies here, after writing an edge the next desired set does not have.
    _run(
        chunks,
        f"MATCH (a:{Label.CHUNK} {{{Prop.CHUNK_ID}: '103-0'}}), "
        f"(b:{Label.CHUNK} {{{Prop.CHUNK_ID}: '104-0'}}) CREATE (a)-[:{Rel.INCLUDES}]->(b)",
    )
    resumed = sync_edges(chunks, "neo4j", Rel.INCLUDES, desired, layout)
    assert resumed.existing_from == "graph" and resumed.removed == 1
    assert existing_edges(chunks, "neo4j", Rel.INCLUDES) == desired

    # The same work dir against a graph that is not the one it wrote (wiped and rebuilt).
    wipe(chunks)
    chunks.execute_query(
        f"UNWIND $ids AS id CREATE (:{Label.CHUNK} {{{Prop.CHUNK_ID}: id}})", ids=CHUNKS
    )
    again = sync_edges(chunks, "neo4j", Rel.INCLUDES, desired, layout)
    assert again.existing_from == "graph" and again.added == 1


def test_mentions_keep_their_count_and_surface_in_the_snapshot(chunks: Any, tmp_path: Path) -> None:
    layout = WorkLayout(tmp_path)
    desired = {("101-0", "102-0"): (2, "Kimball"), ("101-0", "103-0"): (1, "F. Kimball")}
    assert sync_mentions(chunks, "neo4j", desired, layout).existing_from == "graph"
    assert layout.sync_snapshot(MENTIONS_CONCERN).exists()
    changed = {**desired, ("101-0", "102-0"): (3, "Kimball")}
    synced = sync_mentions(chunks, "neo4j", changed, layout)
    assert synced.existing_from == "snapshot"
    assert (synced.added, synced.updated, synced.removed) == (0, 1, 0)
    assert existing_mentions(chunks, "neo4j") == changed


def test_relationships_of_deleted_nodes_leave_the_snapshot_trusted(
    chunks: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chunk writer deleting a node takes its relationships with it: the snapshot, less the
    rows naming that node, is still the graph's."""
    monkeypatch.setattr(sync_state, "_ENDS_PER_QUERY", 2)  # the ends are asked in batches
    layout = WorkLayout(tmp_path)
    edges = {("101-0", "102-0"), ("102-0", "103-0"), ("103-0", "104-0")}
    sync_edges(chunks, "neo4j", Rel.INCLUDES, edges, layout)
    mentions = {("101-0", "102-0"): (2, "Kimball"), ("101-0", "104-0"): (1, "Kimball")}
    sync_mentions(chunks, "neo4j", mentions, layout)
    _run(chunks, f"MATCH (c:{Label.CHUNK} {{{Prop.CHUNK_ID}: '104-0'}}) DETACH DELETE c")

    kept = {("101-0", "102-0"), ("102-0", "103-0")}
    after = sync_edges(chunks, "neo4j", Rel.INCLUDES, kept, layout)
    assert after.existing_from == "snapshot" and (after.added, after.removed) == (0, 0)
    assert existing_edges(chunks, "neo4j", Rel.INCLUDES) == kept

    # The mention to the deleted node is gone; the one asked back is written again.
    again = sync_mentions(chunks, "neo4j", {("101-0", "102-0"): (2, "Kimball")}, layout)
    assert again.existing_from == "snapshot" and (again.added, again.removed) == (0, 0)

    # A deleted node and, besides, an edge deleted by hand: the rest no longer accounts for
    # the count, so the graph is read and the edge restored.
    _run(chunks, f"MATCH (c:{Label.CHUNK} {{{Prop.CHUNK_ID}: '103-0'}}) DETACH DELETE c")
    _run(
        chunks,
        f"MATCH (:{Label.CHUNK} {{{Prop.CHUNK_ID}: '101-0'}})-[r:{Rel.INCLUDES}]->() DELETE r",
    )
    restored = sync_edges(chunks, "neo4j", Rel.INCLUDES, {("101-0", "102-0")}, layout)
    assert restored.existing_from == "graph" and restored.added == 1
    assert existing_edges(chunks, "neo4j", Rel.INCLUDES) == {("101-0", "102-0")}

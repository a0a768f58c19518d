"""Acceptance tests of the graph server: Neo4j 5.26 + open GDS 2.13, vector index, GDS client."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from nara_kg.devserver import process
from nara_kg.settings import Neo4jSettings, neo4j_home

pytestmark = pytest.mark.integration


def _run(driver: Any, settings: Neo4jSettings, query: str, **params: Any) -> list[Any]:
    records, _, _ = driver.execute_query(query, params, database_=settings.database)
    return list(records)


@pytest.fixture
def test_label(neo4j_driver: Any, neo4j_settings: Neo4jSettings) -> Iterator[str]:
    """A label unique to one test; its nodes are deleted afterwards."""
    label = f"NaraKgTest_{uuid.uuid4().hex[:12]}"
    yield label
    _run(neo4j_driver, neo4j_settings, f"MATCH (n:`{label}`) DETACH DELETE n")


def test_neo4j_is_5_26(neo4j_driver: Any, neo4j_settings: Neo4jSettings) -> None:
    records = _run(
        neo4j_driver,
        neo4j_settings,
        "CALL dbms.components() YIELD name, versions RETURN name, versions[0] AS version",
    )
    kernel = {r["name"]: r["version"] for r in records}["Neo4j Kernel"]
    assert kernel.startswith("5.26."), kernel


def test_gds_version_is_2_13(neo4j_driver: Any, neo4j_settings: Neo4jSettings) -> None:
    records = _run(neo4j_driver, neo4j_settings, "RETURN gds.version() AS version")
    assert records[0]["version"].startswith("2.13."), records[0]["version"]


def test_gds_procedures_are_registered(neo4j_driver: Any, neo4j_settings: Neo4jSettings) -> None:
    records = _run(
        neo4j_driver,
        neo4j_settings,
        "SHOW PROCEDURES YIELD name WHERE name IN $names RETURN collect(name) AS names",
        names=[
            "gds.leiden.mutate",
            "gds.leiden.stream",
            "gds.graph.project",
            "gds.degree.stream",
        ],
    )
    assert set(records[0]["names"]) == {
        "gds.leiden.mutate",
        "gds.leiden.stream",
        "gds.graph.project",
        "gds.degree.stream",
    }


def test_leiden_returns_intermediate_communities(
    neo4j_driver: Any, neo4j_settings: Neo4jSettings, test_label: str
) -> None:
    # Two 5-cliques (ids 0-4 and 5-9) joined by the single edge 4-5.
    _run(
        neo4j_driver,
        neo4j_settings,
        f"""
        UNWIND range(0, 9) AS i CREATE (:`{test_label}` {{idx: i}})
        WITH count(*) AS created
        MATCH (a:`{test_label}`), (b:`{test_label}`)
        WHERE a.idx < b.idx AND ((a.idx < 5 AND b.idx < 5) OR (a.idx >= 5 AND b.idx >= 5)
                                 OR (a.idx = 4 AND b.idx = 5))
        CREATE (a)-[:LINKS]->(b)
        """,
    )
    graph_name = f"{test_label}_graph"
    try:
        projected = _run(
            neo4j_driver,
            neo4j_settings,
            "CALL gds.graph.project($g, $label, {LINKS: {orientation: 'UNDIRECTED'}}) "
            "YIELD nodeCount, relationshipCount RETURN nodeCount, relationshipCount",
            g=graph_name,
            label=test_label,
        )
        assert projected[0]["nodeCount"] == 10
        assert projected[0]["relationshipCount"] == 2 * (10 + 10 + 1)

        rows = _run(
            neo4j_driver,
            neo4j_settings,
            "CALL gds.leiden.stream($g, {includeIntermediateCommunities: true, randomSeed: 7, "
            "concurrency: 1}) YIELD nodeId, communityId, intermediateCommunityIds "
            "RETURN gds.util.asNode(nodeId).idx AS idx, communityId, intermediateCommunityIds",
            g=graph_name,
        )
    finally:
        _run(neo4j_driver, neo4j_settings, "CALL gds.graph.drop($g, false)", g=graph_name)

    assert len(rows) == 10
    for row in rows:
        levels = row["intermediateCommunityIds"]
        assert isinstance(levels, list) and len(levels) >= 1, row
        assert levels[-1] == row["communityId"], row
    community = {row["idx"]: row["communityId"] for row in rows}
    assert len({community[i] for i in range(5)}) == 1
    assert len({community[i] for i in range(5, 10)}) == 1
    assert community[0] != community[9]


def test_vector_index_answers_queries(
    neo4j_driver: Any, neo4j_settings: Neo4jSettings, test_label: str
) -> None:
    index_name = f"{test_label}_embedding"
    vectors = {"x": [1.0, 0.0, 0.0], "y": [0.0, 1.0, 0.0], "xy": [0.7, 0.7, 0.0]}
    _run(
        neo4j_driver,
        neo4j_settings,
        f"UNWIND $rows AS row CREATE (:`{test_label}` {{name: row.name, embedding: row.v}})",
        rows=[{"name": k, "v": v} for k, v in vectors.items()],
    )
    try:
        _run(
            neo4j_driver,
            neo4j_settings,
            f"CREATE VECTOR INDEX `{index_name}` IF NOT EXISTS "
            f"FOR (n:`{test_label}`) ON n.embedding OPTIONS {{indexConfig: {{"
            "`vector.dimensions`: 3, `vector.similarity_function`: 'cosine'}}",
        )
        _run(neo4j_driver, neo4j_settings, "CALL db.awaitIndex($name, 120)", name=index_name)
        state = _run(
            neo4j_driver,
            neo4j_settings,
            "SHOW VECTOR INDEXES YIELD name, state WHERE name = $name RETURN state",
            name=index_name,
        )
        assert [r["state"] for r in state] == ["ONLINE"]
        hits = _run(
            neo4j_driver,
            neo4j_settings,
            "CALL db.index.vector.queryNodes($name, 2, [0.9, 0.1, 0.0]) YIELD node, score "
            "RETURN node.name AS name, score",
            name=index_name,
        )
    finally:
        _run(neo4j_driver, neo4j_settings, f"DROP INDEX `{index_name}` IF EXISTS")
    assert [h["name"] for h in hits] == ["x", "xy"]
    assert hits[0]["score"] > hits[1]["score"]


@pytest.mark.parametrize("arrow", [False, True], ids=["bolt", "arrow-fallback"])
def test_graphdatascience_client_connects(
    neo4j_driver: Any, neo4j_settings: Neo4jSettings, arrow: bool
) -> None:
    """The Python client works over Bolt; open GDS has no Arrow server (no gds.debug.arrow), and
    with the default ``arrow=True`` the client notices that and falls back to Bolt."""
    from graphdatascience import GraphDataScience

    gds = GraphDataScience(
        neo4j_settings.uri,
        auth=(neo4j_settings.username, neo4j_settings.password),
        database=neo4j_settings.database,
        arrow=arrow,
    )
    try:
        assert str(gds.server_version()).startswith("2.13."), gds.server_version()
        frame = gds.run_cypher("RETURN gds.version() AS version")
        assert frame["version"][0].startswith("2.13.")
    finally:
        gds.close()


def test_status_reports_the_running_server(
    neo4j_driver: Any, neo4j_settings: Neo4jSettings
) -> None:
    info = process.status(neo4j_settings, neo4j_home())
    assert info["running"] is True
    assert info["error"] is None
    assert info["neo4j_version"].startswith("5.26.")
    assert info["gds_version"].startswith("2.13.")
    assert neo4j_settings.password not in repr(info)
    if neo4j_settings.managed:
        assert info["pid"] is not None

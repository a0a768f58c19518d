"""Leiden through GDS on a small graph whose community structure is known."""

from __future__ import annotations

import itertools
import time
from typing import Any

import pytest

from nara_kg.build import communities as build_communities
from nara_kg.graph.communities import (
    LEIDEN_CONFIG,
    PROJECT,
    PROJECT_SEEDED,
    projection_exists,
    read_projection_digests,
)
from tests.graph_helpers import scalar, wipe

pytestmark = pytest.mark.integration

# Two groups of five records, each group held together by its series (Includes) and a shared
# subject, joined by one creator link; record 99 is isolated.
GROUP_A = [1, 2, 3, 4, 5]
GROUP_B = [11, 12, 13, 14, 15]


def make_graph(driver: Any) -> None:
    wipe(driver)
    nodes = [*GROUP_A, *GROUP_B, 99, 1000, 2000]
    driver.execute_query(
        "UNWIND $ids AS id CREATE (:Chunk:fileUnit {naId: id, chunkId: toString(id) + '-0', "
        "chunkSeqId: 0, title: 'record ' + id, nodeType: 'fileUnit', text: 'record ' + id})",
        ids=nodes,
    )
    edges = []
    for group, subject in ((GROUP_A, 1000), (GROUP_B, 2000)):
        head, *rest = group
        edges += [("Includes", head, child) for child in rest]
        edges += [("subject", subject, member) for member in group]
        edges += [("Next", a, b) for a, b in itertools.pairwise(rest)]  # not projected
    edges.append(("creator", 5, 11))
    for rel in ("Includes", "subject", "creator", "Next"):
        driver.execute_query(
            f"UNWIND $pairs AS p MATCH (a:Chunk {{naId: p[0]}}), (b:Chunk {{naId: p[1]}}) "
            f"CREATE (a)-[:{rel}]->(b)",
            pairs=[[a, b] for r, a, b in edges if r == rel],
        )


@pytest.fixture()
def gds(neo4j_driver: Any) -> Any:
    from graphdatascience import GraphDataScience

    return GraphDataScience(neo4j_driver, database="neo4j", arrow=False)


def membership(driver: Any) -> dict[int, str]:
    records, _, _ = driver.execute_query(
        "MATCH (m:Chunk)-[:IN_COMMUNITY]->(c:Community) RETURN m.naId AS naId, c.id AS id"
    )
    return {r["naId"]: r["id"] for r in records}


def test_groups_become_level_zero_communities(neo4j_driver: Any, gds: Any) -> None:
    make_graph(neo4j_driver)
    result = build_communities.detect_communities(neo4j_driver, "neo4j", lambda: gds)
    assert result.levels >= 1
    members = membership(neo4j_driver)
    assert 99 not in members  # the isolated record is a singleton: no community
    finest_a = {members[n] for n in [*GROUP_A, 1000]}
    finest_b = {members[n] for n in [*GROUP_B, 2000]}
    assert len(finest_a) == 1 and len(finest_b) == 1 and finest_a != finest_b
    assert all(cid.startswith("0-") for cid in finest_a | finest_b)
    # Every community's level matches its id, and a parent is always one level up.
    bad_links = scalar(
        neo4j_driver,
        "MATCH (c:Community)-[:IN_COMMUNITY]->(p:Community) WHERE p.level <> c.level + 1 "
        "RETURN count(*)",
    )
    assert bad_links == 0
    assert (
        scalar(
            neo4j_driver,
            "MATCH (c:Community) WHERE c.id <> toString(c.level) + '-' + split(c.id, '-')[1] "
            "RETURN count(c)",
        )
        == 0
    )
    sizes = scalar(neo4j_driver, "MATCH (c:Community {level: 0}) RETURN collect(c.size)")
    assert sorted(sizes) == [6, 6]
    # At every level a community's size is the records under it in the graph.
    assert (
        scalar(
            neo4j_driver,
            "MATCH (c:Community) "
            "WHERE c.size <> COUNT { (:Chunk)-[:IN_COMMUNITY*1..12]->(c) } RETURN count(c)",
        )
        == 0
    )
    # The projection is gone afterwards.
    assert not projection_exists(gds)


def test_reproducible_and_idempotent(neo4j_driver: Any, gds: Any) -> None:
    make_graph(neo4j_driver)
    build_communities.detect_communities(neo4j_driver, "neo4j", lambda: gds)
    first = membership(neo4j_driver)
    again = build_communities.detect_communities(neo4j_driver, "neo4j", lambda: gds)
    assert membership(neo4j_driver) == first
    assert again.write["added"] == 0 and again.write["removed"] == 0


def test_the_projection_digest_follows_its_rows_and_weights(neo4j_driver: Any) -> None:
    make_graph(neo4j_driver)
    # A weighted edge too: authority 2000 named three times in a chunk of record 3.
    neo4j_driver.execute_query(
        "MATCH (a:Chunk {naId: 2000}), (r:Chunk {naId: 3}) "
        "CREATE (r2:Chunk {naId: 3, chunkId: '3-1', chunkSeqId: 1}) "
        "CREATE (a)-[:MENTIONED_IN {count: 3}]->(r2)"
    )
    first = read_projection_digests(neo4j_driver, "neo4j")
    # 13 first chunks; the isolated record's row has no target.
    assert first.records >= 13
    assert read_projection_digests(neo4j_driver, "neo4j") == first
    # A row's text is content, not projection.
    neo4j_driver.execute_query("MATCH (c:Chunk {naId: 3}) SET c.rowHash = 'edited'")
    edited = read_projection_digests(neo4j_driver, "neo4j")
    assert edited.projection == first.projection and edited.content != first.content
    # A mention's count is an edge's weight.
    neo4j_driver.execute_query("MATCH ()-[m:MENTIONED_IN]->() SET m.count = 4")
    weighed = read_projection_digests(neo4j_driver, "neo4j")
    assert weighed.projection != first.projection and weighed.records == first.records


def test_ids_are_canonical_and_a_seeded_run_keeps_the_regions_a_change_did_not_reach(
    neo4j_driver: Any, gds: Any
) -> None:
    make_graph(neo4j_driver)
    full = build_communities.detect_communities(neo4j_driver, "neo4j", lambda: gds, force=True)
    assert not full.seeded
    members = membership(neo4j_driver)
    # Named by the smallest member: group A's finest community is 0-1, group B's 0-11.
    assert members[3] == "0-1" and members[13] == "0-11"
    # Record 99 joins group B: Leiden starts from the communities it found.
    neo4j_driver.execute_query(
        "MATCH (a:Chunk {naId: 2000}), (b:Chunk {naId: 99}) CREATE (a)-[:subject]->(b)"
    )
    seeded = build_communities.detect_communities(neo4j_driver, "neo4j", lambda: gds, seed=True)
    assert seeded.seeded and seeded.leiden_ran
    after = membership(neo4j_driver)
    assert after[99] == after[13] == "0-11"
    assert {n: after[n] for n in GROUP_A} == {n: members[n] for n in GROUP_A}
    assert seeded.communities_changed >= 1
    assert seeded.records_touched == 13
    assert not projection_exists(gds)
    # Seeding is asked for.
    neo4j_driver.execute_query("MATCH (:Chunk {naId: 99})<-[r:subject]-() DELETE r")
    unseeded = build_communities.detect_communities(neo4j_driver, "neo4j", lambda: gds)
    assert unseeded.leiden_ran and not unseeded.seeded


def _projected(gds: Any, statement: str, name: str) -> tuple[list[Any], dict[int, list[int]]]:
    """A projection's edges (as naIds, with weights) and each naId's Leiden levels."""
    graph, _ = gds.graph.project.cypher(statement, graph_name=name)
    try:
        edges = gds.run_cypher(
            "CALL gds.graph.relationshipProperty.stream($g, 'weight') "
            "YIELD sourceNodeId, targetNodeId, propertyValue "
            "RETURN gds.util.nodeProperty($g, sourceNodeId, 'naId') AS s, "
            "gds.util.nodeProperty($g, targetNodeId, 'naId') AS t, propertyValue AS w",
            params={"g": name},
        )
        levels = gds.leiden.stream(graph, **LEIDEN_CONFIG)
        naids = gds.run_cypher(
            "UNWIND $ids AS id RETURN id, gds.util.nodeProperty($g, id, 'naId') AS naId",
            params={"g": name, "ids": levels["nodeId"].tolist()},
        )
    finally:
        gds.graph.drop(graph)
    by_node = dict(zip(naids["id"], naids["naId"], strict=True))
    return (
        sorted(edges.itertuples(index=False, name=None)),
        {
            int(by_node[node]): list(ids)
            for node, ids in zip(levels["nodeId"], levels["intermediateCommunityIds"], strict=True)
        },
    )


def test_the_unseeded_projection_is_the_seeded_one_without_its_seeds(
    neo4j_driver: Any, gds: Any
) -> None:
    """Leiden unseeded reads the projection without the seeds' lookups (half its time at 10^6)
    and must find what it finds on the seeded one's nodes and edges."""
    make_graph(neo4j_driver)
    neo4j_driver.execute_query(
        "MATCH (a:Chunk {naId: 2}), (b:Chunk {naId: 1000}) "
        "CREATE (b)-[:MENTIONED_IN {count: 3}]->(a)"
    )
    build_communities.detect_communities(neo4j_driver, "neo4j", lambda: gds, force=True)
    assert "IN_COMMUNITY" not in PROJECT and "IN_COMMUNITY" in PROJECT_SEEDED
    plain = _projected(gds, PROJECT, "plain")
    seeded = _projected(gds, PROJECT_SEEDED, "seeded")
    assert plain == seeded
    edges, levels = plain
    assert (1000, 2, 3.0) in edges and len(levels) == 13


class LeidenFails:
    """The real client, except that Leiden breaks after the projection exists."""

    def __init__(self, gds: Any) -> None:
        self._gds = gds

    def __getattr__(self, name: str) -> Any:
        return getattr(self._gds, name)

    @property
    def leiden(self) -> Any:
        class Broken:
            def mutate(self, *args: Any, **kwargs: Any) -> Any:
                raise RuntimeError("leiden failed")

        return Broken()


def test_projection_dropped_when_leiden_fails(neo4j_driver: Any, gds: Any) -> None:
    make_graph(neo4j_driver)
    with pytest.raises(RuntimeError, match="leiden failed"):
        build_communities.detect_communities(neo4j_driver, "neo4j", lambda: LeidenFails(gds))
    assert not projection_exists(gds)


def _when_projected(gds: Any, then: Any) -> Any:
    """A stand-in for the digest stream that waits for Leiden's projection to exist, then
    does `then`: it returns only if the projection is made while the digests stream."""

    def read_digests(*args: Any, **kwargs: Any) -> Any:
        deadline = time.monotonic() + 30
        while not projection_exists(gds):
            assert time.monotonic() < deadline, "no projection made while the digests streamed"
            time.sleep(0.05)
        return then(*args, **kwargs)

    return read_digests


def test_a_forced_run_projects_while_the_digests_stream(
    neo4j_driver: Any, gds: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_graph(neo4j_driver)
    monkeypatch.setattr(
        build_communities,
        "_read_digests",
        _when_projected(gds, build_communities._read_digests),
    )
    forced = build_communities.detect_communities(neo4j_driver, "neo4j", lambda: gds, force=True)
    assert forced.leiden_ran and forced.communities_per_level == {0: 2}
    assert not projection_exists(gds)

    def fails(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("stream failed")

    monkeypatch.setattr(build_communities, "_read_digests", _when_projected(gds, fails))
    with pytest.raises(RuntimeError, match="stream failed"):
        build_communities.detect_communities(neo4j_driver, "neo4j", lambda: gds, force=True)
    assert not projection_exists(gds)


def test_leiden_is_skipped_only_while_its_input_and_the_communities_are_unchanged(
    neo4j_driver: Any, gds: Any, tmp_path: Any
) -> None:
    make_graph(neo4j_driver)
    state = tmp_path / "leiden.json"

    def never_opened() -> Any:
        raise AssertionError("the GDS client was opened for a skipped run")

    def detect(**options: Any) -> build_communities.CommunityResult:
        open_gds = (lambda: LeidenFails(gds)) if options.pop("broken", False) else lambda: gds
        return build_communities.detect_communities(
            neo4j_driver,
            "neo4j",
            never_opened if options.pop("unopened", False) else open_gds,
            state_path=state,
            **options,
        )

    first = detect()
    assert first.leiden_ran
    members = membership(neo4j_driver)
    # Unchanged: the remembered result, and Leiden is never called, nor its client made.
    again = detect(unopened=True)
    assert not again.leiden_ran
    assert again.communities_per_level == first.communities_per_level
    assert (again.levels, again.modularities) == (first.levels, first.modularities)
    assert membership(neo4j_driver) == members
    # A text edit that touches no projected relationship changes nothing Leiden reads.
    neo4j_driver.execute_query("MATCH (c:Chunk {naId: 3}) SET c.text = 'record 3, revised'")
    assert not detect(broken=True).leiden_ran
    # The full rebuild always runs it.
    assert detect(force=True).leiden_ran
    # A new projected relationship is new input.
    neo4j_driver.execute_query(
        "MATCH (a:Chunk {naId: 1000}), (b:Chunk {naId: 99}) CREATE (a)-[:subject]->(b)"
    )
    with pytest.raises(RuntimeError, match="leiden failed"):
        detect(broken=True)
    assert detect().leiden_ran
    assert 99 in membership(neo4j_driver)
    # Communities changed behind its back (a membership deleted) are written again.
    neo4j_driver.execute_query("MATCH (:Chunk {naId: 99})-[r:IN_COMMUNITY]->() DELETE r")
    assert detect().leiden_ran
    assert 99 in membership(neo4j_driver)


def test_memberships_are_read_back_only_when_the_graph_may_differ(
    neo4j_driver: Any, gds: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nara_kg.graph import community_memberships as memberships

    make_graph(neo4j_driver)
    build_communities.detect_communities(neo4j_driver, "neo4j", lambda: gds)
    members = membership(neo4j_driver)
    reads: list[str] = []
    real_read_all = memberships.read_all

    def spying_read_all(driver: Any, database: str, query: str, **params: Any) -> Any:
        reads.append(query)
        return real_read_all(driver, database, query, **params)

    monkeypatch.setattr(memberships, "read_all", spying_read_all)
    # Two members a range: the comparison crosses ranges.
    monkeypatch.setattr(memberships, "MEMBERS_PER_RANGE", 2)

    # Leiden runs again (no state kept) and finds the same communities: nothing is read back.
    again = build_communities.detect_communities(neo4j_driver, "neo4j", lambda: gds)
    assert memberships.MEMBERSHIPS_OF_RANGE not in reads
    assert again.write["added"] == again.write["removed"] == 0
    assert membership(neo4j_driver) == members

    # A membership lost: the counts differ, so the memberships are compared and it comes back.
    neo4j_driver.execute_query("MATCH (:Chunk {naId: 3})-[r:IN_COMMUNITY]->() DELETE r")
    reads.clear()
    restored = build_communities.detect_communities(neo4j_driver, "neo4j", lambda: gds)
    assert reads.count(memberships.MEMBERSHIPS_OF_RANGE) == -(-len(members) // 2)
    assert restored.write["added"] == 1
    assert membership(neo4j_driver) == members

    # A run stopped before its hashes were written leaves other hashes: compared again.
    neo4j_driver.execute_query(
        "MATCH (c:Community) WITH c LIMIT 1 SET c.memberHash = 'from a stopped run'"
    )
    reads.clear()
    build_communities.detect_communities(neo4j_driver, "neo4j", lambda: gds)
    assert memberships.MEMBERSHIPS_OF_RANGE in reads
    assert (
        scalar(
            neo4j_driver, "MATCH (c:Community {memberHash: 'from a stopped run'}) RETURN count(c)"
        )
        == 0
    )


def _hierarchy(groups: list[list[int]]) -> tuple[Any, dict[str, str]]:
    """A one-level hierarchy of `groups` (named by their smallest member) and its member hashes,
    as detect_communities makes them."""
    from nara_kg.graph.community_memberships import member_hashes
    from nara_kg.model.community_hierarchy import build_hierarchy, canonical_assignments

    pairs = [(na_id, [group[0]]) for group in groups for na_id in group]
    hierarchy = build_hierarchy(canonical_assignments(pairs))
    return hierarchy, member_hashes(hierarchy)


def _write(driver: Any, groups: list[list[int]], *, trusted: bool) -> dict[str, int]:
    from nara_kg.graph.communities import community_state
    from nara_kg.graph.community_memberships import write_hierarchy

    hierarchy, hashes = _hierarchy(groups)
    state = community_state(driver, "neo4j")
    return write_hierarchy(driver, "neo4j", hierarchy, hashes, state, hashes_trusted=trusted)


def test_trusted_hashes_compare_only_the_communities_whose_members_change(
    neo4j_driver: Any,
) -> None:
    wipe(neo4j_driver)
    neo4j_driver.execute_query(
        "UNWIND range(1, 20) AS id CREATE (:Chunk {naId: id, chunkId: toString(id) + '-0'})"
    )
    before = [[1, 2, 3], [4, 5, 6], list(range(7, 21))]
    assert _write(neo4j_driver, before, trusted=False)["added"] == 20
    # Record 3 moves to the second group ("0-4" becomes "0-3"); the third group is not read.
    after = [[1, 2], [3, 4, 5, 6], list(range(7, 21))]
    moved = _write(neo4j_driver, after, trusted=True)
    assert membership(neo4j_driver) == {n: f"0-{g[0]}" for g in after for n in g}
    # "0-1"'s three links are read; "0-4" was deleted with its links, "0-3" is new.
    assert moved["memberships_read"] == 3
    assert (moved["added"], moved["removed"]) == (4, 1)
    # Untrusted, every membership is read back (those of "0-3", deleted, are gone first).
    assert _write(neo4j_driver, before, trusted=False)["memberships_read"] == 20 - 4
    assert membership(neo4j_driver) == {n: f"0-{g[0]}" for g in before for n in g}


def test_community_state_counts_memberships_from_the_count_store(neo4j_driver: Any) -> None:
    """The state's membership and parent-link counts are those the graph holds, answered from
    Neo4j's count store: a plan that expands the memberships reads every one of them, twice a
    build."""
    from nara_kg.graph.communities import COMMUNITY_STATE, community_state

    wipe(neo4j_driver)
    neo4j_driver.execute_query(
        "UNWIND range(1, 20) AS id CREATE (:Chunk {naId: id, chunkId: toString(id) + '-0'})"
    )
    _write(neo4j_driver, [[1, 2, 3], [4, 5, 6], list(range(7, 21))], trusted=False)
    state = community_state(neo4j_driver, "neo4j")
    assert state["members"] == 20
    assert state["parentLinks"] == scalar(
        neo4j_driver, "MATCH (:Community)-[r:IN_COMMUNITY]->(:Community) RETURN count(r)"
    )
    with neo4j_driver.session(database="neo4j") as session:
        plan = session.run("PROFILE " + COMMUNITY_STATE).consume().profile

    def operators(step: dict[str, Any]) -> list[str]:
        found = [str(step["operatorType"]).split("@")[0]]
        for child in step.get("children", []):
            found += operators(child)
        return found

    used = operators(plan)
    assert used.count("RelationshipCountFromCountStore") == 2
    assert not [op for op in used if "Expand" in op], used


def test_a_stopped_write_leaves_its_changing_communities_without_a_hash(
    neo4j_driver: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nara_kg.graph import community_memberships as memberships

    wipe(neo4j_driver)
    neo4j_driver.execute_query(
        "UNWIND range(1, 20) AS id CREATE (:Chunk {naId: id, chunkId: toString(id) + '-0'})"
    )
    before = [[1, 2, 3], [4, 5, 6], list(range(7, 21))]
    _write(neo4j_driver, before, trusted=False)
    real_write_batches = memberships.write_batches

    def stopping(driver: Any, database: str, statement: str, rows: Any, **kw: Any) -> int:
        if statement == memberships.ADD_MEMBERS and rows:
            raise RuntimeError("stopped")
        return real_write_batches(driver, database, statement, rows, **kw)

    # The move of record 3 stops after its old membership went and before its new one came.
    monkeypatch.setattr(memberships, "write_batches", stopping)
    with pytest.raises(RuntimeError, match="stopped"):
        _write(neo4j_driver, [[1, 2], [3, 4, 5, 6], list(range(7, 21))], trusted=True)
    monkeypatch.setattr(memberships, "write_batches", real_write_batches)
    assert 3 not in membership(neo4j_driver)
    # The move is taken back: "0-1" wants its old members again, whose hash it held.
    _write(neo4j_driver, before, trusted=True)
    assert membership(neo4j_driver) == {n: f"0-{g[0]}" for g in before for n in g}


def test_after_a_projection_change_only_the_changed_communities_are_read_back(
    neo4j_driver: Any, gds: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nara_kg.graph import community_memberships as memberships

    # Group A is half of this small graph: compared by id however large its share.
    monkeypatch.setattr(memberships, "CHANGED_MEMBERS_SHARE", 1.0)
    make_graph(neo4j_driver)
    state = tmp_path / "leiden.json"
    first = build_communities.detect_communities(
        neo4j_driver, "neo4j", lambda: gds, state_path=state
    )
    assert first.write["memberships_read"] == 0  # an empty graph
    # The isolated record joins group A through its subject: group B's community is unchanged.
    neo4j_driver.execute_query(
        "MATCH (a:Chunk {naId: 1000}), (b:Chunk {naId: 99}) CREATE (a)-[:subject]->(b)"
    )
    joined = build_communities.detect_communities(
        neo4j_driver, "neo4j", lambda: gds, state_path=state
    )
    assert joined.leiden_ran
    members = membership(neo4j_driver)
    assert members[99] == members[1] != members[11]
    assert joined.write["memberships_read"] == len(GROUP_A) + 1
    assert (joined.write["added"], joined.write["removed"]) == (1, 0)
    # The full rebuild finds the same communities: nothing to write.
    rebuilt = build_communities.detect_communities(
        neo4j_driver, "neo4j", lambda: gds, state_path=state, force=True
    )
    assert membership(neo4j_driver) == members
    assert rebuilt.write["added"] == rebuilt.write["removed"] == 0

"""The community steps cost what changed: an unchanged projection skips Leiden and every
report context; a changed one seeds Leiden from the last communities, and the communities the
change did not reach keep their ids and their reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import nara_kg.generation.report_loop as report_loop
from graph_assets.common import RECORDS_TOUCHED
from nara_kg.demo import generate_demo_data
from nara_kg.graph.fingerprint import graph_fingerprint
from tests.graph_helpers import metadata_of, scalar

pytestmark = pytest.mark.integration


def communities(driver: Any) -> dict[str, dict[str, Any]]:
    records, _, _ = driver.execute_query(
        "MATCH (c:Community) OPTIONAL MATCH (m:Chunk)-[:IN_COMMUNITY]->(c) "
        "RETURN c.id AS id, c.memberHash AS memberHash, c.report AS report, "
        "c.reportContextKey AS contextKey, collect(m.naId) AS members"
    )
    return {r["id"]: {**r.data(), "members": sorted(r["members"])} for r in records}


def delete_one_member(data: Path, members: set[int]) -> int:
    """Delete, from its file, one item record that is a member of a level-0 community."""
    for path in sorted(data.rglob("*.jsonl")):
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            record = json.loads(line)["record"]
            if record.get("levelOfDescription") == "item" and record["naId"] in members:
                del lines[i]
                path.write_text("\n".join(lines) + "\n")
                return int(record["naId"])
    raise AssertionError("no item record in a community")


def test_unchanged_projection_skips_leiden_and_reports_and_a_change_seeds_leiden(
    graph_builder: Any, neo4j_driver: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    generate_demo_data(data, records=120, seed=21)
    graph_builder(data, tmp_path / "work", wipe_first=True)
    first = communities(neo4j_driver)
    assert first

    # Nothing changed: no Leiden, no community read, no context built.
    again = graph_builder(data, tmp_path / "work")
    leiden = metadata_of(again, "graph_communities")
    assert leiden["leiden_skipped"] is True and leiden["seeded"] is False
    assert leiden[RECORDS_TOUCHED] == 0 and leiden["communities_changed"] == 0
    assert leiden["projection_digest"]
    reports = metadata_of(again, "community_reports")
    assert reports["reports_skipped"] is True and reports["leiden_skipped"] is True
    assert reports["contexts_rebuilt"] == reports["reports_regenerated"] == 0
    assert reports[RECORDS_TOUCHED] == 0
    assert reports["projection_digest"] == leiden["projection_digest"]
    assert communities(neo4j_driver) == first

    # One record gone: the projection changed, Leiden starts from the communities it found.
    finest = {
        cid: set(c["members"]) for cid, c in first.items() if cid.startswith("0-") and c["members"]
    }
    deleted = delete_one_member(data, set().union(*finest.values()))
    monkeypatch.setenv("NARA_KG_LEIDEN_SEEDED", "1")
    changed = graph_builder(data, tmp_path / "work")
    leiden = metadata_of(changed, "graph_communities")
    assert leiden["leiden_skipped"] is False and leiden["seeded"] is True
    assert leiden[RECORDS_TOUCHED] > 0 and leiden["communities_changed"] >= 1
    after = communities(neo4j_driver)
    # Most level-0 communities away from the deleted record keep their ids and members (not
    # all: one record fewer changes every modularity gain a little, and Leiden moves some).
    untouched = [cid for cid, members in finest.items() if deleted not in members]
    kept = [cid for cid in untouched if cid in after and set(after[cid]["members"]) == finest[cid]]
    assert 2 * len(kept) >= len(untouched) > 0
    # Their reports stand: only the communities whose members changed get a new context.
    reports = metadata_of(changed, "community_reports")
    assert reports["reports_skipped"] is False and reports["seeded"] is True
    assert 1 <= reports["contexts_rebuilt"] < len(after)
    assert reports["reports_regenerated"] <= reports["contexts_rebuilt"]
    same_members = [
        cid
        for cid in after
        if cid in first and first[cid]["memberHash"] == after[cid]["memberHash"]
    ]
    unchanged_reports = [
        cid
        for cid in same_members
        if (after[cid]["report"], after[cid]["contextKey"])
        == (first[cid]["report"], first[cid]["contextKey"])
    ]
    assert len(unchanged_reports) >= len(kept)


def test_unseeded_leiden_keeps_the_ids_of_the_communities_a_change_did_not_reach(
    graph_builder: Any, neo4j_driver: Any, tmp_path: Path
) -> None:
    """The default (seeding off): Leiden is deterministic and ids are named by a member, so the
    communities one deleted record did not reach come back with their ids, members and
    reports, as a full build would give them."""
    data = tmp_path / "data"
    generate_demo_data(data, records=120, seed=21)
    graph_builder(data, tmp_path / "work", wipe_first=True)
    first = communities(neo4j_driver)
    finest = {
        cid: set(c["members"]) for cid, c in first.items() if cid.startswith("0-") and c["members"]
    }
    deleted = delete_one_member(data, set().union(*finest.values()))
    changed = graph_builder(data, tmp_path / "work")
    assert metadata_of(changed, "graph_communities")["seeded"] is False
    after = communities(neo4j_driver)
    untouched = [cid for cid, members in finest.items() if deleted not in members]
    assert untouched
    for cid in untouched:
        assert set(after[cid]["members"]) == finest[cid], cid
        assert after[cid]["report"] == first[cid]["report"], cid
    reports = metadata_of(changed, "community_reports")
    assert 1 <= reports["contexts_rebuilt"] <= len(after) - len(untouched)


def test_a_text_edit_reads_only_the_edited_record_for_the_reports(
    graph_builder: Any, tmp_path: Path
) -> None:
    """The reports of the communities above an edited record are made from the other members'
    rows and relationships as the report scope's store remembers them: only the edited record
    is read from the graph."""
    data = tmp_path / "data"
    generate_demo_data(data, records=120, seed=21)
    first = graph_builder(data, tmp_path / "work", wipe_first=True)
    assert metadata_of(first, "community_reports")["scoped_by_change"] is False
    path = next(p for p in sorted(data.rglob("*.jsonl")) if "description" in str(p))
    lines = path.read_text().splitlines()
    for index, line in enumerate(lines):
        payload = json.loads(line)
        record = payload["record"]
        if record.get("levelOfDescription") == "item" and record.get("scopeAndContentNote"):
            record["scopeAndContentNote"] = "Re-examined: " + record["scopeAndContentNote"]
            lines[index] = json.dumps(payload)
            break
    else:
        raise AssertionError(f"no item with a scope note in {path}")
    path.write_text("\n".join(lines) + "\n")
    changed = graph_builder(data, tmp_path / "work")
    reports = metadata_of(changed, "community_reports")
    assert reports["scoped_by_change"] is True
    assert reports[RECORDS_TOUCHED] == reports["member_texts_read"] == 1
    assert reports["members_in_scope"] > 1
    assert reports["contexts_rebuilt"] >= 1


def test_an_authority_named_by_one_more_record_reads_that_record_not_those_it_named(
    graph_builder: Any, neo4j_driver: Any, tmp_path: Path
) -> None:
    """A record whose text now names an authority that many records name (and which it takes as
    a subject): the authority's edges changed, but the records it named before keep their rows,
    degrees and mentions, so the reports read the record and the authority, not them; and the
    graph, reports included, is the one a build from scratch gives."""
    data = tmp_path / "data"
    generate_demo_data(data, records=120, seed=21)
    graph_builder(data, tmp_path / "work", wipe_first=True)
    named: dict[int, dict[str, Any]] = {}
    for path in sorted(p for p in data.rglob("*.jsonl") if "descriptions" in p.parts):
        for line in path.read_text().splitlines():
            for subject in json.loads(line)["record"].get("subjects") or []:
                named.setdefault(subject["naId"], subject)
    records, _, _ = neo4j_driver.execute_query(
        "MATCH (a:Chunk {chunkSeqId: 0})-[:MENTIONED_IN]->(c:Chunk) WHERE a.naId IN $ids "
        "WITH a, collect(DISTINCT c.naId) AS records ORDER BY size(records) DESC, a.naId "
        "RETURN a.naId AS naId, records LIMIT 1",
        ids=list(named),
    )
    subject_id, records_named = int(records[0]["naId"]), set(records[0]["records"])
    assert len(records_named) >= 5
    path, index, payload = _item_not_in(data, records_named)
    record = payload["record"]
    record["subjects"] = [*(record.get("subjects") or []), named[subject_id]]
    place = named[subject_id]["heading"].split(" (")[0]
    record["scopeAndContentNote"] = f"{record.get('scopeAndContentNote') or ''} Also: {place}."
    lines = path.read_text().splitlines()
    lines[index] = json.dumps(payload)
    path.write_text("\n".join(lines) + "\n")

    changed = graph_builder(data, tmp_path / "work")
    now_named = scalar(
        neo4j_driver,
        "MATCH (:Chunk {naId: $id, chunkSeqId: 0})-[:MENTIONED_IN]->(c:Chunk) "
        "RETURN count(DISTINCT c.naId)",
        id=subject_id,
    )
    assert now_named == len(records_named) + 1
    reports = metadata_of(changed, "community_reports")
    assert reports["scoped_by_change"] is True
    # The record, the authority and the other ends of the record's own edges, at most.
    record_edges = scalar(
        neo4j_driver,
        "MATCH (:Chunk {naId: $id, chunkSeqId: 0})-[]-(c:Chunk {chunkSeqId: 0}) "
        "RETURN count(DISTINCT c)",
        id=int(record["naId"]),
    )
    assert 2 <= reports[RECORDS_TOUCHED] <= 1 + record_edges < len(records_named)

    incremental = graph_fingerprint(neo4j_driver, "neo4j")
    graph_builder(data, tmp_path / "work-scratch", wipe_first=True)
    assert graph_fingerprint(neo4j_driver, "neo4j") == incremental


def _item_not_in(data: Path, na_ids: set[int]) -> tuple[Path, int, dict[str, Any]]:
    """The first item record (its file, line index and payload) whose naId is not in `na_ids`."""
    for path in sorted(p for p in data.rglob("*.jsonl") if "descriptions" in p.parts):
        for index, line in enumerate(path.read_text().splitlines()):
            payload = json.loads(line)
            record = payload["record"]
            if record.get("levelOfDescription") == "item" and record["naId"] not in na_ids:
                return path, index, payload
    raise AssertionError("every item record is named")


def test_coarse_communities_take_their_members_from_their_sub_communities(
    graph_builder: Any, neo4j_driver: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A coarse community's members are its sub-communities' together, not asked of the graph
    again; the reports are those that reading every community's members gives."""
    data = tmp_path / "data"
    generate_demo_data(data, records=120, seed=21)
    composed = graph_builder(data, tmp_path / "work", wipe_first=True)
    assert metadata_of(composed, "community_reports")["member_ids_composed"] >= 1
    with_composed = graph_fingerprint(neo4j_driver, "neo4j")

    monkeypatch.setattr(report_loop, "members_of_sub_communities", lambda *_: None)
    read = graph_builder(data, tmp_path / "work-read", wipe_first=True)
    assert metadata_of(read, "community_reports")["member_ids_composed"] == 0
    assert graph_fingerprint(neo4j_driver, "neo4j") == with_composed

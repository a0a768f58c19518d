"""An authority record edited, renamed, added or removed: entity_mentions links again only the
chunks whose mentions it can change (the record's own, and those holding one of its old or new
names), and the graph equals the one a build from scratch gives."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from graph_assets.common import RECORDS_TOUCHED
from nara_kg.demo import generate_demo_data
from nara_kg.graph.fingerprint import graph_fingerprint
from nara_kg.model.schema import AUTHORITY_RELATIONSHIPS
from tests.graph_helpers import metadata_of, scalar
from tests.integration.test_change_sets import label_score

pytestmark = pytest.mark.integration


def _person_file(data: Path) -> Path:
    return sorted(data.rglob("person-*.jsonl"))[0]


def _most_mentioned_person(driver: Any, data: Path) -> int:
    """The line index of the person in the first person file most chunks mention."""
    lines = _person_file(data).read_text().splitlines()
    ids = [int(json.loads(line)["record"]["naId"]) for line in lines]
    counts = [_mentioning_chunks(driver, na_id) for na_id in ids]
    return max(range(len(ids)), key=lambda i: counts[i])


def _mentioning_chunks(driver: Any, na_id: int) -> int:
    return int(
        scalar(
            driver,
            "MATCH (:Chunk {naId: $id, chunkSeqId: 0})-[:MENTIONED_IN]->(c) RETURN count(c)",
            id=na_id,
        )
    )


def _edit(data: Path, index: int, change: Callable[[dict[str, Any]], dict[str, Any] | None]) -> int:
    """Apply `change` to one person record (None removes it); returns its naId."""
    path = _person_file(data)
    lines = path.read_text().splitlines()
    entry = json.loads(lines[index])
    na_id = int(entry["record"]["naId"])
    changed = change(entry["record"])
    if changed is None:
        del lines[index]
    else:
        lines[index] = json.dumps({"record": changed})
    path.write_text("\n".join(lines) + "\n")
    return na_id


def _equals_a_build_from_scratch(
    graph_builder: Any, driver: Any, data: Path, scratch_dir: Path, changed: Any
) -> None:
    incremental = graph_fingerprint(driver, "neo4j")
    scratch = graph_builder(data, scratch_dir, wipe_first=True)
    assert graph_fingerprint(driver, "neo4j") == incremental
    assert label_score(changed) == label_score(scratch)


def _chunks(driver: Any) -> int:
    return int(scalar(driver, "MATCH (c:Chunk) RETURN count(c)"))


def test_a_body_text_edit_relinks_only_the_authoritys_own_chunks(
    graph_builder: Any, neo4j_driver: Any, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    generate_demo_data(data, records=120, seed=31)
    graph_builder(data, tmp_path / "work", wipe_first=True)
    index = _most_mentioned_person(neo4j_driver, data)

    def append_sentence(record: dict[str, Any]) -> dict[str, Any]:
        note = record.get("biographicalNote") or ""
        return {**record, "biographicalNote": f"{note}\n\nThe note was revised in review."}

    na_id = _edit(data, index, append_sentence)
    changed = graph_builder(data, tmp_path / "work")
    mentions = metadata_of(changed, "entity_mentions")
    own = scalar(neo4j_driver, "MATCH (c:Chunk {naId: $id}) RETURN count(c)", id=na_id)
    assert mentions["sync_mode"] == "changes"
    assert mentions[RECORDS_TOUCHED] == 1
    assert mentions["authorities_changed"] == 0
    assert mentions["chunks_relinked_own"] == own == mentions["chunks_relinked"]
    assert mentions["chunks_relinked_name_match"] == mentions["chunks_relinked_below"] == 0
    # The records citing it keep their edges (it stays chosen): only its own are read again.
    citing = scalar(
        neo4j_driver,
        "MATCH (:Chunk {naId: $id, chunkSeqId: 0})-[r]->(c) WHERE type(r) IN $types "
        "RETURN count(DISTINCT c)",
        id=na_id,
        types=[rel.value for rel in AUTHORITY_RELATIONSHIPS],
    )
    assert citing > 0
    assert metadata_of(changed, "authority_relationships")[RECORDS_TOUCHED] == 1
    _equals_a_build_from_scratch(graph_builder, neo4j_driver, data, tmp_path / "scratch", changed)


def test_a_rename_relinks_the_chunks_holding_the_old_or_new_name(
    graph_builder: Any, neo4j_driver: Any, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    generate_demo_data(data, records=120, seed=22)
    graph_builder(data, tmp_path / "work", wipe_first=True)
    index = _most_mentioned_person(neo4j_driver, data)

    def rename(record: dict[str, Any]) -> dict[str, Any]:
        return {
            **record,
            "heading": "Quillfeather, Bartholomew Q., 1850-1920",
            "name": "Quillfeather, Bartholomew Q.",
        }

    na_id = _edit(data, index, rename)
    before = _mentioning_chunks(neo4j_driver, na_id)
    assert before > 0
    changed = graph_builder(data, tmp_path / "work")
    mentions = metadata_of(changed, "entity_mentions")
    assert mentions["sync_mode"] == "changes"
    assert mentions["authorities_changed"] == 1
    # Every chunk that named it by its old name is linked again; most chunks are not.
    assert before <= mentions["chunks_relinked_name_match"] < _chunks(neo4j_driver) // 2
    assert mentions["chunks_relinked"] == (
        mentions["chunks_relinked_own"] + mentions["chunks_relinked_name_match"]
    )
    assert 1 < mentions[RECORDS_TOUCHED] < metadata_of(changed, "record_selection")["records"]
    assert _mentioning_chunks(neo4j_driver, na_id) < before
    _equals_a_build_from_scratch(graph_builder, neo4j_driver, data, tmp_path / "scratch", changed)


def test_an_added_namesake_and_a_removed_authority(
    graph_builder: Any, neo4j_driver: Any, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    generate_demo_data(data, records=120, seed=33)
    graph_builder(data, tmp_path / "work", wipe_first=True)
    index = _most_mentioned_person(neo4j_driver, data)
    path = _person_file(data)
    namesake = json.loads(path.read_text().splitlines()[index])["record"]
    # The same name, other years: the name's chunks now have two candidates to settle.
    added = {
        **{k: namesake[k] for k in ("heading", "authorityType", "recordType", "name")},
        "naId": 780999001,
        "heading": namesake["heading"].split(",")[0] + ", " + namesake["name"].split(", ")[1],
        "birthDate": {"year": 1700, "logicalDate": "1700-01-01"},
        "deathDate": {"year": 1760, "logicalDate": "1760-12-31"},
    }
    with path.open("a") as handle:
        handle.write(json.dumps({"record": added}) + "\n")
    changed = graph_builder(data, tmp_path / "work")
    mentions = metadata_of(changed, "entity_mentions")
    assert metadata_of(changed, "record_selection")["records_added"] == 1
    assert mentions["sync_mode"] == "changes" and mentions["authorities_changed"] == 1
    assert 0 < mentions["chunks_relinked_name_match"] < _chunks(neo4j_driver) // 2
    _equals_a_build_from_scratch(graph_builder, neo4j_driver, data, tmp_path / "scratch", changed)

    # Removed: the namesake's original, from a fresh full build.
    graph_builder(data, tmp_path / "work-2", wipe_first=True)
    na_id = _edit(data, index, lambda _record: None)
    before = _mentioning_chunks(neo4j_driver, na_id)
    removed = graph_builder(data, tmp_path / "work-2")
    mentions = metadata_of(removed, "entity_mentions")
    selection = metadata_of(removed, "record_selection")
    # A cited authority's record leaves a stub in its place (the citation's heading alone),
    # and the records citing it change with it.
    assert selection["records_removed"] + selection["records_changed"] >= 1
    assert mentions["sync_mode"] == "changes" and mentions["authorities_changed"] >= 1
    assert mentions["chunks_relinked_name_match"] >= before > 0
    assert mentions["chunks_relinked_name_match"] < _chunks(neo4j_driver) // 2
    _equals_a_build_from_scratch(graph_builder, neo4j_driver, data, tmp_path / "scratch-2", removed)

"""entity_mentions in Neo4j: MENTIONED_IN written from the demo's text, the label check passes,
a re-run writes nothing, and an edited record changes only its own chunks' mentions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nara_kg.demo import generate_demo_data
from nara_kg.graph.mentions import existing_mentions
from quality.names import ENTITY_MENTIONS_LABELS
from tests.graph_helpers import metadata_of

pytestmark = pytest.mark.integration


def _check(result: Any, name: str) -> Any:
    return next(e for e in result.get_asset_check_evaluations() if e.check_name == name)


def test_mentions_written_checked_and_incremental(
    graph_builder: Any, neo4j_driver: Any, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    generate_demo_data(data, records=160, seed=4)
    first = graph_builder(data, tmp_path / "work", wipe_first=True)
    metadata = metadata_of(first, "entity_mentions")
    assert metadata["relationships"] > 100 and metadata["added"] == metadata["relationships"]
    assert metadata["label_precision"] >= 0.95 and metadata["label_recall"] >= 0.80
    assert _check(first, ENTITY_MENTIONS_LABELS).passed
    before = existing_mentions(neo4j_driver, "neo4j")
    assert len(before) == metadata["relationships"]

    again = metadata_of(graph_builder(data, tmp_path / "work"), "entity_mentions")
    assert (again["added"], again["updated"], again["removed"]) == (0, 0, 0)
    assert again["chunks_relinked"] == 0

    # One item's title now names a person it did not name: only its chunks' mentions change.
    labels = {
        json.loads(line)["naId"]: {m["authority"] for m in json.loads(line)["mentions"]}
        for line in (data / "mention_labels.jsonl").read_text().splitlines()
    }
    person_line = next(
        json.loads(line)
        for path in sorted((data / "authority-records" / "person").glob("*.jsonl"))
        for line in path.read_text().splitlines()
    )["record"]
    last, first_name = person_line["heading"].split(",")[:2]
    shard = next(
        p for p in sorted(data.rglob("*.jsonl")) if '"levelOfDescription": "item"' in p.read_text()
    )
    lines = shard.read_text().splitlines()
    for index, line in enumerate(lines):
        record = json.loads(line)
        na_id = record["record"]["naId"]
        if record["record"].get("levelOfDescription") == "item" and person_line[
            "naId"
        ] not in labels.get(na_id, {person_line["naId"]}):
            record["record"]["title"] += f", signed by {first_name.strip()} {last.strip()}"
            lines[index] = json.dumps(record)
            break
    shard.write_text("\n".join(lines) + "\n")
    edited = metadata_of(graph_builder(data, tmp_path / "work"), "entity_mentions")
    after = existing_mentions(neo4j_driver, "neo4j")
    changed = {e for e in before.keys() | after.keys() if before.get(e) != after.get(e)}
    assert changed and {target.split("-")[0] for _, target in changed} == {str(na_id)}
    assert {source for source, _ in changed} == {f"{person_line['naId']}-0"}
    assert edited["chunks_relinked"] >= 1 and edited["removed"] == 0

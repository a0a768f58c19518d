"""entity_extraction in Neo4j, against a local OpenAI-compatible server with scripted answers:
off with the extractive default; with an LLM, Entity nodes, RELATED and MENTIONED_IN
{source: "llm"} written, resolved against the authority file, cached, by difference; the
linker's mentions and its label check untouched."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from graph_assets import entity_extraction
from nara_kg.build.extraction import SKIPPED_NO_LLM
from nara_kg.build.mention_sync import sync_mentions
from nara_kg.demo import generate_demo_data
from nara_kg.generation.entity_extraction import (
    COMPLETION_DELIMITER,
    CONTINUE_PROMPT,
    LOOP_PROMPT,
)
from nara_kg.graph.mentions import existing_mentions
from nara_kg.model.schema import DESCRIPTION_TYPES, LLM_SOURCE, Label, MentionProp, Rel
from quality.names import ENTITY_MENTIONS_LABELS
from resources import LLMResource
from tests.graph_helpers import metadata_of, resources_for
from tests.openai_server import Reply, openai_test_server, prompt_of

pytestmark = pytest.mark.integration

NEW_ORGANIZATION = "Widget Research Board"


def _heading(data: Path, kind: str) -> tuple[int, str]:
    path = sorted((data / "authority-records" / kind).glob("*.jsonl"))[0]
    record = json.loads(path.read_text().splitlines()[0])["record"]
    return record["naId"], record["heading"]


def _answer(person: str, organization: str, new: str) -> Any:
    """Every chunk names the person (in natural order), the organization (its heading as
    written) and a board no authority stands for; the gleaning round adds a place."""

    def answer(payload: dict[str, Any]) -> Reply:
        prompt = prompt_of(payload)
        if prompt.rstrip().endswith(LOOP_PROMPT.strip()):
            return Reply(content="N")
        if prompt.rstrip().endswith(CONTINUE_PROMPT.strip()):
            return Reply(content=f'("entity"<|>Norris Dam<|>geo<|>A dam){COMPLETION_DELIMITER}')
        records = [
            f'("entity"<|>{person}<|>person<|>Named in the record)',
            f'("entity"<|>{organization}<|>organization<|>Agency of the record)',
            f'("entity"<|>{new}<|>organization<|>A board the record names)',
            f'("relationship"<|>{person}<|>{new}<|>Served on the board<|>2)',
        ]
        return Reply(content="##".join(records) + COMPLETION_DELIMITER)

    return answer


def _extract(settings: Any, data: Path, work: Path, url: str, model: str) -> dict[str, Any]:
    resources = resources_for(settings, data, work)
    resources["llm"] = LLMResource(backend="openai", base_url=url, model=model, max_retries=0)
    result = dg.materialize([entity_extraction], resources=resources)
    return metadata_of(result, "entity_extraction")


def _count(driver: Any, query: str, **params: Any) -> int:
    records, _, _ = driver.execute_query(query, params, database_="neo4j")
    return int(records[0]["n"])


def test_extraction_resolves_caches_and_writes_by_difference(
    graph_builder: Any, neo4j_driver: Any, neo4j_settings: Any, tmp_path: Path
) -> None:
    data, work = tmp_path / "data", tmp_path / "work"
    generate_demo_data(data, records=60, seed=11)
    built = graph_builder(data, work, wipe_first=True)
    assert metadata_of(built, "entity_extraction")["skipped"] == SKIPPED_NO_LLM
    assert _count(neo4j_driver, f"MATCH (n:{Label.ENTITY}) RETURN count(n) AS n") == 0
    linker_mentions = existing_mentions(neo4j_driver, "neo4j")

    person_id, person_heading = _heading(data, "person")
    last, first = (part.strip() for part in person_heading.split(",")[:2])
    organization_id, organization_heading = _heading(data, "organization")
    described = _count(
        neo4j_driver,
        f"MATCH (c:{Label.CHUNK}) WHERE any(l IN labels(c) WHERE l IN $types) RETURN count(c) AS n",
        types=sorted(DESCRIPTION_TYPES),
    )

    answer = _answer(f"{first} {last}", organization_heading, NEW_ORGANIZATION)
    with openai_test_server(answer) as server:
        first_run = _extract(neo4j_settings, data, work, server.url, "scripted")
        assert first_run["chunks_sent"] == described
        # One extraction and one gleaning per chunk (one gleaning round: no loop question);
        # chunks with the same text may share answers through the cache.
        assert first_run["completions"] == 2 * described
        assert first_run["completions_cached"] + server.calls == first_run["completions"]
        resolved = {row["type"]: row["count"] for row in first_run["resolved_by_step"]}
        assert resolved == {"exact": described, "normalized": described}, resolved
        assert first_run["entity_nodes"] == 2  # the board and the dam
        assert first_run["related_relationships"] == 1

        records, _, _ = neo4j_driver.execute_query(
            f"MATCH (a:{Label.CHUNK} {{naId: $person}})-[r:{Rel.RELATED}]->"
            f"(e:{Label.ENTITY}) RETURN e.name AS name, e.entityType AS type, "
            "r.weight AS weight",
            person=person_id,
            database_="neo4j",
        )
        assert [(r["name"], r["type"], r["weight"]) for r in records] == [
            (NEW_ORGANIZATION, "organization", 2.0 * described)
        ]
        for na_id in (person_id, organization_id):
            assert described == _count(
                neo4j_driver,
                f"MATCH (:{Label.CHUNK} {{naId: $id, chunkSeqId: 0}})"
                f"-[:{Rel.MENTIONED_IN} {{{MentionProp.SOURCE}: $llm}}]->(c) "
                "RETURN count(c) AS n",
                id=na_id,
                llm=LLM_SOURCE,
            )

        # Everything cached, nothing to write.
        calls = server.calls
        again = _extract(neo4j_settings, data, work, server.url, "scripted")
        assert server.calls == calls
        assert again["completions_cached"] == again["completions"] == 2 * described
        assert (again["written"], again["removed"]) == (0, 0)

    # The linker's relationships are its own: its sync neither adopts nor deletes the LLM's.
    assert existing_mentions(neo4j_driver, "neo4j") == linker_mentions
    target = next(
        r["chunk"]
        for r in neo4j_driver.execute_query(
            f"MATCH (:{Label.CHUNK} {{naId: $id, chunkSeqId: 0}})-[:{Rel.MENTIONED_IN}]->(c) "
            "RETURN c.chunkId AS chunk ORDER BY chunk LIMIT 1",
            id=person_id,
            database_="neo4j",
        ).records
    )
    pair = (f"{person_id}-0", target)
    sync_mentions(neo4j_driver, "neo4j", {**linker_mentions, pair: (1, last)})
    pair_count = (
        f"MATCH (:{Label.CHUNK} {{chunkId: $a}})-[r:{Rel.MENTIONED_IN}]->"
        f"(:{Label.CHUNK} {{chunkId: $b}}) RETURN count(r) AS n"
    )
    assert _count(neo4j_driver, pair_count, a=pair[0], b=pair[1]) == 2
    sync_mentions(neo4j_driver, "neo4j", linker_mentions)
    assert _count(neo4j_driver, pair_count, a=pair[0], b=pair[1]) == 1
    assert existing_mentions(neo4j_driver, "neo4j") == linker_mentions

    # A rebuild with the default keeps the LLM's graph, and the label check still passes.
    rebuilt = graph_builder(data, work)
    assert next(
        e for e in rebuilt.get_asset_check_evaluations() if e.check_name == ENTITY_MENTIONS_LABELS
    ).passed
    assert _count(neo4j_driver, f"MATCH (n:{Label.ENTITY}) RETURN count(n) AS n") == 2

    # Another model says another board: the old one goes, the new one comes, by difference.
    answer = _answer(f"{first} {last}", organization_heading, "Gadget Board")
    with openai_test_server(answer) as server:
        changed = _extract(neo4j_settings, data, work, server.url, "scripted-2")
        assert changed["completions_cached"] + server.calls == changed["completions"]
        assert server.calls > described
    names, _, _ = neo4j_driver.execute_query(
        f"MATCH (n:{Label.ENTITY}) RETURN n.name AS name ORDER BY name", database_="neo4j"
    )
    assert [r["name"] for r in names] == ["Gadget Board", "Norris Dam"]
    assert changed["removed"] >= 1 + described  # the board, and its mentions

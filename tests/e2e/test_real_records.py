"""The whole graph built from the real NARA records in ../shared (never committed).

Expected numbers are computed here straight from the raw JSON, independently of the parser.
"""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from typing import Any

import pytest

from nara_kg.embedding.encoder import Embedder
from nara_kg.retrieval.search import local_search
from nara_kg.settings import PROJECT_ROOT
from tests.graph_helpers import metadata_of, scalar

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

REAL_EXPORT = (PROJECT_ROOT.parent / "shared" / "data" / "nara" / "export").resolve()

if not REAL_EXPORT.is_dir():
    pytest.skip(f"no real records at {REAL_EXPORT}", allow_module_level=True)


def raw_records() -> list[dict[str, Any]]:
    records = []
    for path in sorted(REAL_EXPORT.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                records.append(json.loads(line)["record"])
    return records


class Expected:
    """What the graph must hold, derived from the raw records alone."""

    def __init__(self, records: list[dict[str, Any]]) -> None:
        # The most complete copy of a duplicated naId (by number of keys) is the one kept.
        full: dict[int, dict[str, Any]] = {}
        for record in records:
            kept = full.get(record["naId"])
            if kept is None or len(record) > len(kept):
                full[record["naId"]] = record
        self.full = full
        self.by_type = Counter(r["levelOfDescription"] for r in full.values())

        parent: dict[int, int] = {}
        stub_creators: dict[int, set[int]] = {}
        nodes: set[int] = set(full)
        creators: set[tuple[int, int]] = set()
        for na_id, record in full.items():
            chain = sorted(record.get("ancestors", []), key=lambda a: a["distance"])
            if chain:
                parent[na_id] = chain[0]["naId"]
            for nearer, farther in itertools.pairwise(chain):
                if nearer["naId"] not in full:
                    parent.setdefault(nearer["naId"], farther["naId"])
            for ancestor in chain:
                nodes.add(ancestor["naId"])
                if ancestor["naId"] not in full:
                    stub_creators.setdefault(ancestor["naId"], set()).update(
                        c["naId"] for c in ancestor.get("creators", [])
                    )
            for creator in record.get("creators", []):
                creators.add((na_id, creator["naId"]))
                nodes.add(creator["naId"])
        for na_id, creator_ids in stub_creators.items():
            for creator_id in creator_ids:
                creators.add((na_id, creator_id))
                nodes.add(creator_id)
        self.includes = sum(1 for child, par in parent.items() if par in nodes)
        self.creators = creators
        self.nodes = nodes


@pytest.fixture(scope="module")
def real_build(graph_builder: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("real-work")
    questions = tmp_path_factory.mktemp("q") / "questions.jsonl"
    records = raw_records()
    sample = random.Random(11).sample(records, 5)
    questions.write_text(
        "\n".join(
            json.dumps(
                {
                    "id": str(i),
                    "question": r["title"],
                    "expected_naids": [r["naId"]],
                    "mode": "local",
                }
            )
            for i, r in enumerate(sample)
        )
        + "\n"
    )
    first = graph_builder(REAL_EXPORT, work, wipe_first=True, questions=questions)
    second = graph_builder(REAL_EXPORT, work, questions=questions)
    return {"first": first, "second": second, "expected": Expected(records)}


def test_records_per_type(real_build: dict[str, Any], neo4j_driver: Any) -> None:
    expected: Expected = real_build["expected"]
    assert sum(expected.by_type.values()) == 988  # 989 lines, one naId twice
    for level, count in expected.by_type.items():
        got = scalar(
            neo4j_driver,
            "MATCH (c:Chunk {chunkSeqId: 0}) WHERE $t IN labels(c) AND NOT c.isStub "
            "RETURN count(c)",
            t=level,
        )
        assert got == count, level
    assert scalar(neo4j_driver, "MATCH (c:Chunk {chunkSeqId: 0}) RETURN count(c)") == len(
        expected.nodes
    )


def test_duplicate_naid_kept_once_most_complete(
    real_build: dict[str, Any], neo4j_driver: Any
) -> None:
    selection = metadata_of(real_build["first"], "record_selection")
    assert selection["duplicate_naids"] == 1
    file_name = scalar(
        neo4j_driver, "MATCH (c:Chunk {naId: 28277406, chunkSeqId: 0}) RETURN c.file_name"
    )
    assert (
        file_name == "fdr-morgen_series-589213_children.jsonl"
    )  # the full, not the abbreviated copy
    assert scalar(
        neo4j_driver,
        "MATCH (c:Chunk {naId: 28277406, chunkSeqId: 0}) "
        "RETURN c.status_accessRestriction IS NOT NULL",
    )


def test_includes_and_creators(real_build: dict[str, Any], neo4j_driver: Any) -> None:
    expected: Expected = real_build["expected"]
    assert scalar(neo4j_driver, "MATCH ()-[r:Includes]->() RETURN count(r)") == expected.includes
    pairs = {
        (r["record"], r["creator"])
        for r in neo4j_driver.execute_query(
            "MATCH (a)-[:creator]->(d) RETURN d.naId AS record, a.naId AS creator"
        ).records
    }
    assert pairs == expected.creators


def test_every_record_is_searchable(real_build: dict[str, Any], neo4j_driver: Any) -> None:
    expected: Expected = real_build["expected"]
    unembedded = scalar(
        neo4j_driver,
        "MATCH (c:Chunk {chunkSeqId: 0}) WHERE NOT c.isStub "
        "AND (NOT c:recordWithText OR c.textEmbedding IS NULL) RETURN count(c)",
    )
    assert unembedded == 0
    embedder = Embedder()
    sample = random.Random(5).sample(sorted(expected.full), 30)
    found = 0
    for na_id in sample:
        title = expected.full[na_id]["title"]
        hits = local_search(neo4j_driver, "neo4j", embedder.encode, title, k=10).hits
        found += any(hit.naId == na_id for hit in hits)
    assert found >= 27, f"only {found}/30 records found by their title"


def test_second_build_changes_nothing(real_build: dict[str, Any]) -> None:
    second = real_build["second"]
    nodes = metadata_of(second, "graph_nodes")
    assert (nodes["nodes_written"], nodes["nodes_deleted"]) == (0, 0)
    assert metadata_of(second, "text_embeddings")["embedded"] == 0
    for asset in ("next_relationships", "includes_relationships", "authority_relationships"):
        meta = metadata_of(second, asset)
        assert (meta["added"], meta["removed"]) == (0, 0), asset


def test_evaluation_on_real_titles(real_build: dict[str, Any]) -> None:
    evaluation = metadata_of(real_build["first"], "retrieval_evaluation")
    assert evaluation["n"] == 5
    assert evaluation["hit_at_5"] >= 0.8


def test_ask_local_and_global_on_the_real_records(
    real_build: dict[str, Any], neo4j_driver: Any
) -> None:
    from nara_kg.generation.llm import ExtractiveLLM
    from nara_kg.retrieval.ask import ask

    expected: Expected = real_build["expected"]
    series = sorted(
        (r for r in expected.full.values() if r["levelOfDescription"] == "series"),
        key=lambda r: r["naId"],
    )[0]
    embedder = Embedder()
    shown = ask(
        neo4j_driver, "neo4j", embedder, ExtractiveLLM(), None, f"Show me {series['title']}"
    ).to_dict()
    assert shown["request_type"] == "show_records"
    assert series["naId"] in [record["naId"] for record in shown["records"]]
    # A global question about what the largest finest-level community is about.
    records, _, _ = neo4j_driver.execute_query(
        "MATCH (c:Community {level: 0}) RETURN c.id AS id, "
        "split(c.title, ' and ')[0] AS title ORDER BY c.size DESC, c.id LIMIT 1"
    )
    answered = ask(
        neo4j_driver,
        "neo4j",
        embedder,
        ExtractiveLLM(),
        None,
        f"What are the main themes of {records[0]['title']}?",
        mode="auto",
    ).to_dict()
    assert answered["mode"] == "global" and answered["level"] == 0
    assert not answered["refused"]
    assert records[0]["id"] in answered["communities"]


def test_answer_evaluation_on_the_real_graph(
    real_build: dict[str, Any], neo4j_settings: Any, tmp_path: Any
) -> None:
    """The retrieval_evaluation asset answers the labelled answer set on the real graph and
    records answer accuracy overall and per kind (no threshold on its value here)."""
    import dagster as dg

    from graph_assets.retrieval_evaluation import retrieval_evaluation
    from nara_kg.retrieval.evaluation import load_questions
    from tests.graph_helpers import materialization_metadata, resources_for

    answers = PROJECT_ROOT / "tests" / "data" / "real_record_answers.jsonl"
    questions = load_questions(answers)
    result = dg.materialize(
        [retrieval_evaluation],
        resources=resources_for(neo4j_settings, REAL_EXPORT, tmp_path / "work", answers),
        raise_on_error=False,
    )
    assert result.success
    metadata = materialization_metadata(result)["retrieval_evaluation"]
    assert metadata["answer_questions"] == len(questions)
    assert 0.0 <= metadata["answer_accuracy"] <= 1.0
    assert 0.0 <= metadata["answer_refusal_rate_unanswerable"] <= 1.0
    kinds = {q.kind for q in questions}
    assert {row["kind"] for row in metadata["answer_by_kind"]} == kinds
    for kind in kinds:
        assert 0.0 <= metadata[f"answer_accuracy_{kind}"] <= 1.0
    rows = metadata["answer_results"]
    assert [row["id"] for row in rows] == [q.id for q in questions]
    answered = sum(1 for row in rows if row["answered"])
    assert metadata["answer_accuracy"] == round(answered / len(rows), 4)


def test_the_benchmarks_real_record_sets_on_the_real_graph(
    real_build: dict[str, Any], neo4j_driver: Any, neo4j_settings: Any
) -> None:
    """What `nara-kg bench` reports for the real records (its "real-record questions" phase,
    which builds this same export first): the ranking of the question set and the answer
    set's accuracy, asked of the graph built here."""
    from benchmarks.real_questions import REAL_ANSWERS, REAL_QUESTIONS, evaluate_real_sets
    from nara_kg.retrieval.evaluation import load_questions

    report = evaluate_real_sets(
        neo4j_driver, neo4j_settings.database, Embedder(), REAL_QUESTIONS, REAL_ANSWERS
    )
    asked = load_questions(REAL_QUESTIONS)
    assert report["n"] == len(asked)
    assert 0.0 < report["hit_at_1"] <= report["hit_at_5"] <= 1.0
    assert 0.0 < report["mrr_at_10"] <= 1.0
    assert {miss["id"] for miss in report["misses"]} <= {q.id for q in asked}
    answers = report["answers"]
    assert answers["n"] == len(load_questions(REAL_ANSWERS))
    assert 0.0 < answers["accuracy"] <= 1.0
    assert len(answers["failures"]) == answers["n"] - round(answers["accuracy"] * answers["n"])

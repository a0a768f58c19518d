"""A community whose context inputs are as its node recorded keeps its report without its
context being built again; any change to its members' rows, its sub-reports, the budget, or the
generator rebuilds it (and the communities above it), and the full rebuild rebuilds all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import nara_kg.generation.generate as generate
import nara_kg.generation.report_loop as report_loop
from nara_kg.generation.report_rows import (
    RunRows,
    context_from_rows,
    member_fields,
    report_input_key,
)
from tests.unit.test_report_mention_totals import (
    COMMUNITIES,
    FakeReports,
    WordCounter,
    run_reports,
)

#: 1-y has the same members as its only sub-community 0-c: it is a copy, never keyed.
KEYED = ["0-a", "0-b", "0-c", "1-x", "2-r"]


class StoredReports(FakeReports):
    """Community nodes that keep what the last run wrote on them."""

    def __init__(self) -> None:
        super().__init__()
        self.nodes: dict[str, dict[str, Any]] = {}
        self.texts: dict[int, str] = {}
        self.written: list[list[dict[str, Any]]] = []

    def communities(self, driver: Any, database: str) -> list[dict[str, Any]]:
        return [
            {
                **c,
                "reportInputKey": self.nodes.get(c["id"], {}).get("inputKey"),
                "report": self.nodes.get(c["id"], {}).get("report"),
                "reportGeneratedBy": self.nodes.get(c["id"], {}).get("generatedBy"),
                "reportContextKey": self.nodes.get(c["id"], {}).get("contextKey"),
                "reportUsedSubReports": self.nodes.get(c["id"], {}).get("usedSubReports"),
                "reportTruncated": self.nodes.get(c["id"], {}).get("truncated"),
            }
            for c in COMMUNITIES
        ]

    def text_of(self, na_id: int) -> str:
        return self.texts.get(na_id) or super().text_of(na_id)

    def write_reports(self, driver: Any, database: str, rows: list[Any]) -> int:
        self.written.append(rows)
        for row in rows:
            self.nodes[row["id"]] = row
        return len(rows)


def _run(
    monkeypatch: pytest.MonkeyPatch,
    graph: StoredReports,
    *,
    force: bool = False,
    token_budget: int = 1_000,
    token_counts_path: Path | None = None,
) -> generate.ReportRunResult:
    monkeypatch.setattr(generate, "report_cypher", graph)
    return run_reports(token_budget=token_budget, force=force, token_counts_path=token_counts_path)


def _built(graph: StoredReports, monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """The communities whose contexts the next run builds."""
    built: list[str] = []
    original = report_loop.context_from_rows

    def recording(community: Any, *args: Any, **kwargs: Any) -> Any:
        built.append(community["id"])
        return original(community, *args, **kwargs)

    monkeypatch.setattr(report_loop, "context_from_rows", recording)
    _run(monkeypatch, graph)
    monkeypatch.setattr(report_loop, "context_from_rows", original)
    return set(built)


def test_an_unchanged_graph_keeps_every_report_without_building_a_context(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    graph = StoredReports()
    first = _run(monkeypatch, graph)
    assert first.generated == len(KEYED) and first.unchanged_inputs == 0
    assert all(row["inputKey"] for row in graph.written[0] if row["id"] in KEYED)
    assert _built(graph, monkeypatch) == set()
    second = _run(monkeypatch, graph)
    assert second.unchanged_inputs == len(KEYED)
    assert second.generated == second.cached == 0
    assert second.copied_from_sub_community == first.copied_from_sub_community == 1
    assert (second.used_sub_reports, second.truncated) == (first.used_sub_reports, first.truncated)
    assert graph.written[-1] == graph.written[0]  # the same reports, keys and flags


def test_a_changed_record_rebuilds_its_communities_and_those_above(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    graph = StoredReports()
    _run(monkeypatch, graph)
    graph.texts[3] = "Record 3\n\nA corrected body of record 3."
    assert _built(graph, monkeypatch) == {"0-b", "1-x", "2-r"}
    reports = {row["id"]: row["report"] for row in graph.written[-1]}
    assert "corrected" in reports["0-b"]
    assert _built(graph, monkeypatch) == set()  # and then it stands again


def test_the_budget_and_the_full_rebuild_rebuild_every_context(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    graph = StoredReports()
    _run(monkeypatch, graph)
    assert _run(monkeypatch, graph, token_budget=900).unchanged_inputs == 0
    assert _run(monkeypatch, graph, token_budget=900).unchanged_inputs == len(KEYED)
    assert _run(monkeypatch, graph, token_budget=900, force=True).unchanged_inputs == 0


def test_a_stored_report_that_does_not_parse_is_rebuilt(monkeypatch: pytest.MonkeyPatch) -> None:
    graph = StoredReports()
    _run(monkeypatch, graph)
    graph.nodes["0-a"]["report"] = "{not json"
    assert _built(graph, monkeypatch) == {"0-a"}


def test_the_input_key_covers_each_input() -> None:
    base: dict[str, Any] = {
        "generator": "extractive",
        "counter_key": "model|onnx",
        "token_budget": 1_200,
        "community": {"id": "0-a", "level": 0, "size": 2, "children": []},
        "members": [{"naId": 1, "title": "A", "text": "a"}],
        "relationships": [{"source": 1, "target": 2, "type": "Includes"}],
        "totals": {10: ["A10", "person", 2, 1]},
        "sub_report_keys": {"0-x": "k1"},
    }
    key = report_input_key(**base)
    assert report_input_key(**base) == key
    # The store's order of the rows is not an input: a graph updated in place returns them in
    # another order than the same graph built from scratch.
    reordered = {
        **base,
        "community": {"id": "0-a", "level": 0, "size": 2, "children": []},
        "members": [{"text": "a", "title": "A", "naId": 1}],
        "relationships": list(
            reversed([*base["relationships"], {"source": 2, "target": 1, "type": "Includes"}])
        ),
        "totals": dict(reversed(list({**base["totals"], 11: ["A11", "", 1, 1]}.items()))),
    }
    with_more = {
        **base,
        "relationships": [*base["relationships"], {"source": 2, "target": 1, "type": "Includes"}],
        "totals": {**base["totals"], 11: ["A11", "", 1, 1]},
    }
    assert report_input_key(**reordered) == report_input_key(**with_more)
    two_children = {"0-x": "k1", "0-y": "k2"}
    assert report_input_key(**{**base, "sub_report_keys": two_children}) == report_input_key(
        **{**base, "sub_report_keys": dict(reversed(two_children.items()))}
    )
    changes: dict[str, Any] = {
        "generator": "openai:gpt-4o-mini",
        "counter_key": "model|torch",
        "token_budget": 1_000,
        "community": {"id": "0-a", "level": 0, "size": 3, "children": []},
        "members": [{"naId": 1, "title": "A", "text": "b"}],
        "relationships": [],
        "totals": {10: ["A10", "person", 3, 1]},
        "sub_report_keys": {"0-x": "k2"},
    }
    for name, value in changes.items():
        assert report_input_key(**{**base, name: value}) != key, name


def test_lines_kept_between_levels_give_the_same_keys() -> None:
    """A run encodes each member's and relationship's line once and reuses it at the coarser
    levels: the keys are those computed from the rows themselves, and a changed row is a
    changed key."""
    rows = [{"naId": n, "title": f"T{n}", "text": f"text {n}", "degree": n} for n in (3, 1, 2)]
    rels = [
        {"source": a, "target": b, "type": "INCLUDES", "sourceTitle": f"T{a}", "degree": 3}
        for a, b in ((1, 2), (2, 3), (3, 1))
    ]

    def key(
        members: list[dict[str, Any]],
        lines: RunRows | None,
        relationships: list[dict[str, Any]] = rels[:1],
    ) -> str:
        return report_input_key(
            generator="extractive",
            counter_key="model|onnx",
            token_budget=1_200,
            community={"id": "1-a", "level": 1, "size": len(members), "children": []},
            members=members,
            relationships=relationships,
            totals={},
            sub_report_keys={},
            run_rows=lines,
        )

    lines = RunRows()
    assert key(rows[:2], lines) == key(rows[:2], None)  # the finest level encodes 3 and 1
    # Reused, in canonical order.
    assert key(list(reversed(rows)), lines, rels[::-1]) == key(rows, None, rels)
    changed = [{**rows[0], "text": "edited"}, *rows[1:]]
    assert key(changed, RunRows()) == key(changed, None) != key(rows, None)
    retyped = [{**rels[0], "type": "CREATOR"}]
    assert key(rows, RunRows(), retyped) == key(rows, None, retyped) != key(rows, None)
    # A relationship's titles and degree are its ends' rows': a changed end is a changed key.
    regraded = [{**rows[0], "degree": 9}, *rows[1:]]
    assert key(regraded, RunRows()) != key(rows, None)


def test_a_run_that_keeps_reports_keeps_the_token_counts_their_rows_had(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    graph = StoredReports()
    path = tmp_path / "counts.sqlite"
    first = _run(monkeypatch, graph, token_counts_path=path)
    kept = _run(monkeypatch, graph, token_counts_path=path)
    assert kept.unchanged_inputs == len(KEYED) and kept.token_counts_new == 0
    graph.texts[3] = "Record 3\n\nA corrected body of record 3."
    third = _run(monkeypatch, graph, token_counts_path=path)
    # The unchanged records' rows in the rebuilt contexts are counted no second time.
    assert third.token_counts_reused > 0
    assert third.token_counts_new < first.token_counts_new
    # A run that builds every context again forgets what it did not use.
    full = _run(monkeypatch, graph, token_counts_path=path, force=True)
    assert full.token_counts_new == 0


def test_rows_converted_once_per_run_give_the_contexts_of_rows_converted_each_time() -> None:
    """Contexts built through a run's :class:`RunRows` (a coarser level reusing what the finer
    one converted) read exactly as those built from the rows themselves."""
    members = [
        member_fields(
            {
                "naId": n,
                "title": f"Record {n}",
                "nodeType": "item",
                "degree": n,
                "source": None,
                "text": f"Record {n}\n\nBody of record {n}.",
            }
        )
        for n in (1, 2, 3)
    ]
    rels = [
        {
            "source": a,
            "target": b,
            "type": "INCLUDES",
            "sourceTitle": f"Record {a}",
            "targetTitle": f"Record {b}",
            "degree": a + b,
        }
        for a, b in ((1, 2), (2, 3))
    ]
    counter = WordCounter()

    def text(community_id: str, level: int, ms: Any, rs: Any, run_rows: RunRows | None) -> str:
        community = {"id": community_id, "level": level, "children": []}
        return context_from_rows(
            community,
            ms,
            rs,
            {},
            token_budget=10_000,
            count_tokens=counter.count_tokens,
            row_costs={},
            run_rows=run_rows,
        ).text

    run_rows = RunRows()
    finer = text("0-a", 0, members[:2], rels[:1], run_rows)
    coarser = text("1-a", 1, members, rels, run_rows)
    assert finer == text("0-a", 0, members[:2], rels[:1], None)
    assert coarser == text("1-a", 1, members, rels, None)
    assert "Body of record 3" in coarser and "Record 2 (2)" in coarser

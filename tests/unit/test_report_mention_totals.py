"""A community's Mentioned table adds up its sub-communities' totals: each record's mentions are
read once per run, and every community gets what summing over all of its members gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import nara_kg.generation.generate as generate
import nara_kg.generation.report_loop as report_loop
from nara_kg.generation.llm import ExtractiveLLM
from nara_kg.generation.report_context import MentionedInfo
from nara_kg.generation.report_rows import member_fields, mention_totals, top_mentioned
from nara_kg.generation.report_scope import ReportScope
from nara_kg.graph import reports as report_cypher

#: level 0: 0-a {1, 2}, 0-b {3}, 0-c {4}; level 1: 1-x = 0-a + 0-b, 1-y = 0-c (a copy);
#: level 2: 2-r = 1-x + 1-y.
COMMUNITIES = [
    {"id": "0-a", "level": 0, "size": 2, "children": []},
    {"id": "0-b", "level": 0, "size": 1, "children": []},
    {"id": "0-c", "level": 0, "size": 1, "children": []},
    {"id": "1-x", "level": 1, "size": 3, "children": ["0-a", "0-b"]},
    {"id": "1-y", "level": 1, "size": 1, "children": ["0-c"]},
    {"id": "2-r", "level": 2, "size": 4, "children": ["1-x", "1-y"]},
]
MEMBERS = {"0-a": [1, 2], "0-b": [3], "0-c": [4], "1-x": [1, 2, 3], "1-y": [4], "2-r": [1, 2, 3, 4]}


def mention(authority: int, count: int) -> dict[str, Any]:
    return {"authority": authority, "heading": f"A{authority}", "type": "person", "count": count}


MENTIONS = {
    1: [mention(10, 2)],
    2: [mention(10, 1), mention(11, 5)],
    3: [mention(11, 1), mention(12, 1)],
    4: [mention(12, 7)],
}


class FakeReports:
    def __init__(self) -> None:
        self.mentions_read: list[int] = []

    def communities(self, driver: Any, database: str) -> list[dict[str, Any]]:
        return COMMUNITIES

    def community_outline(self, driver: Any, database: str, model_key: str) -> list[Any]:
        return [{**c, "stale": c.get("report") is None} for c in self.communities(driver, database)]

    KnownMembers = report_cypher.KnownMembers

    def text_of(self, na_id: int) -> str:
        return f"Record {na_id}\n\nBody of record {na_id}."

    def members_of_many(
        self,
        driver: Any,
        database: str,
        ids: list[str],
        known: Any = None,
        member_ids: Any = None,
    ) -> dict[str, Any]:
        """The rows the graph holds, as the run's :class:`KnownMembers` derives them."""
        return {
            cid: [
                member_fields(
                    {
                        "naId": n,
                        "title": f"Record {n}",
                        "nodeType": "item",
                        "text": self.text_of(n),
                        "source": None,
                        "degree": n,
                    }
                )
                for n in MEMBERS[cid]
            ]
            for cid in ids
        }

    OutgoingRelationships = report_cypher.OutgoingRelationships

    def relationships_within(
        self,
        driver: Any,
        database: str,
        groups: dict[str, list[int]],
        members: Any,
        known: Any = None,
    ) -> dict[str, list[Any]]:
        return {cid: [] for cid in groups}

    def mentions_of_records(
        self, driver: Any, database: str, na_ids: list[int]
    ) -> dict[int, list[dict[str, Any]]]:
        self.mentions_read.extend(na_ids)
        return {n: [{"record": n, **row} for row in MENTIONS[n]] for n in na_ids}

    def write_reports(self, driver: Any, database: str, rows: list[Any]) -> int:
        return len(rows)

    def ensure_summary_index(self, *args: Any) -> None:
        pass

    def pending_summary_embeddings(self, *args: Any) -> list[Any]:
        return []


class WordCounter:
    key = "words"
    dimension = 2

    def count_tokens(self, text: str) -> int:
        return len(text.split()) + 2

    def count_tokens_many(self, texts: list[str]) -> list[int]:
        return [self.count_tokens(t) for t in texts]

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.zeros((len(texts), 2))


def run_reports(**options: Any) -> generate.ReportRunResult:
    """generate_community_reports over whatever `generate.report_cypher` is patched to, with
    the extractive generator and :class:`WordCounter`."""
    return generate.generate_community_reports(
        None,  # type: ignore[arg-type]
        "neo4j",
        ExtractiveLLM(),
        None,
        WordCounter(),  # type: ignore[arg-type]
        **options,
    )


def watch_mentioned(
    monkeypatch: pytest.MonkeyPatch, fake: FakeReports
) -> dict[str, list[MentionedInfo]]:
    """Reports read from `fake`; the returned dict fills with the Mentioned table each built
    context is given, by community id."""
    seen: dict[str, list[MentionedInfo]] = {}
    real_context = report_loop.context_from_rows

    def capture(community: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        seen[community["id"]] = kwargs["mentioned"]
        return real_context(community, *args, **kwargs)

    monkeypatch.setattr(generate, "report_cypher", fake)
    monkeypatch.setattr(report_loop, "context_from_rows", capture)
    return seen


def test_each_record_is_read_once_and_every_table_equals_summing_all_members(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = FakeReports()
    seen = watch_mentioned(monkeypatch, fake)
    result = run_reports(token_budget=1_000)
    assert result.communities == len(COMMUNITIES) and result.copied_from_sub_community == 1
    assert sorted(fake.mentions_read) == [1, 2, 3, 4]
    assert set(seen) == {"0-a", "0-b", "0-c", "1-x", "2-r"}  # 1-y copies 0-c's report
    for community_id, mentioned in seen.items():
        assert mentioned == top_mentioned(MENTIONS, MEMBERS[community_id]), community_id
    assert [(m.na_id, m.count, m.records) for m in seen["2-r"]] == [
        (12, 8, 2),
        (11, 6, 2),
        (10, 3, 2),
    ]


class RememberingReports(FakeReports):
    """:class:`FakeReports` with the reads a scoped plan makes: every community has a members'
    hash, the reports written are what the nodes hold, and record 1 is in 0-a alone."""

    def __init__(self) -> None:
        super().__init__()
        self.written: dict[str, dict[str, Any]] = {}

    def _row(self, community: dict[str, Any]) -> dict[str, Any]:
        row = {**community, "memberHash": f"h-{community['id']}"}
        written = self.written.get(community["id"])
        if written is not None:
            row.update(
                report=written["report"],
                reportGeneratedBy=written["generatedBy"],
                reportContextKey=written["contextKey"],
                reportInputKey=written["inputKey"],
            )
        return row

    def communities(self, driver: Any, database: str) -> list[dict[str, Any]]:
        return [self._row(c) for c in COMMUNITIES]

    def community_outline(self, driver: Any, database: str, model_key: str) -> list[Any]:
        return [{**c, "stale": c["id"] not in self.written} for c in self.communities(None, "")]

    def communities_by_id(self, driver: Any, database: str, ids: list[str]) -> list[Any]:
        return [self._row(c) for c in COMMUNITIES if c["id"] in ids]

    def communities_of_records(self, driver: Any, database: str, na_ids: list[int]) -> set[str]:
        return {cid for cid in ("0-a", "1-x", "2-r") if set(na_ids) & set(MEMBERS[cid])}

    def member_ids_of_many(self, driver: Any, database: str, ids: list[str]) -> dict[str, Any]:
        return {cid: frozenset(MEMBERS[cid]) for cid in ids}

    def write_reports(self, driver: Any, database: str, rows: list[Any]) -> int:
        self.written.update((row["id"], row) for row in rows)
        return len(rows)


def test_a_scoped_run_takes_the_remembered_totals_of_sub_communities_outside_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = RememberingReports()
    seen = watch_mentioned(monkeypatch, fake)

    def run(*, force: bool = False) -> generate.ReportRunResult:
        return run_reports(token_budget=1_000, scope_path=tmp_path / "scope.sqlite", force=force)

    first = run()
    assert not first.scoped and sorted(fake.mentions_read) == [1, 2, 3, 4]
    with ReportScope(tmp_path / "scope.sqlite") as scope:
        remembered = scope.mention_totals({c["id"]: f"h-{c['id']}" for c in COMMUNITIES})
        assert remembered == {cid: mention_totals(MENTIONS, MEMBERS[cid]) for cid in MEMBERS}
        # Totals made from other members are not handed out.
        assert scope.mention_totals({"0-b": "h-other", "0-c": None}) == {}
        # Record 1 pending: 0-a and its parents are made again.
        scope.db.execute("INSERT INTO pending_records VALUES (1, 1)")
        scope.commit_seq(1)
    fake.mentions_read.clear()
    seen.clear()
    second = run()
    assert second.scoped, second.whole_because
    assert second.communities_in_scope == 3
    # 0-b's and 1-y's totals are remembered: only 0-a's members' mentions are read.
    assert sorted(fake.mentions_read) == [1, 2]
    assert second.unchanged_inputs == 3 and not seen
    # What a whole run makes from every member's mentions, the scoped run made too.
    scoped_keys = {cid: row["inputKey"] for cid, row in fake.written.items()}
    fake.written.clear()
    run(force=True)
    assert {cid: row["inputKey"] for cid, row in fake.written.items()} == scoped_keys

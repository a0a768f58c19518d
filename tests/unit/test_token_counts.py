"""Token counts of report-context texts are remembered between runs: an unchanged graph counts
no text twice, the reports do not change, and a complete run forgets texts it no longer uses."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

import nara_kg.generation.generate as generate
from nara_kg.generation.llm import ExtractiveLLM
from nara_kg.generation.token_counts import remembered_token_counts
from tests.unit.test_report_mention_totals import FakeReports, WordCounter


class CountingWords(WordCounter):
    def __init__(self) -> None:
        self.counted: list[str] = []

    def count_tokens(self, text: str) -> int:
        self.counted.append(text)
        return super().count_tokens(text)

    def count_tokens_many(self, texts: list[str]) -> list[int]:
        self.counted.extend(texts)
        return [WordCounter.count_tokens(self, t) for t in texts]


def _stored(path: Path) -> int:
    with sqlite3.connect(path) as connection:
        return int(connection.execute("SELECT COUNT(*) FROM token_counts").fetchone()[0])


def test_counts_are_kept_per_counter_and_unused_ones_are_dropped(tmp_path: Path) -> None:
    path = tmp_path / "counts.sqlite"
    words = CountingWords()
    with remembered_token_counts(path, "w", words.count_tokens, words.count_tokens_many) as c:
        assert c.count_many(["a b", "c", "a b"]) == [4, 3, 4]
        assert c.count("d e f") == 5
    assert sorted(words.counted) == ["a b", "c", "d e f"] and _stored(path) == 3

    words.counted.clear()
    with remembered_token_counts(path, "w", words.count_tokens, words.count_tokens_many) as c:
        assert c.count_many(["a b", "g"]) == [4, 3]
    assert words.counted == ["g"]
    assert _stored(path) == 2  # "c" and "d e f" were not used by the complete run

    with remembered_token_counts(path, "other", words.count_tokens, words.count_tokens_many) as c:
        c.count("a b")
    assert words.counted == ["g", "a b"]  # another counter's counts are its own


def test_what_a_released_group_used_is_kept_and_no_longer_held(tmp_path: Path) -> None:
    path = tmp_path / "counts.sqlite"
    words = CountingWords()
    with remembered_token_counts(path, "w", words.count_tokens, words.count_tokens_many) as c:
        c.count_many(["a b", "c", "d e f"])
    words.counted.clear()
    with remembered_token_counts(path, "w", words.count_tokens, words.count_tokens_many) as c:
        assert c.count_many(["a b", "g"]) == [4, 3]
        c.release()
        assert not c._known and not c._new  # the group's counts are let go of
        assert _stored(path) == 4  # "g" is stored at once
        assert c.count("c") == 3
    assert words.counted == ["g"]
    # Used before the release ("a b", "g") or after it ("c"): kept; never asked for: dropped.
    assert _stored(path) == 3


def test_a_second_run_over_the_same_graph_counts_nothing_and_writes_the_same_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written: list[list[dict[str, Any]]] = []

    class Recording(FakeReports):
        def write_reports(self, driver: Any, database: str, rows: list[Any]) -> int:
            written.append(rows)
            return len(rows)

    monkeypatch.setattr(generate, "report_cypher", Recording())
    path = tmp_path / "counts.sqlite"
    runs = []
    for _ in range(2):
        words = CountingWords()
        result = generate.generate_community_reports(
            None,  # type: ignore[arg-type]
            "neo4j",
            ExtractiveLLM(),
            None,
            words,  # type: ignore[arg-type]
            token_budget=1_000,
            token_counts_path=path,
        )
        runs.append((result, list(words.counted)))
    (first, first_counted), (second, second_counted) = runs
    assert first_counted and first.token_counts_new > 0
    assert second_counted == [] and second.token_counts_new == 0
    assert second.token_counts_reused == first.token_counts_new
    assert written[0] == written[1]

"""What community_reports reads of each record is kept between runs: a kept member row shows the
context what the whole row shows, the store hands back what was put, and a run with kept parts
reads from the graph only the records not kept, while a relationship's titles and degree still
come from its two ends as they are now."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from nara_kg.generation.record_parts_store import RecordPartsStore
from nara_kg.generation.report_rows import (
    _excerpt,
    _header_field,
    kept_member_row,
    kept_text,
)
from nara_kg.graph import reports as report_cypher

_WORDS = ["Dates:", "Part", "of:", "1942", "series", "War", "a", "", "Relocation", "x" * 40]
_SPACES = [" ", "  ", "\n", "\t", " \n ", "\n\n"]


def _random_text(rng: random.Random) -> str | None:
    if rng.random() < 0.05:
        return rng.choice([None, "", "\n\n", "Title only"])
    header = "\n".join(
        [f"Title {rng.randint(1, 99)}"]
        + [
            f"{name}: {rng.choice(_WORDS)} {rng.randint(1900, 1999)}"
            for name in rng.sample(["Dates", "Part of", "Level"], rng.randint(0, 3))
        ]
    )
    body = "".join(rng.choice(_WORDS) + rng.choice(_SPACES) for _ in range(rng.randint(0, 200)))
    return header if rng.random() < 0.1 else f"{header}\n\n{body}"


def test_a_kept_text_gives_the_excerpt_and_header_of_the_whole_text() -> None:
    rng = random.Random(40)
    cut_at_a_space = 0
    for _ in range(3_000):
        text = _random_text(rng)
        kept = kept_text(text)
        assert _excerpt(kept) == _excerpt(text)
        for name in ("Dates", "Part of", "Level"):
            assert _header_field(kept, name) == _header_field(text, name)
        assert len(kept or "") <= len(text or "") or text is None
        body = " ".join((text or "").partition("\n\n")[2].split())
        cut_at_a_space += len(body) > 300 and body[300] == " "
    # The generator reaches the cut that ends in a space (where an excerpt-long cut would not).
    assert cut_at_a_space > 10


def test_a_kept_row_keeps_every_field_but_the_text_whole() -> None:
    row = {"naId": 7, "title": "T", "nodeType": "item", "source": "s", "degree": 3}
    text = "T\nDates: 1942\n\n" + "word " * 500
    kept = kept_member_row({**row, "text": text})
    assert {k: v for k, v in kept.items() if k != "text"} == row
    assert len(kept["text"]) < 400 and _excerpt(kept["text"]) == _excerpt(text)


def _parts(na_id: int, degree: int = 1, outgoing: list[list[Any]] | None = None) -> dict[str, Any]:
    return {
        "member": {"naId": na_id, "title": f"R{na_id}", "nodeType": "item", "text": "t"},
        "relDegree": degree,
        "outgoing": outgoing or [],
        "mentions": [],
    }


def test_the_store_hands_back_what_was_put_until_it_is_forgotten(tmp_path: Path) -> None:
    with RecordPartsStore(tmp_path / "parts.sqlite") as store:
        store.put_many({n: _parts(n) for n in range(1, 12_001)})
    with RecordPartsStore(tmp_path / "parts.sqlite") as store:
        assert len(store) == 12_000
        wanted = list(range(0, 12_003, 3))  # several batches, some not kept
        found = store.get_many(wanted)
        assert found.keys() == {n for n in wanted if 1 <= n <= 12_000}
        assert found[9] == _parts(9)
        assert store.forget([3, 6, 99_999]) == 2
        assert store.get_many([3, 4, 6]).keys() == {4}
        store.clear()
        assert len(store) == 0


class _Graph:
    """The graph's answers to RECORD_PARTS and MEMBER_IDS_OF_MANY, counting the records read."""

    def __init__(self, parts: dict[int, dict[str, Any]], members: dict[str, list[int]]) -> None:
        self.parts, self.members = parts, members
        self.read: list[int] = []

    def read_values(self, driver: Any, database: str, query: str, **params: Any) -> list[Any]:
        if query == report_cypher.RECORD_PARTS:
            self.read.extend(params["naIds"])
            return [self.parts[n] for n in params["naIds"] if n in self.parts]
        assert query == report_cypher.MEMBER_IDS_OF_MANY
        return [{"id": cid, "naIds": self.members[cid]} for cid in params["ids"]]


def _run(graph: _Graph, store: RecordPartsStore | None) -> tuple[dict[str, Any], int, int]:
    known = report_cypher.KnownMembers(store=store, shape=kept_member_row)
    members = report_cypher.members_of_many(None, "neo4j", ["c"], known=known)  # type: ignore[arg-type]
    within = report_cypher.relationships_within(
        None,  # type: ignore[arg-type]
        "neo4j",
        {"c": [m["naId"] for m in members["c"]]},
        known=known,
    )
    return {"members": members, "within": within}, known.read_from_graph, known.read_from_store


def test_kept_parts_are_read_once_and_a_relationship_follows_its_ends_as_they_are_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 1 -> 2 and 1 -> 3 (creator), 4 alone.
    parts = {
        1: _parts(1, 2, [[3, "creator"], [2, "Includes"]]),
        2: _parts(2, 1),
        3: _parts(3, 1),
        4: _parts(4, 0),
    }
    graph = _Graph(parts, {"c": [1, 2, 3, 4]})
    monkeypatch.setattr(report_cypher, "read_values", graph.read_values)
    with RecordPartsStore(tmp_path / "parts.sqlite") as store:
        first, from_graph, kept = _run(graph, store)
        assert (from_graph, kept) == (4, 0)
        assert first["within"]["c"] == [
            {"source": 1, "sourceTitle": "R1", "target": 2, "type": "Includes"}
            | {"targetTitle": "R2", "degree": 3},
            {"source": 1, "sourceTitle": "R1", "target": 3, "type": "creator"}
            | {"targetTitle": "R3", "degree": 3},
        ]
        graph.read.clear()
        assert _run(graph, store) == (first, 0, 4)
        assert graph.read == []
        # 3 is retitled and gains an edge from a new record 5: graph_communities queues 3 and 5,
        # and the run drops their parts. Record 1 is not read again, yet its relationship to 3
        # shows 3's new title and degree.
        parts[3] = {**_parts(3, 2), "member": {**_parts(3)["member"], "title": "R3 new"}}
        parts[5] = _parts(5, 1, [[3, "subject"]])
        graph.members["c"] = [1, 2, 3, 4, 5]
        assert store.forget([3, 5]) == 1
        graph.read.clear()
        kept_run, from_graph, kept = _run(graph, store)
        assert sorted(graph.read) == [3, 5] and (from_graph, kept) == (2, 3)
        fresh, _, _ = _run(graph, None)
        assert kept_run == fresh
        to_three = [r for r in kept_run["within"]["c"] if r["target"] == 3]
        assert {(r["source"], r["targetTitle"], r["degree"]) for r in to_three} == {
            (1, "R3 new", 4),
            (5, "R3 new", 3),
        }

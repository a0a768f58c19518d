"""The on-disk comparison of the whole path and the chunk-keyed mention cache, against the
in-memory sets and dicts they replace."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from nara_kg.build import mention_sync
from nara_kg.build.mention_cache import SUPERSEDED, MentionCache, cached_chunks
from nara_kg.build.mention_comparison import BATCH_ROWS, MentionComparison

Edges = dict[tuple[str, str], tuple[int, str]]


def _edges(rng: random.Random, n: int) -> Edges:
    return {
        (f"{rng.randrange(40)}-0", f"{rng.randrange(400)}-{rng.randrange(3)}"): (
            rng.randrange(1, 3),
            rng.choice(["Kimball", "Ford", "Nixon"]),
        )
        for _ in range(n)
    }


@pytest.mark.parametrize("seed", range(6))
def test_the_comparison_gives_the_in_memory_difference_in_key_order(
    tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    desired, current = _edges(rng, 500), _edges(rng, 500)
    # Some current edges kept as they are, so that not everything differs.
    current.update(dict(rng.sample(sorted(desired.items()), 200)))
    with MentionComparison(tmp_path / "c.sqlite") as comparison:
        shadowed = next(iter(desired))
        comparison[shadowed] = (99, "overwritten")  # a later value of an edge wins, as in a dict
        for edge, value in desired.items():
            comparison[edge] = value
        assert comparison.add_current((*e, *v) for e, v in current.items()) == len(current)
        comparison.seal()
        written = [row for rows in comparison.to_write() for row in rows]
        removed = [edge for edges in comparison.to_remove() for edge in edges]
        kept = [row for rows in comparison.desired() for row in rows]
        assert comparison.count() == len(desired)
        pairs = set(comparison.record_pairs())
    to_write = sorted(e for e, v in desired.items() if current.get(e) != v)
    assert [(a, b) for a, b, *_ in written] == to_write
    assert [(c, s) for _, _, c, s, _ in written] == [desired[e] for e in to_write]
    assert [bool(new) for *_, new in written] == [e not in current for e in to_write]
    assert removed == sorted(set(current) - set(desired))
    assert kept == [(*e, *desired[e]) for e in sorted(desired)]
    assert pairs == {(int(b.split("-")[0]), int(a.split("-")[0])) for a, b in desired}


def test_the_comparison_hands_back_bounded_batches_and_leaves_no_file(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with MentionComparison(path) as comparison:
        for i in range(BATCH_ROWS * 2 + 5):
            comparison[(f"{i % 7}-0", f"{i}-0")] = (1, "x")
        comparison.add_current([])
        comparison.seal()
        sizes = [len(rows) for rows in comparison.to_write()]
    assert sizes == [BATCH_ROWS, BATCH_ROWS, 5]
    assert not path.exists()


def test_the_cache_is_read_by_chunk_and_replaced_only_when_finished(tmp_path: Path) -> None:
    path = tmp_path / "mentions.sqlite"
    with MentionCache(path) as cache:
        assert cache.get("1-0") is None  # no cache yet
        cache.put("1-0", ("k1", '[[5, "person", "Ford", 1]]', "[]"))
        cache.put("2-0", ("k2", "[]", "[]"))
        cache.put("1-0", ("k1b", "[]", "[]"))  # the last put of a chunk stands
        cache.finish()
    assert dict(cached_chunks(path)) == {"1-0": ("k1b", "[]", "[]"), "2-0": ("k2", "[]", "[]")}
    with MentionCache(path) as cache:  # a run killed before finish() leaves the old cache
        assert cache.get("2-0") == ("k2", "[]", "[]")
        cache.put("3-0", ("k3", "[]", "[]"))
    assert [chunk for chunk, _ in cached_chunks(path)] == ["1-0", "2-0"]
    assert not path.with_name("mentions.sqlite.building").exists()


def test_a_damaged_cache_reads_as_empty(tmp_path: Path) -> None:
    path = tmp_path / "mentions.sqlite"
    path.write_bytes(b"not a database" * 100)
    with MentionCache(path) as cache:
        assert cache.get("1-0") is None
        cache.put("1-0", ("k", "[]", "[]"))
        cache.finish()
    assert dict(cached_chunks(path)) == {"1-0": ("k", "[]", "[]")}


def test_the_cache_of_an_earlier_version_goes_once_a_new_cache_is_in_place(
    tmp_path: Path,
) -> None:
    path = tmp_path / "mentions.sqlite"
    superseded = [path.with_name(name) for name in SUPERSEDED]
    for old in superseded:
        old.write_bytes(b"PAR1")
    with MentionCache(path) as cache:  # killed before finish(): nothing is removed
        cache.put("1-0", ("k", "[]", "[]"))
    assert all(old.exists() for old in superseded)
    with MentionCache(path) as cache:
        cache.put("1-0", ("k", "[]", "[]"))
        cache.finish()
    assert not any(old.exists() for old in superseded)
    assert path.exists()


def test_a_difference_is_written_a_batch_at_a_time_each_batch_marked_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[tuple[str, object]] = []
    monkeypatch.setattr(mention_sync, "mark_touched", lambda _l, ids: calls.append(("mark", ids)))
    monkeypatch.setattr(
        mention_sync.mention_cypher,
        "write_mentions",
        lambda _d, _db, rows: calls.append(("w", rows)),
    )
    monkeypatch.setattr(
        mention_sync.mention_cypher, "delete_mentions", lambda _d, _db, e: calls.append(("d", e))
    )
    to_write = [
        [("5", "1-0", 2, "Ford", True), ("6", "1-0", 1, "Dix", False)],
        [("5", "2-0", 1, "F", True)],
    ]
    counts = mention_sync.write_difference(None, "neo4j", None, to_write, [[("7", "3-0")]])  # type: ignore[arg-type]
    assert counts == (2, 1, 1)
    assert [kind for kind, _ in calls] == ["mark", "w", "mark", "w", "mark", "d"]
    assert calls[0][1] == {5, 6, 1} and calls[1][1] == [
        ["5", "1-0", 2, "Ford"],
        ["6", "1-0", 1, "Dix"],
    ]
    assert calls[5][1] == [["7", "3-0"]]

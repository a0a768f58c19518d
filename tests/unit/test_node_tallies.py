"""graph_nodes' counts kept by difference equal the counts of the nodes themselves."""

from __future__ import annotations

import random

from nara_kg.build.node_tallies import (
    CountedChunk,
    agrees_with_labels,
    apply_difference,
    shaped,
    tally,
)

TYPES = ("item", "fileUnit", "person", "topicalSubject")


def record(na_id: int, node_type: str, chunks: int, stub: bool = False) -> dict[str, CountedChunk]:
    return {f"{na_id}-{seq}": CountedChunk(node_type, seq, stub) for seq in range(chunks)}


def random_graph(rng: random.Random, na_ids: range) -> dict[int, dict[str, CountedChunk]]:
    return {
        na_id: record(na_id, rng.choice(TYPES), rng.randint(1, 4), stub=rng.random() < 0.2)
        for na_id in na_ids
    }


def nodes_of(graph: dict[int, dict[str, CountedChunk]]) -> list[CountedChunk]:
    return [chunk for chunks in graph.values() for chunk in chunks.values()]


def test_counts_by_difference_equal_the_counts_of_the_changed_graph() -> None:
    rng = random.Random(5)
    graph = random_graph(rng, range(300))
    counts = shaped(tally(nodes_of(graph)))
    for _ in range(20):
        # A change set: some records retyped, regrown, made stubs or full, removed, added.
        changed = set(rng.sample(sorted(graph), 15)) | {rng.randint(300, 400) for _ in range(3)}
        replaced = [c for na_id in changed for c in graph.get(na_id, {}).values()]
        for na_id in changed:
            if rng.random() < 0.2:
                graph.pop(na_id, None)
            else:
                graph.update(random_graph(rng, range(na_id, na_id + 1)))
        written = [c for na_id in changed for c in graph.get(na_id, {}).values()]
        after = apply_difference(counts, replaced, written)
        assert after == shaped(tally(nodes_of(graph)))
        assert after is not None
        counts = after


def test_counts_are_chunks_records_and_stubs_per_type() -> None:
    chunks = [*record(1, "item", 3).values(), *record(2, "person", 1, stub=True).values()]
    assert shaped(tally(chunks)) == {
        "item.chunks": 3,
        "item.records": 1,
        "item.stubs": 0,
        "person.chunks": 1,
        "person.records": 1,
        "person.stubs": 1,
    }


def test_a_type_whose_last_chunk_goes_leaves_the_counts() -> None:
    only = record(1, "person", 2)
    counts = shaped(tally(only.values()))
    assert counts == {"person.chunks": 2, "person.records": 1, "person.stubs": 0}
    assert apply_difference(counts, only.values(), []) == {}


def test_counts_that_were_not_the_graphs_are_refused() -> None:
    counts = shaped(tally(record(1, "item", 1).values()))
    assert apply_difference(counts, record(2, "person", 3).values(), []) is None


def test_the_count_store_check_compares_chunks_per_type() -> None:
    counts = shaped(tally([*record(1, "item", 3).values(), *record(2, "person", 1).values()]))
    assert agrees_with_labels(counts, {"item": 3, "person": 1, "series": 0})
    assert not agrees_with_labels(counts, {"item": 3, "person": 2})
    assert not agrees_with_labels(counts, {"item": 3})

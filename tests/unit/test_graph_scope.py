"""Which part of the graph a graph check verifies after a change (quality.graph_scope): when
it may verify the change alone, which records a change reaches in the hierarchy, and the
totals it keeps per file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.changes import ChangeSet
from nara_kg.model import edges
from nara_kg.model.edges import RecordLinks
from quality.graph_checks import compare_records
from quality.graph_scope import (
    CHANGED,
    WHOLE,
    Reach,
    Remembered,
    config_digest,
    cycles_now,
    includes_reach,
    plan_scope,
    recall,
    remember,
    totals_by_type,
    type_figures,
    update_files,
)

CHANGES = ChangeSet(generation="g2", base="g1", changed=(5,))


def passed_at(generation: str | None, config: str = "c", *, passed: bool = True) -> Remembered:
    return Remembered(config=config, generation=generation, passed=passed)


# --------------------------------------------------------------------------- when to scope
def test_a_check_that_passed_on_the_base_checks_the_change_alone() -> None:
    scope = plan_scope(passed_at("g1"), CHANGES, "c", full=False)
    assert scope.mode == CHANGED and scope.scoped
    assert scope.changes is CHANGES


def test_every_other_case_checks_the_whole_graph() -> None:
    cases = {
        "full rebuild": plan_scope(passed_at("g1"), CHANGES, "c", full=True),
        "no change set is known": plan_scope(passed_at("g1"), None, "c", full=False),
        "first run of the check": plan_scope(None, CHANGES, "c", full=False),
        "the check's code or settings changed": plan_scope(
            passed_at("g1", "other"), CHANGES, "c", full=False
        ),
        "the check failed last time": plan_scope(
            passed_at("g1", passed=False), CHANGES, "c", full=False
        ),
        "run again on a selection it has checked": plan_scope(
            passed_at("g2"), CHANGES, "c", full=False
        ),
        "it did not check the selection this change is from": plan_scope(
            passed_at("g0"), CHANGES, "c", full=False
        ),
    }
    for reason, scope in cases.items():
        assert (scope.mode, scope.reason) == (WHOLE, reason)
    rebuilt_index = ChangeSet(generation="g2", base=None)
    assert plan_scope(passed_at(None), rebuilt_index, "c", full=False).mode == WHOLE


def test_the_definition_digest_follows_the_parameters() -> None:
    assert config_digest("a", 384) == config_digest("a", 384)
    assert config_digest("a", 384) != config_digest("a", 768)


def test_the_memory_is_read_back_and_a_damaged_one_is_none(tmp_path: Path) -> None:
    layout = WorkLayout(tmp_path)
    assert recall(layout, "x") is None
    remember(layout, "x", Remembered("c", "g1", True, {"files": {"f": [1, 2]}}))
    assert recall(layout, "x") == Remembered("c", "g1", True, {"files": {"f": [1, 2]}})
    (layout.check_memory.parent / "graph_checks" / "x.json").write_text("{not json")
    assert recall(layout, "x") is None


# --------------------------------------------------------------------------- Includes reach
def lookups(
    parents: dict[int, int],
) -> tuple[Callable[[int], int | None], Callable[[set[int]], set[int]]]:
    def parent(na_id: int) -> int | None:
        return parents.get(na_id)

    def children(of: set[int]) -> set[int]:
        return {child for child, p in parents.items() if p in of}

    return parent, children


def test_a_change_reaches_the_record_and_its_children_not_its_siblings() -> None:
    # 1 <- 2 <- {3, 4}; 1 <- 5
    parents = {2: 1, 3: 2, 4: 2, 5: 1}
    parent, children = lookups(parents)
    reach = includes_reach([2], [], parent, children)
    assert reach.records == {2, 3, 4}
    assert reach.cycles == () and reach.broken_links() == {}


def test_a_cycle_the_change_closes_is_reached_whole_and_broken_at_its_smallest_naid() -> None:
    # 7 now names 9 as its parent: 7 -> 9 -> 8 -> 7 is a cycle; 10 hangs below 8.
    parents = {7: 9, 9: 8, 8: 7, 10: 8}
    parent, children = lookups(parents)
    reach = includes_reach([7], [], parent, children)
    assert reach.cycles == ((7, 9, 8),)
    assert {7, 8, 9} <= reach.records
    assert reach.broken_links() == {7: 9}
    # The same rule as the whole check's (nara_kg.model.edges.break_cycles).
    links = [RecordLinks(c, 1, p) for c, p in parents.items()]
    _, whole = edges.break_cycles(edges.parent_links(links, set(parents)))
    assert [list(c) for c in reach.cycles] == whole


def test_a_cycle_the_change_broke_gives_its_members_back_to_the_check() -> None:
    # Before: 3 -> 2 -> 1 -> 3 (a cycle). 3 now names no parent: 1 and 2 hang below 3 again.
    parents = {2: 1, 1: 3}
    parent, children = lookups(parents)
    reach = includes_reach([3], [2], parent, children)
    assert reach.cycles == ()
    assert {1, 2, 3} <= reach.records


def test_the_cycles_of_the_whole_selection_after_a_change() -> None:
    remembered = [[1, 2], [20, 21, 22]]
    reach = Reach(frozenset({2, 5}), ((5, 6),))
    # [1, 2] held a changed record: only what the change's walk finds of it is kept.
    assert cycles_now(remembered, reach) == [[5, 6], [20, 21, 22]]


# --------------------------------------------------------------------------- per-file totals
def test_per_file_totals_are_replaced_for_changed_files_and_dropped_for_removed_ones() -> None:
    rows = [
        {"t": "item", "e": True, "s": 0},
        {"t": "item", "e": True, "s": 1},
        {"t": "series", "e": False, "s": 0},
    ]
    fresh = type_figures(rows, "t", "e", "s")
    assert fresh == {"item": [2, 2, 1], "series": [1, 0, 1]}
    previous = {"a": {"item": [5, 5, 5]}, "b": {"item": [1, 0, 1]}, "c": {"series": [3, 0, 3]}}
    files = update_files(previous, {"b": fresh}, ["c"])
    assert set(files) == {"a", "b"}
    assert totals_by_type(files) == {
        "item": {"chunks": 7, "embed": 7, "records": 6},
        "series": {"chunks": 1, "embed": 0, "records": 1},
    }


def test_the_changed_records_nodes_are_compared_with_their_rows() -> None:
    rows = [
        {"chunkId": "1-0", "nodeType": "item", "embed": True},
        {"chunkId": "1-1", "nodeType": "item", "embed": True},
        {"chunkId": "2-0", "nodeType": "series", "embed": False},
    ]
    nodes = [
        {"chunkId": "1-0", "nodeType": "item", "withText": True},
        {"chunkId": "2-0", "nodeType": "series", "withText": True},
        {"chunkId": "3-0", "nodeType": "item", "withText": False},
    ]
    found = {row["chunkId"]: row["problem"] for row in compare_records(rows, nodes)}
    assert found == {
        "1-1": "no node for the chunk row",
        "2-0": "type or recordWithText differs from the row",
        "3-0": "node of no chosen chunk row",
    }
    assert compare_records(rows[:1], nodes[:1]) == []

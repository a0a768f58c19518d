"""The order of a community_reports run: whole trees per group, one level per batch; a run
holds one tree group's rows at a time and writes each group's reports when it is done."""

from __future__ import annotations

import functools
from typing import Any

import pytest

import nara_kg.generation.generate as generate
import nara_kg.generation.report_loop as report_loop
from nara_kg.generation.report_order import same_level_batches, tree_groups
from tests.unit.test_report_mention_totals import (
    COMMUNITIES,
    MEMBERS,
    FakeReports,
    run_reports,
)


def community(cid: str, level: int, size: int, children: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"id": cid, "level": level, "size": size, "children": list(children)}


#: Two trees (r: 0-a, 0-b under 1-x under 2-r; s: 0-c under 2-s) and a lone leaf 0-d, finest
#: level first as a plan lists them.
FOREST = [
    community("0-a", 0, 2),
    community("0-b", 0, 3),
    community("0-c", 0, 4),
    community("0-d", 0, 1),
    community("1-x", 1, 5, ("0-a", "0-b")),
    community("2-r", 2, 5, ("1-x",)),
    community("2-s", 2, 4, ("0-c",)),
]


def ids(groups: list[list[dict[str, Any]]]) -> list[list[str]]:
    return [[c["id"] for c in group] for group in groups]


def test_a_group_holds_whole_trees_in_their_level_order() -> None:
    assert ids(list(tree_groups(FOREST, max_members=100))) == [[c["id"] for c in FOREST]]
    # Trees join in the order their topmost communities come: 0-d, then 2-r, then 2-s.
    assert ids(list(tree_groups(FOREST, max_members=6))) == [
        ["0-a", "0-b", "0-d", "1-x", "2-r"],
        ["0-c", "2-s"],
    ]
    # A tree larger than the bound is a group of its own, never split.
    assert ids(list(tree_groups(FOREST, max_members=1))) == [
        ["0-d"],
        ["0-a", "0-b", "1-x", "2-r"],
        ["0-c", "2-s"],
    ]
    assert list(tree_groups([], max_members=1)) == []


def test_a_scoped_run_groups_by_its_topmost_communities() -> None:
    # Only the communities in scope are listed; their children outside the run are no roots.
    scoped = [community("0-b", 0, 3), community("1-x", 1, 5, ("0-a", "0-b")), FOREST[5]]
    assert ids(list(tree_groups(scoped, max_members=1))) == [["0-b", "1-x", "2-r"]]


def test_every_group_is_batched_one_level_at_a_time() -> None:
    for group in tree_groups(FOREST, max_members=6):
        for batch in same_level_batches(group):
            assert len({c["level"] for c in batch}) == 1
        levels = [c["level"] for c in group]
        assert levels == sorted(levels)


#: A second tree beside test_report_mention_totals' one (records 1-4): 0-e {5}, 0-f {6}
#: under 1-z under 2-t.
SECOND_TREE = [
    community("0-e", 0, 1),
    community("0-f", 0, 1),
    community("1-z", 1, 2, ("0-e", "0-f")),
    community("2-t", 2, 2, ("1-z",)),
]
SECOND_MEMBERS = {"0-e": [5], "0-f": [6], "1-z": [5, 6], "2-t": [5, 6]}


class TwoTrees(FakeReports):
    """Both trees, level by level; what the run reads and writes, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[str, tuple[str, ...]]] = []
        self.members = {**MEMBERS, **SECOND_MEMBERS}
        self.written: dict[str, dict[str, Any]] = {}

    def communities(self, driver: Any, database: str) -> list[dict[str, Any]]:
        return sorted([*COMMUNITIES, *SECOND_TREE], key=lambda c: c["level"])

    def members_of_many(
        self,
        driver: Any,
        database: str,
        ids: list[str],
        known: Any = None,
        member_ids: Any = None,
    ) -> dict[str, Any]:
        if ids:  # the graph is asked nothing for a batch of copies alone
            self.events.append(("read", tuple(ids)))
        saved = dict(MEMBERS)
        MEMBERS.update(self.members)
        try:
            return super().members_of_many(driver, database, ids, known, member_ids)
        finally:
            MEMBERS.clear()
            MEMBERS.update(saved)

    def mentions_of_records(
        self, driver: Any, database: str, na_ids: list[int]
    ) -> dict[int, list[dict[str, Any]]]:
        return super().mentions_of_records(driver, database, [n for n in na_ids if n <= 4])

    def write_reports(self, driver: Any, database: str, rows: list[Any]) -> int:
        self.events.append(("write", tuple(row["id"] for row in rows)))
        self.written.update((row["id"], row) for row in rows)
        return len(rows)


def test_each_tree_group_is_read_written_and_let_go_of_before_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    one_group = TwoTrees()
    monkeypatch.setattr(generate, "report_cypher", one_group)
    whole = run_reports(token_budget=1_000)
    assert [kind for kind, _ in one_group.events] == ["read", "read", "read", "write"]

    grouped = TwoTrees()
    monkeypatch.setattr(generate, "report_cypher", grouped)
    monkeypatch.setattr(report_loop, "tree_groups", functools.partial(tree_groups, max_members=4))
    by_group = run_reports(token_budget=1_000)
    first = {str(c["id"]) for c in COMMUNITIES}
    second = {str(c["id"]) for c in SECOND_TREE}
    # Tree 2-r (4 records) first, then 2-t: each read level by level, then written.
    assert grouped.events == [
        ("read", ("0-a", "0-b", "0-c")),
        ("read", ("1-x",)),  # 1-y copies 0-c: not read
        ("read", ("2-r",)),
        ("write", tuple(sorted(first, key=lambda c: (c[0], c)))),
        ("read", ("0-e", "0-f")),
        ("read", ("1-z",)),
        ("write", tuple(sorted(second, key=lambda c: (c[0], c)))),
    ]
    # The same reports either way.
    assert by_group.communities == whole.communities == len(first | second)
    assert by_group.generated == whole.generated == 8
    assert by_group.copied_from_sub_community == whole.copied_from_sub_community == 2
    assert grouped.written == one_group.written


def _done(**members: set[int]) -> dict[str, Any]:
    return {cid: (None, frozenset(ids)) for cid, ids in members.items()}


def test_a_community_split_between_known_sub_communities_takes_their_members() -> None:
    community = {"id": "1-1", "size": 5, "children": ["0-1", "0-4"]}
    done = _done(**{"0-1": {1, 2, 3}, "0-4": {4, 5}})
    assert report_loop.members_of_sub_communities(community, done) == [1, 2, 3, 4, 5]


@pytest.mark.parametrize(
    ("community", "done"),
    [
        # a record whose finest community it is (its size is more than its sub-communities hold)
        ({"id": "1-1", "size": 6, "children": ["0-1", "0-4"]}, {"0-1": {1, 2, 3}, "0-4": {4, 5}}),
        # a sub-community the run does not know
        ({"id": "1-1", "size": 5, "children": ["0-1", "0-4"]}, {"0-1": {1, 2, 3}}),
        # sub-communities that overlap (not a tree)
        ({"id": "1-1", "size": 4, "children": ["0-1", "0-3"]}, {"0-1": {1, 2, 3}, "0-3": {3, 4}}),
        # no sub-community
        ({"id": "1-1", "size": 2, "children": []}, {}),
    ],
)
def test_members_are_asked_of_the_graph_unless_the_sub_communities_hold_them_all(
    community: dict[str, Any], done: dict[str, set[int]]
) -> None:
    assert report_loop.members_of_sub_communities(community, _done(**done)) is None

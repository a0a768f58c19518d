from __future__ import annotations

import dataclasses

import pytest

from nara_kg.model.community_hierarchy import build_hierarchy, community_key


def test_level_zero_is_finest_and_parents_nest() -> None:
    # Two pairs merge into one community at level 1; record 9 stays alone throughout.
    assignments = [
        (1, [10, 100]),
        (2, [10, 100]),
        (3, [11, 100]),
        (4, [11, 100]),
        (9, [12, 101]),
    ]
    hierarchy = build_hierarchy(assignments)
    assert hierarchy.levels == 2
    assert {c.id for c in hierarchy.at_level(0)} == {"0-10", "0-11"}
    assert {c.id for c in hierarchy.at_level(1)} == {"1-100"}
    top = hierarchy.communities["1-100"]
    assert top.size == 4 and top.members == (1, 2, 3, 4)
    assert top.children == ("0-10", "0-11") and top.parent is None
    assert hierarchy.communities["0-10"].parent == "1-100"
    # Members point at their finest community; the singleton has none at any level.
    assert hierarchy.finest == {1: "0-10", 2: "0-10", 3: "0-11", 4: "0-11"}


def test_a_record_alone_at_level_zero_joins_at_the_first_level_it_has_company() -> None:
    hierarchy = build_hierarchy([(1, [5, 50]), (2, [6, 50])])
    assert set(hierarchy.communities) == {"1-50"}
    assert hierarchy.finest == {1: "1-50", 2: "1-50"}


def test_a_community_s_size_is_the_records_under_it_when_leiden_s_levels_do_not_nest() -> None:
    # Pair 3, 4 is one community at level 0 but split between 100 and 200 at level 1: by the
    # tie rule it goes under 100, so 100 holds four records (Leiden counts three) and 200 two.
    hierarchy = build_hierarchy(
        [
            (1, [10, 100]),
            (2, [10, 100]),
            (3, [11, 100]),
            (4, [11, 200]),
            (5, [12, 200]),
            (6, [12, 200]),
            (7, [7, 200]),  # alone at level 0: a member of 200 itself
        ]
    )
    assert hierarchy.communities["0-11"].parent == "1-100"
    assert hierarchy.communities["1-100"].size == 4
    assert hierarchy.communities["1-200"].size == 3
    assert hierarchy.communities["1-200"].members == (4, 5, 6, 7)
    under = {cid: 0 for cid in hierarchy.communities}
    for finest in hierarchy.finest.values():
        above: str | None = finest
        while above is not None:
            under[above] += 1
            above = hierarchy.communities[above].parent
    assert {cid: c.size for cid, c in hierarchy.communities.items()} == under


def test_key_format() -> None:
    assert community_key(2, 17) == "2-17"


def test_member_ranges_cover_every_na_id_in_order() -> None:
    from nara_kg.graph.community_memberships import member_ranges

    finest = {30: "0-10", 10: "0-10", 20: "1-20", 40: "1-20", 50: "0-50"}
    ranges = list(member_ranges(finest, 2))
    bounds = [(after, upto) for after, upto, _ in ranges]
    # Open below the first member and above the last: a stray membership anywhere is compared.
    assert bounds == [(-1, 20), (20, 40), (40, 2**63 - 1)]
    assert ranges[0][2] == {("10-0", "0-10"), ("20-0", "1-20")}
    assert set().union(*(links for _, _, links in ranges)) == {
        (f"{na_id}-0", cid) for na_id, cid in finest.items()
    }
    assert list(member_ranges({}, 2)) == [(-1, 2**63 - 1, set())]


def test_ragged_levels_and_unsorted_input_give_the_same_hierarchy() -> None:
    # Node 5 has no second level (padded); the order of the input does not matter.
    rows = [(5, [1]), (2, [1, 7]), (9, [3, 7]), (4, [3, 7])]
    hierarchy = build_hierarchy(rows)
    assert hierarchy == build_hierarchy(list(reversed(rows)))
    assert hierarchy.communities["0-1"].members == (2, 5)
    assert hierarchy.communities["1-7"].members == (2, 4, 9)
    assert hierarchy.communities["0-1"].parent == "1-7"
    assert hierarchy.finest == {2: "0-1", 5: "0-1", 4: "0-3", 9: "0-3"}


def test_community_batches_hold_the_changing_communities_members_and_no_others() -> None:
    from nara_kg.graph.community_memberships import community_batches

    finest = {1: "0-1", 2: "0-1", 3: "0-3", 4: "0-3", 5: "0-3", 6: "0-6", 7: "1-7"}
    # "0-6" is not changing: its member is in no batch. "1-9" holds no record directly (its
    # members' finest communities are lower) yet is asked for, so a stray link to it is found.
    batches = list(community_batches(finest, ["0-1", "0-3", "1-7", "1-9"], 3))
    assert [ids for ids, _ in batches] == [["0-1"], ["0-3"], ["1-7", "1-9"]]
    assert batches[0][1] == {("1-0", "0-1"), ("2-0", "0-1")}
    # A community larger than a batch is a batch of its own.
    assert [ids for ids, _ in community_batches(finest, ["0-3"], 2)] == [["0-3"]]
    assert set().union(*(links for _, links in batches)) == {
        (f"{na_id}-0", cid) for na_id, cid in finest.items() if cid != "0-6"
    }
    assert list(community_batches(finest, [], 3)) == []


def test_a_community_s_hash_follows_its_members_its_size_and_the_code_that_made_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from nara_kg.graph import community_memberships

    hierarchy = build_hierarchy([(1, [10, 100]), (2, [10, 100]), (3, [11, 100]), (4, [11, 100])])
    hashes = community_memberships.member_hashes(hierarchy)
    assert community_memberships.member_hashes(hierarchy) == hashes
    top = hierarchy.communities["1-100"]
    resized = dataclasses.replace(
        hierarchy,
        communities={**hierarchy.communities, "1-100": dataclasses.replace(top, size=5)},
    )
    assert community_memberships.member_hashes(resized)["1-100"] != hashes["1-100"]
    assert community_memberships.member_hashes(resized)["0-10"] == hashes["0-10"]
    monkeypatch.setattr(community_memberships, "hierarchy_code_digest", lambda: "other code")
    assert set(community_memberships.member_hashes(hierarchy).values()).isdisjoint(hashes.values())

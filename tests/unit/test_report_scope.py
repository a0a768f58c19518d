"""Which communities' reports a run makes again: the records whose projected row or edges
changed (and the other ends of those edges) are queued by the projection stream and drained by
the reports run; the communities holding them, those with other members and their parents are
in scope, with a copied community's only sub-community."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nara_kg.generation.community_report import CommunityReport
from nara_kg.generation.report_plan import plan_reports
from nara_kg.generation.report_scope import ReportScope, communities_to_report
from nara_kg.graph.communities import ProjectedRecord, projection_digests

#: 1 -> 2 (Includes), 3 names 1 twice (a mention from authority 3), 4 alone.
GRAPH: list[ProjectedRecord] = [
    (1, "h1", ["Record 1", "series"], ((2, 1.0),)),
    (2, "h2", ["Record 2", "item"], ()),
    (3, "h3", ["Person 3", "person"], ((1, 2.0),)),
    (4, "h4", ["Record 4", "item"], ()),
]


def _pending(scope: ReportScope) -> set[int]:
    return {n for batch in scope.pending_batches(scope.pending_seq()) for n in batch}


def _drain(scope: ReportScope) -> None:
    scope.reports_written(up_to=scope.pending_seq(), members={}, gone=[], settings="s")


def test_first_stream_queues_every_record_and_an_unchanged_one_queues_none(
    tmp_path: Path,
) -> None:
    with ReportScope(tmp_path / "scope.sqlite") as scope:
        assert scope.update(GRAPH) == 4
        assert _pending(scope) == {1, 2, 3, 4}
        _drain(scope)
        assert scope.update(GRAPH) == 0
        assert _pending(scope) == set()


def test_a_changed_text_queues_the_record_alone(tmp_path: Path) -> None:
    with ReportScope(tmp_path / "scope.sqlite") as scope:
        scope.update(GRAPH)
        _drain(scope)
        edited = [GRAPH[0], GRAPH[1], (3, "h3-edited", ["Person 3", "person"], ((1, 2.0),))]
        assert scope.update([*edited, GRAPH[3]]) == 1
        assert _pending(scope) == {3}


def test_a_changed_heading_queues_the_record_and_the_records_it_names(tmp_path: Path) -> None:
    with ReportScope(tmp_path / "scope.sqlite") as scope:
        scope.update(GRAPH)
        _drain(scope)
        renamed = (3, "h3-renamed", ["Person 3 renamed", "person"], ((1, 2.0),))
        assert scope.update([GRAPH[0], GRAPH[1], renamed, GRAPH[3]]) == 1
        assert _pending(scope) == {3, 1}


def test_a_moved_edge_queues_its_old_and_new_ends(tmp_path: Path) -> None:
    with ReportScope(tmp_path / "scope.sqlite") as scope:
        scope.update(GRAPH)
        _drain(scope)
        moved = [GRAPH[0], GRAPH[1], (3, "h3", ["Person 3", "person"], ((4, 2.0),)), GRAPH[3]]
        scope.update(moved)
        assert _pending(scope) == {3, 1, 4}


def test_an_authority_named_once_more_queues_the_new_end_not_those_it_named_before(
    tmp_path: Path,
) -> None:
    with ReportScope(tmp_path / "scope.sqlite") as scope:
        scope.update(GRAPH)
        _drain(scope)
        named_again = (3, "h3", ["Person 3", "person"], ((1, 2.0), (4, 1.0)))
        assert scope.update([GRAPH[0], GRAPH[1], named_again, GRAPH[3]]) == 1
        assert _pending(scope) == {3, 4}


def test_a_mention_counted_again_queues_the_record_whose_count_moved(tmp_path: Path) -> None:
    with ReportScope(tmp_path / "scope.sqlite") as scope:
        scope.update(
            [*GRAPH[:2], (3, "h3", ["Person 3", "person"], ((1, 2.0), (4, 1.0))), GRAPH[3]]
        )
        _drain(scope)
        recounted = (3, "h3", ["Person 3", "person"], ((1, 2.0), (4, 3.0)))
        scope.update([GRAPH[0], GRAPH[1], recounted, GRAPH[3]])
        assert _pending(scope) == {3, 4}


def test_a_renamed_authority_with_a_new_edge_queues_every_end_old_and_new(tmp_path: Path) -> None:
    with ReportScope(tmp_path / "scope.sqlite") as scope:
        scope.update(GRAPH)
        _drain(scope)
        renamed = (3, "h3", ["Person 3 renamed", "person"], ((1, 2.0), (4, 1.0)))
        scope.update([GRAPH[0], GRAPH[1], renamed, GRAPH[3]])
        assert _pending(scope) == {3, 1, 4}


def test_edges_stored_without_their_weights_queue_every_end_old_and_new(tmp_path: Path) -> None:
    with ReportScope(tmp_path / "scope.sqlite") as scope:
        scope.update(GRAPH)
        _drain(scope)
        # as a store written before the weights were kept holds them
        scope.db.execute("UPDATE record_digests SET targets = '1' WHERE na_id = 3")
        named_again = (3, "h3", ["Person 3", "person"], ((1, 2.0), (4, 1.0)))
        scope.update([GRAPH[0], GRAPH[1], named_again, GRAPH[3]])
        assert _pending(scope) == {3, 1, 4}


def test_a_record_gone_from_the_graph_queues_it_and_its_old_targets(tmp_path: Path) -> None:
    with ReportScope(tmp_path / "scope.sqlite") as scope:
        scope.update(GRAPH)
        _drain(scope)
        assert scope.update([GRAPH[1], GRAPH[2], GRAPH[3]]) == 1
        assert _pending(scope) == {1, 2}
        # and it is gone from the digests: seen again, it is new
        _drain(scope)
        assert scope.update(GRAPH) == 1


def test_records_across_many_batches_are_compared_by_range(
    tmp_path: Path, monkeypatch: Any
) -> None:
    import nara_kg.generation.report_scope as module

    monkeypatch.setattr(module, "BATCH", 3)
    many: list[ProjectedRecord] = [(n, f"h{n}", None, ()) for n in range(1, 20)]
    with ReportScope(tmp_path / "scope.sqlite") as scope:
        scope.update(many)
        _drain(scope)
        # 7 gone, 11 edited, 25 new: each found although they fall in different batches
        changed = [r for r in many if r[0] != 7]
        changed[9] = (11, "h11-edited", None, ())
        changed.append((25, "h25", None, ()))
        assert scope.update(changed) == 3
        assert _pending(scope) == {7, 11, 25}


def test_a_run_that_fails_queues_nothing_and_keeps_the_old_digests(tmp_path: Path) -> None:
    with ReportScope(tmp_path / "scope.sqlite") as scope:
        scope.update(GRAPH)
        _drain(scope)

        def broken() -> Any:
            yield (1, "h1-edited", ["Record 1", "series"], ((2, 1.0),))
            raise RuntimeError("stream broke")

        with pytest.raises(RuntimeError):
            scope.update(broken())
        assert _pending(scope) == set()
        edited = (1, "h1-edited", ["Record 1", "series"], ((2, 1.0),))
        assert scope.update([edited, *GRAPH[1:]]) == 1


def test_records_queued_after_a_reports_run_began_stay_queued(tmp_path: Path) -> None:
    with ReportScope(tmp_path / "scope.sqlite") as scope:
        scope.update(GRAPH)
        seen = scope.pending_seq()
        scope.update([GRAPH[0], GRAPH[1], GRAPH[2], (4, "h4-edited", ["Record 4", "item"], ())])
        scope.reports_written(up_to=seen, members={}, gone=[], settings="s")
        assert _pending(scope) == {4}


def test_the_stream_hands_every_record_with_its_edges_to_the_comparison() -> None:
    rows = [
        (1, 2, 1.0, "h1", ["A", "series"]),
        (1, 3, 1.0, "h1", ["A", "series"]),
        (2, None, 0.0, "h2", ["B", "item"]),
        (3, 1, 2.0, "h3", ["C", "person"]),
    ]
    seen: list[ProjectedRecord] = []
    projection_digests(rows, seen.append)
    assert seen == [
        (1, "h1", ["A", "series"], ((2, 1.0), (3, 1.0))),
        (2, "h2", ["B", "item"], ()),
        (3, "h3", ["C", "person"], ((1, 2.0),)),
    ]


#: Level 0: 0-1 {1, 2}, 0-3 {3}, 0-4 {4}; level 1: 1-1 {1, 2, 3} (0-1, 0-3), 1-4 {4} (copy
#: of 0-4); level 2: 2-1 (1-1, 1-4).
OUTLINE = [
    {"id": "0-1", "level": 0, "size": 2, "memberHash": "a", "children": []},
    {"id": "0-3", "level": 0, "size": 1, "memberHash": "b", "children": []},
    {"id": "0-4", "level": 0, "size": 1, "memberHash": "c", "children": []},
    {"id": "1-1", "level": 1, "size": 3, "memberHash": "d", "children": ["0-1", "0-3"]},
    {"id": "1-4", "level": 1, "size": 1, "memberHash": "e", "children": ["0-4"]},
    {"id": "2-1", "level": 2, "size": 4, "memberHash": "f", "children": ["1-1", "1-4"]},
]
REMEMBERED = {c["id"]: c["memberHash"] for c in OUTLINE}


def test_nothing_pending_and_nothing_moved_means_no_report_is_made() -> None:
    assert communities_to_report(OUTLINE, set(), REMEMBERED) == set()


def test_a_community_holding_a_pending_record_is_made_with_its_parents() -> None:
    assert communities_to_report(OUTLINE, {"0-3", "1-1", "2-1"}, REMEMBERED) == {
        "0-3",
        "1-1",
        "2-1",
    }
    # the parents are added even when only the finest community is named
    assert communities_to_report(OUTLINE, {"0-3"}, REMEMBERED) == {"0-3", "1-1", "2-1"}


def test_a_copied_community_brings_its_only_sub_community() -> None:
    assert communities_to_report(OUTLINE, {"1-4"}, REMEMBERED) == {"1-4", "0-4", "2-1"}


def test_other_members_or_a_stale_report_put_a_community_in_scope() -> None:
    moved = [dict(c, memberHash="z") if c["id"] == "0-1" else c for c in OUTLINE]
    assert communities_to_report(moved, set(), REMEMBERED) == {"0-1", "1-1", "2-1"}
    stale = [dict(c, stale=True) if c["id"] == "0-4" else c for c in OUTLINE]
    assert communities_to_report(stale, set(), REMEMBERED) == {"0-4", "1-4", "2-1"}
    unknown = {k: v for k, v in REMEMBERED.items() if k != "0-3"}
    assert communities_to_report(OUTLINE, set(), unknown) == {"0-3", "1-1", "2-1"}


class OutlineReads:
    """The reads plan_reports makes, over :data:`OUTLINE`, every node holding a report; 1-4
    is a copy of 0-4 (no input key of its own)."""

    def __init__(self, holding: set[str]) -> None:
        self.holding = holding

    def _row(self, community: dict[str, Any]) -> dict[str, Any]:
        report = CommunityReport(
            community["id"], community["level"], "T", "S", 1.0, "R", (), "extractive"
        )
        return {
            **community,
            "report": report.to_json(),
            "reportGeneratedBy": "extractive",
            "reportContextKey": f"ctx-{community['id']}",
            "reportInputKey": None if community["id"] == "1-4" else f"in-{community['id']}",
        }

    def community_outline(self, driver: Any, database: str, model_key: str) -> list[Any]:
        return [dict(c, stale=False) for c in OUTLINE]

    def communities(self, driver: Any, database: str) -> list[Any]:
        return [self._row(c) for c in OUTLINE]

    def communities_of_records(self, driver: Any, database: str, na_ids: Any) -> set[str]:
        return self.holding

    def communities_by_id(self, driver: Any, database: str, ids: Any) -> list[Any]:
        return [self._row(c) for c in OUTLINE if c["id"] in ids]

    def member_ids_of_many(self, driver: Any, database: str, ids: Any) -> dict[str, Any]:
        return {cid: frozenset({1}) for cid in ids}


def test_the_plan_reads_a_copied_sub_community_outside_the_scope_from_its_node(
    tmp_path: Path,
) -> None:
    with ReportScope(tmp_path / "scope.sqlite") as scope:
        scope.update(GRAPH)
        scope.reports_written(up_to=0, members=REMEMBERED, gone=[], settings="s")
        plan = plan_reports(
            None, "neo4j", "m", scope=scope, settings="s", force=False, reads=OutlineReads({"0-3"})
        )
        assert plan.scoped, plan.whole_because
        assert [c["id"] for c in plan.communities] == ["0-3", "1-1", "2-1"]
        assert set(plan.outside) == {"0-1", "1-4"}
        assert plan.outside_context_keys["1-4"] == "ctx-1-4"
        assert plan.total == len(OUTLINE)
        # another generator, budget or code: every community
        other = plan_reports(
            None, "neo4j", "m", scope=scope, settings="t", force=False, reads=OutlineReads(set())
        )
        assert not other.scoped and len(other.communities) == len(OUTLINE)
        assert other.whole_because == "generator, budget or code changed"


def test_member_rows_are_remembered_by_the_row_hash_they_were_made_from(tmp_path: Path) -> None:
    with ReportScope(tmp_path / "scope.sqlite") as scope:
        scope.remember_member_fields([(1, "h1", {"naId": 1, "excerpt": "a"}), (2, "h2", {})])
        assert scope.member_fields([(1, "h1"), (2, "h2"), (3, "h3")]) == {
            1: {"naId": 1, "excerpt": "a"},
            2: {},
        }
        # A node whose row changed (another hash) is read again, then remembered anew.
        assert scope.member_fields([(1, "h1-new")]) == {}
        scope.remember_member_fields([(1, "h1-new", {"naId": 1, "excerpt": "b"})])
        assert scope.member_fields([(1, "h1-new"), (2, "h2")]) == {
            1: {"naId": 1, "excerpt": "b"},
            2: {},
        }


def test_settled_records_rows_and_relationships_are_the_stores_until_the_record_is_gone(
    tmp_path: Path,
) -> None:
    with ReportScope(tmp_path / "scope.sqlite") as scope:
        scope.update(GRAPH)
        _drain(scope)
        scope.remember_member_fields([(1, "h1", {"naId": 1, "degree": 2}), (2, "h2", {})])
        scope.remember_outgoing({1: [(2, "Includes")], 2: []})
        # Whatever hash they were made from: a record not pending is as it was remembered.
        assert scope.settled_member_fields([1, 2, 3]) == {1: {"naId": 1, "degree": 2}, 2: {}}
        assert scope.outgoing([1, 2, 3]) == {1: ((2, "Includes"),), 2: ()}
        # Every pending record, queued before a reports run began or after.
        scope.update([GRAPH[0], (2, "h2-edited", ["Record 2", "item"], ()), *GRAPH[2:]])
        first_seq = scope.pending_seq()
        scope.update(
            [GRAPH[0], GRAPH[1], (3, "h3-edited", ["Person 3", "person"], ((1, 2.0),)), GRAPH[3]]
        )
        assert scope.pending_seq() > first_seq
        assert scope.pending_records() == {2, 3}
        # A record gone from the graph takes what the store kept of it along.
        scope.update(GRAPH[1:])
        assert scope.settled_member_fields([1, 2]) == {2: {}}
        assert scope.outgoing([1, 2]) == {2: ()}


def test_a_store_for_a_scoped_run_settles_only_records_not_pending(tmp_path: Path) -> None:
    from nara_kg.generation.report_rows import MemberFieldStore

    with ReportScope(tmp_path / "scope.sqlite") as scope:
        scope.remember_member_fields([(1, "h1", {"naId": 1}), (2, "h2", {"naId": 2})])
        scope.remember_outgoing({1: [(2, "Includes")], 2: []})
        scoped = MemberFieldStore(scope, pending=frozenset({2}))
        assert scoped.settled([1, 2]) == {1: {"naId": 1}}
        assert scoped.settled_outgoing([1, 2]) == {1: ((2, "Includes"),)}
        # A run over every community settles nothing: every record is read.
        whole = MemberFieldStore(scope)
        assert whole.settled([1, 2]) == {} == whole.settled_outgoing([1, 2])
        assert MemberFieldStore(None, pending=frozenset()).settled([1]) == {}

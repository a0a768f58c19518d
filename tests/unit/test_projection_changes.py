"""graph_communities after a small change: the projection's digests are sums of its records',
so those updated from the records the writers touched equal those of a whole stream; the
writers' change log is drained only up to what a run read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nara_kg.build.communities import whole_stream_because
from nara_kg.build.projection_changes import EVERY_RECORD, ProjectionChanges, ends_of
from nara_kg.generation.report_scope import ReportScope
from nara_kg.graph.communities import (
    DigestSums,
    ProjectedRecord,
    projection_digests,
    projection_sums,
    record_content_digest,
    record_projection_digest,
)

BEFORE: list[ProjectedRecord] = [
    (1, "h1", ["Record 1", "series"], ((2, 1.0), (3, 1.0))),
    (2, "h2", ["Record 2", "item"], ()),
    (3, "h3", ["Person 3", "person"], ((1, 2.0),)),
    (4, "h4", ["Record 4", "item"], ((2, 1.0),)),
    (5, None, ["Record 5", "item"], ()),
]
#: Record 1 lost an edge, 3 weighs its mention differently, 4 is gone, 6 is new, 2 retitled.
AFTER: list[ProjectedRecord] = [
    (1, "h1", ["Record 1", "series"], ((2, 1.0),)),
    (2, "h2-edited", ["Record 2, revised", "item"], ()),
    (3, "h3", ["Person 3", "person"], ((1, 3.0),)),
    (5, None, ["Record 5", "item"], ()),
    (6, "h6", ["Record 6", "item"], ((5, 1.0),)),
]
TOUCHED = [1, 2, 3, 4, 6]


def rows(records: list[ProjectedRecord]) -> list[list[Any]]:
    """The stream's rows of `records` (a record without edges: one row with no target)."""
    out: list[list[Any]] = []
    for na_id, row_hash, face, edges in records:
        for target, weight in edges or ((None, 1.0),):
            out.append([na_id, target, weight, row_hash, face])
    return out


def pending(scope: ReportScope) -> set[int]:
    return {n for batch in scope.pending_batches(scope.pending_seq()) for n in batch}


def test_sums_updated_from_the_touched_records_equal_a_whole_streams(tmp_path: Path) -> None:
    whole_before = projection_sums(rows(BEFORE))
    with ReportScope(tmp_path / "partial.sqlite") as scope:
        with scope.transaction():
            comparison = scope.comparison()
            for record in BEFORE:
                comparison.add(record)
            comparison.finish()
            scope.set_sums(whole_before, "log")
        stored = scope.sums()
        assert stored == whole_before and scope.changes_store() == "log"
        by_id = {record[0]: record for record in AFTER}
        with scope.transaction():
            touched = scope.touched_comparison(stored)
            touched.add(TOUCHED, [by_id[n] for n in TOUCHED if n in by_id])
            changed = touched.finish("log")
        partial_digests = scope.sums()
        partial_pending = pending(scope)
    assert partial_digests is not None
    whole_after = projection_digests(rows(AFTER))
    assert partial_digests.digests() == whole_after
    assert whole_after.projection != projection_digests(rows(BEFORE)).projection
    assert changed == 5

    # The records queued for the reports are those a whole stream queues.
    with ReportScope(tmp_path / "whole.sqlite") as scope:
        scope.update(BEFORE)
        scope.reports_written(up_to=scope.pending_seq(), members={}, gone=[], settings="s")
        scope.update(AFTER)
        assert pending(scope) == partial_pending


def test_the_sums_do_not_depend_on_the_order_and_see_every_edge_and_weight() -> None:
    first = projection_sums(rows(BEFORE))
    reordered = DigestSums()
    for record in reversed(BEFORE):
        reordered.add_record(record)
    assert reordered == first
    undone = DigestSums(first.projection, first.content, first.records)
    undone.add_record(AFTER[-1])
    assert undone.digests() != first.digests()
    undone.remove(*_digests_of(AFTER[-1]))
    assert undone.digests() == first.digests()
    # A record's edge moved to another record changes the projection, its text the content.
    moved = [BEFORE[0], BEFORE[1], (3, "h3", BEFORE[2][2], ((2, 2.0),)), *BEFORE[3:]]
    assert projection_digests(rows(moved)).projection != first.digests().projection
    edited = [BEFORE[0], (2, "h2-edited", BEFORE[1][2], ()), *BEFORE[2:]]
    assert projection_digests(rows(edited)).projection == first.digests().projection
    assert projection_digests(rows(edited)).content != first.digests().content


def _digests_of(record: ProjectedRecord) -> tuple[int, int]:
    return record_projection_digest(record), record_content_digest(record[0], record[1])


def test_the_log_is_drained_only_up_to_what_a_run_read(tmp_path: Path) -> None:
    with ProjectionChanges(tmp_path / "log.sqlite") as log:
        identity = log.store_id()
        log.mark([7, 3, 7])
        up_to = log.high_water()
        log.mark([9])  # another run's writers, after this run began
        assert log.count(up_to) == 2
        assert [n for batch in log.batches(up_to) for n in batch] == [3, 7]
        assert not log.every_record(up_to)
        log.drain(up_to)
        assert [n for batch in log.batches(log.high_water()) for n in batch] == [9]
        log.mark([EVERY_RECORD])
        assert log.every_record(log.high_water()) and log.count(log.high_water()) == 1
    with ProjectionChanges(tmp_path / "log.sqlite") as log:
        assert log.store_id() == identity
    with ProjectionChanges(tmp_path / "other.sqlite") as other:
        assert other.store_id() != identity
    assert ends_of([("12-0", "30-2"), ("12-0", "4-0")]) == {12, 30, 4}


def test_the_whole_projection_is_read_when_the_stored_state_may_not_match() -> None:
    ok: dict[str, Any] = {
        "force": False,
        "stored": DigestSums(1, 2, 100),
        "stored_log": "log",
        "log": "log",
        "every_record": False,
        "written_elsewhere": False,
        "touched": 3,
    }
    assert whole_stream_because(**ok) is None
    for key, value in (
        ("force", True),
        ("stored", None),
        ("stored_log", "another"),
        ("log", None),
        ("every_record", True),
        ("written_elsewhere", True),
        ("touched", 60),
    ):
        assert whole_stream_because(**{**ok, key: value}), key

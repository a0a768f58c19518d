"""The digests that let graph_communities skip Leiden and community_reports skip every
context, and the canonical community ids that let a seeded run keep them."""

from __future__ import annotations

from typing import Any

import pytest

from nara_kg.build.communities import can_skip_leiden, changed_communities
from nara_kg.generation.report_sources import can_skip_reports, report_sources_digest
from nara_kg.graph import communities as graph_communities
from nara_kg.graph.communities import projection_digests
from nara_kg.model.community_hierarchy import build_hierarchy, canonical_assignments

ROWS: list[list[Any]] = [
    [1, 2, 1.0, "h1"],
    [1, 3, 2.0, "h1"],
    [2, None, 1.0, "h2"],
    [3, 1, 2.0, "h3"],
]


def test_projection_digest_follows_edges_and_weights_not_text() -> None:
    first = projection_digests(iter(ROWS))
    assert first.records == 3
    assert projection_digests(ROWS) == first
    reweighed: list[list[Any]] = [*ROWS[:1], [1, 3, 3.0, "h1"], *ROWS[2:]]
    assert projection_digests(reweighed).projection != first.projection
    rewired: list[list[Any]] = [*ROWS[:1], [1, 4, 2.0, "h1"], *ROWS[2:]]
    assert projection_digests(rewired).projection != first.projection
    edited: list[list[Any]] = [*ROWS[:2], [2, None, 1.0, "h2-edited"], ROWS[3]]
    assert projection_digests(edited).projection == first.projection
    assert projection_digests(edited).content != first.content
    # An int weight and its float are one weight (Cypher returns either).
    assert projection_digests([[1, 2, 1, "h1"]]) == projection_digests([[1, 2, 1.0, "h1"]])


def test_a_change_to_the_hierarchy_code_changes_the_projection_digest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """So Leiden runs again after such a change, and the communities it writes are those a
    full build would write (not the old code's, kept by a skipped run)."""
    first = projection_digests(ROWS)
    monkeypatch.setattr(graph_communities, "hierarchy_code_digest", lambda: "other code")
    again = projection_digests(ROWS)
    assert again.projection != first.projection
    assert (again.content, again.records) == (first.content, first.records)


def test_leiden_is_skipped_only_on_the_same_projection_and_communities() -> None:
    known = {"input": "p", "graph": "g"}
    assert can_skip_leiden(known, "p", "g")
    assert not can_skip_leiden(known, "p2", "g")
    assert not can_skip_leiden(known, "p", "g2")
    assert not can_skip_leiden(None, "p", "g")


def test_changed_communities_counts_added_removed_and_other_members() -> None:
    before = {"0-1": "a", "0-5": "b", "0-9": "c"}
    after = {"0-1": "a", "0-5": "b2", "0-12": "d"}
    assert changed_communities(before, after) == 3  # 0-5 changed, 0-9 gone, 0-12 new
    assert changed_communities(before, dict(before)) == 0


def test_ids_are_named_by_the_smallest_member_whatever_gds_numbered() -> None:
    one = [(7, [40, 90]), (3, [40, 90]), (8, [41, 90]), (9, [41, 90]), (20, [42, 91])]
    other = [(7, [2, 5]), (3, [2, 5]), (8, [0, 5]), (9, [0, 5]), (20, [1, 6])]
    first, second = canonical_assignments(one), canonical_assignments(other)
    assert (first.na_ids == second.na_ids).all() and (first.levels == second.levels).all()
    hierarchy = build_hierarchy(canonical_assignments(one))
    assert set(hierarchy.communities) == {"0-3", "0-8", "1-3"}
    assert hierarchy.finest == {3: "0-3", 7: "0-3", 8: "0-8", 9: "0-8"}


def test_reports_are_skipped_only_on_the_same_sources_with_every_report_current() -> None:
    parts = {
        "projection": "p",
        "content": "c",
        "communities": "g",
        "generator": "extractive",
        "counter_key": "model",
        "token_budget": 1200,
    }
    digest = report_sources_digest(**parts)  # type: ignore[arg-type]
    assert digest == report_sources_digest(**parts)  # type: ignore[arg-type]
    for key, other in (("content", "c2"), ("communities", "g2"), ("token_budget", 900)):
        assert report_sources_digest(**{**parts, key: other}) != digest  # type: ignore[arg-type]
    assert can_skip_reports({"sources": digest}, digest, 0)
    assert not can_skip_reports({"sources": digest}, digest, 1)
    assert not can_skip_reports({"sources": "older"}, digest, 0)
    assert not can_skip_reports(None, digest, 0)

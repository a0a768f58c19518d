"""Which communities a community_reports run makes reports for, and what it reads of the
others: the plan the generation loop (:mod:`nara_kg.generation.generate`) follows."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from neo4j import Driver

from nara_kg.generation.community_report import CommunityReport
from nara_kg.generation.report_context_data import MentionTotals
from nara_kg.generation.report_parse import ReportFormatError, parse_report
from nara_kg.generation.report_rows import report_code_digest
from nara_kg.generation.report_scope import ReportScope, communities_to_report
from nara_kg.graph import reports as report_cypher


def node_report(community: Mapping[str, Any]) -> CommunityReport | None:
    """The report on the community's node; None when it has none that parses."""
    if not community.get("reportContextKey"):
        return None
    try:
        return parse_report(
            community["report"] or "",
            community["id"],
            int(community["level"]),
            community["reportGeneratedBy"] or "",
        )
    except ReportFormatError:
        return None


def stored_report(
    community: Mapping[str, Any], input_key: str
) -> tuple[CommunityReport, bool, bool] | None:
    """The report on the community's node, with its context's two flags, when the node was
    written from these inputs; None when it was not (or its report does not parse)."""
    if community.get("reportInputKey") != input_key:
        return None
    report = node_report(community)
    if report is None:
        return None
    return (
        report,
        bool(community.get("reportUsedSubReports")),
        bool(community.get("reportTruncated")),
    )


@dataclass
class ReportPlan:
    """The communities a run makes reports for, finest level first (full rows), the stored
    reports of their sub-communities outside the run (id -> report and members' naIds, and
    id -> context key), and what the scope's state needs once the run is complete."""

    communities: list[dict[str, Any]]
    outside: dict[str, tuple[CommunityReport, frozenset[int]]]
    outside_context_keys: dict[str, str]
    total: int
    per_level: Counter[int]
    scoped: bool
    #: Why every community is looked at, when it is (empty when scoped).
    whole_because: str = ""
    #: The last pending sequence the run has seen, and the communities gone since the last run.
    seen_up_to: int = 0
    gone: list[str] = field(default_factory=list)
    #: The remembered mention totals of sub-communities outside the run (id -> totals), where
    #: they were made from the members they have now: their members' mentions are not read.
    outside_mention_totals: dict[str, MentionTotals] = field(default_factory=dict)
    #: In a scoped run, every record pending in the scope: the others are settled (their rows
    #: and relationships as the store remembers them). None when every community is looked at.
    pending: frozenset[int] | None = None


def report_settings_key(generator: str, counter_key: str, token_budget: int) -> str:
    """What every report's input key shares: generator, token counter, budget and code. A
    change to it makes every report again."""
    parts = [generator, counter_key, token_budget, report_code_digest()]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def plan_reports(
    driver: Driver,
    database: str,
    model_key: str,
    *,
    scope: ReportScope | None,
    settings: str,
    force: bool,
    reads: Any = report_cypher,
) -> ReportPlan:
    """Which communities a run makes reports for: every one on the first run, the full
    rebuild, a change of :func:`report_settings_key` or without a scope state; otherwise
    :func:`~nara_kg.generation.report_scope.communities_to_report` of the records pending.
    `reads`: the module of reads (:mod:`nara_kg.graph.reports`, or a stand-in in tests)."""
    outline = reads.community_outline(driver, database, model_key)
    per_level = Counter(int(c["level"]) for c in outline)
    ids = [str(c["id"]) for c in outline]
    remembered = scope.report_members() if scope is not None else {}
    seen_up_to = scope.pending_seq() if scope is not None else 0
    gone = sorted(remembered.keys() - set(ids))

    def whole(because: str) -> ReportPlan:
        return ReportPlan(
            list(reads.communities(driver, database)),
            {},
            {},
            len(outline),
            per_level,
            scoped=False,
            whole_because=because,
            seen_up_to=seen_up_to,
            gone=gone,
        )

    if scope is None:
        return whole("no scope state")
    if force:
        return whole("full rebuild")
    known_settings = scope.report_settings()
    if known_settings != settings:
        return whole("first run" if known_settings is None else "generator, budget or code changed")
    holding: set[str] = set()
    for batch in scope.pending_batches(seen_up_to):
        holding |= reads.communities_of_records(driver, database, batch)
    chosen = communities_to_report(outline, holding, remembered)
    outside_ids = sorted(
        {str(child) for c in outline if c["id"] in chosen for child in c["children"]} - chosen
    )
    outside_rows = reads.communities_by_id(driver, database, outside_ids)
    members = reads.member_ids_of_many(driver, database, outside_ids)
    outside: dict[str, tuple[CommunityReport, frozenset[int]]] = {}
    for row in outside_rows:
        # A copied community's node has no input key of its own: its report is read as it is.
        report = node_report(row)
        if report is None or row["id"] not in members:
            return whole(f"the report of {row['id']} (outside the scope) does not parse")
        outside[row["id"]] = (report, members[row["id"]])
    return ReportPlan(
        reads.communities_by_id(driver, database, [i for i in ids if i in chosen]),
        outside,
        {row["id"]: row["reportContextKey"] for row in outside_rows},
        len(outline),
        per_level,
        scoped=True,
        seen_up_to=seen_up_to,
        gone=gone,
        outside_mention_totals=scope.mention_totals(
            {row["id"]: row["memberHash"] for row in outside_rows}
        ),
        pending=scope.pending_records(),
    )

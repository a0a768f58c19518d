"""What a community report's context is made of: the plain frozen data that
:func:`~nara_kg.generation.report_context.build_context` reads and returns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from nara_kg.generation.community_profile import CommunityProfile
from nara_kg.generation.community_report import CommunityReport

#: What a community's members' text names, per authority naId: [heading, type, times named,
#: records naming it] (:func:`nara_kg.generation.report_rows.mention_totals`).
MentionTotals = dict[int, list[Any]]

EXCERPT_MAX_CHARS: Final = 400
TITLE_MAX_CHARS: Final = 200


@dataclass(frozen=True, slots=True)
class MemberInfo:
    na_id: int
    title: str | None
    node_type: str
    degree: int
    excerpt: str | None
    source: str | None
    #: The date range and parent title of the record's search header ("Dates:", "Part of:").
    dates: str | None = None
    part_of: str | None = None


@dataclass(frozen=True, slots=True)
class RelationshipInfo:
    source_na_id: int
    target_na_id: int
    rel_type: str
    source_title: str | None
    target_title: str | None
    #: Combined degree of both ends: GraphRAG's prominence of an edge.
    degree: int


@dataclass(frozen=True, slots=True)
class MentionedInfo:
    """An authority the members' text names (MENTIONED_IN), with how often."""

    na_id: int
    heading: str | None
    authority_type: str
    #: Times the members' chunks name it, and the members that do.
    count: int
    records: int


@dataclass(frozen=True, slots=True)
class SubReport:
    community_id: str
    #: Number of members of the sub-community: substitution goes largest first.
    size: int
    report: CommunityReport
    #: naIds of the sub-community's members: the members its report replaces in the parent.
    member_na_ids: frozenset[int]


@dataclass(frozen=True, slots=True)
class ReportContext:
    community_id: str
    level: int
    text: str
    tokens: int
    used_sub_reports: bool
    members_included: int
    relationships_included: int
    sub_reports_included: tuple[str, ...]
    #: Some member or relationship is neither in the text nor covered by an included sub-report.
    truncated: bool
    #: Members and relationships in the text, in rank order.
    members: tuple[MemberInfo, ...]
    relationships: tuple[RelationshipInfo, ...]
    #: Sub-reports in the text, largest first.
    sub_reports: tuple[SubReport, ...]
    #: Size of the whole community, whatever fit the budget.
    members_total: int
    relationships_total: int
    #: The authorities most mentioned in the members' text, in the text when any.
    mentioned: tuple[MentionedInfo, ...] = ()
    #: The whole community's records in words (all members and relationships, whatever fit
    #: the budget); not in the text.
    profile: CommunityProfile | None = None

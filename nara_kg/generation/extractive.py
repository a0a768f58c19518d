"""The extractive community report: built from the context alone, with no model
(the :class:`~nara_kg.generation.llm.ExtractiveLLM` path); see :func:`extractive_report` for the
title, summary, rating and findings rules."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from typing import Final

from nara_kg.generation.community_report import CommunityReport, Finding
from nara_kg.generation.llm import EXTRACTIVE_BACKEND, cache_key
from nara_kg.generation.report_context import (
    EXCERPT_MAX_CHARS,
    MemberInfo,
    ReportContext,
    clip,
    endpoint,
)

REPORT_TITLE_MAX_CHARS: Final = 160
#: Bumped whenever the extractive output changes, so cached extractive reports are rebuilt
#: (2: the summary no longer names the community id and level).
EXTRACTIVE_REPORT_VERSION: Final = 2
GENERATED_BY_EXTRACTIVE: Final = EXTRACTIVE_BACKEND
EXTRACTIVE_SUMMARY_PREFIX: Final = "Extractive summary:"
#: Extractive rating: size and centrality, each worth up to 5 points, both on a log scale so
#: that a community of 1 000 records, or one whose hub has degree 100, scores the full 5.
RATING_SIZE_SATURATION: Final = 1000
RATING_DEGREE_SATURATION: Final = 100
MAX_MEMBER_FINDINGS: Final = 5
MAX_RELATIONSHIP_FINDINGS: Final = 3
MAX_SUB_REPORT_FINDINGS: Final = 3
MAX_FINDINGS: Final = 10


def extractive_rating(members_total: int, max_degree: int) -> tuple[float, float, float]:
    """(rating, size part, degree part), each part `5 * min(1, log10(1+x) / log10(1+saturation))`.

    Rounded to one decimal; always within 0-10.
    """

    def part(value: int, saturation: int) -> float:
        if value <= 0:
            return 0.0
        return 5.0 * min(1.0, math.log10(1 + value) / math.log10(1 + saturation))

    size_part = round(part(members_total, RATING_SIZE_SATURATION), 1)
    degree_part = round(part(max_degree, RATING_DEGREE_SATURATION), 1)
    return round(size_part + degree_part, 1), size_part, degree_part


def _name(member: MemberInfo) -> str:
    return clip(member.title, REPORT_TITLE_MAX_CHARS) or f"Record {member.na_id}"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


_RELATED_SUFFIX = re.compile(r" and [\d,]+ related records?$")


def extractive_report(context: ReportContext) -> CommunityReport:
    """A deterministic report from the context alone, with no model.

    * title: the top-ranked member's title, "<title> and N related records" (N = the rest of the
      community); the largest sub-report's title when no member made the context;
    * summary: starts with "Extractive summary:", then size, record types of the members in the
      context (by count), the three most central records, the three most common relationship
      types, the three authorities the members' text names most, and the sub-reports used;
    * rating: :func:`extractive_rating` of the community size and the highest member degree;
    * findings: up to 3 sub-reports, 5 top members (with their excerpts) and 3 top
      relationships, at most 10.
    """
    members = context.members
    total = max(context.members_total, len(members))
    others = total - 1
    if members:
        top = _name(members[0])
        title = top if others <= 0 else f"{top} and {_plural(others, 'related record')}"
    elif context.sub_reports:
        # The sub-report's title already ends in its own "and N related records".
        top = _RELATED_SUFFIX.sub("", context.sub_reports[0].report.title)
        top = clip(top, REPORT_TITLE_MAX_CHARS)
        title = top if others <= 0 else f"{top} and {_plural(others, 'related record')}"
    else:
        title = f"Community {context.community_id}"

    sentences = [
        # No community id or level: a summary describes content, and two communities with the
        # same content (one the other seen a level up) get the same summary and embedding.
        f"{EXTRACTIVE_SUMMARY_PREFIX} this community groups {_plural(total, 'record')} linked by "
        f"{_plural(context.relationships_total, 'relationship')}."
    ]
    if members:
        types = Counter(m.node_type for m in members)
        listed = ", ".join(
            f"{count} {node_type}"
            for node_type, count in sorted(types.items(), key=lambda kv: (-kv[1], kv[0]))
        )
        sentences.append(f"Record types in this report's context: {listed}.")
        central = "; ".join(f'"{_name(m)}" ({m.node_type}, degree {m.degree})' for m in members[:3])
        sentences.append(f"Most central records: {central}.")
    if context.relationships:
        rel_types = Counter(r.rel_type for r in context.relationships)
        common = ", ".join(
            f"{rel_type} ({count})"
            for rel_type, count in sorted(rel_types.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        )
        sentences.append(f"Most common relationship types: {common}.")
    if context.mentioned:
        named = "; ".join(
            f'"{clip(m.heading, REPORT_TITLE_MAX_CHARS) or m.na_id}" ({m.authority_type}, '
            f"{_plural(m.count, 'mention')})"
            for m in context.mentioned[:3]
        )
        sentences.append(f"Most mentioned in the records' text: {named}.")
    if context.sub_reports:
        largest = context.sub_reports[0]
        sentences.append(
            f"It draws on {_plural(len(context.sub_reports), 'sub-community report')}, the "
            f'largest being "{clip(largest.report.title, REPORT_TITLE_MAX_CHARS)}" '
            f"({_plural(largest.size, 'record')})."
        )
    if context.truncated:
        sentences.append("Only part of the community fit the context budget.")

    max_degree = max((m.degree for m in members), default=0)
    rating, size_part, degree_part = extractive_rating(total, max_degree)
    rating_explanation = (
        f"Extractive rating {rating:g} = size {size_part:g} ({_plural(total, 'record')}) + "
        f"centrality {degree_part:g} (highest degree {max_degree}), each "
        f"5*min(1, log10(1+x)/log10(1+saturation)) with saturation {RATING_SIZE_SATURATION} "
        f"records and degree {RATING_DEGREE_SATURATION}."
    )

    findings: list[Finding] = []
    for sub in context.sub_reports[:MAX_SUB_REPORT_FINDINGS]:
        findings.append(
            Finding(
                summary=f"Sub-community {sub.community_id}: {sub.report.title}",
                explanation=sub.report.summary,
            )
        )
    for member in members[:MAX_MEMBER_FINDINGS]:
        excerpt = clip(member.excerpt, EXCERPT_MAX_CHARS) or "No text excerpt is recorded."
        source = f" Source: {member.source}" if member.source else ""
        findings.append(
            Finding(
                summary=f"{_name(member)} ({member.node_type}, degree {member.degree})",
                explanation=f"{excerpt}{source}",
            )
        )
    for rel in context.relationships[:MAX_RELATIONSHIP_FINDINGS]:
        source_name = endpoint(rel.source_na_id, rel.source_title)
        target_name = endpoint(rel.target_na_id, rel.target_title)
        findings.append(
            Finding(
                summary=f"{source_name} -[{rel.rel_type}]-> {target_name}",
                explanation=(
                    f"Record {rel.source_na_id} is linked to record {rel.target_na_id} by a "
                    f"{rel.rel_type} relationship (combined degree {rel.degree})."
                ),
            )
        )
    return CommunityReport(
        community_id=context.community_id,
        level=context.level,
        title=title,
        summary=" ".join(sentences),
        rating=rating,
        rating_explanation=rating_explanation,
        findings=tuple(findings[:MAX_FINDINGS]),
        generated_by=GENERATED_BY_EXTRACTIVE,
    )


def _fingerprint(context: ReportContext) -> str:
    """Everything the extractive report reads beyond the context text (sources, totals)."""
    material = json.dumps(
        {
            "members": [[m.na_id, m.source] for m in context.members],
            "members_total": context.members_total,
            "relationships_total": context.relationships_total,
            "truncated": context.truncated,
            "level": context.level,
            "community_id": context.community_id,
        },
        sort_keys=True,
    )
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


def extractive_cache_key(context: ReportContext) -> str:
    """The cache key of the extractive report of `context`: its text, everything else the report
    reads, and :data:`EXTRACTIVE_REPORT_VERSION`."""
    return cache_key(
        context.text,
        EXTRACTIVE_BACKEND,
        EXTRACTIVE_BACKEND,
        {
            "kind": "community_report",
            "version": EXTRACTIVE_REPORT_VERSION,
            "fingerprint": _fingerprint(context),
        },
    )

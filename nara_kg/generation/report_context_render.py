"""The CSV tables of a report context: one row per member, relationship, sub-report or
mentioned authority, and the sections around them.
"""

from __future__ import annotations

import csv
import threading
from collections.abc import Iterable, Sequence
from functools import lru_cache

from nara_kg.generation.report_context_data import (
    EXCERPT_MAX_CHARS,
    TITLE_MAX_CHARS,
    MemberInfo,
    MentionedInfo,
    RelationshipInfo,
    SubReport,
)

SUB_HEADER = "-----Sub-community reports-----\n```csv\nid,size,title,summary,findings\n"
SUB_FOOTER = "```\n"
_MEMBER_HEADER = "-----Records-----\n```csv\nid,title,type,degree,excerpt\n"
_REL_HEADER = "-----Relationships-----\n```csv\nid,source,target,type,degree\n"
_MENTIONED_HEADER = "-----Mentioned-----\n```csv\nid,authority,type,mentions,records\n"
_FOOTER = "```\n"


def clip(value: str | None, limit: int) -> str:
    if not value:
        return ""
    value = " ".join(value.split())
    return value if len(value) <= limit else value[: limit - 1].rstrip() + "…"


class _LastLine(threading.local):
    """What a csv writer wrote last: a context renders thousands of rows, and a fresh StringIO
    and writer per row took a quarter of rendering them. One per thread, as the API renders
    contexts on several."""

    def __init__(self) -> None:
        self.text = ""
        self.writer = csv.writer(self, lineterminator="\n")

    def write(self, text: str) -> int:
        self.text = text
        return len(text)


_LAST_LINE = _LastLine()


def _csv_row(values: Iterable[object]) -> str:
    _LAST_LINE.writer.writerow(values)
    return _LAST_LINE.text


#: Rendered pieces kept between calls: a record's member row, and its name as a relationship's
#: end, read the same in its community at every level of the hierarchy (its degree is the whole
#: graph's), and rendering each again was a sixth of a report run's context time. Bounded, since
#: one run may see every record of a large graph.
_RENDERED_KEPT = 65_536


@lru_cache(maxsize=_RENDERED_KEPT)
def endpoint(na_id: int, title: str | None) -> str:
    clipped = clip(title, TITLE_MAX_CHARS)
    return f"{clipped} ({na_id})" if clipped else str(na_id)


@lru_cache(maxsize=_RENDERED_KEPT)
def member_row(member: MemberInfo) -> str:
    return _csv_row(
        [
            member.na_id,
            clip(member.title, TITLE_MAX_CHARS),
            member.node_type,
            member.degree,
            clip(member.excerpt, EXCERPT_MAX_CHARS),
        ]
    )


def forget_rendered() -> None:
    """Let go of the rendered pieces kept: a report run calls it between tree groups, whose
    records never meet again (:mod:`nara_kg.generation.report_order`)."""
    endpoint.cache_clear()
    member_row.cache_clear()


def rel_row(rank: int, rel: RelationshipInfo) -> str:
    return _csv_row(
        [
            rank,
            endpoint(rel.source_na_id, rel.source_title),
            endpoint(rel.target_na_id, rel.target_title),
            rel.rel_type,
            rel.degree,
        ]
    )


def sub_row(sub: SubReport) -> str:
    report = sub.report
    findings = "; ".join(" ".join(finding.summary.split()) for finding in report.findings)
    return _csv_row(
        [
            sub.community_id,
            sub.size,
            clip(report.title, TITLE_MAX_CHARS),
            " ".join(report.summary.split()),
            findings,
        ]
    )


def render_mentioned(mentioned: Sequence[MentionedInfo]) -> str:
    """The Mentioned table ("" when nothing is mentioned, so such a context reads as before)."""
    if not mentioned:
        return ""
    rows = [
        _csv_row([m.na_id, clip(m.heading, TITLE_MAX_CHARS), m.authority_type, m.count, m.records])
        for m in mentioned
    ]
    return "".join([_MENTIONED_HEADER, *rows, _FOOTER])


def render_tables(
    sub_rows: Sequence[str],
    member_rows: Sequence[str],
    rel_rows: Sequence[str],
    mentioned: str = "",
) -> str:
    parts: list[str] = []
    if sub_rows:
        parts.extend([SUB_HEADER, *sub_rows, SUB_FOOTER])
    parts.extend([_MEMBER_HEADER, *member_rows, _FOOTER, _REL_HEADER, *rel_rows, _FOOTER])
    parts.append(mentioned)
    return "".join(parts)


RelKey = tuple[int, int, str]


def rel_key(rel: RelationshipInfo) -> RelKey:
    return (rel.source_na_id, rel.target_na_id, rel.rel_type)

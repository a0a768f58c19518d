"""The extractive community report: built from the context alone, with no model
(the :class:`~nara_kg.generation.llm.ExtractiveLLM` path); see :func:`extractive_report` for the
title, summary, rating and findings rules."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict
from typing import Final

from nara_kg.generation.community_profile import (
    CREATORS_NAMED,
    NAMED_AUTHORITY_TYPES,
    CommunityProfile,
    display_name,
    join_words,
    kind_words,
)
from nara_kg.generation.community_report import CommunityReport, Finding
from nara_kg.generation.llm import EXTRACTIVE_BACKEND, cache_key
from nara_kg.generation.report_context import (
    EXCERPT_MAX_CHARS,
    MemberInfo,
    ReportContext,
    clip,
)
from nara_kg.generation.report_rows import report_code_digest
from nara_kg.model.schema import AUTHORITY_TYPES

REPORT_TITLE_MAX_CHARS: Final = 160
#: Bumped whenever the extractive output changes, so cached extractive reports are rebuilt
#: (3: prose from the community's profile, no graph statistics outside the rating). The cache
#: key also holds a digest of the report code, so an edit that forgets the bump rebuilds too.
EXTRACTIVE_REPORT_VERSION: Final = 3
GENERATED_BY_EXTRACTIVE: Final = EXTRACTIVE_BACKEND
#: Extractive rating: size and centrality, each worth up to 5 points, both on a log scale so
#: that a community of 1 000 records, or one whose hub has degree 100, scores the full 5.
RATING_SIZE_SATURATION: Final = 1000
RATING_DEGREE_SATURATION: Final = 100
MAX_MEMBER_FINDINGS: Final = 5
MAX_RELATIONSHIP_FINDINGS: Final = 3
MAX_SUB_REPORT_FINDINGS: Final = 3
MAX_FINDINGS: Final = 10
#: Kinds of record the first summary sentence counts, and people and organizations it names.
MAX_KINDS_NAMED: Final = 5
MAX_NAMED: Final = 3


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


def _a(word: str) -> str:
    return f"an {word}" if word[:1].lower() in "aeiou" else f"a {word}"


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "?", "!")) else f"{text}."


def _what(profile: CommunityProfile, title: str) -> str:
    """The first summary sentence: the records' subject, how many of which kinds, when,
    whose."""
    kinds = [kind_words(kind, count) for kind, count in profile.kinds[:MAX_KINDS_NAMED]]
    others = profile.total - sum(count for _, count in profile.kinds[:MAX_KINDS_NAMED])
    if others:
        kinds.append(_plural(others, "other record"))
    if profile.total == 1:
        sentence = f"{title} is {_a(kind_words(profile.kinds[0][0], 1).split(' ', 1)[1])}"
    else:
        sentence = f"{title}: {profile.total} records ({join_words(kinds)})"
    if profile.span:
        sentence += f", dated {profile.span}"
    if profile.creators:
        named = list(profile.creators[:CREATORS_NAMED])
        rest = len(profile.creators) - len(named)
        if rest:
            named.append(_plural(rest, "other creator"))
        sentence += f", created by {join_words(named)}"
    elif profile.part_of:
        sentence += f", part of {clip(profile.part_of, REPORT_TITLE_MAX_CHARS)}"
    return _sentence(sentence)


def _who(context: ReportContext, profile: CommunityProfile | None) -> str | None:
    """The second summary sentence: the other key series and collections, and the people and
    organizations the records name most."""
    parts = []
    if profile is not None and profile.key_records:
        keys = [clip(k.title, REPORT_TITLE_MAX_CHARS) for k in profile.key_records]
        parts.append(f"its key series and collections also include {join_words(keys)}")
    named: list[str] = []
    for mention in context.mentioned:
        if mention.authority_type in NAMED_AUTHORITY_TYPES and mention.heading:
            name = display_name(mention.heading, mention.authority_type)
            if name not in named:
                named.append(name)
    if named:
        named = named[:MAX_NAMED]
        who = "person or organization" if len(named) == 1 else "people and organizations"
        verb = "is" if len(named) == 1 else "are"
        parts.append(f"the {who} its records name most {verb} {join_words(named)}")
    if not parts:
        return None
    text = "; ".join(parts)
    return _sentence(text[0].upper() + text[1:])


def _member_explanation(member: MemberInfo) -> str:
    """A member finding's prose: its excerpt, else what it is (kind, parent, dates)."""
    excerpt = clip(member.excerpt, EXCERPT_MAX_CHARS)
    if excerpt:
        return excerpt
    kind = kind_words(member.node_type, 1).split(" ", 1)[1]
    text = _a(kind)
    if member.part_of:
        text += f" in {clip(member.part_of, REPORT_TITLE_MAX_CHARS)}"
    if member.dates:
        text += f", dated {member.dates}"
    return _sentence(text[0].upper() + text[1:])


#: How a relationship reads in a finding: source ... target.
_REL_VERBS: Final = {
    "Includes": "includes",
    "creator": "created",
    "subject": "is a subject of",
    "contributor": "contributed to",
    "donor": "donated",
    "personalReference": "is named in",
    "organizationalReference": "is named in",
    "MENTIONED_IN": "is named in",
}


def _end_name(na_id: int, title: str | None, kinds: dict[int, str]) -> str:
    """A relationship's end as a sentence names it (an authority as running text does)."""
    kind = kinds.get(na_id, "")
    if title and kind in AUTHORITY_TYPES:
        return display_name(title, kind)
    return clip(title, REPORT_TITLE_MAX_CHARS) or f"Record {na_id}"


def _rel_sentence(source: str, rel_type: str, target: str) -> str:
    verb = _REL_VERBS.get(rel_type, f"is linked ({rel_type}) to")
    return _sentence(f"{source} {verb} {target}")


def extractive_report(context: ReportContext) -> CommunityReport:
    """A deterministic report from the context alone, with no model, in prose (counts of
    relationships and degrees stay in the rating explanation).

    * title: the community's representative record (its description of highest degree), else
      the top-ranked member, else the largest sub-report's title;
    * summary: the title, how many records of which kinds, the years they span and their
      creators (else what they are part of); then its other key series and collections and the
      people and organizations its records name most;
    * rating: :func:`extractive_rating` of the community size and the highest member degree;
    * findings: up to 3 sub-reports (title and summary), 5 top members (title, and excerpt or
      what the record is) and 3 top relationships (as a sentence), at most 10.
    """
    members = context.members
    profile = context.profile
    total = max(context.members_total, len(members))
    if profile is not None and profile.representative is not None:
        title = clip(profile.representative.title, REPORT_TITLE_MAX_CHARS)
    elif members:
        title = _name(members[0])
    elif context.sub_reports:
        title = clip(context.sub_reports[0].report.title, REPORT_TITLE_MAX_CHARS)
    else:
        title = f"Community {context.community_id}"

    # No community id or level: a summary describes content, and two communities with the
    # same content (one the other seen a level up) get the same summary and embedding.
    if profile is not None and profile.total:
        sentences = [_what(profile, title)]
    else:
        sentences = [_sentence(f"{title}: {_plural(total, 'record')}")]
    who = _who(context, profile)
    if who:
        sentences.append(who)

    max_degree = max((m.degree for m in members), default=0)
    rating, size_part, degree_part = extractive_rating(total, max_degree)
    rating_explanation = (
        f"Extractive rating {rating:g} = size {size_part:g} ({_plural(total, 'record')}, "
        f"{_plural(context.relationships_total, 'relationship')}) + "
        f"centrality {degree_part:g} (highest degree {max_degree}), each "
        f"5*min(1, log10(1+x)/log10(1+saturation)) with saturation {RATING_SIZE_SATURATION} "
        f"records and degree {RATING_DEGREE_SATURATION}."
    )
    if context.truncated:
        rating_explanation += " Only part of the community fit the report's context."

    findings: list[Finding] = []
    for sub in context.sub_reports[:MAX_SUB_REPORT_FINDINGS]:
        findings.append(Finding(summary=sub.report.title, explanation=sub.report.summary))
    for member in members[:MAX_MEMBER_FINDINGS]:
        source = f" Source: {member.source}" if member.source else ""
        name = _name(member)
        if member.title and member.node_type in AUTHORITY_TYPES:
            name = display_name(member.title, member.node_type)
        findings.append(Finding(summary=name, explanation=f"{_member_explanation(member)}{source}"))
    kinds = {member.na_id: member.node_type for member in members}
    for rel in context.relationships[:MAX_RELATIONSHIP_FINDINGS]:
        source_name = _end_name(rel.source_na_id, rel.source_title, kinds)
        target_name = _end_name(rel.target_na_id, rel.target_title, kinds)
        findings.append(
            Finding(
                summary=f"{source_name} and {target_name}",
                explanation=_rel_sentence(source_name, rel.rel_type, target_name),
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
            "profile": None if context.profile is None else asdict(context.profile),
        },
        sort_keys=True,
    )
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


def extractive_cache_key(context: ReportContext) -> str:
    """The cache key of the extractive report of `context`: its text, everything else the report
    reads (its profile included), :data:`EXTRACTIVE_REPORT_VERSION` and the report code's
    digest."""
    return cache_key(
        context.text,
        EXTRACTIVE_BACKEND,
        EXTRACTIVE_BACKEND,
        {
            "kind": "community_report",
            "version": EXTRACTIVE_REPORT_VERSION,
            "code": report_code_digest(),
            "fingerprint": _fingerprint(context),
        },
    )

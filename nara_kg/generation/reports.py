"""Community reports: the context an LLM reads, the prompt, parsing, and an extractive fallback.

Pure functions over plain data; reading communities from Neo4j and storing the reports is the
asset's job.

Context (GraphRAG, seeds 001-003)
---------------------------------
A community's context is two CSV-like tables, members (``id,title,type,degree,excerpt``) and
relationships (``id,source,target,type,degree``), members ranked by degree and relationships by
the combined degree of their two ends, highest first (ties by naId, so the order is total).

1. **Everything fits.** When all members and relationships fit ``token_budget``, that is the
   context.
2. **Sub-report substitution.** Otherwise, if sub-community reports exist, they are sorted largest
   sub-community first (ties by community id) and substituted one at a time: after substituting
   the first *k*, the context is a sub-report table holding those *k* reports, plus every member
   not in any of the *k* sub-communities, plus every relationship except those with both ends
   inside the same substituted sub-community (the sub-report already summarises those; an edge
   *between* two sub-communities or to an unsubstituted member is what the parent adds). The
   first *k* whose context fits is used, whole.
3. **Truncation.** When even all sub-reports plus the remaining members do not fit (or there are
   no sub-reports), the context is filled greedily until the next element would exceed the
   budget: first sub-reports, largest first; then, for members and relationships not covered by
   an included sub-report, GraphRAG's leaf order — for each relationship by descending combined
   degree, its source member, its target member (each once), then the relationship itself; then
   members without a relationship, by degree. ``truncated`` is then true.

Token counts are additive estimates per row (the tokenizer's special tokens subtracted once per
row) checked against a real count of the final text; the rare text that a non-additive tokenizer
tips over the budget loses its last-added elements until it fits.

Extractive report
-----------------
With no model (:class:`~nara_kg.generation.llm.ExtractiveLLM`) the report is built from the
context alone;
see :func:`extractive_report` for the title, summary, rating and findings rules.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from nara_kg.generation.llm import (
    EXTRACTIVE_BACKEND,
    LLM,
    GenerationCache,
    cache_key,
    cached_complete,
    describe,
    is_extractive,
)
from nara_kg.ingest.chunking import TokenCounter

EXCERPT_MAX_CHARS: Final = 400
TITLE_MAX_CHARS: Final = 200
REPORT_TITLE_MAX_CHARS: Final = 160
RATING_MIN: Final = 0.0
RATING_MAX: Final = 10.0
REPORT_KEYS: Final = ("title", "summary", "rating", "rating_explanation", "findings")
#: Bumped whenever the extractive output changes, so cached extractive reports are rebuilt
#: (2: the summary no longer names the community id and level).
EXTRACTIVE_REPORT_VERSION: Final = 2
GENERATED_BY_EXTRACTIVE: Final = EXTRACTIVE_BACKEND
EXTRACTIVE_SUMMARY_PREFIX: Final = "Extractive summary:"


class ReportFormatError(ValueError):
    """A model's output is not a usable report; the message names what is missing or wrong."""


@dataclass(frozen=True, slots=True)
class MemberInfo:
    na_id: int
    title: str | None
    node_type: str
    degree: int
    excerpt: str | None
    source: str | None


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
class Finding:
    summary: str
    explanation: str


@dataclass(frozen=True, slots=True)
class CommunityReport:
    community_id: str
    level: int
    title: str
    summary: str
    rating: float
    rating_explanation: str
    findings: tuple[Finding, ...]
    #: "extractive" or "<backend>:<model>", e.g. "openai:gpt-4o-mini".
    generated_by: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "summary": self.summary,
            "rating": self.rating,
            "rating_explanation": self.rating_explanation,
            "findings": [
                {"summary": finding.summary, "explanation": finding.explanation}
                for finding in self.findings
            ],
        }

    def to_json(self) -> str:
        """The report in the prompt's output format (what is stored on the Community node)."""
        return json.dumps(self.to_dict(), ensure_ascii=False)


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


# --- context ----------------------------------------------------------------------------------

_SUB_HEADER = "-----Sub-community reports-----\n```csv\nid,size,title,summary,findings\n"
_SUB_FOOTER = "```\n"
_MEMBER_HEADER = "-----Records-----\n```csv\nid,title,type,degree,excerpt\n"
_REL_HEADER = "-----Relationships-----\n```csv\nid,source,target,type,degree\n"
_FOOTER = "```\n"


def _clip(value: str | None, limit: int) -> str:
    if not value:
        return ""
    value = " ".join(value.split())
    return value if len(value) <= limit else value[: limit - 1].rstrip() + "…"


def _csv_row(values: Iterable[object]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(list(values))
    return buffer.getvalue()


def _endpoint(na_id: int, title: str | None) -> str:
    clipped = _clip(title, TITLE_MAX_CHARS)
    return f"{clipped} ({na_id})" if clipped else str(na_id)


def _member_row(member: MemberInfo) -> str:
    return _csv_row(
        [
            member.na_id,
            _clip(member.title, TITLE_MAX_CHARS),
            member.node_type,
            member.degree,
            _clip(member.excerpt, EXCERPT_MAX_CHARS),
        ]
    )


def _rel_row(rank: int, rel: RelationshipInfo) -> str:
    return _csv_row(
        [
            rank,
            _endpoint(rel.source_na_id, rel.source_title),
            _endpoint(rel.target_na_id, rel.target_title),
            rel.rel_type,
            rel.degree,
        ]
    )


def _sub_row(sub: SubReport) -> str:
    report = sub.report
    findings = "; ".join(" ".join(finding.summary.split()) for finding in report.findings)
    return _csv_row(
        [
            sub.community_id,
            sub.size,
            _clip(report.title, TITLE_MAX_CHARS),
            " ".join(report.summary.split()),
            findings,
        ]
    )


def _render(sub_rows: Sequence[str], member_rows: Sequence[str], rel_rows: Sequence[str]) -> str:
    parts: list[str] = []
    if sub_rows:
        parts.extend([_SUB_HEADER, *sub_rows, _SUB_FOOTER])
    parts.extend([_MEMBER_HEADER, *member_rows, _FOOTER, _REL_HEADER, *rel_rows, _FOOTER])
    return "".join(parts)


_RelKey = tuple[int, int, str]


def _rel_key(rel: RelationshipInfo) -> _RelKey:
    return (rel.source_na_id, rel.target_na_id, rel.rel_type)


@dataclass
class _Ranked:
    """Members and relationships of one community, deduplicated, ranked, rows pre-rendered."""

    members: list[MemberInfo]
    rels: list[RelationshipInfo]
    member_rows: dict[int, str]
    rel_rows: dict[_RelKey, str]

    @classmethod
    def of(
        cls, members: Iterable[MemberInfo], relationships: Iterable[RelationshipInfo]
    ) -> _Ranked:
        unique_members: dict[int, MemberInfo] = {}
        for member in sorted(members, key=lambda m: (-m.degree, m.na_id)):
            unique_members.setdefault(member.na_id, member)
        unique_rels: dict[_RelKey, RelationshipInfo] = {}
        for rel in sorted(
            relationships,
            key=lambda r: (-r.degree, r.source_na_id, r.target_na_id, r.rel_type),
        ):
            unique_rels.setdefault(_rel_key(rel), rel)
        ranked_members = list(unique_members.values())
        ranked_rels = list(unique_rels.values())
        return cls(
            members=ranked_members,
            rels=ranked_rels,
            member_rows={m.na_id: _member_row(m) for m in ranked_members},
            # The row id is the rank in the whole community, so a row reads the same whether or
            # not the rows before it made the cut.
            rel_rows={_rel_key(r): _rel_row(rank, r) for rank, r in enumerate(ranked_rels, 1)},
        )


@dataclass
class _Selection:
    subs: list[SubReport]
    member_ids: set[int]
    rel_keys: set[_RelKey]


def _internal_to_one(rel: RelationshipInfo, subs: Sequence[SubReport]) -> bool:
    """Both ends inside the same sub-community: its report already covers the relationship."""
    return any(
        rel.source_na_id in sub.member_na_ids and rel.target_na_id in sub.member_na_ids
        for sub in subs
    )


def _remaining(
    ranked: _Ranked, subs: Sequence[SubReport]
) -> tuple[list[MemberInfo], list[RelationshipInfo]]:
    covered: set[int] = set()
    for sub in subs:
        covered |= sub.member_na_ids
    members = [m for m in ranked.members if m.na_id not in covered]
    rels = [r for r in ranked.rels if not _internal_to_one(r, subs)]
    return members, rels


def _leaf_schedule(
    members: Sequence[MemberInfo], rels: Sequence[RelationshipInfo]
) -> list[MemberInfo | RelationshipInfo]:
    """GraphRAG's leaf order: per relationship (ranked) its two ends, then itself; then loners."""
    by_id = {m.na_id: m for m in members}
    placed: set[int] = set()
    items: list[MemberInfo | RelationshipInfo] = []
    for rel in rels:
        for end in (rel.source_na_id, rel.target_na_id):
            member = by_id.get(end)
            if member is not None and end not in placed:
                placed.add(end)
                items.append(member)
        items.append(rel)
    items.extend(m for m in members if m.na_id not in placed)
    return items


class _Budget:
    def __init__(
        self,
        count_tokens: TokenCounter,
        token_budget: int,
        row_costs: dict[str, int] | None = None,
    ) -> None:
        self.count = count_tokens
        self.budget = token_budget
        self.specials = count_tokens("")
        self._row_costs: dict[str, int] = {} if row_costs is None else row_costs

    def row(self, text: str) -> int:
        cost = self._row_costs.get(text)
        if cost is None:
            cost = max(self.count(text) - self.specials, 0)
            self._row_costs[text] = cost
        return cost


def _render_selection(ranked: _Ranked, selection: _Selection) -> str:
    return _render(
        [_sub_row(sub) for sub in selection.subs],
        [ranked.member_rows[m.na_id] for m in ranked.members if m.na_id in selection.member_ids],
        [ranked.rel_rows[_rel_key(r)] for r in ranked.rels if _rel_key(r) in selection.rel_keys],
    )


def _greedy(
    ranked: _Ranked, sub_order: Sequence[SubReport], budget: _Budget
) -> tuple[_Selection, str, int]:
    """Step 3: fill in priority order until the next element would not fit."""
    base = budget.count(_render([], [], []))
    sub_section = budget.row(_SUB_HEADER + _SUB_FOOTER)
    used = base
    # Every addition is logged so that a real count over budget can undo the latest ones.
    log: list[SubReport | MemberInfo | RelationshipInfo] = []
    subs: list[SubReport] = []
    for sub in sub_order:
        cost = budget.row(_sub_row(sub)) + (0 if subs else sub_section)
        if used + cost > budget.budget:
            break
        used += cost
        subs.append(sub)
        log.append(sub)
    members, rels = _remaining(ranked, subs)
    selection = _Selection(subs=subs, member_ids=set(), rel_keys=set())
    for item in _leaf_schedule(members, rels):
        if isinstance(item, MemberInfo):
            cost = budget.row(ranked.member_rows[item.na_id])
        else:
            cost = budget.row(ranked.rel_rows[_rel_key(item)])
        if used + cost > budget.budget:
            break
        used += cost
        log.append(item)
        if isinstance(item, MemberInfo):
            selection.member_ids.add(item.na_id)
        else:
            selection.rel_keys.add(_rel_key(item))
    text = _render_selection(ranked, selection)
    tokens = budget.count(text)
    while tokens > budget.budget and log:
        last = log.pop()
        if isinstance(last, SubReport):
            selection.subs.remove(last)
        elif isinstance(last, MemberInfo):
            selection.member_ids.discard(last.na_id)
        else:
            selection.rel_keys.discard(_rel_key(last))
        text = _render_selection(ranked, selection)
        tokens = budget.count(text)
    return selection, text, tokens


def build_context(
    community_id: str,
    level: int,
    members: Sequence[MemberInfo],
    relationships: Sequence[RelationshipInfo],
    sub_reports: Sequence[SubReport],
    *,
    token_budget: int,
    count_tokens: TokenCounter,
    row_costs: dict[str, int] | None = None,
) -> ReportContext:
    """The report context of one community within `token_budget` (rules in the module doc).

    `row_costs` (row text -> tokens) may be shared between the calls of one run with the same
    `count_tokens`: a member's row reads the same at every level of the hierarchy.
    """
    ranked = _Ranked.of(members, relationships)
    budget = _Budget(count_tokens, token_budget, row_costs)
    skeleton = budget.count(_render([], [], []))
    if skeleton > token_budget:
        raise ValueError(
            f"token budget {token_budget} is smaller than the empty context ({skeleton} tokens)"
        )

    def result(selection: _Selection, text: str, tokens: int) -> ReportContext:
        included_members = tuple(m for m in ranked.members if m.na_id in selection.member_ids)
        included_rels = tuple(r for r in ranked.rels if _rel_key(r) in selection.rel_keys)
        covered: set[int] = set()
        for sub in selection.subs:
            covered |= sub.member_na_ids
        truncated = any(
            m.na_id not in selection.member_ids and m.na_id not in covered for m in ranked.members
        ) or any(
            _rel_key(r) not in selection.rel_keys and not _internal_to_one(r, selection.subs)
            for r in ranked.rels
        )
        return ReportContext(
            community_id=community_id,
            level=level,
            text=text,
            tokens=tokens,
            used_sub_reports=bool(selection.subs),
            members_included=len(included_members),
            relationships_included=len(included_rels),
            sub_reports_included=tuple(sub.community_id for sub in selection.subs),
            truncated=truncated,
            members=included_members,
            relationships=included_rels,
            sub_reports=tuple(selection.subs),
            members_total=len(ranked.members),
            relationships_total=len(ranked.rels),
        )

    # 1. Everything.
    everything = _Selection(
        subs=[],
        member_ids={m.na_id for m in ranked.members},
        rel_keys={_rel_key(r) for r in ranked.rels},
    )
    text = _render_selection(ranked, everything)
    # Every word is at least one token for word-piece and byte-pair tokenizers alike, so a text
    # of more than twice as many words as the budget cannot fit; not counting it saves
    # tokenizing every record of a large community.
    if len(text.split()) <= 2 * token_budget:
        tokens = count_tokens(text)
        if tokens <= token_budget:
            return result(everything, text, tokens)

    # 2. Substitute sub-reports, largest sub-community first, until the whole context fits.
    sub_order = sorted(sub_reports, key=lambda sub: (-sub.size, sub.community_id))
    sub_section = budget.row(_SUB_HEADER + _SUB_FOOTER)
    for k in range(1, len(sub_order) + 1):
        subs = sub_order[:k]
        rest_members, rest_rels = _remaining(ranked, subs)
        estimate = (
            skeleton
            + sub_section
            + sum(budget.row(_sub_row(sub)) for sub in subs)
            + sum(budget.row(ranked.member_rows[m.na_id]) for m in rest_members)
            + sum(budget.row(ranked.rel_rows[_rel_key(r)]) for r in rest_rels)
        )
        if estimate > token_budget:
            continue
        selection = _Selection(
            subs=list(subs),
            member_ids={m.na_id for m in rest_members},
            rel_keys={_rel_key(r) for r in rest_rels},
        )
        text = _render_selection(ranked, selection)
        tokens = count_tokens(text)
        if tokens <= token_budget:
            return result(selection, text, tokens)

    # 3. Nothing complete fits: fill greedily and say so.
    selection, text, tokens = _greedy(ranked, sub_order, budget)
    return result(selection, text, tokens)


# --- prompt -----------------------------------------------------------------------------------

#: Seed 001's community-report prompt (GraphRAG's), adapted from extracted entities to archival
#: records and authorities; `{input_text}` is the context. Doubled braces are literal braces.
REPORT_PROMPT: Final = """
## Role
You are an AI assistant that helps an archivist or a researcher to perform information discovery
over records of the U.S. National Archives and Records Administration (NARA).
Information discovery is the process of identifying and assessing relevant information associated
with certain archival descriptions (record groups, collections, series, file units, items) and
authority records (persons, organizations, geographic places, topical subjects, specific record
types) within a network.

## Goal
Write a comprehensive report of a community of archival records, given a list of records that
belong to the community, their relationships (hierarchy: Includes; authority links such as
creator, subject, contributor, donor, personalReference) and, optionally, reports already written
for its sub-communities. The report will be used to tell researchers what this group of records
documents and why it matters.
The content of this report includes an overview of the community's key records and authorities,
who created them, which subjects, people, organizations, places and periods they cover, and how
they relate to each other.

## Report Structure

The report should include the following sections:

- TITLE: community's name that represents its key records - title should be short but specific.
When possible, include representative named records, persons or organizations in the title.
- SUMMARY: An executive summary of the community's overall structure, how its records are related
to each other, and significant information associated with them.
- IMPACT RATING: a float score between 0-10 that represents the research significance of the
records in the community (0: marginal, 10: central to understanding their subject).
- RATING EXPLANATION: Give a single sentence explanation of the IMPACT RATING.
- DETAILED FINDINGS: A list of 5-10 key insights about the community. Each insight should have a
short summary followed by multiple paragraphs of explanatory text grounded according to the
grounding rules below. Be comprehensive.

Return output as a well-formed JSON-formatted string with the following format:
{{
"title": <report_title>,
"summary": <executive_summary>,
"rating": <impact_rating>,
"rating_explanation": <rating_explanation>,
"findings": [
{{
"summary":<insight_1_summary>,
"explanation": <insight_1_explanation>
}},
{{
"summary":<insight_2_summary>,
"explanation": <insight_2_explanation>
}}
...
]
}}

## Grounding Rules
Do not include information where the supporting evidence for it is not provided.
Refer to records by their id where it helps, e.g. "[Records: 7001, 7002]".

## Example Input
-----------
Text:

-----Records-----
```csv
id,title,type,degree,excerpt
7001,Records of the Harbor Survey Commission,recordGroup,3,"Surveys, charts and letters."
7002,Harbor Soundings,series,2,Depth soundings of the northern harbor.
7003,Harbor Survey Commission,organization,2,A commission that surveyed harbors.
```
-----Relationships-----
```csv
id,source,target,type,degree
1,Records of the Harbor Survey Commission (7001),Harbor Soundings (7002),Includes,5
2,Harbor Survey Commission (7003),Harbor Soundings (7002),creator,4
```

Output:
{{
"title": "Harbor Survey Commission and its Harbor Soundings",
"summary": "The commission's record group includes its soundings [Records: 7001, 7002, 7003].",
"rating": 4.0,
"rating_explanation": "A small, coherent group of survey records with one creator.",
"findings": [
{{
"summary": "The record group holds the commission's surveys",
"explanation": "It holds surveys, charts and letters [Records: 7001, 7002]."
}},
{{
"summary": "The commission created the soundings",
"explanation": "It created the northern harbor depth soundings [Records: 7002, 7003]."
}}
]
}}

## Real Data
Use the following text for your answer. Do not make anything up in your answer.

Text:

{input_text}

The report should include the following sections:

- TITLE: community's name that represents its key records - title should be short but specific.
When possible, include representative named records, persons or organizations in the title.
- SUMMARY: An executive summary of the community's overall structure, how its records are related
to each other, and significant information associated with them.
- IMPACT RATING: a float score between 0-10 that represents the research significance of the
records in the community (0: marginal, 10: central to understanding their subject).
- RATING EXPLANATION: Give a single sentence explanation of the IMPACT RATING.
- DETAILED FINDINGS: A list of 5-10 key insights about the community. Each insight should have a
short summary followed by multiple paragraphs of explanatory text grounded according to the
grounding rules below. Be comprehensive.

Return output as a well-formed JSON-formatted string with the following format:
{{
"title": <report_title>,
"summary": <executive_summary>,
"rating": <impact_rating>,
"rating_explanation": <rating_explanation>,
"findings": [
{{
"summary":<insight_1_summary>,
"explanation": <insight_1_explanation>
}},
{{
"summary":<insight_2_summary>,
"explanation": <insight_2_explanation>
}}
...
]
}}

## Grounding Rules
Do not include information where the supporting evidence for it is not provided.

Output:
"""


def format_report_prompt(context: ReportContext) -> str:
    return REPORT_PROMPT.format(input_text=context.text)


# --- parsing ----------------------------------------------------------------------------------

_FENCE = re.compile(r"```[A-Za-z]*\s*\n?(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()


def _first_object(text: str) -> dict[str, Any] | None:
    """The first `{` from which a JSON object decodes (prose after it is ignored)."""
    start = text.find("{")
    while start != -1:
        try:
            value, _ = _DECODER.raw_decode(text, start)
        except ValueError:
            pass
        else:
            if isinstance(value, dict):
                return value
        start = text.find("{", start + 1)
    return None


def extract_json_object(text: str) -> dict[str, Any] | None:
    """The JSON object in a model's answer: inside a ```json fence if there is one, else the
    outermost object found in the prose. None when there is none."""
    for match in _FENCE.finditer(text):
        found = _first_object(match.group(1))
        if found is not None:
            return found
    return _first_object(text)


def _rating(value: Any, problems: list[str]) -> float | None:
    if isinstance(value, bool):
        problems.append(f"'rating' must be a number, got {value!r}")
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            problems.append(f"'rating' must be a number, got {value!r}")
            return None
    if not isinstance(value, int | float) or not math.isfinite(value):
        problems.append(f"'rating' must be a number, got {value!r}")
        return None
    if not RATING_MIN <= value <= RATING_MAX:
        problems.append(f"'rating' {value} is outside {RATING_MIN:g}-{RATING_MAX:g}")
        return None
    return float(value)


def _findings(value: Any, problems: list[str]) -> tuple[Finding, ...] | None:
    if not isinstance(value, list):
        problems.append(f"'findings' must be a list, got {type(value).__name__}")
        return None
    findings: list[Finding] = []
    for index, item in enumerate(value):
        if isinstance(item, str) and item.strip():
            findings.append(Finding(summary=item.strip(), explanation=""))
        elif isinstance(item, dict):
            summary = item.get("summary")
            explanation = item.get("explanation")
            if not isinstance(summary, str) or not summary.strip():
                problems.append(f"findings[{index}] has no text 'summary'")
            elif not isinstance(explanation, str):
                problems.append(f"findings[{index}] has no text 'explanation'")
            else:
                findings.append(Finding(summary=summary.strip(), explanation=explanation.strip()))
        else:
            problems.append(f"findings[{index}] must be an object or a string")
    return tuple(findings)


def parse_report(text: str, community_id: str, level: int, generated_by: str) -> CommunityReport:
    """A complete report from a model's answer, or :class:`ReportFormatError`.

    Repairs only what cannot change the meaning: the JSON object is taken from ```json fences or
    surrounding prose, a rating given as a numeric string becomes a number, and findings given
    as plain strings become findings with an empty explanation. Anything else missing or mistyped
    is an error, so no half-parsed report is ever returned.
    """
    where = f"report for community {community_id}"
    data = extract_json_object(text)
    if data is None:
        snippet = " ".join(text.split())[:120]
        raise ReportFormatError(f"{where}: no JSON object in the output: {snippet!r}")
    problems: list[str] = []
    missing = [key for key in REPORT_KEYS if key not in data]
    if missing:
        problems.append("missing " + ", ".join(repr(key) for key in missing))
    strings: dict[str, str] = {}
    for key in ("title", "summary", "rating_explanation"):
        if key not in data:
            continue
        value = data[key]
        if not isinstance(value, str):
            problems.append(f"{key!r} must be text, got {type(value).__name__}")
        elif key != "rating_explanation" and not value.strip():
            problems.append(f"{key!r} is empty")
        else:
            strings[key] = value.strip()
    rating = _rating(data["rating"], problems) if "rating" in data else None
    findings = _findings(data["findings"], problems) if "findings" in data else None
    if problems or rating is None or findings is None:
        raise ReportFormatError(f"{where}: " + "; ".join(problems))
    return CommunityReport(
        community_id=community_id,
        level=level,
        title=strings["title"],
        summary=strings["summary"],
        rating=rating,
        rating_explanation=strings["rating_explanation"],
        findings=findings,
        generated_by=generated_by,
    )


# --- extractive report ------------------------------------------------------------------------

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
    return _clip(member.title, REPORT_TITLE_MAX_CHARS) or f"Record {member.na_id}"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


_RELATED_SUFFIX = re.compile(r" and [\d,]+ related records?$")


def extractive_report(context: ReportContext) -> CommunityReport:
    """A deterministic report from the context alone, with no model.

    * title: the top-ranked member's title, "<title> and N related records" (N = the rest of the
      community); the largest sub-report's title when no member made the context;
    * summary: starts with "Extractive summary:", then size, record types of the members in the
      context (by count), the three most central records, the three most common relationship
      types, and the sub-reports used;
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
        top = _clip(top, REPORT_TITLE_MAX_CHARS)
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
    if context.sub_reports:
        largest = context.sub_reports[0]
        sentences.append(
            f"It draws on {_plural(len(context.sub_reports), 'sub-community report')}, the "
            f'largest being "{_clip(largest.report.title, REPORT_TITLE_MAX_CHARS)}" '
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
        excerpt = _clip(member.excerpt, EXCERPT_MAX_CHARS) or "No text excerpt is recorded."
        source = f" Source: {member.source}" if member.source else ""
        findings.append(
            Finding(
                summary=f"{_name(member)} ({member.node_type}, degree {member.degree})",
                explanation=f"{excerpt}{source}",
            )
        )
    for rel in context.relationships[:MAX_RELATIONSHIP_FINDINGS]:
        source_name = _endpoint(rel.source_na_id, rel.source_title)
        target_name = _endpoint(rel.target_na_id, rel.target_title)
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


def _extractive_fingerprint(context: ReportContext) -> str:
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


# --- generation -------------------------------------------------------------------------------


def generate_report(
    context: ReportContext, llm: LLM, cache: GenerationCache | None, *, retries: int = 2
) -> tuple[CommunityReport, bool]:
    """The community's report and whether it came from the cache.

    The extractive backend builds :func:`extractive_report` (cached under the context text).
    A model gets :data:`REPORT_PROMPT`; output that does not parse is regenerated up to `retries`
    times, bypassing and overwriting its cache entry, before :class:`ReportFormatError`.
    """
    if is_extractive(llm):
        key = cache_key(
            context.text,
            EXTRACTIVE_BACKEND,
            EXTRACTIVE_BACKEND,
            {
                "kind": "community_report",
                "version": EXTRACTIVE_REPORT_VERSION,
                "fingerprint": _extractive_fingerprint(context),
            },
        )
        if cache is not None:
            stored = cache.get(key)
            if stored is not None:
                try:
                    return (
                        parse_report(
                            stored, context.community_id, context.level, GENERATED_BY_EXTRACTIVE
                        ),
                        True,
                    )
                except ReportFormatError:
                    pass  # a damaged entry: rebuild and overwrite it
        report = extractive_report(context)
        if cache is not None:
            cache.put(key, report.to_json())
        return report, False

    prompt = format_report_prompt(context)
    generated_by = describe(llm)
    errors: list[str] = []
    for attempt in range(retries + 1):
        text, cached = cached_complete(llm, prompt, cache, refresh=attempt > 0)
        try:
            return parse_report(text, context.community_id, context.level, generated_by), cached
        except ReportFormatError as error:
            errors.append(str(error))
    raise ReportFormatError(
        f"community {context.community_id}: no valid report from {generated_by} after "
        f"{retries + 1} attempt(s); last error: {errors[-1]}"
    )

"""Answers from the graph's facts: a question about a record's creator, dates, parent series,
record group or collection, number of file units or items, holding archive, access or use
restrictions, online copies, kind of records, subjects or catalog identifiers is answered from
the properties and relationships of the record search ranked first (or the first of the top
records that has the fact), in one sentence that names the record.

Dates a record does not carry itself are those of its nearest dated ancestor, and the answer
says so ("(dates of its series, Diaries of Henry Morgenthau, Jr.)").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from nara_kg.ingest.parsing.title_dates import title_before_dates
from nara_kg.retrieval.graph_record import LEVEL_NAMES, GraphRecord, describe, spoken_span
from nara_kg.retrieval.terms import stems

#: Records, best first, whose facts may answer; deeper ones are rarely what was asked about.
FACT_RECORDS: Final = 3


@dataclass(frozen=True, slots=True)
class Fact:
    """A fact sentence and the record it is about."""

    sentence: str
    na_id: int
    title: str | None


#: A sentence's closing period after a name that ends in one ("Henry Morgenthau, Jr."), not
#: an ellipsis.
_DOUBLED_STOP: Final = re.compile(r"(?<!\.)\.\.$")


def _fact(record: GraphRecord, sentence: str) -> Fact:
    return Fact(_DOUBLED_STOP.sub(".", sentence), record.na_id, record.title)


def _name(record: GraphRecord) -> str:
    return record.title or f"naId {record.na_id}"


def _joined(values: Sequence[str]) -> str:
    values = list(dict.fromkeys(values))
    if len(values) <= 2:
        return " and ".join(values)
    return ", ".join(values[:-1]) + f" and {values[-1]}"


# ----- one function per fact: the sentence, or None when the record lacks the fact ----------


def creator(record: GraphRecord, _: str) -> str | None:
    headings = record.strings("heading_creators") or [
        heading for rel, heading, _kind in record.authorities if rel == "creator"
    ]
    if not headings:
        return None
    return f"The creator of {_name(record)} is {_joined(headings)}."


def dates(record: GraphRecord, _: str) -> str | None:
    span = _spoken_own(record)
    if span and record.dates_from_title:
        # The title holds the dates already: the record is named by what comes before them (its
        # whole title is the citation's).
        name = title_before_dates(record.title) or _name(record)
        return f"{name} is dated {span}, as its title states."
    if span:
        return f"The dates of {_name(record)} are {span}."
    for ancestor in record.ancestors:
        inherited = spoken_span(ancestor.date_start, ancestor.date_end)
        if inherited:
            level = LEVEL_NAMES.get(ancestor.level or "", "ancestor")
            return (
                f"{_name(record)} carries no dates of its own; it has those of its {level}: "
                f"{inherited} (dates of its {level}, {ancestor.title})."
            )
    return None


def _spoken_own(record: GraphRecord) -> str | None:
    return spoken_span(*record.own_dates)


def _parent(level: str) -> Callable[[GraphRecord, str], str | None]:
    def parent(record: GraphRecord, _: str) -> str | None:
        ancestor = record.ancestor_at(level)
        if ancestor is None or not ancestor.title:
            return None
        number = (
            f" (Record Group {ancestor.record_group_number})"
            if ancestor.record_group_number is not None
            else ""
        )
        name = LEVEL_NAMES.get(level, level)
        return f"{_name(record)} is in the {name} {ancestor.title}{number}."

    return parent


def _count(level: str | None) -> Callable[[GraphRecord, str], str | None]:
    def count(record: GraphRecord, _: str) -> str | None:
        if not record.children:
            return None
        if level is not None and level in record.children:
            n, name = record.children[level], LEVEL_NAMES.get(level, level)
        else:
            n, name = sum(record.children.values()), "record"
            if len(record.children) == 1:
                only = next(iter(record.children))
                name = LEVEL_NAMES.get(only, only)
        plural = name if name == "series" or n == 1 else f"{name}s"
        return f"{_name(record)} includes {n} {plural}."

    return count


def access(record: GraphRecord, _: str) -> str | None:
    status = record.strings("status_accessRestriction")
    if not status:
        return None
    notes = record.strings("note_accessRestriction")
    note = f" ({'; '.join(notes)})" if notes else ""
    return f"Access to {_name(record)}: {_joined(status)}{note}."


def use(record: GraphRecord, _: str) -> str | None:
    status = record.strings("status_useRestriction")
    specific = record.strings("specificUseRestrictions_useRestriction")
    notes = record.strings("note_useRestriction")
    if not status and not specific:
        return None
    details = "; ".join([*specific, *notes])
    extra = f" ({details})" if details else ""
    return f"Use of {_name(record)}: {_joined(status) or 'restricted'}{extra}."


def online(record: GraphRecord, _: str) -> str | None:
    kinds = record.strings("objectType_digitalObjects")
    if not kinds:
        return f"No digital copies of {_name(record)} are recorded online."
    counts: dict[str, int] = {}
    for kind in kinds:
        counts[kind] = counts.get(kind, 0) + 1
    listed = _joined([f"{n} {kind}" for kind, n in counts.items()])
    return f"{_name(record)} is online: {listed} in the catalog."


def holding(record: GraphRecord, _: str) -> str | None:
    units = record.strings("name_referenceUnits")
    if not units:
        units = next((list(a.reference_units) for a in record.ancestors if a.reference_units), [])
    if not units:
        return None
    return f"{_name(record)} is held by {_joined(units)}."


def kinds(record: GraphRecord, _: str) -> str | None:
    types = record.strings("generalRecordsTypes")
    if not types:
        return None
    return f"{_name(record)} is a {record.level_name} of {_joined(types)}."


def subjects(record: GraphRecord, _: str) -> str | None:
    headings = [h for rel, h, _kind in record.authorities if rel == "subject"]
    if not headings:
        return None
    return f"The subjects of {_name(record)} are {_joined(headings)}."


def identifier(record: GraphRecord, question: str) -> str | None:
    """The catalog number whose type the question names (local identifier, FOIA tracking
    number, entry number, ...)."""
    wanted = stems(question)
    if "local" in wanted and record.strings("localIdentifier"):
        return f"The local identifier of {_name(record)} is {record.strings('localIdentifier')[0]}."
    types = record.strings("type_variantControlNumbers")
    numbers = record.strings("number_variantControlNumbers")
    best: tuple[int, str, str] | None = None
    for kind, number in zip(types, numbers, strict=False):
        if kind.lower().startswith("former"):
            continue
        shared = len(wanted & stems(kind))
        if shared and (best is None or shared > best[0]):
            best = (shared, kind, number)
    if best is None:
        return None
    return f"The {best[1]} of {_name(record)} is {best[2]}."


#: Fact questions: a pattern on the question and the fact that answers it, most specific
#: first (the first that matches wins).
_FACTS: Final[tuple[tuple[re.Pattern[str], Callable[[GraphRecord, str], str | None]], ...]] = (
    (re.compile(r"\bcreat(ed|or|ors|e)\b|\bcompiled\b|\bwhose (records|papers)\b"), creator),
    (
        re.compile(r"\b(foia|tracking number|local identifier|entry number|control number)\b"),
        identifier,
    ),
    (
        re.compile(r"\b(which|what) record group\b|\brecord group (is|are|holds?|contains?)\b"),
        _parent("recordGroup"),
    ),
    (re.compile(r"\b(which|what) collection\b"), _parent("collection")),
    (
        re.compile(r"\b(which|what) series\b|\bseries (is|are|does) .* (in|belong)"),
        _parent("series"),
    ),
    (
        re.compile(r"\bhow many (file units?|files|folders|volumes)\b.*\b(in|does)\b"),
        _count("fileUnit"),
    ),
    (re.compile(r"\bhow many items\b"), _count("item")),
    (re.compile(r"\bhow many series\b"), _count("series")),
    (re.compile(r"\baccess\b.*\brestrict|\brestrict\w*\b.*\baccess\b|\bis access\b"), access),
    (re.compile(r"\buse restrictions?\b|\brestrictions? on (its )?use\b|\bcopyright"), use),
    (re.compile(r"\bonline\b|\bdigiti[sz]ed\b|\bscans?\b|\bdigital (copies|objects?)\b"), online),
    (
        re.compile(
            r"\b(which|what) (library|archives?|repository)\b|\bwhere (is|are) .* (held|kept"
            r"|housed|stored)\b|\bholding archive\b"
        ),
        holding,
    ),
    (re.compile(r"\bwhat (kind|type|sort)s? of (records?|materials?)\b"), kinds),
    (
        re.compile(
            r"\bwhat (are the )?dates\b|\bdate range\b|\bdates (of|does|do)\b|"
            r"\bwhat (years|period) does\b"
        ),
        dates,
    ),
    (re.compile(r"\bsubjects?\b"), subjects),
)


def title_coverage(question: str, record: GraphRecord) -> float:
    """The share of the question's words that the record's title holds."""
    wanted = stems(question)
    if not wanted:
        return 0.0
    return len(wanted & stems(record.title or "")) / len(wanted)


def asked_about(question: str, records: Sequence[GraphRecord]) -> list[GraphRecord]:
    """The top records whose titles share the most of the question's words (the record a
    fact question names), best retrieved first among them."""
    top = list(records[:FACT_RECORDS])
    if not top:
        return []
    coverage = [title_coverage(question, r) for r in top]
    best = max(coverage)
    return [r for r, c in zip(top, coverage, strict=True) if c == best]


def fact_answer(question: str, records: Sequence[GraphRecord]) -> list[Fact]:
    """The fact sentence answering a fact question from the record it asks about (the top
    record whose title the question names, :func:`asked_about`); empty when the question asks
    no fact or that record lacks it."""
    lowered = question.lower()
    for pattern, fact in _FACTS:
        if not pattern.search(lowered):
            continue
        for record in asked_about(question, records):
            sentence = fact(record, question)
            if sentence:
                return [_fact(record, sentence)]
        return []
    return []


#: A when / how-many question is answered from a record's dates or children only when the
#: record's title holds at least this share of the question's words (the question is about it).
MIN_FALLBACK_COVERAGE: Final = 0.5


def _fallback(
    question: str, records: Sequence[GraphRecord], fact: Callable[[GraphRecord, str], str | None]
) -> list[Fact]:
    for record in asked_about(question, records):
        if title_coverage(question, record) < MIN_FALLBACK_COVERAGE:
            return []
        sentence = fact(record, question)
        if sentence:
            return [_fact(record, sentence)]
    return []


def dates_fallback(question: str, records: Sequence[GraphRecord]) -> list[Fact]:
    """The dates of the record a when-question names, when no sentence states a date."""
    return _fallback(question, records, dates)


def count_fallback(question: str, records: Sequence[GraphRecord]) -> list[Fact]:
    """The children of the record a how-many question names, when no sentence states one."""
    return _fallback(question, records, _count(None))


def identity(record: GraphRecord) -> Fact:
    """The deterministic answer to an exact naId or title: what the record is."""
    return _fact(record, f"naId {record.na_id} is {describe(record)}.")

"""What a question says exactly: identifiers (volume, box, folder... numbers, naIds) and dates.

Dense vectors blur numbers ("Volume 512" sits next to "Volume 513") and full-text treats
"March 3, 1942" as three loose words. These pure functions pull the exact parts out of a
question, and out of a record's title and dates, so that the ranking can prefer records that
match them exactly (:func:`exact_match_score`).

Dates are read with a small grammar written for the catalog's own forms rather than a general
date-parsing library: the titles carry ranges such as "June 13 - June 14, 1941", "December 1939 -
July 1940" or "January - August 1, 1939" (one year for both ends), which general parsers read as
single dates, and questions say "early March 1942", which they do not read at all.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache

#: Words that introduce an identifier in the catalog's titles ("Volume 544 A", "Box 12").
IDENTIFIER_WORDS = (
    "volume",
    "vol",
    "box",
    "folder",
    "file",
    "item",
    "part",
    "book",
    "series",
    "record group",
    "rg",
    "number",
    "no",
)
_CANONICAL_WORD = {"vol": "volume", "rg": "record group", "no": "number"}
#: Words that only say "a number follows": "number 864" matches "Volume 864".
_ANY_UNIT = "number"
#: Catalog codes: local identifiers, entry and control numbers ("210-CMB", "A1 37-A",
#: "2006-0459-F"): a hyphenated token with a digit, or a token mixing letters and digits.
_CODE = re.compile(
    r"\b(?:[A-Za-z0-9]*\d[A-Za-z0-9]*(?:-[A-Za-z0-9]+)+|[A-Za-z0-9]+(?:-[A-Za-z0-9]*\d[A-Za-z0-9]*)+"
    r"|[A-Za-z]+\d+[A-Za-z0-9]*|\d+[A-Za-z]+[A-Za-z0-9]*)\b"
)
_CODE_PART = re.compile(r"[a-z0-9]+")
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th|s)", re.IGNORECASE)

#: NARA identifiers are 5 to 9 digits; shorter numbers are volume and box numbers or days.
_NA_ID = re.compile(r"\b(?:naid\s*:?\s*)?(\d{5,9})\b", re.IGNORECASE)
_IDENTIFIER = re.compile(
    r"\b(" + "|".join(w.replace(" ", r"\s+") for w in IDENTIFIER_WORDS) + r")\.?\s*#?\s*"
    r"(\d{1,5})(?:\s*-?\s*([A-Z])\b)?",
    re.IGNORECASE,
)

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_MONTH = r"(?P<{0}>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_PART = (
    r"(?:(?P<{0}>early|mid|middle|late|end\s+of|beginning\s+of|start\s+of"
    r"|first\s+half\s+of|second\s+half\s+of|(?:the\s+)?first\s+(?:few\s+)?days\s+of"
    r"|(?:the\s+)?last\s+(?:few\s+)?days\s+of|(?:the\s+)?first\s+week\s+of"
    r"|(?:the\s+)?last\s+week\s+of)\s+)?"
)
_DASH = r"\s*(?:\u2013|\u2014|-|to|through|until|and)\s*"
_YEAR = r"(?P<{0}>1[6-9]\d\d|20\d\d)"


def _g(template: str, name: str) -> str:
    return template.format(name)


# "June 13 - June 14, 1941", "March 3-5, 1942", "December 24 - December 19, 1942"
_DAY_RANGE = re.compile(
    _g(_MONTH, "m1")
    + r"\s+(?P<d1>\d{1,2})(?:st|nd|rd|th)?(?:,?\s*"
    + _g(_YEAR, "y1")
    + r")?"
    + _DASH
    + r"(?:"
    + _g(_MONTH, "m2")
    + r"\s+)?(?P<d2>\d{1,2})(?:st|nd|rd|th)?,?\s*"
    + _g(_YEAR, "y2"),
    re.IGNORECASE,
)
# "December 1939 - July 1940", "January - August 1, 1939", "March - May 1942"
_MONTH_RANGE = re.compile(
    _g(_MONTH, "m1")
    + r"(?:\s+(?P<d1>\d{1,2}))?(?:,?\s*"
    + _g(_YEAR, "y1")
    + r")?"
    + _DASH
    + _g(_MONTH, "m2")
    + r"(?:\s+(?P<d2>\d{1,2}))?,?\s*"
    + _g(_YEAR, "y2"),
    re.IGNORECASE,
)
# "March 3, 1942", "3 March 1942", "early March 1942", "March 1942"
_DAY = re.compile(
    _g(_MONTH, "m") + r"\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?,?\s*" + _g(_YEAR, "y"), re.IGNORECASE
)
_DAY_FIRST = re.compile(
    r"\b(?P<d>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _g(_MONTH, "m") + r",?\s*" + _g(_YEAR, "y"),
    re.IGNORECASE,
)
_MONTH_YEAR = re.compile(
    _g(_PART, "part") + _g(_MONTH, "m") + r",?\s*(?:of\s+)?" + _g(_YEAR, "y"), re.IGNORECASE
)
_ISO = re.compile(r"\b(?P<y>1[6-9]\d\d|20\d\d)-(?P<m>\d\d)-(?P<d>\d\d)\b")
_NUMERIC = re.compile(r"\b(?P<m>\d{1,2})/(?P<d>\d{1,2})/(?P<y>1[6-9]\d\d|20\d\d)\b")
_YEAR_RANGE = re.compile(r"\b" + _g(_YEAR, "y1") + _DASH + _g(_YEAR, "y2") + r"\b")
_YEAR_ALONE = re.compile(r"\b" + _g(_YEAR, "y") + r"\b")
#: Every date form needs a year, and the named-month forms a month's name: texts without them
#: (most titles) skip the nine scans. The same alternations, without word boundaries, so these
#: find a superset of what the forms do.
_ANY_YEAR = re.compile(_g(_YEAR, "y"))
_ANY_MONTH = re.compile(_g(_MONTH, "m"), re.IGNORECASE)


@dataclass(frozen=True, slots=True, order=True)
class DateRange:
    """An inclusive range of days."""

    start: date
    end: date

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1

    def overlap_days(self, other: DateRange) -> int:
        start, end = max(self.start, other.start), min(self.end, other.end)
        return max((end - start).days + 1, 0)


@dataclass(frozen=True, slots=True)
class Identifier:
    """A numbered unit named in text: ("volume", "544", "A")."""

    word: str
    number: str
    suffix: str = ""


@dataclass(frozen=True, slots=True)
class QueryFacts:
    identifiers: tuple[Identifier, ...] = ()
    na_ids: tuple[int, ...] = ()
    dates: tuple[DateRange, ...] = field(default_factory=tuple)
    #: Catalog codes, as lower-case parts: "210-CMB" -> ("210", "cmb").
    codes: tuple[tuple[str, ...], ...] = ()
    #: The question asks when something began ("series that begin on March 18, 1942").
    asks_start: bool = False
    #: Record types the question names ("series", "file unit", "item"), as node types.
    node_types: frozenset[str] = frozenset()

    @property
    def any(self) -> bool:
        return bool(self.identifiers or self.na_ids or self.dates or self.codes)


def _month_end(year: int, month: int) -> int:
    return calendar.monthrange(year, month)[1]


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _range(start: date | None, end: date | None) -> DateRange | None:
    if start is None or end is None:
        return None
    # Catalog titles sometimes give the ends in reverse ("December 24 - December 19, 1942").
    return DateRange(min(start, end), max(start, end))


def _part_of_month(part: str | None, year: int, month: int) -> tuple[int, int]:
    last = _month_end(year, month)
    words = [w for w in (part or "").lower().split() if w not in ("the", "few", "of")]
    if not words:
        return 1, last
    if words[0] in ("early", "beginning", "start"):
        return 1, 10
    if words[0] in ("mid", "middle"):
        return 11, 20
    if words[0] in ("late", "end"):
        return 21, last
    if words[:2] == ["first", "week"] or words[:2] == ["first", "days"]:
        return 1, 7
    if words[:2] == ["last", "week"] or words[:2] == ["last", "days"]:
        return last - 6, last
    if words[0] == "first":
        return 1, 15
    return 16, last  # second half


def find_dates(text: str) -> list[DateRange]:
    """Every date or date range in the text, most specific forms first, without overlaps."""
    found: list[tuple[int, int, DateRange]] = []
    taken: list[tuple[int, int]] = []

    def claim(match: re.Match[str], value: DateRange | None) -> None:
        span = match.span()
        if value is None or any(span[0] < b and a < span[1] for a, b in taken):
            return
        taken.append(span)
        found.append((span[0], span[1], value))

    if not _ANY_YEAR.search(text):
        return []
    named_month = _ANY_MONTH.search(text) is not None
    for m in _DAY_RANGE.finditer(text) if named_month else ():
        y2 = int(m["y2"])
        y1 = int(m["y1"]) if m["y1"] else y2
        m1 = _MONTHS[m["m1"].lower()]
        m2 = _MONTHS[m["m2"].lower()] if m["m2"] else m1
        claim(m, _range(_safe_date(y1, m1, int(m["d1"])), _safe_date(y2, m2, int(m["d2"]))))
    for m in _MONTH_RANGE.finditer(text) if named_month else ():
        y2 = int(m["y2"])
        y1 = int(m["y1"]) if m["y1"] else y2
        m1, m2 = _MONTHS[m["m1"].lower()], _MONTHS[m["m2"].lower()]
        start = _safe_date(y1, m1, int(m["d1"]) if m["d1"] else 1)
        end = _safe_date(y2, m2, int(m["d2"]) if m["d2"] else _month_end(y2, m2))
        claim(m, _range(start, end))
    for pattern in (_DAY, _DAY_FIRST, _ISO, _NUMERIC) if named_month else (_ISO, _NUMERIC):
        for m in pattern.finditer(text):
            month = m["m"]
            month_num = int(month) if month.isdigit() else _MONTHS[month.lower()]
            day = _safe_date(int(m["y"]), month_num, int(m["d"]))
            claim(m, _range(day, day))
    for m in _MONTH_YEAR.finditer(text) if named_month else ():
        year, month = int(m["y"]), _MONTHS[m["m"].lower()]
        first, last = _part_of_month(m["part"], year, month)
        claim(m, _range(_safe_date(year, month, first), _safe_date(year, month, last)))
    for m in _YEAR_RANGE.finditer(text):
        claim(m, _range(date(int(m["y1"]), 1, 1), date(int(m["y2"]), 12, 31)))
    for m in _YEAR_ALONE.finditer(text):
        claim(m, _range(date(int(m["y"]), 1, 1), date(int(m["y"]), 12, 31)))
    return [value for _, _, value in sorted(found)]


def find_identifiers(text: str) -> list[Identifier]:
    """Numbered units named in the text ("volume 512", "Vol. 544 A", "box #3")."""
    found = []
    for m in _IDENTIFIER.finditer(text):
        word = re.sub(r"\s+", " ", m[1].lower())
        found.append(
            Identifier(
                _CANONICAL_WORD.get(word, word), m[2].lstrip("0") or "0", (m[3] or "").upper()
            )
        )
    return found


def code_parts(code: str) -> tuple[str, ...]:
    """A code as its lower-case alphanumeric parts ("NWDNS-210-CMB" -> nwdns, 210, cmb)."""
    return tuple(_CODE_PART.findall(code.lower()))


def _code_matches(text: str) -> list[re.Match[str]]:
    # A code has a letter: "1939-1941" is a range of years and "3-5" a range of days.
    return [
        m
        for m in _CODE.finditer(text)
        if re.search(r"[A-Za-z]", m[0]) and not _ORDINAL.fullmatch(m[0])
    ]


#: Words that name a record type, and the node type they name.
_TYPE_WORDS = {
    "record group": "recordGroup",
    "record groups": "recordGroup",
    "collection": "collection",
    "collections": "collection",
    "series": "series",
    "file unit": "fileUnit",
    "file units": "fileUnit",
    "item": "item",
    "items": "item",
}
_TYPE_WORD = re.compile(
    r"\b(" + "|".join(sorted(_TYPE_WORDS, key=len, reverse=True)) + r")\b", re.IGNORECASE
)

_STARTS = re.compile(r"\b(?:begin|begins|began|beginning|start|starts|started|open|opened)\b", re.I)


def understand(question: str) -> QueryFacts:
    """The exact parts of a question: identifiers, naIds, codes and dates."""
    codes = _code_matches(question)
    # The year inside "2006-0459-F" is not a date.
    without_codes = question
    for m in reversed(codes):
        without_codes = without_codes[: m.start()] + " " * len(m[0]) + without_codes[m.end() :]
    dates = find_dates(without_codes)
    identifiers = find_identifiers(question)
    # A year is not a naId, and neither is a number that belongs to an identifier.
    identifier_numbers = {i.number for i in identifiers}
    na_ids = tuple(
        int(m[1])
        for m in _NA_ID.finditer(question)
        if m[1] not in identifier_numbers and not _YEAR_ALONE.fullmatch(m[1])
    )
    return QueryFacts(
        tuple(identifiers[:MAX_FACTS]),
        na_ids[:MAX_FACTS],
        tuple(dates[:MAX_FACTS]),
        tuple(code_parts(m[0]) for m in codes[:MAX_FACTS]),
        asks_start=bool(_STARTS.search(question)),
        node_types=frozenset(_TYPE_WORDS[m[1].lower()] for m in _TYPE_WORD.finditer(question)),
    )


def date_fit(query: DateRange, record: DateRange) -> float:
    """How well a record's range answers a query's range: the overlap over the union (Jaccard),
    so a record that covers just the asked day beats one that spans years."""
    overlap = query.overlap_days(record)
    if not overlap:
        return 0.0
    union = query.days + record.days - overlap
    return overlap / union


@dataclass(frozen=True, slots=True)
class RecordFacts:
    """What a candidate record offers to the exact match: its naId, title and date range."""

    na_id: int
    title: str
    dates: tuple[DateRange, ...] = ()
    #: The record's own first day (its inclusive or coverage start), when it has one.
    start: date | None = None
    #: Its local identifier and variant control numbers, each as parts (see code_parts).
    codes: tuple[tuple[str, ...], ...] = ()
    node_type: str = ""


#: Record titles whose dates and identifiers are kept parsed: the same records come back as
#: candidates query after query, and parsing their titles was a fifth of a search's time.
TITLE_CACHE_SIZE = 65_536


@lru_cache(maxsize=TITLE_CACHE_SIZE)
def _title_dates(title: str) -> tuple[DateRange, ...]:
    return tuple(find_dates(title))


@lru_cache(maxsize=TITLE_CACHE_SIZE)
def _title_identifiers(title: str) -> frozenset[Identifier]:
    return frozenset(find_identifiers(title))


def record_facts(
    na_id: int,
    title: str | None,
    start: str | None,
    end: str | None,
    codes: Sequence[str] = (),
    node_type: str = "",
) -> RecordFacts:
    """A record's facts: dates from its title (file units carry them there) or its own dates,
    and its catalog codes."""
    title = title or ""
    ranges = list(_title_dates(title))
    first = _iso_date(start)
    own = _range(first, _iso_date(end or start)) if start else None
    if own is not None:
        ranges.append(own)
    return RecordFacts(
        na_id, title, tuple(ranges), first, tuple(code_parts(c) for c in codes if c), node_type
    )


def _contains(parts: tuple[str, ...], wanted: tuple[str, ...]) -> bool:
    size = len(wanted)
    return any(parts[i : i + size] == wanted for i in range(len(parts) - size + 1))


def _iso_date(value: str | None) -> date | None:
    if not value:
        return None
    m = re.match(r"(\d{4})(?:-(\d\d))?(?:-(\d\d))?", value)
    if not m:
        return None
    year, month, day = int(m[1]), int(m[2] or 1), int(m[3] or 1)
    return _safe_date(year, month, day)


def exact_match_score(facts: QueryFacts, record: RecordFacts) -> tuple[int, float]:
    """(identifiers and naIds matched exactly, best date fit): compared before the fused score,
    so an exact match outranks a near miss however close the near miss is in meaning."""
    exact = 0
    if facts.na_ids and record.na_id in facts.na_ids:
        exact += 2
    if facts.identifiers:
        title_ids = _title_identifiers(record.title)
        for wanted in facts.identifiers:
            if wanted in title_ids or (
                wanted.word == _ANY_UNIT
                and any(h.number == wanted.number and h.suffix == wanted.suffix for h in title_ids)
            ):
                exact += 2
            elif any(
                h.number == wanted.number and wanted.word in (h.word, _ANY_UNIT) for h in title_ids
            ):
                exact += 1  # "Volume 544" asked, "Volume 544 A" found: close, not exact
    for wanted_code in facts.codes:
        if any(_contains(have, wanted_code) for have in record.codes):
            exact += 2
    fit = 0.0
    if facts.dates and record.dates:
        fit = max(date_fit(q, r) for q in facts.dates for r in record.dates)
    # "Series that begin on March 18, 1942": a record that starts on the asked day fits it
    # exactly, however long it runs.
    if (
        facts.asks_start
        and record.start is not None
        and any(q.start <= record.start <= q.end for q in facts.dates if q.days <= 31)
    ):
        fit = 1.0
    return exact, fit


#: Most identifiers, codes and dates a question contributes (each is a clause of one Lucene
#: query, and Lucene refuses more than 1,024; a pasted page of text gains nothing past these).
MAX_FACTS = 16

#: A query range this short or shorter asks for particular days: records are then ordered by how
#: well their range fits it before anything else. A longer one ("1942") only nudges the order.
NARROW_DATE_DAYS = 62
#: The nudge of a broad date range, on the scale of the fused score (rank 1 of one list is 1/11).
BROAD_DATE_WEIGHT = 0.02


def title_phrase_query(facts: QueryFacts) -> str:
    """A Lucene query for the titles that name the question's identifiers or months exactly."""
    clauses = [
        f'title:"{i.word} {i.number}{(" " + i.suffix) if i.suffix else ""}"'
        if i.word != _ANY_UNIT
        else f'title:"{i.number}"'
        for i in facts.identifiers
    ]
    clauses += [f'"{" ".join(parts)}"' for parts in facts.codes]
    for wanted in facts.dates:
        if wanted.days > NARROW_DATE_DAYS:
            continue
        months = {(wanted.start.year, wanted.start.month), (wanted.end.year, wanted.end.month)}
        for year, month in sorted(months):
            clauses.append(f'(title:"{calendar.month_name[month]}" AND title:"{year}")')
    return " OR ".join(clauses)


def rerank(
    fused: list[tuple[str, float]], facts: QueryFacts, records: dict[str, RecordFacts]
) -> list[tuple[str, float]]:
    """The fused list reordered so that exact identifier matches come first, then (for a
    question about particular days) the records whose dates fit best, then the fused score.
    Records without facts keep their fused order among equals."""
    if not facts.any:
        return fused
    narrow = bool(facts.dates) and min(d.days for d in facts.dates) <= NARROW_DATE_DAYS

    def key(item: tuple[str, float]) -> tuple[int, float, bool, float]:
        record = records.get(item[0])
        exact, fit = exact_match_score(facts, record) if record else (0, 0.0)
        # The record type the question names breaks ties between equal exact matches only.
        named_type = record is not None and record.node_type in facts.node_types
        if narrow:
            return exact, round(fit, 3), named_type, item[1]
        return exact, 0.0, named_type and exact > 0, item[1] + BROAD_DATE_WEIGHT * fit

    return sorted(fused, key=key, reverse=True)

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
from dataclasses import dataclass, field
from datetime import date

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
    r"(?:(?P<{0}>early|mid|middle|late|end\s+of|beginning\s+of"
    r"|first\s+half\s+of|second\s+half\s+of)\s+)?"
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

    @property
    def any(self) -> bool:
        return bool(self.identifiers or self.na_ids or self.dates)


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
    word = (part or "").lower().split()[0] if part else ""
    if word in ("early", "beginning"):
        return 1, 10
    if word in ("mid", "middle"):
        return 11, 20
    if word in ("late", "end"):
        return 21, last
    if word == "first":
        return 1, 15
    if word == "second":
        return 16, last
    return 1, last


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

    for m in _DAY_RANGE.finditer(text):
        y2 = int(m["y2"])
        y1 = int(m["y1"]) if m["y1"] else y2
        m1 = _MONTHS[m["m1"].lower()]
        m2 = _MONTHS[m["m2"].lower()] if m["m2"] else m1
        claim(m, _range(_safe_date(y1, m1, int(m["d1"])), _safe_date(y2, m2, int(m["d2"]))))
    for m in _MONTH_RANGE.finditer(text):
        y2 = int(m["y2"])
        y1 = int(m["y1"]) if m["y1"] else y2
        m1, m2 = _MONTHS[m["m1"].lower()], _MONTHS[m["m2"].lower()]
        start = _safe_date(y1, m1, int(m["d1"]) if m["d1"] else 1)
        end = _safe_date(y2, m2, int(m["d2"]) if m["d2"] else _month_end(y2, m2))
        claim(m, _range(start, end))
    for pattern in (_DAY, _DAY_FIRST, _ISO, _NUMERIC):
        for m in pattern.finditer(text):
            month = m["m"]
            month_num = int(month) if month.isdigit() else _MONTHS[month.lower()]
            day = _safe_date(int(m["y"]), month_num, int(m["d"]))
            claim(m, _range(day, day))
    for m in _MONTH_YEAR.finditer(text):
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


def understand(question: str) -> QueryFacts:
    """The exact parts of a question: identifiers, naIds and dates."""
    dates = find_dates(question)
    identifiers = find_identifiers(question)
    # A year is not a naId, and neither is a number that belongs to an identifier.
    identifier_numbers = {i.number for i in identifiers}
    na_ids = tuple(
        int(m[1])
        for m in _NA_ID.finditer(question)
        if m[1] not in identifier_numbers and not _YEAR_ALONE.fullmatch(m[1])
    )
    return QueryFacts(tuple(identifiers), na_ids, tuple(dates))


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


def record_facts(na_id: int, title: str | None, start: str | None, end: str | None) -> RecordFacts:
    """A record's facts: dates from its title (file units carry them there) or its own dates."""
    title = title or ""
    ranges = find_dates(title)
    own = _range(_iso_date(start), _iso_date(end or start)) if start else None
    if own is not None:
        ranges.append(own)
    return RecordFacts(na_id, title, tuple(ranges))


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
        title_ids = set(find_identifiers(record.title))
        for wanted in facts.identifiers:
            if wanted in title_ids:
                exact += 2
            elif any(h.word == wanted.word and h.number == wanted.number for h in title_ids):
                exact += 1  # "Volume 544" asked, "Volume 544 A" found: close, not exact
    fit = 0.0
    if facts.dates and record.dates:
        fit = max(date_fit(q, r) for q in facts.dates for r in record.dates)
    return exact, fit


#: A query range this short or shorter asks for particular days: records are then ordered by how
#: well their range fits it before anything else. A longer one ("1942") only nudges the order.
NARROW_DATE_DAYS = 62
#: The nudge of a broad date range, on the scale of the fused score (rank 1 of one list is 1/11).
BROAD_DATE_WEIGHT = 0.02


def title_phrase_query(facts: QueryFacts) -> str:
    """A Lucene query for the titles that name the question's identifiers or months exactly."""
    clauses = [
        f'title:"{i.word} {i.number}{(" " + i.suffix) if i.suffix else ""}"'
        for i in facts.identifiers
    ]
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

    def key(item: tuple[str, float]) -> tuple[int, float, float]:
        record = records.get(item[0])
        exact, fit = exact_match_score(facts, record) if record else (0, 0.0)
        if narrow:
            return exact, round(fit, 3), item[1]
        return exact, 0.0, item[1] + BROAD_DATE_WEIGHT * fit

    return sorted(fused, key=key, reverse=True)

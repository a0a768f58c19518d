"""The dates a file unit's title states ("Volume 740, June 6 \u2013 June 7, 1944"), parsed
strictly: a file unit of the Morgenthau diaries carries no dates of its own, and without these
it would only have its series' twelve-year span.

The date part is the title's tail after a comma: one date or two joined by a dash (en dash,
em dash or hyphen, spaced or not) or, once in the real titles, by a comma. A date is a month
with an optional day and year, or a year alone. A start without a year takes the end's; when
that puts it after the end, the year before, as in "December 28 \u2013 January 3, 1944", but
only for a short range (a title's "July 2 \u2013 June 5, 1940" is a slip, not a year). A month
without a day spans the whole month. Anything else (a three-digit year, an impossible day, a
start after its end) gives no dates rather than wrong ones.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass
from typing import Final

_MONTHS: Final = {
    name.casefold(): number for number, name in enumerate(calendar.month_name) if name
}
_MONTH = "|".join(name for name in calendar.month_name if name)


def _date(prefix: str) -> str:
    """A month with optional day and year ("June 6", "June 6, 1944", "June 1944"), or a year."""
    month, day, year, only = (prefix + name for name in ("month", "day", "year", "only_year"))
    return (
        rf"(?:(?P<{month}>{_MONTH})(?:\s+(?P<{day}>\d{{1,2}}))?(?:,?\s+(?P<{year}>\d{{4}}))?"
        rf"|(?P<{only}>\d{{4}}))"
    )


_SEPARATOR = rf"\s*[-\u2013\u2014]\s*|,\s+(?=(?:{_MONTH})\b)"
_TAIL: Final = re.compile(rf"(?:^|,\s*){_date('s_')}(?:(?:{_SEPARATOR}){_date('e_')})?\s*$")


#: The longest range whose start year is inferred as the year before its end's.
MAX_YEAR_CROSSING: Final = dt.timedelta(days=92)


@dataclass(frozen=True, slots=True)
class TitleDates:
    start: dt.date
    end: dt.date


@dataclass(frozen=True, slots=True)
class _Part:
    year: int | None
    month: int | None
    day: int | None


def _part(match: re.Match[str], prefix: str) -> _Part | None:
    groups = {name: match.group(prefix + name) for name in ("month", "day", "year", "only_year")}
    if groups["only_year"]:
        return _Part(int(groups["only_year"]), None, None)
    if not groups["month"]:
        return None
    return _Part(
        int(groups["year"]) if groups["year"] else None,
        _MONTHS[groups["month"].casefold()],
        int(groups["day"]) if groups["day"] else None,
    )


def _first_day(part: _Part, year: int) -> dt.date:
    return dt.date(year, part.month or 1, part.day or 1)


def _last_day(part: _Part, year: int) -> dt.date:
    month = part.month or 12
    return dt.date(year, month, part.day or calendar.monthrange(year, month)[1])


def title_dates(title: str | None) -> TitleDates | None:
    """The date range a title ends with, or None when it states none (or states it wrongly)."""
    match = _TAIL.search(title or "")
    if match is None:
        return None
    start = _part(match, "s_")
    end = _part(match, "e_") or start
    if start is None or end is None:
        return None
    end_year = end.year if end.year is not None else start.year
    if end_year is None:
        return None
    start_year = start.year if start.year is not None else end_year
    try:
        first, last = _first_day(start, start_year), _last_day(end, end_year)
        if first > last and start.year is None:
            first = _first_day(start, start_year - 1)
            if last - first > MAX_YEAR_CROSSING:
                return None
    except ValueError:  # an impossible day ("February 30")
        return None
    return TitleDates(first, last) if first <= last else None


def title_before_dates(title: str | None) -> str | None:
    """What a title says before the date range it ends with ("Volume 740" of "Volume 740, June
    6 - June 7, 1944"), or None when it ends with none or is nothing else."""
    match = _TAIL.search(title or "")
    if match is None or title is None:
        return None
    return title[: match.start()].strip(" ,") or None

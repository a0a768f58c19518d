"""Date objects and text helpers shared by every record family.

Date objects follow the export (parts present plus a full `logicalDate`); the seeded
`sentence`/`paragraph` are what every long text (histories, scope notes, OCR) is made of.
"""

from __future__ import annotations

import calendar
import json
import random
from typing import Any, Final

from nara_kg.demo.vocabulary import MONTHS, OBJECTS, QUALIFIERS, VERBS

_SMALL_WORDS: Final = frozenset({"and", "of", "the", "in", "on", "at", "for", "to"})
#: What each of `sentence`'s six patterns names.
_SENTENCE_NAMES: Final[tuple[tuple[str, ...], ...]] = (
    ("office",),
    ("topic", "place"),
    ("topic", "place"),
    ("place",),
    ("office",),
    ("topic",),
)


def export_date(
    year: int, month: int | None = None, day: int | None = None, *, end: bool = False
) -> dict[str, Any]:
    """A date object as the export writes it: parts present, plus a full `logicalDate`."""
    obj: dict[str, Any] = {"year": year}
    if month is not None:
        obj["month"] = month
        if day is not None:
            obj["day"] = day
    logical_month = month if month is not None else (12 if end else 1)
    if day is not None and month is not None:
        logical_day = day
    else:
        logical_day = calendar.monthrange(year, logical_month)[1] if end else 1
    obj["logicalDate"] = f"{year:04d}-{logical_month:02d}-{logical_day:02d}"
    return obj


def slash_date(obj: dict[str, Any]) -> str:
    """Heading style: 2/16/1944, 4/1942 or 1944."""
    if "day" in obj:
        return f"{obj['month']}/{obj['day']}/{obj['year']}"
    if "month" in obj:
        return f"{obj['month']}/{obj['year']}"
    return str(obj["year"])


def human_date(obj: dict[str, Any]) -> str:
    """Prose style: February 16, 1944, April 1942 or 1944."""
    if "day" in obj:
        return f"{MONTHS[obj['month'] - 1]} {obj['day']}, {obj['year']}"
    if "month" in obj:
        return f"{MONTHS[obj['month'] - 1]} {obj['year']}"
    return str(obj["year"])


def on_date(obj: dict[str, Any]) -> str:
    """ "on February 16, 1944" for a full date, "in April 1942" otherwise."""
    return f"on {human_date(obj)}" if "day" in obj else f"in {human_date(obj)}"


def title_case(text: str) -> str:
    """Title style for a subject inside a title: "Flood control" -> "Flood Control"."""
    words = text.split(" ")
    return " ".join(
        w if (i and w in _SMALL_WORDS) else w[:1].upper() + w[1:] for i, w in enumerate(words)
    )


def wrap(text: str, width: int) -> str:
    """Hard line breaks at spaces, as a typewritten page has (fast: no per-word loop)."""
    lines: list[str] = []
    start = 0
    while len(text) - start > width:
        cut = text.rfind(" ", start, start + width + 1)
        if cut <= start:
            cut = text.find(" ", start + width)
            if cut == -1:
                break
        lines.append(text[start:cut])
        start = cut + 1
    lines.append(text[start:])
    return "\n".join(lines)


def record_line(record: dict[str, Any], transcription: Any = None) -> str:
    """One line of an export shard: `{"record": ...}`, with the transcription if any."""
    payload: dict[str, Any] = {"record": record}
    if transcription:
        payload["record_transcription"] = transcription
    return json.dumps(payload, ensure_ascii=False)


def sentence(
    rng: random.Random, office: str, topic: str, place: str, used: set[str] | None = None
) -> str:
    """One sentence of official prose about an office's work on a topic at a place; `used`
    collects which of "office", "topic" and "place" it names (no extra draws)."""
    pattern = rng.randrange(6)
    if used is not None:
        used.update(_SENTENCE_NAMES[pattern])
    if pattern == 0:
        return f"The {office} {rng.choice(VERBS)} {rng.choice(OBJECTS)} {rng.choice(QUALIFIERS)}."
    if pattern == 1:
        return (
            f"Work on {topic.lower()} near {place} was {rng.choice(VERBS)} "
            f"{rng.choice(QUALIFIERS)}."
        )
    if pattern == 2:
        return (
            f"A total of {rng.randint(12, 4800):,} dollars was allotted for "
            f"{topic.lower()} in {place} during the fiscal year."
        )
    if pattern == 3:
        return (
            f"Local officials in {place} asked that {rng.choice(OBJECTS)} be "
            f"{rng.choice(VERBS)} before the end of the season."
        )
    if pattern == 4:
        return (
            f"It is recommended that {rng.choice(OBJECTS)} be forwarded to the "
            f"{office} for further action."
        )
    return (
        f"Inspection of the {topic.lower()} project showed that about "
        f"{rng.randint(10, 95)} percent of the work had been completed."
    )


def paragraph(
    rng: random.Random,
    office: str,
    topic: str,
    place: str,
    sentences: int,
    used: set[str] | None = None,
) -> str:
    """`sentences` sentences of official prose (`used`: see `sentence`)."""
    return " ".join(sentence(rng, office, topic, place, used) for _ in range(sentences))

"""The authorities the generator writes into each description's text: `mention_labels.jsonl`.

Series, file units and items are made of prose the generator composes from the authorities
it chose (the office that created the series, its topic, its town, its records type, the
sender and receiver of a letter). Each family module notes, per text field, which of them it
wrote and how (`note`), drawing nothing from the rng, so the records stay byte for byte the
same. A record's label is what its chunks say: its title and the one text the parser keeps as
its body (for items and file units the longest of OCR, scope note and transcription; see
`nara_kg.ingest.parsing.parse.body_text`). The parent's title in the chunk header is the
parent's text, not the record's, and so is not a label (the linker skips that line too).
Record groups, collections and authority records are not labelled.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from nara_kg.demo.world import Org, Person, Term, World
from nara_kg.ingest.parsing.parse import body_text

TITLE: Final = "title"
SCOPE: Final = "scopeAndContentNote"
OCR: Final = "extractedText"
TRANSCRIPTION: Final = "transcription"


def note(world: World, na_id: int, text_field: str, names: Iterable[tuple[int, str]]) -> None:
    """Record that `text_field` of description `na_id` names these (authority, surface)."""
    noted = world.mentions.setdefault(na_id, {}).setdefault(text_field, {})
    for authority, surface in names:
        noted.setdefault(authority, surface)


def office_names(world: World, office: str, org: Org | None, person: Person | None) -> None:
    """The authorities an office's prose name names: an agency by its first name; a field
    office by its own name and its parent agency's; a person's office by the person."""
    if office in world.office_names:
        return
    names: list[tuple[int, str]] = []
    if person is not None:
        names.append((person.na_id, person.full))
    elif org is not None:
        names.append((org.na_id, org.names[0].name))
        parent = world.org_with_id(org.parent)
        if parent is not None:
            names.append((parent.na_id, parent.short))
    world.office_names[office] = names


def topic_names(world: World, topic: str) -> list[tuple[int, str]]:
    """The topical term written as `topic`, if there is one with that heading."""
    term = world.topic_by_label.get(topic)
    return [(term.na_id, topic.lower())] if term is not None else []


def place_names(place: Term, town: str) -> list[tuple[int, str]]:
    return [(place.na_id, town)]


def records_type_names(world: World, heading: str) -> list[tuple[int, str]]:
    return [(t.na_id, heading) for t in world.records_types if t.heading == heading]


def prose_names(
    world: World, used: Iterable[str], office: str, topic: str, place: Term, town: str
) -> list[tuple[int, str]]:
    """What prose that named `used` (of "office", "topic", "place") names."""
    names: list[tuple[int, str]] = []
    wanted = set(used)
    if "office" in wanted:
        names.extend(world.office_names.get(office, []))
    if "topic" in wanted:
        names.extend(topic_names(world, topic))
    if "place" in wanted:
        names.extend(place_names(place, town))
    return names


def record_labels(
    world: World, record: dict[str, Any], transcription: Any
) -> dict[str, Any] | None:
    """The label line of one description (None if its family is not labelled)."""
    fields = world.mentions.get(record["naId"])
    if fields is None:
        return None
    level = record["levelOfDescription"]
    body = body_text(record, level, transcription)
    kept = [TITLE]
    if body:
        scope = (record.get("scopeAndContentNote") or "").strip()
        ocr = [
            (o.get("extractedText") or "").strip()
            for o in record.get("digitalObjects") or []
            if o.get("extractedText")
        ]
        if body == scope:
            kept.append(SCOPE)
        elif body in ocr:
            kept.append(OCR)
        else:
            kept.append(TRANSCRIPTION)
    mentions: dict[int, str] = {}
    for text_field in kept:
        for authority, surface in fields.get(text_field, {}).items():
            mentions.setdefault(authority, surface)
    return {
        "naId": record["naId"],
        "mentions": [{"authority": a, "surface": s} for a, s in mentions.items()],
    }

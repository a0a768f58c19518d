"""The evaluation questions (questions.jsonl): local questions whose answer is one generated
record, picked so that no other record fits them, plus a few global ones, then questions of kind
"person_org" that name a person or organization the text of a few records mentions.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any, Final

from nara_kg.demo.world import World


def make_questions(world: World) -> list[dict[str, Any]]:
    """Questions with the naIds that answer them, in the order questions.jsonl lists them."""
    rng = world.rng
    by_kind: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for kind, na_id, details in world.anchors:
        by_kind.setdefault(kind, []).append((na_id, details))
    chosen: list[tuple[str, list[int]]] = []

    def pick(kind: str, count: int) -> list[tuple[int, dict[str, Any]]]:
        pool = by_kind.get(kind, [])
        return rng.sample(pool, min(count, len(pool)))

    # Series: a topic at a place; only combinations no other series shares.
    series_pairs = Counter((d["topic"], d["town"]) for _, d in by_kind.get("series", []))
    unique_series = [
        (na_id, d)
        for na_id, d in by_kind.get("series", [])
        if series_pairs[(d["topic"], d["town"])] == 1
    ]
    for na_id, d in rng.sample(unique_series, min(5, len(unique_series))):
        chosen.append(
            (
                f"Which series documents {d['topic'].lower()} in {d['town']}?",
                [na_id],
            )
        )
    # Title-only file units, findable by the words of their titles.
    unique_units = [
        (na_id, d)
        for na_id, d in by_kind.get("fileUnit", [])
        if world.title_counts[d["title"]] == 1
    ]
    for na_id, d in rng.sample(unique_units, min(4, len(unique_units))):
        title = d["title"]
        if title.startswith("Case File"):
            number, name = title.removeprefix("Case File ").split(": ", 1)
            last, first = name.split(", ", 1)
            text = f"Is there a case file number {number} for {first} {last}?"
        else:
            body, year = title.rsplit(", ", 1)
            board = body.removeprefix("Minutes of the ")
            text = f"Find the minutes of the {board} meetings held in {year}."
        chosen.append((text, [na_id]))
    unique_items = [
        (na_id, d) for na_id, d in by_kind.get("item", []) if world.title_counts[d["title"]] == 1
    ]
    for na_id, d in rng.sample(unique_items, min(3, len(unique_items))):
        chosen.append(
            (
                f"Show me the {d['kind'].lower()} about {d['topic'].lower()} at {d['town']} "
                f"from {d['date'] if d['kind'] != 'Letter' else 'the correspondence files'}.",
                [na_id],
            )
        )
    main_orgs = [o for o in world.orgs if o.parent is None]
    field_offices = [o for o in world.orgs if o.parent is not None]
    for org in [*rng.sample(main_orgs, min(1, len(main_orgs))), *field_offices[:1]]:
        chosen.append((f"What was the {org.display} responsible for?", [org.na_id]))
    for person in rng.sample(world.people, min(2, len(world.people))):
        chosen.append(
            (
                f"Who was {person.first} {person.last} and where did {person.pronoun} work?",
                [person.na_id],
            )
        )
    for na_id, d in pick("collection", 1):
        chosen.append((f"What do the papers of {d['person']} contain?", [na_id]))
    for na_id, d in pick("recordGroup", 1):
        chosen.append((f"Which record group holds the records of the {d['org']}?", [na_id]))
    narrower_topics = [t for t in world.topics if t.broader and "--" not in t.heading]
    for term in rng.sample(narrower_topics, min(1, len(narrower_topics))):
        chosen.append((f"What does the subject heading {term.heading} cover?", [term.na_id]))
    for term in rng.sample(world.towns, min(1, len(world.towns))):
        chosen.append(
            (f"Where is {term.extra['town']}, and what records concern it?", [term.na_id])
        )
    questions = [
        {"id": f"q{index:02d}", "question": text, "expected_naids": ids, "mode": "local"}
        for index, (text, ids) in enumerate(chosen, start=1)
    ]
    for text in (
        "What are the main themes of the records in this archive?",
        "Which government activities and regions are documented most often across the "
        "record groups and collections?",
        "How did federal programs described in these records change over the decades?",
    ):
        questions.append(
            {
                "id": f"q{len(questions) + 1:02d}",
                "question": text,
                "expected_naids": [],
                "mode": "global",
            }
        )
    questions.extend(person_org_questions(world, first_index=len(questions) + 1))
    return questions


#: person_org questions asked, and the most records that may mention their authority (the
#: question's answer is any of them).
PERSON_ORG_QUESTIONS: Final = 8
PERSON_ORG_MAX_RECORDS: Final = 15
_PERSON_ORG_TEMPLATES: Final = (
    "Which records mention {name}?",
    "What do the records say about {name}?",
    "Find the records that name {name}.",
    "Where in the records does {name} appear?",
)


def person_org_questions(world: World, first_index: int) -> list[dict[str, Any]]:
    """Questions naming a person or organization that the text of at most
    PERSON_ORG_MAX_RECORDS labelled records mentions; those records answer them. They draw on
    their own rng (seeded from the labels), so the world's draws, and every other generated
    file, stay as they were."""
    wanted = {p.na_id for p in world.people} | {o.na_id for o in world.orgs}
    records: dict[int, list[int]] = {}
    surfaces: dict[int, str] = {}
    for label in world.labels:
        for mention in label["mentions"]:
            authority = mention["authority"]
            if authority in wanted:
                records.setdefault(authority, []).append(label["naId"])
                surfaces.setdefault(authority, mention["surface"])
    pool = sorted(a for a, found in records.items() if len(found) <= PERSON_ORG_MAX_RECORDS)
    rng = random.Random(f"person_org:{len(world.labels)}:{sorted(records)}")
    chosen = rng.sample(pool, min(PERSON_ORG_QUESTIONS, len(pool)))
    return [
        {
            "id": f"q{index:02d}",
            "question": _PERSON_ORG_TEMPLATES[offset % len(_PERSON_ORG_TEMPLATES)].format(
                name=surfaces[authority]
            ),
            "expected_naids": sorted(set(records[authority])),
            "mode": "local",
            "kind": "person_org",
        }
        for offset, (index, authority) in enumerate(
            zip(range(first_index, first_index + len(chosen)), chosen, strict=True)
        )
    ]

"""The evaluation questions (questions.jsonl): local questions whose answer is one generated
record, picked so that no other record fits them, plus a few global ones.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

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
    return questions

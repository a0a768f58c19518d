"""Series: each under a record group or collection, created by its organization (or a field
office of it) or its person, about a topic at a town.
"""

from __future__ import annotations

from typing import Any

from nara_kg.demo.descriptions import (
    ancestor,
    org_creator,
    person_creator,
    physical,
    restrictions,
    subject_refs,
)
from nara_kg.demo.labels import (
    SCOPE,
    TITLE,
    note,
    office_names,
    place_names,
    records_type_names,
    topic_names,
)
from nara_kg.demo.text import export_date, paragraph, title_case
from nara_kg.demo.vocabulary import GENERAL_RECORDS_TYPES, TOPIC_ASPECTS, VARIANT_NUMBER_TYPES
from nara_kg.demo.world import Org, Series, Top, World


def make_series(world: World, count: int) -> list[Series]:
    """`count` series: one for each top first, then the rest at random tops."""
    rng = world.rng
    all_series: list[Series] = []
    for index in range(count):
        # Every top gets series first, then the rest go round at random.
        top = world.tops[index] if index < len(world.tops) else rng.choice(world.tops)
        all_series.append(make_one_series(world, top, len(top.series) + 1))
    return all_series


def make_one_series(world: World, top: Top, entry_number: int) -> Series:
    """A series of `top`; `entry_number` is its number within the top."""
    rng = world.rng
    na_id = world.description_id()
    place = rng.choice(world.towns) if world.towns else world.geo[0]
    records_type = rng.choice(world.records_types).heading if world.records_types else "Records"
    creators: list[dict[str, Any]]
    # Mostly the creator's own subjects, sometimes any subject of the taxonomy.
    any_topic = rng.choice(world.topic_labels())
    if top.level == "recordGroup":
        org = org_for_top(world, top)
        offices = world.field_offices_of(org.na_id)
        if offices and rng.random() < 0.4:
            # Field offices create series of their own (like the relocation centers of a
            # real record group), about their own town.
            org = rng.choice(offices)
            place = next((t for t in world.towns if t.extra["town"] == org.town), place)
        topic = rng.choice(org.topics) if rng.random() < 0.75 else any_topic
        office = org.display
        office_names(world, office, org, None)
        start = max(org.names[0].establish["year"], top.stub["inclusiveStartDate"]["year"])
        end = min(start + rng.randint(1, 15), top.stub["inclusiveEndDate"]["year"])
        end = max(start, end)
        latest = [n for n in org.names if n.establish["year"] <= end] or org.names[:1]
        creators = [org_creator(world, org, latest[-1], "Most Recent", na_id)]
        if len(latest) > 1:
            creators.append(org_creator(world, org, latest[-2], "Predecessor", na_id))
    else:
        person_na_id = top.record["creators"][0]["naId"]
        person = world.person_with_id(person_na_id)
        if person is None:
            raise ValueError(f"collection creator {person_na_id} is not a generated person")
        topic = any_topic
        office = f"office of {person.full}"
        office_names(world, office, None, person)
        start = rng.randint(
            top.stub["inclusiveStartDate"]["year"], top.stub["inclusiveEndDate"]["year"]
        )
        end = min(start + rng.randint(0, 12), top.stub["inclusiveEndDate"]["year"])
        creators = [person_creator(world, person, "Most Recent", na_id)]
    town = place.extra.get("town", place.label)
    subject = title_case(topic)
    pattern = rng.randrange(5)
    if pattern == 0:
        title = f"{records_type} Relating to {subject} in {town}"
    elif pattern == 1:
        title = f"{town} {subject} Project Files, {start}-{end}"
    elif pattern == 2:
        title = f"{records_type} of the {town} {rng.choice(('Committee', 'Survey', 'Project'))}"
    elif pattern == 3:
        title = f"Reports on {subject} Activities near {town}"
    else:
        title = f"{records_type} Concerning {subject}, {start}-{end}"
    world.title_counts[title] += 1
    title_names = {
        0: ("records_type", "topic", "town"),
        1: ("topic", "town"),
        2: ("records_type", "town"),
        3: ("topic", "town"),
        4: ("records_type", "topic"),
    }[pattern]
    names = {
        "records_type": records_type_names(world, records_type),
        "topic": topic_names(world, topic),
        "town": place_names(place, town),
    }
    note(world, na_id, TITLE, (n for key in title_names for n in names[key]))
    dates = (export_date(start, rng.randint(1, 12), rng.randint(1, 28)), export_date(end, end=True))
    stub = {
        "distance": 0,
        "levelOfDescription": "series",
        "naId": na_id,
        "title": title,
        "inclusiveStartDate": dates[0],
        "inclusiveEndDate": dates[1],
        "creators": creators,
    }
    record: dict[str, Any] = {
        "naId": na_id,
        "levelOfDescription": "series",
        "recordType": "description",
        "title": title,
        "inclusiveStartDate": dates[0],
        "inclusiveEndDate": dates[1],
        "creators": creators,
        "generalRecordsTypes": [rng.choice(GENERAL_RECORDS_TYPES)],
        "ancestors": [ancestor(top.stub, 1)],
    }
    if rng.random() < 0.92:
        record["scopeAndContentNote"] = series_scope(
            world, records_type, office, topic, town, start, end
        )
        # Its first sentence names the records type, the office, the topic and the town.
        note(
            world,
            na_id,
            SCOPE,
            (n for key in ("records_type", "topic", "town") for n in names[key]),
        )
        note(world, na_id, SCOPE, world.office_names[office])
    record["variantControlNumbers"] = [
        {
            "number": f"{rng.choice(('P', 'UD', 'A1', 'NC'))} {entry_number}",
            "type": VARIANT_NUMBER_TYPES[0],
        }
    ]
    if rng.random() < 0.3:
        record["variantControlNumbers"].append(
            {
                "number": str(rng.randint(700000, 999999)),
                "type": rng.choice(VARIANT_NUMBER_TYPES[1:]),
                "note": "Number assigned during an earlier inventory.",
            }
        )
    if rng.random() < 0.2:
        record["localIdentifier"] = f"{top.folder.split('_', 1)[1]}-{entry_number}"
    reference_unit = top.record["referenceUnits"][0]
    record["physicalOccurrences"] = physical(world, "series", reference_unit, rng.choice((1, 1, 2)))
    restrictions(world, record, 0.15)
    record["dataControlGroup"] = dict(top.record["dataControlGroup"])
    subjects = subject_refs(world, na_id, topic, place, 0.7)
    if subjects:
        record["subjects"] = subjects
    if rng.random() < 0.4:
        record["arrangement"] = rng.choice(
            (
                "Arranged alphabetically by name of project.",
                "Arranged chronologically.",
                "Arranged by state and thereunder by county.",
            )
        )
    if rng.random() < 0.2:
        record["functionAndUse"] = f"Used by the {office} to plan and track {topic.lower()} work."
    if rng.random() < 0.1:
        record["microformPublications"] = [
            {
                "identifier": f"M{rng.randint(1000, 2999)}",
                "title": title,
                "note": "Complete microfilm publication of the series.",
            }
        ]
    if rng.random() < 0.1:
        record["onlineResources"] = [
            {
                "url": f"https://example.org/nara-demo/guides/{na_id}",
                "description": f"Research guide to {topic.lower()} records",
                "note": "External guide.",
            }
        ]
    series = Series(
        na_id,
        top,
        title,
        topic,
        place,
        records_type,
        office,
        creators,
        start,
        end,
        stub,
        record,
    )
    top.series.append(series)
    # A question names the topic and the town, so the series text must name both.
    if "scopeAndContentNote" in record or pattern in (0, 1, 3):
        world.anchors.append(("series", na_id, {"topic": topic, "town": town, "title": title}))
    return series


def org_for_top(world: World, top: Top) -> Org:
    """The organization that created a record group (its creator is a name's naId)."""
    creator = top.record["creators"][0]["naId"]
    org = world.org_by_name_id.get(creator) or world.org_with_id(creator)
    if org is None:
        raise ValueError(f"record group creator {creator} is not a generated organization")
    return org


def series_scope(
    world: World, records_type: str, office: str, topic: str, town: str, start: int, end: int
) -> str:
    """A series' scope and content note."""
    rng = world.rng
    parts = [
        f"This series consists of {records_type.lower()} created or received by the "
        f"{office} concerning {topic.lower()} in {town} and the surrounding counties, "
        f"{start}-{end}.",
        f"The records include {rng.choice(TOPIC_ASPECTS)}, {rng.choice(TOPIC_ASPECTS)}, "
        f"and correspondence with local officials. {paragraph(rng, office, topic, town, 2)}",
    ]
    if rng.random() < 0.6:
        parts.append(paragraph(rng, office, topic, town, rng.randint(2, 4)))
    return "\n\n".join(parts)

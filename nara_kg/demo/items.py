"""Items: letters, memoranda, reports and photographs, in a file unit or directly under a series."""

from __future__ import annotations

from typing import Any

from nara_kg.demo.descriptions import ancestor, authority_ref, physical, restrictions, subject_refs
from nara_kg.demo.digital import digital_objects, transcription_text
from nara_kg.demo.file_units import OCR_NAMES
from nara_kg.demo.labels import OCR, SCOPE, TITLE, TRANSCRIPTION, note, prose_names
from nara_kg.demo.text import export_date, human_date, paragraph, title_case
from nara_kg.demo.vocabulary import CONTRIBUTOR_TYPES, DOC_KINDS
from nara_kg.demo.world import Series, World


def make_item(
    world: World, series: Series, file_unit: dict[str, Any] | None
) -> tuple[dict[str, Any], list[dict[str, Any]] | None]:
    """An item of `series` (in `file_unit`, or directly under the series if None), and
    its transcription if it has one."""
    rng = world.rng
    na_id = world.description_id()
    town = series.place.extra.get("town", series.place.label)
    year = rng.randint(series.start, max(series.start, series.end))
    produced = export_date(year, rng.randint(1, 12), rng.randint(1, 28))
    kind = rng.choice(DOC_KINDS)
    subject = title_case(series.topic)
    sender = rng.choice(world.people)
    receiver = rng.choice(world.people)
    if kind == "Letter":
        title = f"Letter from {sender.full} to {receiver.full} Regarding {subject} at {town}"
    elif kind == "Photograph":
        title = f"Photograph of {subject} Work near {town}, {human_date(produced)}"
    elif kind == "Transcript":
        title = f"Transcript of a Hearing on {subject} in {town}"
    else:
        title = f"{kind} on {subject} at {town}, {human_date(produced)}"
    world.title_counts[title] += 1
    people = [(sender.na_id, sender.full), (receiver.na_id, receiver.full)]
    note(
        world,
        na_id,
        TITLE,
        prose_names(world, ("topic", "place"), "", series.topic, series.place, town),
    )
    if kind == "Letter":
        note(world, na_id, TITLE, people)
    ancestors = [
        ancestor(series.top.stub, 2 if file_unit is None else 3),
        ancestor(series.stub, 1 if file_unit is None else 2),
    ]
    if file_unit is not None:
        ancestors.append(
            {
                "distance": 1,
                "levelOfDescription": "fileUnit",
                "naId": file_unit["naId"],
                "title": file_unit["title"],
            }
        )
    record: dict[str, Any] = {
        "naId": na_id,
        "levelOfDescription": "item",
        "recordType": "description",
        "title": title,
        # The export writes this flag as a quoted string, in either capitalization.
        "audiovisual": "True"
        if kind == "Photograph" and rng.random() < 0.2
        else rng.choice(("False", "False", "false")),
        "productionDates": [produced],
        "generalRecordsTypes": ["Photographs and other Graphic Materials"]
        if kind == "Photograph"
        else ["Textual Records"],
        "ancestors": ancestors,
        "physicalOccurrences": physical(
            world,
            "item",
            series.record["physicalOccurrences"][0]["referenceUnits"][0],
            rng.choice((1, 2)),
        ),
        "dataControlGroup": series.record["dataControlGroup"],
    }
    restrictions(world, record, 0.1)
    if rng.random() < 0.5:
        if kind == "Photograph":
            opening = (
                f"This photograph, taken on {human_date(produced)}, shows "
                f"{series.topic.lower()} work near {town}."
            )
        else:
            opening = (
                f"This {kind.lower()} from {sender.full} to {receiver.full}, dated "
                f"{human_date(produced)}, concerns {series.topic.lower()} at {town}."
            )
        used = {"topic", "place"}
        paragraphs = [
            opening,
            paragraph(rng, series.office, series.topic, town, rng.randint(2, 4), used),
        ]
        if rng.random() < 0.4:
            paragraphs.append(paragraph(rng, series.office, series.topic, town, 2, used))
        record["scopeAndContentNote"] = "\n\n".join(paragraphs)
        names = prose_names(world, used, series.office, series.topic, series.place, town)
        note(world, na_id, SCOPE, names + ([] if kind == "Photograph" else people))
    has_ocr = False
    if rng.random() < 0.8:
        has_ocr = kind != "Photograph" and rng.random() < 0.45
        ocr = (series.office, series.topic, town, produced) if has_ocr else None
        record["digitalObjects"] = digital_objects(world, na_id, rng.randint(1, 4), ocr)
        if ocr is not None:
            names = prose_names(world, OCR_NAMES, series.office, series.topic, series.place, town)
            note(world, na_id, OCR, names)
    if rng.random() < 0.15 and world.people:
        contributor = rng.choice(world.people)
        entries = [
            {
                **authority_ref(contributor.na_id, contributor.heading, "person"),
                "contributorType": "Photographer"
                if kind == "Photograph"
                else rng.choice(CONTRIBUTOR_TYPES),
            }
        ]
        world.links.add(contributor.na_id, "contributor", na_id)
        if rng.random() < 0.3 and world.orgs:
            org = rng.choice(world.orgs)
            entries.append(
                {
                    **authority_ref(org.current.na_id, org.current.heading, "organization"),
                    "contributorType": "Sponsor",
                }
            )
            world.links.add(org.na_id, "contributor", na_id)
        record["contributors"] = entries
    subjects = subject_refs(world, na_id, series.topic, series.place, 0.4)
    if subjects:
        record["subjects"] = subjects
    if rng.random() < 0.05:
        record["coverageStartDate"] = export_date(year)
        record["coverageEndDate"] = export_date(year + rng.randint(0, 3), end=True)
    if rng.random() < 0.08:
        record["variantControlNumbers"] = [
            {"number": f"si{series.topic}", "type": "Search Identifier"}
        ]
    transcription = None
    if rng.random() < 0.1:
        # The "office" of a transcription's prose is "<town> office": it names the town.
        used = set()
        transcription = [
            {"contribution": transcription_text(rng, sender, receiver, series.topic, town, used)}
            for _ in range(rng.randint(1, 3))
        ]
        if "office" in used:
            used.add("place")
        names = prose_names(world, used, "", series.topic, series.place, town)
        note(world, na_id, TRANSCRIPTION, [*names, (sender.na_id, sender.full)])
    if has_ocr or kind in ("Letter", "Memorandum"):
        world.anchors.append(
            (
                "item",
                na_id,
                {
                    "title": title,
                    "topic": series.topic,
                    "town": town,
                    "kind": kind,
                    "date": human_date(produced),
                },
            )
        )
    series.items += 1
    return record, transcription

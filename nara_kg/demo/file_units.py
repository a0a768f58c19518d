"""File units: the folders of a series, mostly title-only, some with digital objects."""

from __future__ import annotations

from typing import Any

from nara_kg.demo.descriptions import ancestor, restrictions, subject_refs
from nara_kg.demo.digital import digital_objects
from nara_kg.demo.labels import OCR, SCOPE, TITLE, note, prose_names, records_type_names
from nara_kg.demo.text import export_date, sentence, title_case
from nara_kg.demo.vocabulary import DOC_KINDS, FIRST_FEMALE, FIRST_MALE, LAST, MONTHS
from nara_kg.demo.world import Series, World

#: What an OCR page names (see `digital.ocr_text`).
OCR_NAMES = ("office", "topic", "place")


def make_file_unit(world: World, series: Series) -> dict[str, Any]:
    """A file unit of `series`, titled by one of six patterns."""
    rng = world.rng
    na_id = world.description_id()
    year = rng.randint(series.start, max(series.start, series.end))
    town = series.place.extra.get("town", series.place.label)
    pattern = rng.randrange(6)
    if pattern == 0:
        month = rng.randint(1, 10)
        title = (
            f"Volume {len(series.file_units) + 1}, {MONTHS[month - 1]} {rng.randint(1, 28)} "
            f"\u2013 {MONTHS[month + 1]} {rng.randint(1, 28)}, {year}"
        )
    elif pattern == 1:
        person_first = rng.choice(FIRST_MALE + FIRST_FEMALE)
        title = f"Case File {rng.randint(100, 9999)}: {rng.choice(LAST)}, {person_first}"
    elif pattern == 2:
        title = f"{town}: {title_case(series.topic)}, {year}"
    elif pattern == 3:
        title = f"{title_case(series.topic)} - General, {year}-{year + 1}"
    elif pattern == 4:
        title = f"Minutes of the {town} Advisory Board, {year}"
    else:
        title = f"Correspondence with the County Engineer of {town}, {year}"
    world.title_counts[title] += 1
    title_names = {2: ("topic", "place"), 3: ("topic",), 4: ("place",), 5: ("place",)}
    note(
        world,
        na_id,
        TITLE,
        prose_names(world, title_names.get(pattern, ()), "", series.topic, series.place, town),
    )
    record: dict[str, Any] = {
        "naId": na_id,
        "levelOfDescription": "fileUnit",
        "recordType": "description",
        "title": title,
        "generalRecordsTypes": series.record["generalRecordsTypes"],
        "ancestors": [ancestor(series.top.stub, 2), ancestor(series.stub, 1)],
        "physicalOccurrences": [
            {
                "copyStatus": "Preservation-Reproduction-Reference",
                "referenceUnits": series.record["physicalOccurrences"][0]["referenceUnits"],
                "mediaOccurrences": [
                    {"specificMediaType": "Paper", "generalMediaTypes": ["Loose Sheets"]}
                ],
            }
        ],
        "dataControlGroup": series.record["dataControlGroup"],
    }
    restrictions(world, record, 0.08)
    if rng.random() < 0.6:
        ocr = None
        if rng.random() < 0.15:
            ocr = (
                series.office,
                series.topic,
                town,
                export_date(year, rng.randint(1, 12), rng.randint(1, 28)),
            )
        record["digitalObjects"] = digital_objects(world, na_id, rng.randint(1, 6), ocr)
        if ocr is not None:
            # The letterhead and subject line name the office, the town and the topic.
            note(
                world,
                na_id,
                OCR,
                prose_names(world, OCR_NAMES, series.office, series.topic, series.place, town),
            )
    if rng.random() < 0.12:
        used = {"topic", "place"}
        documents = f"{rng.choice(DOC_KINDS).lower()}s"
        record["scopeAndContentNote"] = (
            f"This file contains {documents} and notes about "
            f"{series.topic.lower()} in {town}. "
            + sentence(rng, series.office, series.topic, town, used)
        )
        names = prose_names(world, used, series.office, series.topic, series.place, town)
        # "telegrams", "memorandums": a records type's heading, when the data set has it.
        names += records_type_names(world, documents.capitalize())
        note(world, na_id, SCOPE, names)
    subjects = subject_refs(world, na_id, series.topic, series.place, 0.1)
    if subjects:
        record["subjects"] = subjects
    if rng.random() < 0.05:
        record["variantControlNumbers"] = [
            {
                "number": f"{rng.randint(1, 99)}-{rng.randint(100, 999)}",
                "type": "Other Identifier",
            }
        ]
    if rng.random() < 0.03:
        record["otherTitles"] = [f"{town} file {rng.randint(1, 400)}"]
    if pattern == 1 or pattern == 4:
        world.anchors.append(("fileUnit", na_id, {"title": title, "town": town}))
    series.file_units.append(record)
    return record

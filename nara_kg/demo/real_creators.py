"""Authority records for the creators a real export cites, so generated and real records connect.

Only headings and dates come from the real references; the prose says it is synthetic, since
it must not invent facts about real people and bodies.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from nara_kg.demo.text import export_date, record_line
from nara_kg.demo.world import World
from nara_kg.ingest.parsing.readers import iter_file
from nara_kg.ingest.parsing.results import ParsedRecord, Reference

_DATE_SEGMENT: Final = re.compile(r"^[\d/\s\-\u2013()ca.]+$")


def real_creator_lines(world: World, export_dir: Path) -> dict[str, list[str]]:
    """Authority records (as lines, by type) for the `creators[]` naIds of a real export, so a
    graph built from generated plus real records is connected. Headings come from the
    references; the text is neutral and says it is synthetic (it must not invent facts about
    real bodies)."""
    creators: dict[int, tuple[Reference, dict[str, Any]]] = {}
    counts: Counter[int] = Counter()
    for parsed in _iter_parsed(export_dir):
        stub_props = {s.na_id: s.properties for s in parsed.stubs}
        references = list(parsed.references)
        for stub in parsed.stubs:
            references.extend(stub.references)
        for reference in references:
            if reference.rel != "creator" or reference.authority_type is None:
                continue
            counts[reference.na_id] += 1
            creators.setdefault(reference.na_id, (reference, stub_props.get(reference.na_id, {})))
    people: list[str] = []
    groups: dict[str, list[tuple[Reference, dict[str, Any]]]] = {}
    for na_id in sorted(creators):
        reference, props = creators[na_id]
        if reference.authority_type == "person":
            people.append(record_line(real_person(world, reference, props, counts[na_id])))
        elif reference.authority_type == "organization":
            groups.setdefault(_org_group_key(reference.heading or str(na_id)), []).append(
                (reference, props)
            )
    organizations = [
        record_line(real_organization(world, key, members, counts))
        for key, members in groups.items()
    ]
    return {"person": people, "organization": organizations}


def real_person(
    world: World, reference: Reference, props: dict[str, Any], count: int
) -> dict[str, Any]:
    """A person authority for a real creator reference, with its dates if the stub had them."""
    heading = reference.heading or f"Person {reference.na_id}"
    name = re.sub(r",\s*[\d-]+\s*$", "", heading)
    record: dict[str, Any] = {
        "naId": reference.na_id,
        "heading": heading,
        "authorityType": "person",
        "recordType": "authority",
        "name": name,
        "biographicalNote": (
            f"{name} is named in the catalog as the creator of archival records "
            f"described here.\n\nThis authority record was generated for demonstration; "
            f"its text is synthetic and gives no biographical facts."
        ),
        "linkCounts": {"totalDescription": count, "creator": count},
        "role": {"creator": True, "contributor": False, "donor": False, "reference": False},
    }
    for key in ("birthDate", "deathDate"):
        logical = props.get(f"logicalDate_{key}")
        if isinstance(logical, str) and len(logical) >= 4 and logical[:4].isdigit():
            record[key] = export_date(int(logical[:4]), end=key == "deathDate")
    return record


def real_organization(
    world: World, key: str, members: list[tuple[Reference, dict[str, Any]]], counts: Counter[int]
) -> dict[str, Any]:
    """One organization whose `organizationNames[]` holds every referenced name; its own
    naId is new, as in the real data where creators cite the nested names."""
    names = []
    for reference, props in members:
        entry: dict[str, Any] = {
            "naId": reference.na_id,
            "name": key.split(". ")[-1],
            "heading": reference.heading or key,
        }
        for prop, field_name in (
            ("logicalDate_establishDate", "establishDate"),
            ("logicalDate_abolishDate", "abolishDate"),
        ):
            logical = props.get(prop)
            if isinstance(logical, str) and logical[:4].isdigit():
                year, month, day = (int(p) for p in logical.split("-")[:3])
                entry[field_name] = export_date(year, month, day)
        names.append(entry)
    names.sort(key=lambda e: (e.get("establishDate", {}).get("logicalDate", ""), e["naId"]))
    total = sum(counts[reference.na_id] for reference, _ in members)
    record: dict[str, Any] = {
        "naId": world.authority_id(),
        "heading": names[-1]["heading"],
        "authorityType": "organization",
        "recordType": "authority",
        "name": key.split(". ")[-1],
        "administrativeHistoryNote": (
            f"The {key} is named in the catalog as the creator of archival records "
            f"described here, under {len(names)} name(s) used over time.\n\nThis authority "
            f"record was generated for demonstration; its text is synthetic and gives no "
            f"historical facts."
        ),
        "organizationNames": names,
        "linkCounts": {"totalDescription": total, "creator": total},
    }
    if world.geo:
        record["jurisdictions"] = [{"naId": world.geo[0].na_id, "name": world.geo[0].heading}]
    return record


def _org_group_key(heading: str) -> str:
    """The name an organization keeps across renames and transfers: the heading without its
    dates and without its top (department) segment, e.g. both "Department A. War Board.
    1944-1946" and "Office B. War Board. 1942-1944" give "War Board"."""
    segments = [s.strip() for s in re.split(r"\.\s+", heading.strip().rstrip("."))]
    segments = [
        s for s in segments if s and not (_DATE_SEGMENT.match(s) and any(c.isdigit() for c in s))
    ]
    if len(segments) > 1:
        segments = segments[1:]
    return ". ".join(segments) or heading


def _iter_parsed(export_dir: Path) -> Iterator[ParsedRecord]:
    """Every parsed record of the export files under `export_dir`, in path order."""
    suffixes = (".jsonl", ".json", ".jsonl.gz", ".json.gz", ".zip")
    paths = sorted(
        p for p in export_dir.rglob("*") if p.is_file() and p.name.lower().endswith(suffixes)
    )
    for path in paths:
        for result in iter_file(path):
            if isinstance(result, ParsedRecord):
                yield result

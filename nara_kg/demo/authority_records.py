"""The authority records: organizations, persons and terms as the export writes them.

They are written after every description, since `linkCounts` and `role` count the
descriptions that cite each authority.
"""

from __future__ import annotations

from typing import Any, Final

from nara_kg.demo.descriptions import authority_ref
from nara_kg.demo.text import record_line
from nara_kg.demo.vocabulary import FIRST_FEMALE, FIRST_MALE, LAST
from nara_kg.demo.world import Org, Person, Term, World

#: Record type -> folder under authority-records/.
AUTHORITY_FOLDERS: Final[dict[str, str]] = {
    "person": "person",
    "organization": "organization",
    "geographicPlaceName": "geographic-reference",
    "specificRecordsType": "specific-records-type",
    "topicalSubject": "topical-subject",
}


def authority_lines(world: World, real: dict[str, list[str]]) -> dict[str, list[str]]:
    """Every authority record as an export line, by type; `real` are the lines made for a real
    export's creators (see `real_creators`), written after the generated ones."""
    lines: dict[str, list[str]] = {kind: [] for kind in AUTHORITY_FOLDERS}
    for org in world.orgs:
        lines["organization"].append(record_line(org_record(world, org)))
    for person in world.people:
        lines["person"].append(record_line(person_record(world, person)))
    for term in (*world.geo, *world.records_types, *world.topics):
        lines[term.kind].append(record_line(term_record(world, term)))
    for kind, extra in real.items():
        lines[kind].extend(extra)
    for kind, kind_lines in lines.items():
        world.counts[kind] += len(kind_lines)
    return lines


def org_record(world: World, org: Org) -> dict[str, Any]:
    """An organization authority with every name under its own naId."""
    rng = world.rng
    record: dict[str, Any] = {
        "naId": org.na_id,
        "heading": org.current.heading,
        "authorityType": "organization",
        "recordType": "authority",
        "name": org.current.name,
        "administrativeHistoryNote": org.history,
        "organizationNames": [
            {
                "naId": name.na_id,
                "name": name.name,
                "heading": name.heading,
                "establishDate": name.establish,
                **({"abolishDate": name.abolish} if name.abolish is not None else {}),
                "creatorTypes": ["Most Recent"] if name is org.current else ["Predecessor"],
                "recordSource": "NARA",
            }
            for name in org.names
        ],
        "linkCounts": world.links.counts(org.na_id, ("creator", "contributor", "donor", "subject")),
    }
    if org.jurisdictions:
        record["jurisdictions"] = [
            {"naId": geo.na_id, "name": geo.heading}
            for geo in world.geo
            if geo.na_id in org.jurisdictions
        ]
    if org.people:
        record["personalReferences"] = [
            authority_ref(p.na_id, p.heading, "person") for p in world.people_in_order(org.people)
        ][:5]
    if org.variants and rng.random() < 0.6:
        record["variantOrganizationNames"] = org.variants
    if rng.random() < 0.5:
        record["programAreas"] = [t for t in org.topics[:2]]
    record["sourceNotes"] = [
        f"United States Government Manual, {org.names[0].establish['year'] + 1}"
    ]
    return record


def person_record(world: World, person: Person) -> dict[str, Any]:
    """A person authority; `role` says how descriptions cite the person."""
    rng = world.rng
    counts = world.links.counts(person.na_id, ("creator", "contributor", "donor", "subject"))
    record: dict[str, Any] = {
        "naId": person.na_id,
        "heading": person.heading,
        "authorityType": "person",
        "recordType": "authority",
        "name": f"{person.last}, {person.first} {person.middle}.",
        "fullerFormOfName": f"{person.first} {middle_name(world, person)}",
        "birthDate": person.birth,
        "biographicalNote": person.biography,
        "linkCounts": counts,
        "role": {
            "creator": counts["creator"] > 0,
            "contributor": counts["contributor"] > 0,
            "donor": counts["donor"] > 0,
            "reference": counts["subject"] > 0,
        },
        "importRecordControlNumber": f"n {rng.randint(50, 99)}{rng.randint(10000, 99999)}",
        "recordSource": "LCNAF",
        "variantPersonNames": [
            {
                "heading": f"{person.last}, {person.first[0]}. {person.middle}.",
                "name": f"{person.last}, {person.first[0]}. {person.middle}.",
            }
        ],
    }
    if person.death is not None:
        record["deathDate"] = person.death
    if person.title is not None:
        record["personalTitle"] = person.title
    if person.orgs:
        record["organizationalReferences"] = [
            authority_ref(o.na_id, o.current.heading, "organization")
            for o in world.orgs_in_order(person.orgs)
        ]
    return record


def middle_name(world: World, person: Person) -> str:
    """A fuller form of the middle initial, drawn from the name lists."""
    names = [n for n in (*FIRST_MALE, *FIRST_FEMALE, *LAST) if n[0] == person.middle]
    return world.rng.choice(names) if names else f"{person.middle}."


def term_record(world: World, term: Term) -> dict[str, Any]:
    """A geographic, specific-records-type or topical authority."""
    by_id = {t.na_id: t for t in (*world.geo, *world.records_types, *world.topics)}
    record: dict[str, Any] = {
        "naId": term.na_id,
        "heading": term.heading,
        "authorityType": term.kind,
        "recordType": "authority",
        "scopeNote": term.scope_note,
    }
    if term.broader:
        record["broaderTerms"] = []
        for na_id in term.broader:
            broader = by_id[na_id]
            entry: dict[str, Any] = {
                "naId": na_id,
                "heading": broader.heading,
                "name": broader.heading,
            }
            if term.kind == "geographicPlaceName":
                entry["description"] = "State" if broader.broader else "Country"
            record["broaderTerms"].append(entry)
    if term.narrower:
        record["narrowerTerms"] = [
            {"naId": n, "heading": by_id[n].heading} for n in term.narrower[:25]
        ]
    if term.related:
        record["relatedTerms"] = [{"naId": n, "heading": by_id[n].heading} for n in term.related]
    roles = {
        "geographicPlaceName": (
            "subject",
            "geographicPlaceName",
            "jurisdiction",
            "organization",
        ),
        "specificRecordsType": ("subject", "specificRecordsType"),
        "topicalSubject": ("subject", "topicalSubject"),
    }[term.kind]
    record["linkCounts"] = world.links.counts(term.na_id, roles)
    if term.kind == "geographicPlaceName":
        # Organizations cite places as jurisdictions; those links are not descriptions.
        governed = world.orgs_governing(term.na_id)
        record["linkCounts"]["jurisdiction"] = governed
        record["linkCounts"]["organization"] = governed
        record["coordinates"] = term.extra["coordinates"]
        if "town" in term.extra:
            record["useFor"] = [f"{term.extra['town']} Township"]
    else:
        record["useFor"] = [term.label] if term.label != term.heading.lower() else []
        if not record["useFor"]:
            del record["useFor"]
    record["recordSource"] = "NARA" if term.kind != "topicalSubject" else "LCSH"
    record["importRecordControlNumber"] = f"sh {term.na_id % 10**8:08d}"
    return record

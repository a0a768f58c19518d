"""The top of the hierarchy: record groups (one per main agency) and collections (a person's
papers, with a donor).
"""

from __future__ import annotations

from typing import Any

from nara_kg.demo.descriptions import authority_ref, org_creator, person_creator, reference_unit
from nara_kg.demo.text import export_date, paragraph
from nara_kg.demo.world import Top, World


def make_record_groups(world: World, count: int) -> None:
    """One record group per main agency (round robin), titled after its current name."""
    rng = world.rng
    rg_numbers = rng.sample([n for n in range(301, 599) if n != 210], count)
    mains = [o for o in world.orgs if o.parent is None] or world.orgs
    for number in rg_numbers:
        org = mains[len(world.tops) % len(mains)]
        na_id = world.description_id()
        start = org.names[0].establish["year"]
        end = min(2005, (org.current.abolish or {"year": start + 40})["year"] + 10)
        title = f"Records of the {org.current.name}"
        if title in (t.title for t in world.tops):
            title = f"Records of the {org.short}"
        dates = (export_date(start), export_date(end, end=True))
        stub = {
            "distance": 0,
            "levelOfDescription": "recordGroup",
            "recordGroupNumber": number,
            "naId": na_id,
            "title": title,
            "inclusiveStartDate": dates[0],
            "inclusiveEndDate": dates[1],
        }
        record: dict[str, Any] = {
            "naId": na_id,
            "levelOfDescription": "recordGroup",
            "recordType": "description",
            "title": title,
            "recordGroupNumber": number,
            "inclusiveStartDate": dates[0],
            "inclusiveEndDate": dates[1],
            "creators": [org_creator(world, org, org.current, "Most Recent", na_id)],
            "scopeAndContentNote": (
                f"This record group consists of records of the {org.short} and its "
                f"predecessors, {start}-{end}, documenting federal work on "
                f"{org.topics[0].lower()}.\n\n"
                f"{paragraph(rng, org.short, org.topics[0], org.town, 3)}"
            ),
            "referenceUnits": [reference_unit(world, "recordGroup")],
            "generalRecordsTypes": [
                "Textual Records",
                "Photographs and other Graphic Materials",
            ],
            "dataControlGroup": {
                "groupCd": f"RD{number}",
                "groupId": "ou=RDT,ou=groups",
                "groupName": "Reference Division, Textual",
            },
        }
        if rng.random() < 0.5:
            record["findingAids"] = [
                {
                    "findingAidType": "Preliminary Inventory",
                    "note": f"Preliminary inventory of the records of RG {number}.",
                    "source": "National Archives",
                    "fileFormat": "PDF",
                    "url": f"https://example.org/nara-demo/finding-aids/rg{number}.pdf",
                }
            ]
        world.anchors.append(("recordGroup", na_id, {"org": org.short, "number": number}))
        world.tops.append(Top(na_id, "recordGroup", f"rg_{number}", title, stub, record))


def make_collections(world: World, count: int) -> None:
    """One collection per person (the first people not yet given one), donated by another."""
    rng = world.rng
    used_people: list[int] = []
    for _ in range(count):
        candidates = [p for p in world.people if p.na_id not in used_people] or world.people
        person = candidates[0]
        used_people.append(person.na_id)
        donor = rng.choice([p for p in world.people if p is not person] or world.people)
        na_id = world.description_id()
        library = rng.choice(("LPX", "NLY", "LPQ", "NLZ"))
        identifier = f"{library}-{person.last.upper()[:6]}"
        start = person.birth["year"] + 18
        end = min(2005, (person.death or {"year": start + 50})["year"])
        dates = (export_date(start), export_date(end, end=True))
        title = f"{person.first} {person.middle}. {person.last} Papers"
        stub = {
            "distance": 0,
            "levelOfDescription": "collection",
            "collectionIdentifier": identifier,
            "naId": na_id,
            "title": title,
            "inclusiveStartDate": dates[0],
            "inclusiveEndDate": dates[1],
        }
        if rng.random() < 0.5:
            # Presidential-library collections often carry approximate dates.
            dates = ({**dates[0], "dateQualifier": "ca."}, {**dates[1], "dateQualifier": "ca."})
            stub["inclusiveStartDate"], stub["inclusiveEndDate"] = dates
        world.links.add(donor.na_id, "donor", na_id)
        record = {
            "naId": na_id,
            "levelOfDescription": "collection",
            "recordType": "description",
            "title": title,
            "collectionIdentifier": identifier,
            "inclusiveStartDate": stub["inclusiveStartDate"],
            "inclusiveEndDate": stub["inclusiveEndDate"],
            "creators": [person_creator(world, person, "Most Recent", na_id)],
            "donors": [authority_ref(donor.na_id, donor.heading, "person")],
            "scopeAndContentNote": (
                f"This collection consists of the personal and professional papers of "
                f"{person.full}, {start}-{end}.\n\n{person.biography}\n\n"
                f"The papers were donated by {donor.first} {donor.last}."
            ),
            "referenceUnits": [reference_unit(world, "collection")],
            "variantControlNumbers": [
                {
                    "number": f"{library} {rng.randint(1, 99)}-{rng.randint(1, 999)}",
                    "type": "Other Identifier",
                }
            ],
            "dataControlGroup": {"groupCd": library, "groupId": f"ou={library},ou=groups"},
        }
        world.anchors.append(("collection", na_id, {"person": person.full}))
        world.tops.append(Top(na_id, "collection", f"coll_{identifier}", title, stub, record))

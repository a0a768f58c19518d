"""Parts every description level shares: reference units, restrictions, physical occurrences,
subjects and creators (which also count the links for the authorities' `linkCounts`).
"""

from __future__ import annotations

from typing import Any

from nara_kg.demo.vocabulary import ACCESS_RESTRICTIONS, LAST, MEDIA, STATES
from nara_kg.demo.world import Org, OrgName, Person, Term, World


def reference_unit(world: World, top_level: str) -> dict[str, Any]:
    """The reference unit (an archives or a presidential library) that holds a top."""
    rng = world.rng
    place = rng.choice(world.towns) if world.towns else None
    town = place.extra["town"] if place is not None else "Capitol City"
    postal = place.extra["postal"] if place is not None else rng.choice(STATES)[2]
    name = (
        f"{rng.choice(LAST)} Presidential Library"
        if top_level == "collection"
        else f"National Archives at {town}"
    )
    code = "".join(w[0] for w in name.split()).upper()
    return {
        "name": name,
        "address1": f"{rng.randint(100, 9899)} {rng.choice(LAST)} Road",
        "city": town,
        "state": postal,
        "postalCode": f"{rng.randint(10000, 99999)}",
        "phone": f"555-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
        "fax": f"555-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
        "email": f"{code.lower()}.reference@example.org",
        "mailCode": f"R{code}",
    }


def restrictions(world: World, record: dict[str, Any], restricted_share: float) -> None:
    """Access and use restrictions, restricted with the given probability."""
    rng = world.rng
    if rng.random() < restricted_share:
        record["accessRestriction"] = {
            "status": rng.choice(("Restricted - Partly", "Restricted - Possibly")),
            "note": "Some records may be screened for personal privacy before release.",
            "specificAccessRestrictions": [
                {"restriction": r} for r in rng.sample(ACCESS_RESTRICTIONS, 2)
            ],
        }
        if rng.random() < 0.3:
            record["accessRestriction"]["specificAccessRestrictions"][0][
                "securityClassification"
            ] = "Confidential"
    else:
        record["accessRestriction"] = {"status": "Unrestricted"}
    if rng.random() < restricted_share:
        record["useRestriction"] = {
            "status": "Restricted - Possibly",
            "specificUseRestrictions": ["Copyright"],
            "note": "Some of the records may be subject to copyright restrictions.",
        }
    else:
        record["useRestriction"] = {"status": "Unrestricted"}


def physical(
    world: World, level: str, reference_unit: dict[str, Any], media: int = 1
) -> list[dict[str, Any]]:
    """`physicalOccurrences` with media; series get holdings counts, items page counts."""
    rng = world.rng
    occurrences = []
    for index in range(media):
        specific, general = MEDIA[index % len(MEDIA)] if index else rng.choice(MEDIA[:2])
        occurrence: dict[str, Any] = {
            "copyStatus": "Preservation" if index == 0 else "Reproduction-Reference",
            "referenceUnits": [reference_unit],
            "mediaOccurrences": [
                {"specificMediaType": specific, "generalMediaTypes": list(general)}
            ],
        }
        if level == "series":
            # The bulk export writes holdings counts as floats.
            count = float(rng.randint(1, 60))
            occurrence["holdingsMeasurements"] = [{"count": count, "type": "linear feet"}]
            occurrence["extent"] = f"{int(count)} linear feet"
        elif level == "item" and rng.random() < 0.5:
            pages = rng.randint(1, 12)
            occurrence["extent"] = f"{pages} page{'s' if pages > 1 else ''}"
        if rng.random() < 0.1:
            occurrence["mediaOccurrences"][0]["containerId"] = str(rng.randint(1, 400))
        occurrences.append(occurrence)
    return occurrences


def subject_refs(
    world: World, description: int, topic: str, place: Term | None, share: float
) -> list[dict[str, Any]]:
    """Subject references (topic, place, records type, person), counted as links."""
    rng = world.rng
    refs: list[dict[str, Any]] = []
    if rng.random() >= share:
        return refs
    term = world.topic(topic)
    refs.append(authority_ref(term.na_id, term.heading, "topicalSubject"))
    world.links.add(term.na_id, "subject", description)
    world.links.add(term.na_id, "topicalSubject", description)
    if place is not None and rng.random() < 0.7:
        refs.append(authority_ref(place.na_id, place.heading, "geographicPlaceName"))
        world.links.add(place.na_id, "subject", description)
        world.links.add(place.na_id, "geographicPlaceName", description)
    if world.records_types and rng.random() < 0.4:
        srt = rng.choice(world.records_types)
        refs.append(authority_ref(srt.na_id, srt.heading, "specificRecordsType"))
        world.links.add(srt.na_id, "subject", description)
        world.links.add(srt.na_id, "specificRecordsType", description)
    if world.people and rng.random() < 0.15:
        person = rng.choice(world.people)
        refs.append(authority_ref(person.na_id, person.heading, "person"))
        world.links.add(person.na_id, "subject", description)
    return refs


def authority_ref(na_id: int, heading: str, authority_type: str) -> dict[str, Any]:
    """A reference to an authority as descriptions write it."""
    return {"naId": na_id, "heading": heading, "authorityType": authority_type}


def org_creator(
    world: World, org: Org, name: OrgName, creator_type: str, description: int
) -> dict[str, Any]:
    """A creator entry for one name of an organization, counted as a link."""
    world.links.add(org.na_id, "creator", description)
    entry: dict[str, Any] = {
        "creatorType": creator_type,
        "authorityType": "organization",
        "naId": name.na_id,  # the nested name, not the organization's own naId
        "heading": name.heading,
        "establishDate": name.establish,
    }
    if name.abolish is not None:
        entry["abolishDate"] = name.abolish
    return entry


def person_creator(
    world: World, person: Person, creator_type: str, description: int
) -> dict[str, Any]:
    """A creator entry for a person, counted as a link."""
    world.links.add(person.na_id, "creator", description)
    entry: dict[str, Any] = {
        "creatorType": creator_type,
        "authorityType": "person",
        "naId": person.na_id,
        "heading": person.heading,
        "birthDate": person.birth,
    }
    if person.death is not None:
        entry["deathDate"] = person.death
    return entry


def ancestor(stub: dict[str, Any], distance: int) -> dict[str, Any]:
    """An ancestor entry: a record group's, collection's or series' stub at a distance."""
    return {**stub, "distance": distance}

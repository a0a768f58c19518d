"""The authorities the descriptions cite: places, records types, topics, people, organizations.

Made first, in a fixed order, because everything later draws from them; `link_people` then
writes the biographies and the cross references between people and organizations.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from nara_kg.demo.text import export_date, human_date, on_date, paragraph, slash_date
from nara_kg.demo.vocabulary import (
    AGENCY_KINDS,
    AGENCY_SUBJECTS,
    COLLEGES,
    DEPARTMENTS,
    ESTABLISHED_BY,
    FIELD_WORK,
    FIRST_FEMALE,
    FIRST_MALE,
    LAST,
    PERSONAL_TITLES,
    POSITIONS,
    RECORDS_TYPES,
    RELATED_TOPICS,
    STATES,
    SUBDIVISIONS,
    TOPIC_ASPECTS,
    TOPIC_TAXONOMY,
    TOWN_FIRST,
    TOWN_SECOND,
)
from nara_kg.demo.world import Org, OrgName, Person, Term, World


def make_geography(world: World, count: int) -> None:
    """The nation, some states, and invented towns in them (with related towns)."""
    rng = world.rng
    nation = Term(
        world.authority_id(),
        "geographicPlaceName",
        "United States",
        "the United States",
        "Use for records concerning the United States as a whole, including federal "
        "programs that were not limited to one state or region.",
        extra={"coordinates": "39.83, -98.58"},
    )
    world.unique(nation.heading)
    world.geo.append(nation)
    states = list(STATES)
    rng.shuffle(states)
    n_states = max(1, min(len(states), (count - 1) // 4))
    for state, abbrev, postal, lat, lon in states[:n_states]:
        term = Term(
            world.authority_id(),
            "geographicPlaceName",
            state,
            state,
            f"Use for records concerning the State of {state} as a whole. Records about "
            f"a single county or town in {state} are indexed under that place.",
            broader=[nation.na_id],
            extra={"coordinates": f"{lat:.2f}, {lon:.2f}", "abbrev": abbrev, "postal": postal},
        )
        nation.narrower.append(term.na_id)
        world.unique(term.heading)
        world.states.append(term)
        world.geo.append(term)
    attempts = 0
    while len(world.geo) < count and attempts < count * 20:
        attempts += 1
        town = f"{rng.choice(TOWN_FIRST)} {rng.choice(TOWN_SECOND)}"
        if town in world.used_towns:
            continue
        state_term = rng.choice(world.states)
        heading = f"{town} ({state_term.extra['abbrev']})"
        if not world.unique(heading):
            continue
        world.used_towns.add(town)
        feature = rng.choice(("town", "farming community", "county seat", "river town"))
        topic = rng.choice(list(AGENCY_SUBJECTS))
        base_lat, base_lon = (float(x) for x in state_term.extra["coordinates"].split(", "))
        term = Term(
            world.authority_id(),
            "geographicPlaceName",
            heading,
            f"{town}, {state_term.label}",
            f"{town} is a {feature} in {state_term.label}. Use for records concerning the "
            f"town and its vicinity, including local {topic.lower()} work.",
            broader=[state_term.na_id],
            extra={
                "coordinates": f"{base_lat + rng.uniform(-1.5, 1.5):.4f}, "
                f"{base_lon + rng.uniform(-2, 2):.4f}",
                "town": town,
                "postal": state_term.extra["postal"],
            },
        )
        state_term.narrower.append(term.na_id)
        world.towns.append(term)
        world.geo.append(term)
    if len(world.towns) >= 2:
        for _ in range(max(1, len(world.towns) // 6)):
            a, b = rng.sample(world.towns, 2)
            if b.na_id not in a.related:
                a.related.append(b.na_id)
                b.related.append(a.na_id)


def make_records_types(world: World, count: int) -> None:
    """Specific records types, each narrower type after its broader one."""
    order: list[tuple[str, str | None]] = []
    for base, (narrower, _definition) in RECORDS_TYPES.items():
        order.append((base, None))
        order.extend((n, base) for n in narrower)
    by_heading: dict[str, Term] = {}
    for heading, parent in order[: max(count, 3)]:
        if parent is not None and parent not in by_heading:
            continue
        definition = RECORDS_TYPES.get(heading, ((), ""))[1] or (
            f"{heading.lower()}, a kind of {(parent or '').lower()}"
        )
        term = Term(
            world.authority_id(),
            "specificRecordsType",
            heading,
            heading.lower(),
            f"Use for {definition}, in any physical form.",
        )
        if parent is not None:
            broader = by_heading[parent]
            term.broader.append(broader.na_id)
            broader.narrower.append(term.na_id)
        world.unique(heading)
        by_heading[heading] = term
        world.records_types.append(term)


def make_topics(world: World, count: int) -> None:
    """Topical subjects from the taxonomy: whole small trees first, then subdivisions."""
    rng = world.rng
    tops = list(TOPIC_TAXONOMY)
    rng.shuffle(tops)
    # Whole small trees first, so even a few terms have broader/narrower links.
    order: list[tuple[str, str | None]] = []
    rest: list[tuple[str, str | None]] = []
    for top in tops:
        narrower = list(TOPIC_TAXONOMY[top])
        rng.shuffle(narrower)
        order.append((top, None))
        order.extend((n, top) for n in narrower[:2])
        rest.extend((n, top) for n in narrower[2:])
    order.extend(rest)
    for term_label, _parent in list(order):
        for subdivision in SUBDIVISIONS:
            order.append((f"{term_label}--{subdivision}", term_label))
    for label, parent in order:
        if len(world.topics) >= max(count, 3):
            break
        if parent is not None and parent not in world.topic_by_label:
            continue
        plain = label.replace("--", ", ")
        aspects = rng.sample(TOPIC_ASPECTS, 2)
        term = Term(
            world.authority_id(),
            "topicalSubject",
            label,
            plain.lower(),
            f"Use for records about {plain.lower()}, including {aspects[0]} and {aspects[1]}.",
        )
        if parent is not None:
            broader = world.topic_by_label[parent]
            term.broader.append(broader.na_id)
            broader.narrower.append(term.na_id)
        world.unique(label)
        world.topic_by_label[label] = term
        world.topics.append(term)
    for a, b in RELATED_TOPICS:
        if a in world.topic_by_label and b in world.topic_by_label:
            world.topic_by_label[a].related.append(world.topic_by_label[b].na_id)
            world.topic_by_label[b].related.append(world.topic_by_label[a].na_id)


def make_people(world: World, count: int) -> None:
    """People with unique headings and names; biographies come later (`link_people`)."""
    rng = world.rng
    attempts = 0
    while len(world.people) < count and attempts < count * 20:
        attempts += 1
        female = rng.random() < 0.4
        first = rng.choice(FIRST_FEMALE if female else FIRST_MALE)
        middle = rng.choice("ABCDEFGHJKLMNPRSTW")
        last = rng.choice(LAST)
        born = rng.randint(1860, 1935)
        died = born + rng.randint(45, 92)
        death = export_date(died, end=True) if died < 2015 else None
        heading = f"{last}, {first} {middle}., {born}-{died if death else ''}"
        if not world.unique(heading) or (first, last) in world.person_names:
            continue
        birth = export_date(born)
        world.people.append(
            Person(
                world.authority_id(),
                first,
                middle,
                last,
                female,
                birth,
                death,
                heading,
                "",
                title=rng.choice(PERSONAL_TITLES) if rng.random() < 0.2 else None,
            )
        )
        world.person_names.add((first, last))


def make_orgs(world: World, count: int) -> None:
    """Main agencies first (a third of them), then field offices of those agencies."""
    rng = world.rng
    subjects = list(AGENCY_SUBJECTS)
    rng.shuffle(subjects)
    mains: list[Org] = []
    n_mains = min(len(subjects), max(2, count // 3))
    attempts = 0
    while len(world.orgs) < count and attempts < count * 30:
        attempts += 1
        # A third are main agencies; the rest are field offices of one of them.
        if len(mains) < n_mains:
            subject = subjects[(len(mains) + attempts) % len(subjects)]
            kind = rng.choice(AGENCY_KINDS)
            short = f"{kind} of {subject}"
            org = make_main_org(world, short, subject)
            if org is None:
                continue
            mains.append(org)
        else:
            parent = rng.choice(mains)
            org_or_none = make_field_office(world, parent)
            if org_or_none is None:
                continue
            org = org_or_none
        world.orgs.append(org)
        if org.parent is not None:
            world.field_office_towns.add((org.parent, org.town))
        for name in org.names:
            world.org_by_name_id[name.na_id] = org


def make_main_org(world: World, short: str, subject: str) -> Org | None:
    """An agency under one to three names over time; None if a heading is taken."""
    rng = world.rng
    departments = rng.sample(DEPARTMENTS, 2)
    start = rng.randint(1903, 1948)
    transfer = start + rng.randint(4, 18)
    abolished = transfer + rng.randint(3, 30)
    n_names = rng.choice((1, 2, 2, 3))
    dates: list[tuple[dict[str, Any], dict[str, Any] | None, str]] = []
    if n_names == 1:
        end = export_date(abolished, 6, 30, end=True) if abolished < 1995 else None
        dates.append(
            (export_date(start, rng.randint(1, 12), rng.randint(1, 28)), end, departments[0])
        )
    else:
        first_end = export_date(transfer, 6, 30, end=True)
        dates.append((export_date(start, rng.randint(1, 12), 1), first_end, departments[0]))
        second_end = export_date(abolished, end=True) if abolished < 1995 else None
        dates.append((export_date(transfer, 7, 1), second_end, departments[1]))
        if n_names == 3 and second_end is not None:
            later = abolished + 1
            dates.append((export_date(later), None, departments[1]))
    names: list[OrgName] = []
    for index, (establish, abolish, department) in enumerate(dates):
        name = short if index < 2 else f"{subject} Administration"
        period = f"{slash_date(establish)}-{slash_date(abolish) if abolish else ''}"
        if index == len(dates) - 1 and abolish is None and rng.random() < 0.5:
            heading = f"{department}. {name}. ({slash_date(establish)} - )"
        else:
            heading = f"{department}. {name}. {period}"
        if not world.unique(heading):
            return None
        names.append(OrgName(world.authority_id(), name, heading, establish, abolish))
    topics = list(AGENCY_SUBJECTS[subject])
    town = rng.choice(world.towns).extra["town"] if world.towns else "Washington"
    history = org_history(world, short, names, topics, dates[0][2], town)
    org = Org(world.authority_id(), short, topics, names, history, town=town, display=short)
    if rng.random() < 0.2:
        # Some organizations list their current name under their own naId.
        org.na_id = names[-1].na_id
    org.variants = [f"{subject} {short.split(' of ')[0]}", f"U.S. {short}"]
    return org


def make_field_office(world: World, parent: Org) -> Org | None:
    """A field office of `parent` in a town; None if that office or heading exists."""
    rng = world.rng
    if not world.towns:
        return None
    town = rng.choice(world.towns).extra["town"]
    if (parent.na_id, town) in world.field_office_towns:
        return None
    unit = rng.choice(("Field Office", "District Office", "Regional Office", "Project Office"))
    name = f"{town} {unit}"
    base = parent.current
    start_year = base.establish["year"] + rng.randint(0, 6)
    establish = export_date(start_year)
    end_year = start_year + rng.randint(2, 12)
    abolish = export_date(end_year, end=True)
    parent_heading = re.sub(r"\.\s*\(?[\d/ ca.-]+\)?\s*$", "", base.heading)
    heading = f"{parent_heading}. {name}. {start_year}-{end_year}"
    if not world.unique(heading):
        return None
    names = [OrgName(world.authority_id(), name, heading, establish, abolish)]
    history = (
        f"The {name} of the {parent.short} was opened in {start_year} to direct "
        f"{parent.topics[0].lower()} work in the {town} area. "
        f"{paragraph(rng, parent.short, parent.topics[0], town, 2)}\n\n"
        f"The office was closed in {end_year}, and its files were sent to the central "
        f"office of the {parent.short}."
    )
    return Org(
        world.authority_id(),
        f"{parent.short}. {name}",
        parent.topics,
        names,
        history,
        town=town,
        display=f"{name} of the {parent.short}",
        parent=parent.na_id,
    )


def org_history(
    world: World,
    short: str,
    names: list[OrgName],
    topics: list[str],
    department: str,
    town: str,
) -> str:
    """The organization's administrative history note."""
    rng = world.rng
    first = names[0]
    established_by = rng.choice(ESTABLISHED_BY).format(
        n=rng.randint(6000, 9999), k=rng.randint(1, 5), year=first.establish["year"]
    )
    paragraphs = [
        f"The {short} was established in the {department} by {established_by}, effective "
        f"{human_date(first.establish)}, to carry out federal programs in "
        f"{topics[0].lower()}" + (f" and {topics[1].lower()}" if len(topics) > 1 else "") + ".",
        "Its staff was responsible for {}, for {}, and for {}.".format(*rng.sample(FIELD_WORK, 3))
        + f" Field work was directed from a district office at {town}.",
    ]
    for previous, name in itertools.pairwise(names):
        department_then = name.heading.split(". ")[0]
        paragraphs.append(
            f"Effective {human_date(name.establish)}, the {previous.name} was transferred "
            f"to the {department_then}"
            + (f" and renamed the {name.name}" if name.name != previous.name else "")
            + "."
        )
    last = names[-1]
    if last.abolish is not None:
        paragraphs.append(
            f"The {last.name} was abolished {on_date(last.abolish)}, and its "
            f"remaining functions were assigned to other offices of the "
            f"{last.heading.split('. ')[0]}."
        )
    return "\n\n".join(paragraphs)


def link_people(world: World) -> None:
    """Biographies, and the cross references between people and organizations."""
    rng = world.rng
    for person in world.people:
        org = rng.choice(world.orgs) if world.orgs else None
        if org is not None:
            person.orgs.append(org.na_id)
            if person.na_id not in org.people:
                org.people.append(person.na_id)
        person.biography = biography(world, person, org)
    for org in world.orgs:
        if world.geo:
            state = rng.choice(world.states) if world.states else world.geo[0]
            org.jurisdictions = [world.geo[0].na_id, state.na_id][: rng.choice((1, 2))]


def biography(world: World, person: Person, org: Org | None) -> str:
    """The person's biographical note, naming the organization they worked for."""
    rng = world.rng
    pronoun = person.pronoun
    town = rng.choice(world.towns).label if world.towns else "a small town"
    born = person.birth["year"]
    joined = born + rng.randint(22, 35)
    position = rng.choice(POSITIONS)
    agency = org.display if org is not None else "federal service"
    paragraphs = [
        f"{person.full} was born in {town} in {born}. {pronoun.capitalize()} studied at "
        f"{rng.choice(COLLEGES)} and taught school for several years.",
        f"In {joined} {pronoun} joined the {agency} as {position}, and later directed its "
        f"work on {(org.topics[0] if org else 'public works').lower()}. "
        f"{pronoun.capitalize()} wrote widely on the subject and testified before "
        f"congressional committees.",
    ]
    if person.death is not None:
        paragraphs.append(
            f"After retiring, {pronoun} returned to private life. {person.first} "
            f"{person.last} died in {person.death['year']}."
        )
    return "\n\n".join(paragraphs)

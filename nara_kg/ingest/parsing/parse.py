"""One record object -> a ParsedRecord: validation, properties, ancestors, references, stubs,
body text.

Decisions that the seed and the data leave open:

* Every description type also gets the creators fields, `ancestors` (nearest first) and
  `source`.
* A missing value is absent from the properties dict: never None, never "N/A", never an empty
  list. Lists keep only present values, so parallel lists need not line up.
* A reference entry's authority type is its own `authorityType` when that is one of the five
  authority types; otherwise the list implies it: `jurisdictions` -> geographicPlaceName (the
  geographicPlaceName row of the seed table is the only one with `jurisdiction_linkCounts`, so
  jurisdictions point at places), `organizationNames`/`organizationalReferences` ->
  organization, `personalReferences` -> person, `broaderTerms`/`narrowerTerms`/`relatedTerms` ->
  the holder's own type. Creators, contributors, subjects and donors without a usable
  `authorityType` keep `authority_type=None` and get no stub (the type cannot be guessed).
* `organizationNames[]` entries are the names an organization has had, each with its own naId;
  they are aliases of the organization, not separate authorities. They produce `Reference`s
  (rel `organizationName`, entries naming the record's own naId excluded) and
  `org_name_aliases`, but no stubs: a stub under an alias naId would capture the creator
  relationships that must resolve to the organization itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from nara_kg.ingest.parsing.dates import date_range
from nara_kg.ingest.parsing.fields import (
    BODY_TEXT_FIELD,
    COMPUTED_FIELDS,
    CREATOR_FIELDS,
    DATE_OBJECTS,
    FIELDS_BY_TYPE,
    IMPLIED_REFERENCE_TYPE,
    STRICT_LISTS,
    STRICT_OBJECTS,
    TERM_LISTS,
    spec_for,
)
from nara_kg.ingest.parsing.results import ParsedRecord, Reference, RejectRecord, StubRecord
from nara_kg.ingest.parsing.title_dates import title_dates
from nara_kg.ingest.parsing.values import (
    as_int,
    as_na_id,
    as_scalar,
    date_value,
    describe,
    extract,
    nonblank,
)
from nara_kg.model import schema
from nara_kg.model.schema import RecordKind

NO_RECORD_REASON: Final = (
    "no record object (expected {'record': ...} or {'_source': {'record': ...}})"
)

# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


def _validate_shapes(record: Mapping[str, Any]) -> None:
    for key, value in record.items():
        if value is None:
            continue
        if key in STRICT_LISTS and not isinstance(value, list):
            raise RejectRecord(f"wrong type: {key} is {describe(value)}, expected list")
        if key in STRICT_OBJECTS and not isinstance(value, dict):
            raise RejectRecord(f"wrong type: {key} is {describe(value)}, expected object")
        if key in DATE_OBJECTS and not isinstance(value, dict | str):
            raise RejectRecord(f"wrong type: {key} is {describe(value)}, expected date object")
    for key in ("title", "heading"):
        value = record.get(key)
        if value is not None and not isinstance(value, str):
            raise RejectRecord(f"wrong type: {key} is {describe(value)}, expected string")


def _record_type(record: Mapping[str, Any]) -> tuple[str, str]:
    """(record kind, node type), or RejectRecord."""
    kind = record.get("recordType")
    level = record.get("levelOfDescription")
    authority = record.get("authorityType")
    if kind is not None and kind not in (RecordKind.DESCRIPTION, RecordKind.AUTHORITY):
        raise RejectRecord(f"unknown type: recordType={kind!r}")
    if kind == RecordKind.AUTHORITY or (kind is None and level is None and authority is not None):
        if authority is None:
            raise RejectRecord("unknown type: authorityType is missing")
        if authority not in schema.AUTHORITY_TYPES:
            raise RejectRecord(f"unknown type: authorityType={authority!r}")
        return RecordKind.AUTHORITY.value, str(authority)
    if level is None:
        if kind is None:
            raise RejectRecord("unknown type: no levelOfDescription or authorityType")
        raise RejectRecord("unknown type: levelOfDescription is missing")
    if level not in schema.DESCRIPTION_TYPES:
        raise RejectRecord(f"unknown type: levelOfDescription={level!r}")
    return RecordKind.DESCRIPTION.value, str(level)


# --------------------------------------------------------------------------------------------
# Ancestors, references, stubs
# --------------------------------------------------------------------------------------------


def _sorted_ancestors(entries: Any) -> list[dict[str, Any]]:
    """Ancestor objects nearest first. The export lists them farthest first, but `distance` is
    what defines the order; without it on every entry, the export's order is reversed."""
    if not isinstance(entries, list):
        return []
    usable = [e for e in entries if isinstance(e, dict) and as_na_id(e.get("naId")) is not None]
    distances = [as_int(e.get("distance")) for e in usable]
    if usable and all(d is not None for d in distances):
        ordered = [e for _, e in sorted(zip(distances, range(len(usable)), strict=True))]
        result = [usable[i] for i in ordered]
    else:
        result = list(reversed(usable))
    seen: set[int] = set()
    unique = []
    for entry in result:
        na_id = as_na_id(entry.get("naId"))
        if na_id is not None and na_id not in seen:
            seen.add(na_id)
            unique.append(entry)
    return unique


def _reference_type(list_key: str, entry: Mapping[str, Any], holder_type: str) -> str | None:
    given = entry.get("authorityType")
    if given in schema.AUTHORITY_TYPES:
        return str(given)
    if list_key in TERM_LISTS:
        return holder_type if holder_type in schema.AUTHORITY_TYPES else None
    return IMPLIED_REFERENCE_TYPE.get(list_key)


def _references(
    record: Mapping[str, Any], holder_na_id: int, holder_type: str
) -> list[tuple[Reference, Mapping[str, Any]]]:
    """Every reference entry with a usable naId, with the entry it came from."""
    found: list[tuple[Reference, Mapping[str, Any]]] = []
    seen: set[tuple[str, int]] = set()
    for list_key, rel in schema.REFERENCE_LISTS.items():
        entries = record.get(list_key)
        if not isinstance(entries, list):
            continue
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            na_id = as_na_id(entry.get("naId"))
            if na_id is None or (rel.value, na_id) in seen:
                continue
            if list_key == "organizationNames" and na_id == holder_na_id:
                continue  # the organization's current name shares its naId: not a reference
            seen.add((rel.value, na_id))
            heading = nonblank(entry.get("heading")) or nonblank(entry.get("name"))
            reference = Reference(
                rel.value, na_id, heading, _reference_type(list_key, entry, holder_type)
            )
            found.append((reference, entry))
    return found


def _authority_stub(reference: Reference, entry: Mapping[str, Any]) -> StubRecord | None:
    if reference.authority_type is None:
        return None
    props: dict[str, Any] = {
        "naId": reference.na_id,
        "recordType": RecordKind.AUTHORITY.value,
        "authorityType": reference.authority_type,
        "source": schema.source_url(reference.na_id),
    }
    if reference.heading is not None:
        props["heading"] = reference.heading
    name = nonblank(entry.get("name"))
    if name is not None and reference.authority_type == "person":
        props["name"] = name
    # Dates that creators carry about the authority (person: the table's names; organization:
    # its establish/abolish dates, which a full organization record keeps per name).
    for key in ("birthDate", "deathDate", "establishDate", "abolishDate"):
        logical = date_value(entry.get(key))
        if logical is not None:
            props[f"logicalDate_{key}"] = logical
    return StubRecord(reference.na_id, reference.authority_type, props, reference.heading, None)


def _ancestor_stub(entry: Mapping[str, Any], farther: list[int]) -> StubRecord | None:
    na_id = as_na_id(entry.get("naId"))
    level = entry.get("levelOfDescription")
    if na_id is None or level not in schema.DESCRIPTION_TYPES:
        return None
    props: dict[str, Any] = {
        "naId": na_id,
        "recordType": RecordKind.DESCRIPTION.value,
        "levelOfDescription": str(level),
        "source": schema.source_url(na_id),
    }
    title = nonblank(entry.get("title"))
    if title is not None:
        props["title"] = title
    for key in ("inclusiveStartDate", "inclusiveEndDate", "coverageStartDate", "coverageEndDate"):
        logical = date_value(entry.get(key))
        if logical is not None:
            props[f"logicalDate_{key}"] = logical
    number = as_int(entry.get("recordGroupNumber"))
    if number is not None:
        props["recordGroupNumber"] = number
    identifier = as_scalar(entry.get("collectionIdentifier"))
    if identifier is not None:
        props["collectionIdentifier"] = identifier
    for name in CREATOR_FIELDS:
        value = extract(entry, name, spec_for(name))
        if value is not None:
            props[name] = value
    if farther:
        props["ancestors"] = list(farther)
    references = tuple(r for r, _ in _references(entry, na_id, str(level)) if r.rel == "creator")
    return StubRecord(
        na_id, str(level), props, title, farther[0] if farther else None, references=references
    )


# --------------------------------------------------------------------------------------------
# Body text
# --------------------------------------------------------------------------------------------


def _joined(texts: Iterable[Any]) -> str:
    return "\n\n".join(t.strip() for t in texts if isinstance(t, str) and t.strip())


def body_text(record: Mapping[str, Any], node_type: str, transcription: Any) -> str | None:
    if node_type in ("item", "fileUnit"):
        objects = record.get("digitalObjects") or []
        candidates = [
            _joined(o.get("extractedText") for o in objects if isinstance(o, dict)),
            (nonblank(record.get("scopeAndContentNote")) or "").strip(),
            _joined(t.get("contribution") for t in transcription or [] if isinstance(t, dict)),
        ]
        # Longest wins: OCR, a cataloguer's note and a volunteer transcription describe the
        # same pages, and the longest carries the most searchable text. Ties keep this order.
        best = max(candidates, key=len)
        return best or None
    field_name = BODY_TEXT_FIELD.get(node_type)
    if field_name is None:
        return None
    text = nonblank(record.get(field_name))
    return text.strip() if text else None


# --------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------


def unwrap(obj: Any) -> tuple[Mapping[str, Any], Any]:
    """(record object, record_transcription) from any of the three line shapes."""
    if not isinstance(obj, dict):
        raise RejectRecord(NO_RECORD_REASON)
    if "record" in obj:
        record = obj["record"]
        if not isinstance(record, dict):
            raise RejectRecord(f"no record object: 'record' is {describe(record)}, expected object")
        return record, obj.get("record_transcription")
    source = obj.get("_source")
    if isinstance(source, dict) and isinstance(source.get("record"), dict):
        return source["record"], source.get("record_transcription")
    if "naId" in obj and any(
        k in obj for k in ("recordType", "levelOfDescription", "authorityType")
    ):
        return obj, None  # a bare record object (Arke kept no wrapper)
    raise RejectRecord(NO_RECORD_REASON)


#: Levels whose titles state their dates ("Volume 740, June 6 - June 7, 1944").
TITLE_DATED_LEVELS: Final = frozenset({"fileUnit", "item"})
_OWN_DATE_PROPERTIES: Final = tuple(
    f"logicalDate_{key}"
    for key in ("inclusiveStartDate", "inclusiveEndDate", "coverageStartDate", "coverageEndDate")
)


def _title_date_properties(
    record: Mapping[str, Any], node_type: str, properties: Mapping[str, Any]
) -> dict[str, str]:
    """The dates the title states, for a file unit or item the catalog gives no dates (nor
    production dates): its own, where it would otherwise inherit its series' whole span."""
    if node_type not in TITLE_DATED_LEVELS or record.get("productionDates"):
        return {}
    if any(properties.get(name) for name in _OWN_DATE_PROPERTIES):
        return {}
    dates = title_dates(nonblank(record.get("title")))
    if dates is None:
        return {}
    return {
        schema.Prop.TITLE_START_DATE: dates.start.isoformat(),
        schema.Prop.TITLE_END_DATE: dates.end.isoformat(),
    }


def parse_record(
    record: Mapping[str, Any],
    transcription: Any = None,
    *,
    file_name: str = "",
    line_num: int = 0,
) -> ParsedRecord:
    """Flatten one record object. Raises ValueError with the reject reason for a bad record."""
    try:
        return flatten_record(record, transcription, file_name, line_num)
    except RejectRecord as exc:
        raise ValueError(str(exc)) from None


def flatten_record(
    record: Mapping[str, Any], transcription: Any, file_name: str, line_num: int
) -> ParsedRecord:
    """Flatten one record object; raises RejectRecord with the reason for a bad record."""
    raw_id = record.get("naId")
    if raw_id is None:
        raise RejectRecord("missing naId")
    na_id = as_na_id(raw_id)
    if na_id is None:
        raise RejectRecord(f"wrong type: naId is {describe(raw_id)}, expected integer")
    kind, node_type = _record_type(record)
    _validate_shapes(record)
    if transcription is not None and not isinstance(transcription, list):
        raise RejectRecord(
            f"wrong type: record_transcription is {describe(transcription)}, expected list"
        )

    properties: dict[str, Any] = {}
    for name, spec in FIELDS_BY_TYPE[node_type].items():
        if name in COMPUTED_FIELDS:
            continue
        value = extract(record, name, spec)
        if value is not None:
            properties[name] = value
    properties["naId"] = na_id
    properties["recordType"] = kind
    properties["levelOfDescription" if kind == "description" else "authorityType"] = node_type
    properties["source"] = schema.source_url(na_id)
    properties.update(_title_date_properties(record, node_type, properties))

    stubs: dict[int, StubRecord] = {}
    parent_na_id: int | None = None
    parent_title: str | None = None
    if kind == RecordKind.DESCRIPTION:
        ancestors = [a for a in _sorted_ancestors(record.get("ancestors")) if a is not None]
        ids = [as_na_id(a.get("naId")) for a in ancestors]
        chain = [i for i in ids if i is not None and i != na_id]
        if chain:
            properties["ancestors"] = chain
            parent = ancestors[ids.index(chain[0])]
            parent_na_id = chain[0]
            parent_title = nonblank(parent.get("title"))
        for position, entry in enumerate(ancestors):
            stub = _ancestor_stub(entry, [i for i in ids[position + 1 :] if i is not None])
            if stub is None or stub.na_id == na_id:
                continue
            stubs.setdefault(stub.na_id, stub)
            for creator in entry.get("creators") or []:
                _add_authority_stubs(stubs, creator, stub.na_id, stub.node_type, "creators")

    found = _references(record, na_id, node_type)
    for reference, reference_entry in found:
        if reference.rel == schema.Rel.ORGANIZATION_NAME or reference.na_id == na_id:
            continue
        authority = _authority_stub(reference, reference_entry)
        if authority is not None:
            _merge_stub(stubs, authority)

    aliases: list[int] = []
    if node_type == "organization":
        for entry in record.get("organizationNames") or []:
            alias = as_na_id(entry.get("naId")) if isinstance(entry, dict) else None
            if alias is not None and alias != na_id and alias not in aliases:
                aliases.append(alias)

    title_key = "title" if kind == RecordKind.DESCRIPTION else "heading"
    title = nonblank(record.get(title_key))
    if title is None and kind == RecordKind.AUTHORITY:
        title = nonblank(record.get("name"))
    return ParsedRecord(
        na_id=na_id,
        node_type=node_type,
        record_kind=kind,
        properties=properties,
        body_text=body_text(record, node_type, transcription),
        title=title,
        parent_na_id=parent_na_id,
        parent_title=parent_title,
        date_range=date_range(record, node_type),
        references=tuple(reference for reference, _ in found),
        stubs=tuple(stubs.values()),
        org_name_aliases=tuple(aliases),
        completeness=len(properties),
        file_name=file_name,
        line_num=line_num,
    )


def _add_authority_stubs(
    stubs: dict[int, StubRecord], entry: Any, holder: int, holder_type: str, list_key: str
) -> None:
    if not isinstance(entry, dict):
        return
    na_id = as_na_id(entry.get("naId"))
    if na_id is None or na_id == holder:
        return
    heading = nonblank(entry.get("heading")) or nonblank(entry.get("name"))
    rel = schema.REFERENCE_LISTS[list_key].value
    reference = Reference(rel, na_id, heading, _reference_type(list_key, entry, holder_type))
    stub = _authority_stub(reference, entry)
    if stub is not None:
        _merge_stub(stubs, stub)


def _merge_stub(stubs: dict[int, StubRecord], stub: StubRecord) -> None:
    """One stub per naId; a later sighting only adds properties the first one lacked."""
    known = stubs.get(stub.na_id)
    if known is None:
        stubs[stub.na_id] = stub
        return
    if known.node_type != stub.node_type:
        return
    missing = {k: v for k, v in stub.properties.items() if k not in known.properties}
    if missing:
        stubs[stub.na_id] = StubRecord(
            known.na_id,
            known.node_type,
            {**known.properties, **missing},
            known.title or stub.title,
            known.parent_na_id,
            known.references,
        )

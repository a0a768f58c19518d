"""Shaping what search, ask and the record query return into the API's models."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from neo4j import Driver

from nara_kg.api import models
from nara_kg.graph import search as cypher
from nara_kg.model.schema import Prop
from nara_kg.retrieval.cards import body_text, card_facts
from nara_kg.retrieval.response import AskResponse, Provenance

#: Children and described records listed per record (the counts give the totals).
RECORD_LIST_LIMIT = 200
#: Node properties that are machinery, not catalog data.
_INTERNAL_PROPERTIES = frozenset(
    {
        Prop.EMBEDDING,
        Prop.EMBEDDING_KEY,
        Prop.TEXT_HASH,
        Prop.ROW_HASH,
        Prop.TEXT,
        Prop.CHUNK_ID,
        Prop.CHUNK_SEQ_ID,
    }
)
#: Longest retrieved text returned with a search hit.
MAX_HIT_TEXT_CHARS = 4_000


def hierarchy(entries: list[dict[str, Any]]) -> list[models.HierarchyEntry]:
    return [
        models.HierarchyEntry.model_validate(
            {
                **{key: entry[key] for key in models.HierarchyEntry.model_fields if key in entry},
                "catalog_url": models.catalog_url(entry["naId"]),
            }
        )
        for entry in entries
        if entry and entry.get("naId") is not None
    ]


def authorities(entries: list[dict[str, Any]]) -> list[models.AuthorityLink]:
    return [
        models.AuthorityLink(
            relationship=entry["relationship"],
            naId=int(entry["naId"]),
            heading=entry.get("heading"),
            authorityType=entry.get("authorityType"),
            catalog_url=models.catalog_url(entry["naId"]),
        )
        for entry in entries
        if entry.get("naId") is not None
    ]


def record_hit(hit: dict[str, Any], *, with_text: bool = True) -> models.RecordHit:
    """A search hit (`SearchHit.to_dict()`, or an `ask` record) as the API returns it."""
    text = hit.get("text")
    return models.RecordHit(
        naId=int(hit["naId"]),
        title=hit.get("title"),
        type=hit.get("type") or "",
        record_type=hit.get("record_type"),
        date_start=hit.get("date_start"),
        date_end=hit.get("date_end"),
        dates_inherited=bool(hit.get("dates_inherited")),
        materials=list(hit.get("materials") or []),
        score=float(hit.get("score") or 0.0),
        catalog_url=models.catalog_url(hit["naId"]),
        is_stub=bool(hit.get("is_stub")),
        hierarchy=hierarchy(hit.get("hierarchy") or []),
        authorities=authorities(hit.get("authorities") or []),
        chunk_id=str(hit.get("chunk_id") or ""),
        vector_rank=hit.get("vector_rank"),
        fulltext_rank=hit.get("fulltext_rank"),
        text=text[:MAX_HIT_TEXT_CHARS] if with_text and isinstance(text, str) else None,
        excerpt=hit.get("excerpt"),
        card=models.RecordCard.model_validate(hit.get("card") or {}),
    )


def provenance(graph: Provenance) -> models.Provenance:
    """The subgraph, each record node with its catalog link."""
    nodes = []
    for node in graph.nodes:
        data = node.to_dict()
        if data.get("naId") is not None:
            data["catalog_url"] = models.catalog_url(data["naId"])
        nodes.append(models.ProvenanceNode.model_validate(data))
    return models.Provenance(
        nodes=nodes,
        relationships=[
            models.ProvenanceRelationship.model_validate(edge.to_dict())
            for edge in graph.relationships
        ],
    )


def ask_response(response: AskResponse) -> models.AskResponse:
    """`ask`'s JSON (:meth:`AskResponse.to_dict`), its records and provenance nodes with
    catalog links, the records without their retrieved text."""
    body = response.to_dict()
    body["records"] = [record_hit(hit.to_dict(), with_text=False) for hit in response.records]
    body["provenance"] = provenance(response.provenance)
    return models.AskResponse.model_validate(body)


def _ref(entry: dict[str, Any]) -> models.RecordRef:
    return models.RecordRef(
        naId=int(entry["naId"]),
        title=entry.get("title"),
        type=entry.get("nodeType"),
        relationship=entry.get("relationship"),
        date_start=entry.get("dateStart"),
        date_end=entry.get("dateEnd"),
        catalog_url=models.catalog_url(entry["naId"]),
    )


def record_detail(driver: Driver, database: str, na_id: int) -> models.RecordDetail | None:
    """The record, its hierarchy, children and authorities; None when there is no such naId."""
    row = cypher.record(driver, database, na_id, RECORD_LIST_LIMIT)
    if row is None:
        return None
    properties = {
        key: value
        for key, value in sorted(row["properties"].items())
        if key not in _INTERNAL_PROPERTIES
    }
    return models.RecordDetail(
        naId=int(row["naId"]),
        title=row["title"],
        type=row["nodeType"],
        record_type=row["recordType"],
        date_start=row["dateStart"],
        date_end=row["dateEnd"],
        dates_inherited=bool(row["datesInherited"] and row["dateStart"]),
        materials=list(row["materials"] or []),
        catalog_url=models.catalog_url(row["naId"]),
        is_stub=bool(row["isStub"]),
        text=body_text(row["textList"]),
        card=models.RecordCard.model_validate(asdict(card_facts(row["card"]))),
        properties=properties,
        hierarchy=hierarchy([h for h in row["hierarchy"] or [] if h]),
        children=[_ref(c) for c in row["children"] if c.get("naId") is not None],
        child_count=int(row["childCount"]),
        authorities=authorities(row["authorities"]),
        described_records=[_ref(d) for d in row["describedRecords"] if d.get("naId") is not None],
        described_count=int(row["describedCount"]),
    )

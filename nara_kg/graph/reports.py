"""Reading community context for reports, and storing reports on Community nodes."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from neo4j import Driver

from nara_kg.graph.batches import read_all, read_values, vector_values, write_batches, write_one
from nara_kg.graph.communities import COMMUNITY_RELATIONSHIPS
from nara_kg.graph.search import FILTER_PREDICATE
from nara_kg.model.schema import CommunityProp, Index, Label, MentionProp, Prop, Rel

#: Community properties, short: every statement below reads several.
_C = CommunityProp
_RELS = "|".join(COMMUNITY_RELATIONSHIPS)

COMMUNITIES = f"""
MATCH (c:{Label.COMMUNITY})
OPTIONAL MATCH (child:{Label.COMMUNITY})-[:{Rel.IN_COMMUNITY}]->(c)
RETURN c.{_C.ID} AS id, c.{_C.LEVEL} AS level, c.{_C.SIZE} AS size,
       c.{_C.MEMBER_HASH} AS memberHash, c.{_C.REPORT_CONTEXT_KEY} AS reportContextKey,
       c.{_C.REPORT_INPUT_KEY} AS reportInputKey, c.{_C.REPORT} AS report,
       c.{_C.REPORT_GENERATED_BY} AS reportGeneratedBy,
       c.{_C.REPORT_USED_SUB_REPORTS} AS reportUsedSubReports,
       c.{_C.REPORT_TRUNCATED} AS reportTruncated,
       c.{_C.SUMMARY_EMBEDDING_KEY} AS summaryEmbeddingKey,
       collect(child.{_C.ID}) AS children
ORDER BY c.{_C.LEVEL}, c.{_C.ID}
"""

#: Every community without its report: what decides which reports a run makes again
#: (`stale`: no report, or no summary vector of it made by `$model`).
COMMUNITY_OUTLINE = f"""
MATCH (c:{Label.COMMUNITY})
OPTIONAL MATCH (child:{Label.COMMUNITY})-[:{Rel.IN_COMMUNITY}]->(c)
RETURN c.{_C.ID} AS id, c.{_C.LEVEL} AS level, c.{_C.SIZE} AS size,
       c.{_C.MEMBER_HASH} AS memberHash,
       c.{_C.REPORT} IS NULL OR c.{_C.SUMMARY_EMBEDDING_KEY} IS NULL
         OR c.{_C.SUMMARY_EMBEDDING_KEY} <> $model + '|' + c.{_C.REPORT_CONTEXT_KEY} AS stale,
       collect(child.{_C.ID}) AS children
ORDER BY c.{_C.LEVEL}, c.{_C.ID}
"""

#: :data:`COMMUNITIES` of the given ids only.
COMMUNITIES_BY_ID = COMMUNITIES.replace(
    f"MATCH (c:{Label.COMMUNITY})\n",
    f"UNWIND $ids AS wanted\nMATCH (c:{Label.COMMUNITY} {{{_C.ID}: wanted}})\n",
    1,
)

#: The communities, at every level, that hold the given records.
COMMUNITIES_OF_RECORDS = f"""
UNWIND $naIds AS id
MATCH (:{Label.CHUNK} {{{Prop.CHUNK_ID}: toString(id) + '-0'}})
      -[:{Rel.IN_COMMUNITY}*1..12]->(c:{Label.COMMUNITY})
RETURN DISTINCT c.{_C.ID} AS id
"""

#: Every record under a community, directly or through its sub-communities, with its degree
#: in the projected graph (Includes + authority relationships), as GraphRAG ranks by degree.
_MEMBER = f"""{{
    naId: m.{Prop.NA_ID}, title: coalesce(m.{Prop.TITLE}, m.{Prop.HEADING}),
    nodeType: m.{Prop.NODE_TYPE}, text: m.{Prop.TEXT}, source: m.{Prop.SOURCE},
    degree: COUNT {{ (m)-[:{_RELS}]-(:{Label.CHUNK} {{{Prop.CHUNK_SEQ_ID}: 0}}) }}
}}"""

MEMBERS = f"""
MATCH (c:{Label.COMMUNITY} {{{_C.ID}: $id}})
MATCH (m:{Label.CHUNK})-[:{Rel.IN_COMMUNITY}*1..12]->(c)
RETURN {_MEMBER} AS member
"""

#: :data:`MEMBERS` for many communities in one round trip.
MEMBERS_OF_MANY = f"""
UNWIND $ids AS id
MATCH (c:{Label.COMMUNITY} {{{_C.ID}: id}})
MATCH (m:{Label.CHUNK})-[:{Rel.IN_COMMUNITY}*1..12]->(c)
RETURN id, collect({_MEMBER}) AS members
"""

#: :data:`MEMBERS_OF_MANY` without the rows: each community's members' naIds.
MEMBER_IDS_OF_MANY = f"""
UNWIND $ids AS id
MATCH (c:{Label.COMMUNITY} {{{_C.ID}: id}})
MATCH (m:{Label.CHUNK})-[:{Rel.IN_COMMUNITY}*1..12]->(c)
RETURN id, collect(m.{Prop.NA_ID}) AS naIds
"""

#: Everything a report reads of each given record (members are first chunks): its member row,
#: its degree over every relationship of the projection's types (a relationship's prominence
#: is the sum of its ends'), the records its relationships point at and the authorities its
#: chunks name (MENTIONED_IN), with the times named. One row per record, so that the rows can be
#: kept by naId between runs (:class:`KnownMembers`' store).
RECORD_PARTS = f"""
UNWIND $naIds AS id
MATCH (m:{Label.CHUNK} {{{Prop.CHUNK_ID}: toString(id) + '-0'}})
RETURN {_MEMBER} AS member,
       COUNT {{ (m)-[:{_RELS}]-() }} AS relDegree,
       COLLECT {{
           MATCH (m)-[r:{_RELS}]->(b:{Label.CHUNK}) WHERE b.{Prop.CHUNK_SEQ_ID} = 0
           RETURN [b.{Prop.NA_ID}, type(r)]
       }} AS outgoing,
       COLLECT {{
           MATCH (a:{Label.CHUNK})-[r:{Rel.MENTIONED_IN}]->(:{Label.CHUNK} {{{Prop.NA_ID}: id}})
           WITH a, sum(r.{MentionProp.COUNT}) AS count
           RETURN {{
               authority: a.{Prop.NA_ID}, heading: coalesce(a.{Prop.HEADING}, a.{Prop.TITLE}),
               type: a.{Prop.NODE_TYPE}, count: count
           }}
       }} AS mentions
"""

#: The `$limit` members of highest degree of each community, without their text: what the
#: provenance of a global answer shows (fetching every member's text cost most of the answer).
TOP_MEMBERS_OF_MANY = f"""
UNWIND $ids AS id
MATCH (c:{Label.COMMUNITY} {{{_C.ID}: id}})
CALL (c) {{
    MATCH (m:{Label.CHUNK})-[:{Rel.IN_COMMUNITY}*1..12]->(c)
    WITH DISTINCT m
    WITH m, COUNT {{ (m)-[:{_RELS}]-(:{Label.CHUNK} {{{Prop.CHUNK_SEQ_ID}: 0}}) }} AS degree
    ORDER BY degree DESC, m.{Prop.NA_ID}
    LIMIT $limit
    RETURN collect({{
        naId: m.{Prop.NA_ID}, title: coalesce(m.{Prop.TITLE}, m.{Prop.HEADING}),
        nodeType: m.{Prop.NODE_TYPE}, source: m.{Prop.SOURCE}, degree: degree
    }}) AS members
}}
RETURN id, members
"""

WRITE_REPORTS = f"""
UNWIND $rows AS row
MATCH (c:{Label.COMMUNITY} {{{_C.ID}: row.id}})
SET c.{_C.TITLE} = row.title, c.{_C.SUMMARY} = row.summary, c.{_C.RATING} = row.rating,
    c.{_C.RATING_EXPLANATION} = row.rating_explanation, c.{_C.FINDINGS} = row.findings,
    c.{_C.REPORT} = row.report, c.{_C.REPORT_GENERATED_BY} = row.generatedBy,
    c.{_C.REPORT_CONTEXT_KEY} = row.contextKey, c.{_C.TOP_MEMBERS} = row.topMembers,
    c.{_C.REPORT_INPUT_KEY} = row.inputKey, c.{_C.REPORT_USED_SUB_REPORTS} = row.usedSubReports,
    c.{_C.REPORT_TRUNCATED} = row.truncated
"""

#: What a community's summary embedding encodes: its title and summary (the text
#: :func:`nara_kg.generation.report_rows.summary_embedding_text` makes from a report).
PENDING_SUMMARY_EMBEDDINGS = f"""
MATCH (c:{Label.COMMUNITY}) WHERE c.{_C.SUMMARY} IS NOT NULL
  AND (c.{_C.SUMMARY_EMBEDDING_KEY} IS NULL
       OR c.{_C.SUMMARY_EMBEDDING_KEY} <> $model + '|' + c.{_C.REPORT_CONTEXT_KEY})
RETURN c.{_C.ID} AS id, c.{_C.TITLE} + '. ' + c.{_C.SUMMARY} AS text,
       c.{_C.REPORT_CONTEXT_KEY} AS key
"""

WRITE_SUMMARY_EMBEDDINGS = f"""
UNWIND $rows AS row
MATCH (c:{Label.COMMUNITY} {{{_C.ID}: row.id}})
CALL db.create.setNodeVectorProperty(c, '{_C.SUMMARY_EMBEDDING}', row.vector)
SET c.{_C.SUMMARY_EMBEDDING_KEY} = row.key
"""

#: Communities with no report, or whose summary vector is not of their report and this model.
STALE_REPORTS = f"""
MATCH (c:{Label.COMMUNITY})
WHERE c.{_C.REPORT} IS NULL OR c.{_C.SUMMARY_EMBEDDING_KEY} IS NULL
   OR c.{_C.SUMMARY_EMBEDDING_KEY} <> $model + '|' + c.{_C.REPORT_CONTEXT_KEY}
RETURN count(c) AS stale
"""

REPORTS_OF_LEVEL = f"""
MATCH (c:{Label.COMMUNITY})
WHERE c.{_C.REPORT} IS NOT NULL AND ($level IS NULL OR c.{_C.LEVEL} = $level)
RETURN c.{_C.ID} AS id, c.{_C.LEVEL} AS level, c.{_C.SIZE} AS size, c.{_C.REPORT} AS report,
       c.{_C.REPORT_GENERATED_BY} AS generatedBy, c.{_C.TOP_MEMBERS} AS topMembers
ORDER BY c.{_C.ID}
"""

#: :data:`REPORTS_OF_LEVEL` restricted to communities holding at least one record that passes
#: the search filters (the predicate and its parameters are local search's).
REPORTS_MATCHING = f"""
MATCH (c:{Label.COMMUNITY}) WHERE c.{_C.REPORT} IS NOT NULL AND c.{_C.LEVEL} = $level
  AND EXISTS {{
    MATCH (first:{Label.CHUNK})-[:{Rel.IN_COMMUNITY}*1..12]->(c)
    WHERE {FILTER_PREDICATE}
  }}
RETURN c.{_C.ID} AS id, c.{_C.LEVEL} AS level, c.{_C.SIZE} AS size, c.{_C.REPORT} AS report,
       c.{_C.REPORT_GENERATED_BY} AS generatedBy, c.{_C.TOP_MEMBERS} AS topMembers
ORDER BY c.{_C.ID}
"""

#: naIds per read of :data:`RECORD_PARTS` or of a store.
_KEYS_PER_READ = 5_000

LEVELS = (
    f"MATCH (c:{Label.COMMUNITY}) WHERE c.{_C.REPORT} IS NOT NULL "
    f"RETURN c.{_C.LEVEL} AS level, count(*) AS reports ORDER BY level"
)


def communities(driver: Driver, database: str) -> Sequence[dict[str, Any]]:
    return read_values(driver, database, COMMUNITIES)


def community_outline(driver: Driver, database: str, model_key: str) -> list[dict[str, Any]]:
    """:data:`COMMUNITY_OUTLINE`: every community, coarse facts only, finest level first."""
    return [dict(row) for row in read_values(driver, database, COMMUNITY_OUTLINE, model=model_key)]


def communities_by_id(driver: Driver, database: str, ids: Sequence[str]) -> list[dict[str, Any]]:
    """:data:`COMMUNITIES_BY_ID`, finest level first (the order of :func:`communities`)."""
    rows: list[dict[str, Any]] = []
    for start in range(0, len(ids), 10_000):
        batch = list(ids[start : start + 10_000])
        rows += read_values(driver, database, COMMUNITIES_BY_ID, ids=batch)
    return sorted(rows, key=lambda row: (row["level"], row["id"]))


def communities_of_records(driver: Driver, database: str, na_ids: Sequence[int]) -> set[str]:
    """The ids of the communities holding any of `na_ids`, at every level."""
    rows = read_values(driver, database, COMMUNITIES_OF_RECORDS, naIds=list(na_ids))
    return {str(row["id"]) for row in rows}


def member_ids_of_many(
    driver: Driver, database: str, community_ids: Sequence[str]
) -> dict[str, frozenset[int]]:
    """Each community's members' naIds, through its sub-communities."""
    return {
        str(row["id"]): frozenset(int(na_id) for na_id in row["naIds"])
        for row in read_values(driver, database, MEMBER_IDS_OF_MANY, ids=list(community_ids))
    }


def stale_reports(driver: Driver, database: str, model_key: str) -> int:
    """How many communities lack a report, or a summary vector of it made by `model_key`."""
    return int(read_values(driver, database, STALE_REPORTS, model=model_key)[0]["stale"])


def members(driver: Driver, database: str, community_id: str) -> Sequence[dict[str, Any]]:
    return [row["member"] for row in read_all(driver, database, MEMBERS, id=community_id)]


class RecordPartsStore(Protocol):
    """Where :class:`KnownMembers` keeps records' parts between runs (naId -> the parts of
    :func:`record_parts`); the caller drops the records whose parts may have changed."""

    def get_many(self, na_ids: Sequence[int]) -> dict[int, dict[str, Any]]: ...

    def put_many(self, parts: Mapping[int, dict[str, Any]]) -> None: ...


def record_parts(row: Mapping[str, Any]) -> dict[str, Any]:
    """One row of :data:`RECORD_PARTS` as kept: member row, degree, (target, type) pairs sorted,
    mention rows sorted by authority (the graph returns both in its store's order)."""
    return {
        "member": dict(row["member"]),
        "relDegree": int(row["relDegree"]),
        "outgoing": sorted([int(target), str(rel_type)] for target, rel_type in row["outgoing"]),
        "mentions": sorted(
            (dict(mention) for mention in row["mentions"]), key=lambda m: int(m["authority"])
        ),
    }


@dataclass
class KnownMembers:
    """Records' parts read once per run, and with a `store` kept between runs: Leiden's levels
    nest, so every level's communities hold the same records, and a coarse community in the
    scope of a small change holds most records. Each record's member row, degree, outgoing
    relationships and mentions are read from the graph once, the first time a community holds
    it (taken from `store` when kept there), and a community's relationships and rows are made
    from these in memory: a relationship's titles and degree come from its ends' parts, so a
    record's kept parts hold nothing of another record that could change without it.
    `shape` is applied to each member row as read (what of it is kept)."""

    rows: dict[int, dict[str, Any]] = field(default_factory=dict)
    rel_degrees: dict[int, int] = field(default_factory=dict)
    outgoing: dict[int, tuple[tuple[int, str], ...]] = field(default_factory=dict)
    mentions: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    store: RecordPartsStore | None = None
    shape: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    #: Community id -> its members' naIds, where the caller knows them (a coarse community's
    #: are its sub-communities'): :meth:`of_many` reads the others' from the graph.
    member_ids: dict[str, frozenset[int]] = field(default_factory=dict)
    #: Records whose parts were read from the graph, and those taken from the store.
    read_from_graph: int = 0
    read_from_store: int = 0
    #: Communities whose members' naIds were read from the graph.
    memberships_read: int = 0

    def ensure(self, driver: Driver, database: str, na_ids: Iterable[int]) -> None:
        """Have the parts of these records (those in the graph), reading only the new ones."""
        missing = sorted({int(n) for n in na_ids} - self.rows.keys())
        if missing and self.store is not None:
            for start in range(0, len(missing), _KEYS_PER_READ):
                kept = self.store.get_many(missing[start : start + _KEYS_PER_READ])
                for na_id, parts in kept.items():
                    self._keep(na_id, parts)
                self.read_from_store += len(kept)
            missing = [n for n in missing if n not in self.rows]
        for start in range(0, len(missing), _KEYS_PER_READ):
            batch = missing[start : start + _KEYS_PER_READ]
            read: dict[int, dict[str, Any]] = {}
            for row in read_values(driver, database, RECORD_PARTS, naIds=batch):
                parts = record_parts(row)
                if self.shape is not None:
                    parts["member"] = self.shape(parts["member"])
                na_id = int(parts["member"]["naId"])
                read[na_id] = parts
                self._keep(na_id, parts)
            self.read_from_graph += len(read)
            if self.store is not None and read:
                self.store.put_many(read)

    def _keep(self, na_id: int, parts: Mapping[str, Any]) -> None:
        self.rows[na_id] = parts["member"]
        self.rel_degrees[na_id] = int(parts["relDegree"])
        self.outgoing[na_id] = tuple(
            (int(target), sys.intern(str(rel_type))) for target, rel_type in parts["outgoing"]
        )
        self.mentions[na_id] = [{"record": na_id, **mention} for mention in parts["mentions"]]

    def of_many(
        self, driver: Driver, database: str, community_ids: Sequence[str]
    ) -> dict[str, list[dict[str, Any]]]:
        unknown = [cid for cid in community_ids if cid not in self.member_ids]
        found = {
            row["id"]: sorted(int(na_id) for na_id in row["naIds"])
            for row in (
                read_values(driver, database, MEMBER_IDS_OF_MANY, ids=unknown) if unknown else []
            )
        }
        self.memberships_read += len(unknown)
        for cid in community_ids:
            if cid in self.member_ids:
                found[cid] = sorted(self.member_ids.pop(cid))
        self.ensure(driver, database, (n for na_ids in found.values() for n in na_ids))
        return {
            community_id: [self.rows[n] for n in found.get(community_id, []) if n in self.rows]
            for community_id in community_ids
        }

    def within(self, na_ids: Sequence[int]) -> list[dict[str, Any]]:
        """The relationships between the given (read) records: source, sourceTitle, target,
        type, targetTitle, degree (the sum of both ends' degrees)."""
        inside = set(na_ids)
        rows = self.rows
        return [
            {
                "source": source,
                "sourceTitle": rows[source]["title"],
                "target": target,
                "type": rel_type,
                "targetTitle": rows[target]["title"],
                "degree": self.rel_degrees[source] + self.rel_degrees[target],
            }
            for source in na_ids
            if source in rows
            for target, rel_type in self.outgoing.get(source, ())
            if target in inside and target in rows
        ]


def members_of_many(
    driver: Driver,
    database: str,
    community_ids: Sequence[str],
    known: KnownMembers | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Members per community id, for many communities in one query; with `known`, each
    record's row is read once across calls (:class:`KnownMembers`)."""
    if not community_ids:
        return {}
    if known is not None:
        return known.of_many(driver, database, community_ids)
    rows = read_values(driver, database, MEMBERS_OF_MANY, ids=list(community_ids))
    found = {row["id"]: list(row["members"]) for row in rows}
    return {community_id: found.get(community_id, []) for community_id in community_ids}


def top_members_of_many(
    driver: Driver, database: str, community_ids: Sequence[str], limit: int
) -> dict[str, list[dict[str, Any]]]:
    """The `limit` members of highest degree per community id (ties by naId), without text."""
    if not community_ids:
        return {}
    rows = read_values(driver, database, TOP_MEMBERS_OF_MANY, ids=list(community_ids), limit=limit)
    found = {row["id"]: list(row["members"]) for row in rows}
    return {community_id: found.get(community_id, []) for community_id in community_ids}


def relationships_within(
    driver: Driver,
    database: str,
    groups: dict[str, list[int]],
    known: KnownMembers | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """For each community (id -> member naIds), the relationships between its members; `known`
    keeps what was read for the next call (the next level)."""
    known = KnownMembers() if known is None else known
    known.ensure(driver, database, (na_id for na_ids in groups.values() for na_id in na_ids))
    return {community_id: known.within(na_ids) for community_id, na_ids in groups.items()}


def mentions_of_records(
    driver: Driver, database: str, na_ids: Sequence[int], known: KnownMembers | None = None
) -> dict[int, list[dict[str, Any]]]:
    """Per record naId, the authorities its chunks name (authority, heading, type, count);
    records that name none are left out."""
    known = KnownMembers() if known is None else known
    known.ensure(driver, database, na_ids)
    return {n: known.mentions[n] for n in sorted(set(na_ids)) if known.mentions.get(n)}


def write_reports(driver: Driver, database: str, rows: list[dict[str, Any]]) -> int:
    return write_batches(driver, database, WRITE_REPORTS, rows, batch_size=200)


def pending_summary_embeddings(
    driver: Driver, database: str, model_key: str
) -> Sequence[dict[str, Any]]:
    return read_all(driver, database, PENDING_SUMMARY_EMBEDDINGS, model=model_key)


def write_summary_embeddings(driver: Driver, database: str, rows: list[dict[str, Any]]) -> int:
    """Rows are ``{"id", "vector", "key"}``."""
    payload = [{**row, "vector": vector_values(row["vector"])} for row in rows]
    return write_batches(driver, database, WRITE_SUMMARY_EMBEDDINGS, payload, batch_size=200)


def ensure_summary_index(driver: Driver, database: str, dimensions: int) -> None:
    write_one(
        driver,
        database,
        f"CREATE VECTOR INDEX {Index.SUMMARY} IF NOT EXISTS "
        f"FOR (c:{Label.COMMUNITY}) ON (c.{_C.SUMMARY_EMBEDDING}) "
        "OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, "
        "`vector.similarity_function`: 'cosine'}}",
        dimensions=dimensions,
    )
    write_one(driver, database, "CALL db.awaitIndex($name, 300)", name=Index.SUMMARY)


def reports(driver: Driver, database: str, level: int | None = None) -> Sequence[dict[str, Any]]:
    return read_all(driver, database, REPORTS_OF_LEVEL, level=level)


def reports_per_level(driver: Driver, database: str) -> dict[int, int]:
    return {int(r["level"]): int(r["reports"]) for r in read_all(driver, database, LEVELS)}


def reports_matching(
    driver: Driver, database: str, level: int, filters: dict[str, Any]
) -> Sequence[dict[str, Any]]:
    """The reports of `level` whose community holds at least one record that passes the search
    filters (parameters of `graph.search.FILTER_PREDICATE`)."""
    return read_all(driver, database, REPORTS_MATCHING, level=level, **filters)

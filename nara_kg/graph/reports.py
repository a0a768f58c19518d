"""Reading community context for reports, and storing reports on Community nodes."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
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

#: The member rows of the given records (members are first chunks).
MEMBER_ROWS = f"""
UNWIND $naIds AS id
MATCH (m:{Label.CHUNK} {{{Prop.CHUNK_ID}: toString(id) + '-0'}})
RETURN {_MEMBER} AS member
"""

#: What tells whether a member's row is as it was (its node's row hash), with its degree (which
#: moves with its neighbours' edges, not with its row), without its text.
MEMBER_KEYS = f"""
UNWIND $naIds AS id
MATCH (m:{Label.CHUNK} {{{Prop.CHUNK_ID}: toString(id) + '-0'}})
RETURN m.{Prop.NA_ID} AS naId, m.{Prop.ROW_HASH} AS rowHash,
       COUNT {{ (m)-[:{_RELS}]-(:{Label.CHUNK} {{{Prop.CHUNK_SEQ_ID}: 0}}) }} AS degree
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

#: Relationships leaving the given first chunks (target naId and type); the caller keeps those
#: whose target is in the same community and takes both ends' titles and degrees from their
#: member rows (:data:`MEMBER_ROWS`), which hold the same values. One row per source record
#: (its relationships as a list): a row per relationship cost more in the driver than the query.
RELATIONSHIPS_FROM = f"""
UNWIND $naIds AS id
MATCH (a:{Label.CHUNK} {{{Prop.NA_ID}: id, {Prop.CHUNK_SEQ_ID}: 0}})-[r:{_RELS}]->(b:{Label.CHUNK})
WHERE b.{Prop.CHUNK_SEQ_ID} = 0
RETURN id AS source, collect([b.{Prop.NA_ID}, type(r)]) AS outgoing
"""

#: The authorities named in the given records' chunks (MENTIONED_IN), with the times named;
#: one row per record.
MENTIONS_OF_RECORDS = f"""
UNWIND $naIds AS id
MATCH (a:{Label.CHUNK})-[r:{Rel.MENTIONED_IN}]->(:{Label.CHUNK} {{{Prop.NA_ID}: id}})
WITH id, a, sum(r.{MentionProp.COUNT}) AS count
RETURN id AS record, collect({{
    authority: a.{Prop.NA_ID}, heading: coalesce(a.{Prop.HEADING}, a.{Prop.TITLE}),
    type: a.{Prop.NODE_TYPE}, count: count
}}) AS mentions
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


class MemberFields(Protocol):
    """What a report keeps of a member's row (:class:`KnownMembers`' `fields`)."""

    def derive(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """The row a report uses, made from a :data:`MEMBER_ROWS` row (with its text)."""
        ...

    def known(self, keys: Sequence[tuple[int, str]]) -> dict[int, dict[str, Any]]:
        """The derived rows remembered for these (naId, row hash) pairs, by naId (those
        remembered from a row of the same hash only)."""
        ...

    def remember(self, rows: Sequence[tuple[int, str, dict[str, Any]]]) -> None:
        """Keep derived rows (degree included) by (naId, row hash)."""
        ...

    def settled(self, na_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        """The derived rows remembered for those of these records whose row and edges (so
        degree) have not changed since they were remembered, by naId; these are not read."""
        ...


@dataclass
class KnownMembers:
    """Member rows read once per run: the graph's community tree nests, so every level's
    communities hold the same records, and reading each level's members with their text read
    every record's row once per level. Coarser levels read their members' naIds and only the
    rows not read yet (records that joined a community at that level).

    With `fields`, rows are what it derives from them: a record `fields` holds as settled is
    not read at all, and one whose node's row hash is one it remembers is not read with its
    text, only its naId, row hash and degree (:data:`MEMBER_KEYS`), so a run reads the text of
    the records whose rows changed and the keys of those whose rows or edges may have."""

    rows: dict[int, dict[str, Any]] = field(default_factory=dict)
    fields: MemberFields | None = None
    #: Records whose rows were read with their text.
    read_with_text: int = 0
    #: Records whose row hash and degree were read (all but the settled ones).
    keys_read: int = 0

    def of_many(
        self,
        driver: Driver,
        database: str,
        community_ids: Sequence[str],
        member_ids: Mapping[str, Sequence[int]] | None = None,
    ) -> dict[str, list[dict[str, Any]]]:
        """`member_ids`: the members' naIds of those communities whose members the caller
        knows (from their sub-communities'): only the others' are read."""
        given = member_ids or {}
        found = {cid: list(given[cid]) for cid in community_ids if cid in given}
        to_read = [cid for cid in community_ids if cid not in given]
        if to_read:
            found.update(
                (row["id"], [int(na_id) for na_id in row["naIds"]])
                for row in read_values(driver, database, MEMBER_IDS_OF_MANY, ids=to_read)
            )
        missing = sorted({n for na_ids in found.values() for n in na_ids} - self.rows.keys())
        if missing and self.fields is not None:
            self._read_through(driver, database, missing, self.fields)
        elif missing:
            self.read_with_text += len(missing)
            for row in read_values(driver, database, MEMBER_ROWS, naIds=missing):
                member = row["member"]
                self.rows[int(member["naId"])] = member
        return {
            community_id: [self.rows[n] for n in found.get(community_id, []) if n in self.rows]
            for community_id in community_ids
        }

    def _read_through(
        self, driver: Driver, database: str, na_ids: Sequence[int], fields: MemberFields
    ) -> None:
        settled = fields.settled(na_ids)
        self.rows.update(settled)
        to_read = [n for n in na_ids if n not in settled]
        if not to_read:
            return
        self.keys_read += len(to_read)
        keys = {
            int(row["naId"]): (row["rowHash"], int(row["degree"]))
            for row in read_values(driver, database, MEMBER_KEYS, naIds=to_read)
        }
        known = fields.known([(n, h) for n, (h, _) in keys.items() if h is not None])
        remembered = []
        for na_id, derived in known.items():
            row_hash, degree = keys[na_id]
            member = self.rows[na_id] = {**derived, "naId": na_id, "degree": degree}
            if member != derived:  # its degree moved: what is remembered is the row as it is now
                remembered.append((na_id, row_hash, member))
        unknown = [n for n in keys if n not in known]
        self.read_with_text += len(unknown)
        for row in read_values(driver, database, MEMBER_ROWS, naIds=unknown) if unknown else ():
            member = fields.derive(row["member"])
            na_id = int(member["naId"])
            self.rows[na_id] = member
            row_hash = keys[na_id][0]
            if row_hash is not None:
                remembered.append((na_id, row_hash, member))
        fields.remember(remembered)


def members_of_many(
    driver: Driver,
    database: str,
    community_ids: Sequence[str],
    known: KnownMembers | None = None,
    member_ids: Mapping[str, Sequence[int]] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Members per community id, for many communities in one query; with `known`, each
    record's row is read once across calls (:class:`KnownMembers`), and the communities in
    `member_ids` (their members' naIds, known to the caller) are not asked for their members."""
    if not community_ids:
        return {}
    if known is not None:
        return known.of_many(driver, database, community_ids, member_ids)
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


#: A record's relationships to other records: (target naId, type) each.
Outgoing = tuple[tuple[int, str], ...]


@dataclass
class OutgoingRelationships:
    """Records' relationships to other records (target naId, type), read once per run: the
    graph's community tree nests, so every level's communities hold the same records, and
    reading them per level read every relationship once per level (four times here). A
    relationship's titles and degree are its ends' (their member rows'), so a record's
    outgoing list changes only with its own edges: the caller may :meth:`adopt` lists it kept
    from an earlier run for records whose edges did not change since, and keeps
    :meth:`take_read` for the next."""

    outgoing: dict[int, Outgoing] = field(default_factory=dict)
    #: Records read from the graph since the last :meth:`take_read`.
    _read: dict[int, Outgoing] = field(default_factory=dict)

    def missing(self, na_ids: Iterable[int]) -> list[int]:
        """The records whose relationships are not known yet."""
        return sorted({na_id for na_id in na_ids if na_id not in self.outgoing})

    def adopt(self, outgoing: Mapping[int, Outgoing]) -> None:
        """Take records' relationships known from elsewhere (not read again)."""
        self.outgoing.update(outgoing)

    def read(self, driver: Driver, database: str, na_ids: Iterable[int]) -> None:
        """Read the records not known yet."""
        missing = self.missing(na_ids)
        if not missing:
            return
        found: dict[int, Outgoing] = {na_id: () for na_id in missing}
        for row in read_values(driver, database, RELATIONSHIPS_FROM, naIds=missing):
            found[int(row["source"])] = tuple(
                (int(target), sys.intern(str(rel_type))) for target, rel_type in row["outgoing"]
            )
        self.outgoing.update(found)
        self._read.update(found)

    def take_read(self) -> dict[int, Outgoing]:
        """The records read from the graph since the last call."""
        read, self._read = self._read, {}
        return read

    def within(
        self, na_ids: Sequence[int], members: Mapping[int, Mapping[str, Any]]
    ) -> list[dict[str, Any]]:
        """The relationships between the given (read) records, as rows of source, sourceTitle,
        target, type, targetTitle and degree (the sum of both ends'); `members`: naId -> its
        member row (title and degree), for every record in `na_ids`."""
        inside = set(na_ids)
        rows = []
        for source in na_ids:
            edges = self.outgoing.get(source, ())
            if not edges:
                continue
            source_row = members[source]
            for target, rel_type in edges:
                if target in inside:
                    target_row = members[target]
                    rows.append(
                        {
                            "source": source,
                            "sourceTitle": source_row["title"],
                            "target": target,
                            "type": rel_type,
                            "targetTitle": target_row["title"],
                            "degree": int(source_row["degree"]) + int(target_row["degree"]),
                        }
                    )
        return rows


def relationships_within(
    driver: Driver,
    database: str,
    groups: dict[str, list[int]],
    members: Mapping[int, Mapping[str, Any]],
    known: OutgoingRelationships | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """For each community (id -> member naIds), the relationships between its members
    (`members`: naId -> member row, for their titles and degrees); `known` keeps what was read
    for the next call (the next level)."""
    known = OutgoingRelationships() if known is None else known
    known.read(driver, database, (na_id for na_ids in groups.values() for na_id in na_ids))
    return {community_id: known.within(na_ids, members) for community_id, na_ids in groups.items()}


def mentions_of_records(
    driver: Driver, database: str, na_ids: Sequence[int]
) -> dict[int, list[dict[str, Any]]]:
    """Per record naId, the authorities its chunks name (rows of :data:`MENTIONS_OF_RECORDS`)."""
    wanted = sorted(set(na_ids))
    found: dict[int, list[dict[str, Any]]] = {}
    if wanted:
        for row in read_values(driver, database, MENTIONS_OF_RECORDS, naIds=wanted):
            found[int(row["record"])] = [
                {"record": row["record"], **mention} for mention in row["mentions"]
            ]
    return found


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

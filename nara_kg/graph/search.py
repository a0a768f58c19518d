"""Retrieval Cypher: seed 000's query, made hybrid (vector + full-text candidates).

The seed widened each vector hit by one `Next` chunk on each side, walked `Includes` up to the
root of the hierarchy and collected related authorities; it joined texts with `apoc.text.join`,
which this server does not have, so the join happens in Python.

The search filters are one static predicate over a record's first chunk (`FILTER_PREDICATE`)
whose unset parts are null parameters, so no request text ever becomes Cypher.
"""

from __future__ import annotations

from typing import Any

from neo4j import Driver

from nara_kg.graph.batches import ListedRead, read_all, read_listed
from nara_kg.model.schema import AUTHORITY_RELATIONSHIPS, Index, Label, Prop, Rel

_TEXT = Label.RECORD_WITH_TEXT
_AUTHORITY_TYPES = "|".join(rel.value for rel in AUTHORITY_RELATIONSHIPS)


def _first_chunk(na_id: str) -> str:
    """The properties that find a record's first chunk by its unique id (`chunk_id(naId, 0)`,
    `<naId>-0`): one lookup in the constraint's index, where `naId` + `chunkSeqId` read every
    chunk of the record (searches were 0.4 ms faster at p50 and p95)."""
    return f"{{{Prop.CHUNK_ID}: toString({na_id}) + '-0'}}"


#: A record's own dates as (start, end) strings (ISO `logicalDate`s compare as text): inclusive
#: dates, else coverage dates, else the span of its production dates; an open end is its start.
_PRODUCTION_FIRST = (
    "reduce(m = null, d IN coalesce({n}.logicalDate_productionDates, []) | "
    "CASE WHEN m IS NULL OR d < m THEN d ELSE m END)"
)
_PRODUCTION_LAST = (
    "reduce(m = null, d IN coalesce({n}.logicalDate_productionDates, []) | "
    "CASE WHEN m IS NULL OR d > m THEN d ELSE m END)"
)


def _own_start(n: str) -> str:
    """A record's own start date: the catalog's, else the one its title states (a diary
    volume's "June 6 - June 7, 1944"), else its first production date, else its end."""
    return (
        f"coalesce({n}.logicalDate_inclusiveStartDate, {n}.logicalDate_coverageStartDate, "
        f"{n}.{Prop.TITLE_START_DATE}, "
        f"{_PRODUCTION_FIRST.format(n=n)}, {n}.logicalDate_inclusiveEndDate, "
        f"{n}.logicalDate_coverageEndDate, {n}.{Prop.TITLE_END_DATE})"
    )


def _own_end(n: str) -> str:
    return (
        f"coalesce({n}.logicalDate_inclusiveEndDate, {n}.logicalDate_coverageEndDate, "
        f"{n}.{Prop.TITLE_END_DATE}, "
        f"{_PRODUCTION_LAST.format(n=n)}, {n}.logicalDate_inclusiveStartDate, "
        f"{n}.logicalDate_coverageStartDate, {n}.{Prop.TITLE_START_DATE})"
    )


def _nearest_dated_ancestor(n: str, own: str) -> str:
    """`own` (a date expression over `a`) of the nearest ancestor that has dates: a record with
    none of its own (a file unit whose title states no dates either) is filtered by those of
    the series it belongs to. `ancestors` lists naIds nearest first."""
    return (
        f"head(COLLECT {{ UNWIND range(0, size(coalesce({n}.{Prop.ANCESTORS}, [])) - 1) AS i "
        f"MATCH (a:{Label.CHUNK} {{{Prop.NA_ID}: {n}.{Prop.ANCESTORS}[i], "
        f"{Prop.CHUNK_SEQ_ID}: 0}}) "
        f"WITH a, i WHERE {_own_start('a')} IS NOT NULL "
        f"RETURN {own} AS d ORDER BY i LIMIT 1 }})"
    )


def _date_start(n: str) -> str:
    """A record's dates: its own, else those of its nearest dated ancestor."""
    return f"coalesce({_own_start(n)}, {_nearest_dated_ancestor(n, _own_start('a'))})"


def _date_end(n: str) -> str:
    return f"coalesce({_own_end(n)}, {_nearest_dated_ancestor(n, _own_end('a'))})"


#: The columns of `_CANDIDATE_FIELDS` and `_FACT_FIELDS`, in their order.
CANDIDATE_COLUMNS = ("chunkId", "naId", "score")
FACT_COLUMNS = ("firstChunkId", "title", "nodeType", "dateStart", "dateEnd", "codes")

#: What the exact match compares for a candidate record, read from its first chunk `first`: its
#: title, its own dates and its codes. The unfiltered candidate queries return these beside each
#: candidate, so re-ranking by the question's identifiers and dates costs no extra round trip.
_FACT_FIELDS = f"""first.{Prop.CHUNK_ID} AS firstChunkId,
       coalesce(first.{Prop.TITLE}, first.{Prop.HEADING}) AS title,
       first.{Prop.NODE_TYPE} AS nodeType,
       {_own_start("first")} AS dateStart, {_own_end("first")} AS dateEnd,
       [first.{Prop.LOCAL_IDENTIFIER}] + coalesce(first.{Prop.VARIANT_CONTROL_NUMBERS}, [])
           AS codes"""

_VECTOR_QUERY = f"CALL db.index.vector.queryNodes('{Index.VECTOR}', $k, $vector) YIELD node, score"
_FULLTEXT_QUERY = (
    f"CALL db.index.fulltext.queryNodes('{Index.FULLTEXT}', $query, {{limit: $k}}) "
    "YIELD node, score"
)
_CANDIDATE_FIELDS = f"node.{Prop.CHUNK_ID} AS chunkId, node.{Prop.NA_ID} AS naId, score"
#: A candidate with its record's facts (`_FACT_FIELDS`), in the index's order.
_WITH_FACTS = f"""
OPTIONAL MATCH (first:{Label.CHUNK} {_first_chunk("node." + Prop.NA_ID)})
RETURN {_CANDIDATE_FIELDS}, {_FACT_FIELDS}
ORDER BY score DESC
"""

VECTOR_CANDIDATES = ListedRead(CANDIDATE_COLUMNS, f"{_VECTOR_QUERY}\nRETURN {_CANDIDATE_FIELDS}")
VECTOR_CANDIDATES_WITH_FACTS = ListedRead(
    CANDIDATE_COLUMNS + FACT_COLUMNS, _VECTOR_QUERY + _WITH_FACTS
)
FULLTEXT_CANDIDATES = ListedRead(
    CANDIDATE_COLUMNS, f"{_FULLTEXT_QUERY}\nRETURN {_CANDIDATE_FIELDS}"
)
FULLTEXT_CANDIDATES_WITH_FACTS = ListedRead(
    CANDIDATE_COLUMNS + FACT_COLUMNS, _FULLTEXT_QUERY + _WITH_FACTS
)

#: Records whose title holds a phrase the question names exactly ("volume 512", "march 1942"):
#: the dense list blurs numbers, so these join the candidates however the two lists rank them.
EXACT_TITLE_CANDIDATES = ListedRead(
    CANDIDATE_COLUMNS + FACT_COLUMNS,
    f"""{_FULLTEXT_QUERY}
WHERE node.{Prop.CHUNK_SEQ_ID} = 0
WITH node, node AS first, score
RETURN {_CANDIDATE_FIELDS}, {_FACT_FIELDS}
""",
)

#: The filters of :class:`~nara_kg.retrieval.filters.SearchFilters` on a record's first chunk
#: `first`. One static text: an unset filter is a null parameter, so nothing from a request is ever
#: interpolated. `$types` holds levels of description and authority types (either matches).
FILTER_PREDICATE = f"""(
    ($types IS NULL OR first.{Prop.LEVEL_OF_DESCRIPTION} IN $types
        OR first.{Prop.AUTHORITY_TYPE} IN $types)
    AND ($recordType IS NULL OR first.{Prop.RECORD_TYPE} = $recordType)
    AND ($materials IS NULL
        OR any(m IN coalesce(first.generalRecordsTypes, []) WHERE m IN $materials))
    AND ($withinIds IS NULL OR first.{Prop.NA_ID} IN $withinIds)
    AND ($dateFrom IS NULL OR {_date_end("first")} >= $dateFrom)
    AND ($dateTo IS NULL OR {_date_start("first")} <= $dateTo)
)"""

#: Filtered candidates are records (each by its best chunk), so that `$k` of them are k
#: distinct records however many chunks one record has.
_BEST_CHUNK_PER_RECORD = f"""
WITH node.{Prop.NA_ID} AS naId, node.{Prop.CHUNK_ID} AS chunkId, score
ORDER BY score DESC
WITH naId, head(collect(chunkId)) AS chunkId, max(score) AS score
RETURN chunkId, naId, score
ORDER BY score DESC
LIMIT $k
"""

#: Index candidates that pass the filters: the index is asked for `$size` nodes, the filters
#: run inside the query, and at most `$k` survivors come back (the caller widens `$size`).
VECTOR_CANDIDATES_FILTERED = ListedRead(
    CANDIDATE_COLUMNS,
    f"""
CALL db.index.vector.queryNodes('{Index.VECTOR}', $size, $vector) YIELD node, score
MATCH (first:{Label.CHUNK} {_first_chunk("node." + Prop.NA_ID)})
WHERE {FILTER_PREDICATE}
{_BEST_CHUNK_PER_RECORD}""",
)

FULLTEXT_CANDIDATES_FILTERED = ListedRead(
    CANDIDATE_COLUMNS,
    f"""
CALL db.index.fulltext.queryNodes('{Index.FULLTEXT}', $query, {{limit: $size}})
YIELD node, score
MATCH (first:{Label.CHUNK} {_first_chunk("node." + Prop.NA_ID)})
WHERE {FILTER_PREDICATE}
{_BEST_CHUNK_PER_RECORD}""",
)

#: Exact (brute-force cosine) scoring of every embedded chunk of the records that pass the
#: filters, for filters too selective for the approximate index to find k records.
_EXACT_SCORE = f"""
MATCH (node:{Label.CHUNK}:{_TEXT} {{{Prop.NA_ID}: first.{Prop.NA_ID}}})
WHERE node.{Prop.EMBEDDING} IS NOT NULL
WITH node, vector.similarity.cosine(node.{Prop.EMBEDDING}, $vector) AS score
{_BEST_CHUNK_PER_RECORD}"""
VECTOR_EXACT_WITHIN = ListedRead(
    CANDIDATE_COLUMNS,
    f"""
UNWIND $withinIds AS id
MATCH (first:{Label.CHUNK} {_first_chunk("id")})
WHERE {FILTER_PREDICATE}
{_EXACT_SCORE}""",
)
VECTOR_EXACT_SCAN = ListedRead(
    CANDIDATE_COLUMNS,
    f"""
MATCH (first:{Label.CHUNK})
WHERE first.{Prop.CHUNK_SEQ_ID} = 0 AND {FILTER_PREDICATE}
{_EXACT_SCORE}""",
)

INDEXED_CHUNKS = f"MATCH (n:{_TEXT}) RETURN count(n) AS n"

#: The record to search within and every record under it (`Includes`, any depth).
DESCENDANTS = f"""
MATCH (root:{Label.CHUNK} {_first_chunk("$naId")})
OPTIONAL MATCH (root)-[:{Rel.INCLUDES}*1..12]->(d:{Label.CHUNK})
RETURN root.{Prop.LEVEL_OF_DESCRIPTION} AS level, root.{Prop.NODE_TYPE} AS nodeType,
       collect(DISTINCT d.{Prop.NA_ID}) AS ids
"""

_HIERARCHY = f"""
CALL (first) {{
    OPTIONAL MATCH path = (root:{Label.CHUNK})-[:{Rel.INCLUDES}*0..12]->(first)
    WHERE NOT (root)<-[:{Rel.INCLUDES}]-()
    RETURN [n IN nodes(path) | n {{
        .{Prop.NA_ID}, .{Prop.RECORD_TYPE}, .{Prop.LEVEL_OF_DESCRIPTION}, .{Prop.TITLE},
        .logicalDate_inclusiveStartDate, .logicalDate_inclusiveEndDate,
        .logicalDate_coverageStartDate, .logicalDate_coverageEndDate, .{Prop.SOURCE}
    }}] AS hierarchy
    ORDER BY length(path) DESC
    LIMIT 1
}}
CALL (first) {{
    OPTIONAL MATCH (authority:{Label.CHUNK})-[r:{_AUTHORITY_TYPES}]->(first)
    RETURN collect(DISTINCT authority {{
        relationship: type(r), .{Prop.NA_ID}, .{Prop.AUTHORITY_TYPE}, .{Prop.HEADING},
        .{Prop.SOURCE}
    }}) AS authorities
}}"""

_RECORD_FIELDS = f"""
       coalesce(first.{Prop.TITLE}, first.{Prop.HEADING}) AS title,
       first.{Prop.NODE_TYPE} AS nodeType, first.{Prop.RECORD_TYPE} AS recordType,
       first.{Prop.SOURCE} AS source, coalesce(first.{Prop.IS_STUB}, false) AS isStub,
       {_date_start("first")} AS dateStart, {_date_end("first")} AS dateEnd,
       {_own_start("first")} IS NULL AS datesInherited,
       first.generalRecordsTypes AS materials,
       hierarchy, authorities"""

#: The columns of `_RECORD_FIELDS`, in their order.
RECORD_COLUMNS = (
    "title",
    "nodeType",
    "recordType",
    "source",
    "isStub",
    "dateStart",
    "dateEnd",
    "datesInherited",
    "materials",
    "hierarchy",
    "authorities",
)

#: Seed 000's retrieval query over a given list of hit chunks.
EXPAND_HITS = ListedRead(
    ("chunkId", "naId", "textList", *RECORD_COLUMNS),
    f"""
UNWIND $chunkIds AS hitId
MATCH (node:{Label.CHUNK} {{{Prop.CHUNK_ID}: hitId}})
CALL (node) {{
    MATCH window = (:{_TEXT})-[:Next*0..1]->(node)-[:Next*0..1]->(:{_TEXT})
    WITH window
    ORDER BY length(window) DESC
    LIMIT 1
    RETURN [n IN nodes(window) | n.{Prop.TEXT}] AS textList
}}
MATCH (first:{Label.CHUNK} {_first_chunk("node." + Prop.NA_ID)})
{_HIERARCHY}
RETURN hitId AS chunkId, node.{Prop.NA_ID} AS naId, textList,{_RECORD_FIELDS}
""",
)

#: One record by naId: what a hit carries, plus its properties, its full text in chunk order,
#: its children (`Includes`) and, for an authority, the records it is related to.
RECORD = f"""
MATCH (first:{Label.CHUNK} {_first_chunk("$naId")})
{_HIERARCHY}
CALL (first) {{
    MATCH (c:{Label.CHUNK} {{{Prop.NA_ID}: first.{Prop.NA_ID}}})
    WITH c ORDER BY c.{Prop.CHUNK_SEQ_ID}
    RETURN collect(c.{Prop.TEXT}) AS textList
}}
CALL (first) {{
    OPTIONAL MATCH (first)-[:{Rel.INCLUDES}]->(child:{Label.CHUNK})
    WITH child ORDER BY child.{Prop.TITLE}, child.{Prop.NA_ID}
    LIMIT $limit
    RETURN collect(child {{
        .{Prop.NA_ID}, .{Prop.TITLE}, .{Prop.NODE_TYPE}, .{Prop.SOURCE},
        dateStart: {_date_start("child")}, dateEnd: {_date_end("child")}
    }}) AS children
}}
CALL (first) {{
    OPTIONAL MATCH (first)-[r:{_AUTHORITY_TYPES}]->(described:{Label.CHUNK})
    WITH r, described ORDER BY described.{Prop.TITLE}, described.{Prop.NA_ID}
    LIMIT $limit
    RETURN collect(described {{
        relationship: type(r), .{Prop.NA_ID}, .{Prop.TITLE}, .{Prop.NODE_TYPE}, .{Prop.SOURCE}
    }}) AS describedRecords
}}
RETURN first.{Prop.NA_ID} AS naId, properties(first) AS properties, textList,
       COUNT {{ (first)-[:{Rel.INCLUDES}]->() }} AS childCount,
       COUNT {{ (first)-[:{_AUTHORITY_TYPES}]->() }} AS describedCount,
       children, describedRecords,{_RECORD_FIELDS}
"""


def vector_candidates(
    driver: Driver, database: str, vector: list[float], k: int, *, with_facts: bool = False
) -> list[dict[str, Any]]:
    """The k nearest chunks; `with_facts` adds each one's record facts (`_FACT_FIELDS`)."""
    read = VECTOR_CANDIDATES_WITH_FACTS if with_facts else VECTOR_CANDIDATES
    return read_listed(driver, database, read, k=k, vector=vector)


def fulltext_candidates(
    driver: Driver, database: str, query: str, k: int, *, with_facts: bool = False
) -> list[dict[str, Any]]:
    """The k best full-text chunks; `with_facts` adds each one's record facts."""
    if not query.strip():
        return []
    read = FULLTEXT_CANDIDATES_WITH_FACTS if with_facts else FULLTEXT_CANDIDATES
    return read_listed(driver, database, read, k=k, query=query)


def expand_hits(driver: Driver, database: str, chunk_ids: list[str]) -> list[dict[str, Any]]:
    return read_listed(driver, database, EXPAND_HITS, chunkIds=chunk_ids)


def vector_candidates_filtered(
    driver: Driver,
    database: str,
    vector: list[float],
    *,
    size: int,
    k: int,
    filters: dict[str, Any],
) -> list[dict[str, Any]]:
    return read_listed(
        driver, database, VECTOR_CANDIDATES_FILTERED, vector=vector, size=size, k=k, **filters
    )


def fulltext_candidates_filtered(
    driver: Driver, database: str, query: str, *, size: int, k: int, filters: dict[str, Any]
) -> list[dict[str, Any]]:
    if not query.strip():
        return []
    return read_listed(
        driver, database, FULLTEXT_CANDIDATES_FILTERED, query=query, size=size, k=k, **filters
    )


def vector_exact_filtered(
    driver: Driver, database: str, vector: list[float], *, k: int, filters: dict[str, Any]
) -> list[dict[str, Any]]:
    """Exact cosine over the records that pass the filters: from the `within` records when
    there are any (index lookups), else a scan of every record's first chunk."""
    read = VECTOR_EXACT_WITHIN if filters.get("withinIds") is not None else VECTOR_EXACT_SCAN
    return read_listed(driver, database, read, vector=vector, k=k, **filters)


def indexed_chunks(driver: Driver, database: str) -> int:
    rows = read_all(driver, database, INDEXED_CHUNKS)
    return int(rows[0]["n"]) if rows else 0


def descendants(driver: Driver, database: str, na_id: int) -> dict[str, Any] | None:
    """The record's level and the naIds under it, or None when there is no such record."""
    rows = read_all(driver, database, DESCENDANTS, naId=na_id)
    return rows[0] if rows else None


def record(driver: Driver, database: str, na_id: int, limit: int) -> dict[str, Any] | None:
    rows = read_all(driver, database, RECORD, naId=na_id, limit=limit)
    return rows[0] if rows else None


def exact_title_candidates(
    driver: Driver, database: str, query: str, k: int
) -> list[dict[str, Any]]:
    if not query.strip():
        return []
    return read_listed(driver, database, EXACT_TITLE_CANDIDATES, k=k, query=query)


CANDIDATE_FACTS = ListedRead(
    ("naId", *FACT_COLUMNS),
    f"""
UNWIND $naIds AS wanted
MATCH (first:{Label.CHUNK} {_first_chunk("wanted")})
RETURN wanted AS naId, {_FACT_FIELDS}
""",
)


def candidate_facts(driver: Driver, database: str, na_ids: list[int]) -> list[dict[str, Any]]:
    return read_listed(driver, database, CANDIDATE_FACTS, naIds=na_ids)


#: Records that begin within a range of days (the range index on the start date answers it).
STARTING_WITHIN = ListedRead(
    ("naId", *FACT_COLUMNS),
    f"""
MATCH (first:{Label.CHUNK})
WHERE first.{Prop.INCLUSIVE_START_DATE} >= $fromDate
  AND first.{Prop.INCLUSIVE_START_DATE} <= $toDate
  AND first.{Prop.CHUNK_SEQ_ID} = 0
RETURN first.{Prop.NA_ID} AS naId, {_FACT_FIELDS}
LIMIT $k
""",
)


def starting_within(
    driver: Driver, database: str, from_date: str, to_date: str, k: int
) -> list[dict[str, Any]]:
    return read_listed(driver, database, STARTING_WITHIN, fromDate=from_date, toDate=to_date, k=k)

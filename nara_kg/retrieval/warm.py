"""Warming a server before its first question: one search of each shape the API runs.

Neo4j plans a statement the first time it sees its text, and the entity ranking reads the
graph's authority names on first use; both made the first question of each filter type several
times slower than the next. A search of each shape at start pays those costs before a reader
does. Results are thrown away.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from neo4j import Driver

from nara_kg.graph import reports as report_cypher
from nara_kg.graph import search as cypher
from nara_kg.graph.batches import read_all
from nara_kg.model.schema import Label, Prop
from nara_kg.retrieval.filters import SearchFilters, filter_parameters
from nara_kg.retrieval.search import local_search

#: A container to warm the "within" search on (the largest one is as good as any).
_A_CONTAINER = f"""
MATCH (c:{Label.CHUNK} {{{Prop.CHUNK_SEQ_ID}: 0}})
WHERE c.{Prop.LEVEL_OF_DESCRIPTION} IN ['series', 'recordGroup', 'collection', 'fileUnit']
RETURN c.{Prop.NA_ID} AS naId
LIMIT 1
"""

#: Queries that take the plain path, the identifier-and-date path, and the entity path.
WARM_QUERIES = ("records of the office", "volume 1 of January 1942", "began on 1 March 1942")
#: One filter of each kind (one statement text serves them all, but each widens differently).
WARM_FILTERS = (
    SearchFilters(levels=("series",)),
    SearchFilters(record_type="authority"),
    SearchFilters(authority_types=("person",)),
    SearchFilters(materials=("Textual Records",)),
    SearchFilters(date_from="1942", date_to="1943"),
)


def warm_searches(driver: Driver, database: str, encode: Callable[[list[str]], Any]) -> int:
    """Run each warm-up search; the number run."""
    runs = 0
    for query in WARM_QUERIES:
        local_search(driver, database, encode, query, k=5)
        runs += 1
    filters = list(WARM_FILTERS)
    container = read_all(driver, database, _A_CONTAINER)
    if container:
        filters.append(SearchFilters(within=int(container[0]["naId"])))
    for each in filters:
        local_search(driver, database, encode, WARM_QUERIES[0], k=5, filters=each)
        runs += 1
    if container:
        cypher.record(driver, database, int(container[0]["naId"]), 10)
    # Global search reads the reports of a level, all of them or those the filters keep.
    levels = report_cypher.reports_per_level(driver, database)
    if levels:
        level = max(levels)
        report_cypher.reports(driver, database, level)
        params = filter_parameters(driver, database, WARM_FILTERS[0])
        report_cypher.reports_matching(driver, database, level, params)
        runs += 1
    return runs

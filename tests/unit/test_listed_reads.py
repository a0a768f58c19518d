"""The search's reads that come back as one record of value lists (`ListedRead`): the wrapped
statement, and columns that are exactly the statement's RETURN aliases, in their order."""

from __future__ import annotations

import re

import pytest

from nara_kg.graph import mentions, search
from nara_kg.graph.batches import ListedRead

LISTED_READS = {
    f"{module.__name__}.{name}": value
    for module in (search, mentions)
    for name, value in vars(module).items()
    if isinstance(value, ListedRead)
}


def returned_names(statement: str) -> list[str]:
    """The names the statement's last top-level RETURN (not one inside a subquery) gives its
    columns: the alias, else the bare name."""
    depth, last = 0, -1
    for position, char in enumerate(statement):
        depth += char in "([{"
        depth -= char in ")]}"
        if depth == 0 and statement.startswith("RETURN ", position):
            last = position
    clause = statement[last + len("RETURN ") :]
    depth, part, parts = 0, "", []
    for position, char in enumerate(clause):
        if depth == 0 and re.match(r"\s(ORDER BY|LIMIT)\b", clause[position:]):
            break
        depth += char in "([{"
        depth -= char in ")]}"
        if char == "," and depth == 0:
            parts.append(part)
            part = ""
        else:
            part += char
    parts.append(part)
    return [re.split(r"\s+AS\s+", p.strip())[-1] for p in parts]


def test_the_search_reads_are_listed() -> None:
    assert {"nara_kg.graph.search.EXPAND_HITS", "nara_kg.graph.mentions.ANCHOR_NEIGHBOURS"} <= set(
        LISTED_READS
    )
    assert len(LISTED_READS) >= 12


@pytest.mark.parametrize("name", sorted(LISTED_READS))
def test_columns_are_the_statements_return_names_in_order(name: str) -> None:
    read = LISTED_READS[name]
    assert list(read.columns) == returned_names(read.statement)


def test_the_statement_runs_as_a_subquery_whose_rows_are_collected() -> None:
    read = ListedRead(("naId", "title"), "MATCH (c:Chunk) RETURN c.naId AS naId, c.title AS title")
    assert read.text == (
        "CALL () {\nMATCH (c:Chunk) RETURN c.naId AS naId, c.title AS title\n}\n"
        "RETURN collect([naId, title]) AS rows"
    )


def test_returned_names_reads_aliases_and_bare_names() -> None:
    statement = (
        "MATCH (n) CALL (n) { RETURN 1 AS one } "
        "RETURN n.a AS a, [x IN n.l | x.b] AS b, COLLECT { RETURN 2 AS d } AS c, score LIMIT 3"
    )
    assert returned_names(statement) == ["a", "b", "c", "score"]

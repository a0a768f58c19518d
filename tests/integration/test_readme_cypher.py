"""Every Cypher statement the README offers for Neo4j Browser runs on a graph the assets built
and returns rows: the labels, relationship types, properties and index names it uses are the
graph's. The README's naId is one of `make demo`'s records; here it is swapped for a file unit
of this smaller demo graph (tests/unit/test_readme_examples.py checks the naId itself)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from nara_kg.demo import generate_demo_data
from nara_kg.settings import PROJECT_ROOT

pytestmark = pytest.mark.integration

README = PROJECT_ROOT / "README.md"


def readme_statements() -> list[str]:
    match = re.search(r"```cypher\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    assert match, "the README has no Cypher examples"
    code = "\n".join(
        line for line in match.group(1).splitlines() if not line.lstrip().startswith("//")
    )
    return [statement.strip() for statement in code.split(";") if statement.strip()]


@pytest.fixture(scope="module")
def demo_graph(graph_builder: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("readme_cypher")
    generate_demo_data(root / "data", records=150, seed=7)
    graph_builder(root / "data", root / "work", wipe_first=True)


def test_every_readme_statement_runs_and_returns_rows(neo4j_driver: Any, demo_graph: None) -> None:
    records, _, _ = neo4j_driver.execute_query(
        "MATCH (:series {chunkSeqId: 0})-[:Includes]->(f:fileUnit {chunkSeqId: 0}) "
        "RETURN f.naId AS naId ORDER BY naId LIMIT 1"
    )
    na_id = records[0]["naId"]
    statements = readme_statements()
    assert len(statements) >= 4
    for statement in statements:
        query = re.sub(r"naId: \d+", f"naId: {na_id}", statement)
        rows, _, _ = neo4j_driver.execute_query(query)
        assert rows, f"no rows from the README's\n{query}"

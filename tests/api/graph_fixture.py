"""The demo graph the API and browser tests query: a small generated export plus three records
whose title, heading and text carry HTML and script (catalog data is untrusted).

Both test folders use it; one build serves both when they run in one session (the graph is
rebuilt only when another test module replaced it in between).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from nara_kg.demo import generate_demo_data

HOSTILE_SERIES = 990_000_001
HOSTILE_FILE_UNIT = 990_000_002
HOSTILE_PERSON = 990_000_003
HOSTILE_TITLE = (
    '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
    "Zeppelin Mooring Records"
)
HOSTILE_HEADING = '<b onmouseover="window.__pwned = 3">Airship</b>, Captain <i>Hugo</i>'
HOSTILE_FILE_TITLE = (
    "Zeppelin mooring mast correspondence </li></ol><script>window.__pwned=4</script>"
)


def hostile_records() -> list[dict[str, Any]]:
    series = {
        "naId": HOSTILE_SERIES,
        "recordType": "description",
        "levelOfDescription": "series",
        "title": HOSTILE_TITLE,
        "generalRecordsTypes": ["Textual Records"],
        "inclusiveStartDate": {"year": 1929, "logicalDate": "1929-01-01"},
        "inclusiveEndDate": {"year": 1931, "logicalDate": "1931-12-31"},
        "scopeAndContentNote": (
            "This series consists of <em>zeppelin</em> mooring reports and airship mooring mast "
            "plans. <script>alert('catalog text')</script>"
        ),
        "creators": [
            {
                "naId": HOSTILE_PERSON,
                "heading": HOSTILE_HEADING,
                "authorityType": "person",
                "creatorType": "Most Recent",
            }
        ],
    }
    file_unit = {
        "naId": HOSTILE_FILE_UNIT,
        "recordType": "description",
        "levelOfDescription": "fileUnit",
        "title": HOSTILE_FILE_TITLE,
        "generalRecordsTypes": ["Textual Records"],
        "ancestors": [
            {
                "distance": 1,
                "naId": HOSTILE_SERIES,
                "levelOfDescription": "series",
                "title": HOSTILE_TITLE,
            }
        ],
    }
    return [{"record": series}, {"record": file_unit}]


@dataclass(frozen=True)
class DemoGraph:
    data_dir: Path
    work_dir: Path
    records: int


_built: dict[str, DemoGraph] = {}


def _records_in_graph(driver: Any) -> int:
    records, _, _ = driver.execute_query(
        # The count is taken first: beside an aggregate, the subquery would be a grouping key,
        # and an empty graph would then return no row at all.
        "MATCH (c:Chunk {chunkSeqId: 0}) WITH count(c) AS n RETURN n, "
        "count { MATCH (h:Chunk {naId: $naId, chunkSeqId: 0}) WHERE h.title = $title } AS hostile",
        naId=HOSTILE_SERIES,
        title=HOSTILE_TITLE,
    )
    row = records[0]
    return int(row["n"]) if row["hostile"] == 1 else -1


@pytest.fixture(scope="session")
def api_graph(
    graph_builder: Any, neo4j_driver: Any, tmp_path_factory: pytest.TempPathFactory
) -> DemoGraph:
    graph = _built.get("graph")
    if graph is not None and _records_in_graph(neo4j_driver) == graph.records:
        return graph
    root = tmp_path_factory.mktemp("api-graph")
    data = root / "data"
    generate_demo_data(data, records=150, seed=5)
    # Under descriptions/: an export with its top folders is read from those folders only.
    hostile = data / "descriptions" / "hostile" / "hostile.jsonl"
    hostile.parent.mkdir(parents=True, exist_ok=True)
    hostile.write_text(
        "\n".join(json.dumps(line) for line in hostile_records()) + "\n", encoding="utf-8"
    )
    graph_builder(data, root / "work", wipe_first=True)
    graph = DemoGraph(data, root / "work", _records_in_graph(neo4j_driver))
    assert graph.records > 0, "the hostile records did not reach the graph"
    _built["graph"] = graph
    return graph


SCOPE = re.compile(
    r"consists of (?P<kind>\w+) created or received by (?P<creator>.+?) concerning "
    r"(?P<topic>.+?) in (?P<place>.+?) and the surrounding"
)


def a_series_fact(driver: Any) -> dict[str, Any]:
    """A fact the demo data states in a series' scope note (as tests/integration/test_ask)."""
    records, _, _ = driver.execute_query(
        "MATCH (c:series {chunkSeqId: 0}) WHERE NOT c.isStub AND c.naId < $hostile "
        "RETURN c.naId AS naId, c.text AS text ORDER BY c.naId",
        hostile=HOSTILE_SERIES,
    )
    for record in records:
        match = SCOPE.search(record["text"])
        if match:
            return {"naId": record["naId"], **match.groupdict()}
    raise AssertionError("no series with a scope note in the demo data")

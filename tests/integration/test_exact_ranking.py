"""Exact identifiers and dates outrank near misses (issue 15): a series of sibling diary
volumes whose titles differ only in their number and dates, as in the real Morgenthau diaries."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from nara_kg.embedding.encoder import Embedder
from nara_kg.retrieval.search import local_search

SERIES_NA_ID = 91000000
FIRST_VOLUME_NA_ID = 91000100
VOLUMES = 40


def _volume_title(number: int, start: date) -> str:
    end = start + timedelta(days=2)
    return f"Volume {number}, {start:%B} {start.day} \u2013 {end:%B} {end.day}, {end.year}"


def _records() -> list[dict[str, Any]]:
    series = {
        "naId": SERIES_NA_ID,
        "levelOfDescription": "series",
        "recordType": "description",
        "title": "Diaries of the Secretary of the Treasury",
        "scopeAndContentNote": "Daily diaries of meetings, telephone calls and correspondence.",
        "inclusiveStartDate": {"year": 1942, "logicalDate": "1942-01-01"},
        "inclusiveEndDate": {"year": 1942, "logicalDate": "1942-12-31"},
    }
    ancestor = {
        "distance": 1,
        "levelOfDescription": "series",
        "naId": SERIES_NA_ID,
        "title": series["title"],
    }
    records = [series]
    for index in range(VOLUMES):
        start = date(1942, 1, 1) + timedelta(days=3 * index)
        records.append(
            {
                "naId": FIRST_VOLUME_NA_ID + index,
                "levelOfDescription": "fileUnit",
                "recordType": "description",
                "title": _volume_title(500 + index, start),
                "ancestors": [ancestor],
            }
        )
    return records


@pytest.fixture(scope="module")
def volumes_graph(graph_builder: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("exact")
    data = root / "data"
    data.mkdir()
    lines = [json.dumps({"record": record}) for record in _records()]
    (data / "diaries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    graph_builder(data, root / "work", wipe_first=True)
    return root


def _top(driver: Any, question: str) -> list[str]:
    hits = local_search(driver, "neo4j", Embedder().encode, question, k=5).hits
    return [hit.title for hit in hits]


@pytest.mark.parametrize("number", [507, 512, 533])
def test_the_named_volume_comes_first(neo4j_driver: Any, volumes_graph: Path, number: int) -> None:
    titles = _top(neo4j_driver, f"Secretary's diary volume {number}")
    assert titles[0].startswith(f"Volume {number},"), titles


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What did the Secretary discuss on February 8, 1942?", "Volume 512,"),
        ("diary entries of 3 March 1942", "Volume 520,"),
    ],
)
def test_the_volume_covering_the_day_comes_first(
    neo4j_driver: Any, volumes_graph: Path, question: str, expected: str
) -> None:
    titles = _top(neo4j_driver, question)
    assert titles[0].startswith(expected), titles

"""Dates stated in file unit titles are the records' own (issue 37): the date filter picks the
volume covering the day instead of every volume of the series, and a volume whose title states
no dates still inherits its series' span, marked as inherited."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nara_kg.embedding.encoder import Embedder
from nara_kg.graph.search import record
from nara_kg.model.schema import Prop
from nara_kg.retrieval.filters import SearchFilters
from nara_kg.retrieval.search import local_search

SERIES = 92000000
EN = "\u2013"
VOLUMES = {
    92000101: f"Volume 738, June 1 {EN} June 5, 1944",
    92000102: f"Volume 739, June 5 {EN} June 6, 1944",
    92000103: f"Volume 740, June 6 {EN} June 7, 1944",
    92000104: "Volume 741, June 8 - June 9, 1944",
    92000105: f"Volume 555 A, March 13, 1941 {EN} July 28, 1942",
    92000106: "Volume 157",
}


def _records() -> list[dict[str, Any]]:
    series = {
        "naId": SERIES,
        "levelOfDescription": "series",
        "recordType": "description",
        "title": "Diaries of the Secretary",
        "scopeAndContentNote": "Diary volumes of meetings, telephone calls and correspondence.",
        "inclusiveStartDate": {"year": 1933, "month": 4, "day": 27, "logicalDate": "1933-04-27"},
        "inclusiveEndDate": {"year": 1945, "month": 7, "day": 21, "logicalDate": "1945-07-21"},
    }
    stub = {"distance": 1, "levelOfDescription": "series", "naId": SERIES, "title": series["title"]}
    volumes = [
        {
            "naId": na_id,
            "levelOfDescription": "fileUnit",
            "recordType": "description",
            "title": title,
            "ancestors": [stub],
        }
        for na_id, title in VOLUMES.items()
    ]
    return [series, *volumes]


@pytest.fixture(scope="module")
def diaries(graph_builder: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("title-dates")
    data = root / "data"
    data.mkdir()
    lines = [json.dumps({"record": r}) for r in _records()]
    (data / "diaries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    graph_builder(data, root / "work", wipe_first=True)
    return root


def _volumes(driver: Any, date_from: str, date_to: str) -> dict[int, Any]:
    filters = SearchFilters(levels=("fileUnit",), date_from=date_from, date_to=date_to)
    hits = local_search(driver, "neo4j", Embedder().encode, "diary volume", k=10, filters=filters)
    return {hit.naId: hit for hit in hits.hits}


def test_the_date_filter_picks_the_volume_covering_the_day(
    neo4j_driver: Any, diaries: Path
) -> None:
    found = _volumes(neo4j_driver, "1944-06-07", "1944-06-07")
    # Volume 740 by its title; Volume 157 states no dates, so its series' span still counts.
    assert set(found) == {92000103, 92000106}
    assert (found[92000103].date_start, found[92000103].date_end) == ("1944-06-06", "1944-06-07")
    assert not found[92000103].dates_inherited
    assert (found[92000106].date_start, found[92000106].date_end) == ("1933-04-27", "1945-07-21")
    assert found[92000106].dates_inherited


def test_a_compilation_spans_its_titles_range(neo4j_driver: Any, diaries: Path) -> None:
    assert set(_volumes(neo4j_driver, "1942-01", "1942-01")) == {92000105, 92000106}
    assert set(_volumes(neo4j_driver, "1944-06-05", "1944-06-05")) == {
        92000101,
        92000102,
        92000106,
    }


def test_the_record_shows_the_title_dates_marked_as_such(neo4j_driver: Any, diaries: Path) -> None:
    row = record(neo4j_driver, "neo4j", 92000104, 10)
    assert row is not None
    assert row["properties"][Prop.TITLE_START_DATE] == "1944-06-08"
    assert row["properties"][Prop.TITLE_END_DATE] == "1944-06-09"
    assert (row["dateStart"], row["dateEnd"], row["datesInherited"]) == (
        "1944-06-08",
        "1944-06-09",
        False,
    )

"""Dates parsed from file unit titles (nara_kg.ingest.parsing.title_dates) and stored as the
record's own dates, marked by their property names as coming from the title."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from nara_kg.ingest.parsing.parse import parse_record
from nara_kg.ingest.parsing.title_dates import TitleDates, title_before_dates, title_dates
from nara_kg.model.schema import Prop

EN = "\u2013"


@pytest.mark.parametrize(
    ("title", "start", "end"),
    [
        # The forms of the real Morgenthau diary titles.
        (f"Volume 740, June 6 {EN} June 7, 1944", date(1944, 6, 6), date(1944, 6, 7)),
        (f"Volume 5, April 23 {EN} May 30, 1935", date(1935, 4, 23), date(1935, 5, 30)),
        ("Volume 753, July 12 - July 13, 1944", date(1944, 7, 12), date(1944, 7, 13)),
        ("Volume 851, June 1- June 4, 1945", date(1945, 6, 1), date(1945, 6, 4)),
        ("Volume 75, June 30, 1937", date(1937, 6, 30), date(1937, 6, 30)),
        ("Volume 175, March 1939", date(1939, 3, 1), date(1939, 3, 31)),
        ("Volume 82, 1937", date(1937, 1, 1), date(1937, 12, 31)),
        (f"Volume 313, December 1939 {EN} July 1940", date(1939, 12, 1), date(1940, 7, 31)),
        (f"Volume 173, January {EN} February 1939", date(1939, 1, 1), date(1939, 2, 28)),
        (f"Volume 10, September {EN} October 31, 1935", date(1935, 9, 1), date(1935, 10, 31)),
        (
            f"Volume 297 - Puleston Reports on the European Situation, September 11 {EN} "
            "December 1939",
            date(1939, 9, 11),
            date(1939, 12, 31),
        ),
        (f"Volume 1, October 1933 {EN} June 30, 1934", date(1933, 10, 1), date(1934, 6, 30)),
        (
            f"Volume 357 - Bank of America, October 7, 1937 {EN} September 20, 1938",
            date(1937, 10, 7),
            date(1938, 9, 20),
        ),
        # A "555 A" compilation spans more than a year.
        (f"Volume 555 A, March 13, 1941 {EN} July 28, 1942", date(1941, 3, 13), date(1942, 7, 28)),
        (
            f"Volume 688 - pt. 1: Jewish Refugees, May 7 {EN} December 9, 1943",
            date(1943, 5, 7),
            date(1943, 12, 9),
        ),
        ("Volume 850 A - Military Reports, May - June 1945", date(1945, 5, 1), date(1945, 6, 30)),
        ("Volume 859, June 27, June 29, 1945", date(1945, 6, 27), date(1945, 6, 29)),
        (f"Volume 9, December 28 {EN} January 3, 1944", date(1943, 12, 28), date(1944, 1, 3)),
        ("Volume 19, February 29, 1944", date(1944, 2, 29), date(1944, 2, 29)),
    ],
)
def test_title_dates(title: str, start: date, end: date) -> None:
    assert title_dates(title) == TitleDates(start, end)


@pytest.mark.parametrize(
    "title",
    [
        "Volume 157",
        "UNGA Speech - Big Type",
        # Slips in real titles: a three-digit year, an end before the start.
        f"Volume 502, February 27 {EN} February 28, 192",
        f"Volume 279, July 2 {EN} June 5, 1940",
        "Volume 19, February 30, 1944",
        "Minidoka Relocation Center",
        "Volume 8, Jun 1944",
        "",
        None,
    ],
)
def test_titles_without_dates_give_none(title: str | None) -> None:
    assert title_dates(title) is None


def _file_unit(title: str, **extra: Any) -> dict[str, Any]:
    return {
        "naId": 28277496,
        "levelOfDescription": "fileUnit",
        "recordType": "description",
        "title": title,
        "ancestors": [
            {
                "distance": 1,
                "levelOfDescription": "series",
                "naId": 589213,
                "title": "Diaries of Henry Morgenthau, Jr.",
                "inclusiveStartDate": {
                    "year": 1933,
                    "month": 4,
                    "day": 27,
                    "logicalDate": "1933-04-27",
                },
                "inclusiveEndDate": {
                    "year": 1945,
                    "month": 7,
                    "day": 21,
                    "logicalDate": "1945-07-21",
                },
            }
        ],
        **extra,
    }


def test_a_file_unit_gets_its_titles_dates_as_its_own() -> None:
    parsed = parse_record(_file_unit(f"Volume 740, June 6 {EN} June 7, 1944"))
    assert parsed.properties[Prop.TITLE_START_DATE] == "1944-06-06"
    assert parsed.properties[Prop.TITLE_END_DATE] == "1944-06-07"
    # The series keeps its own span; the title's dates are the file unit's alone.
    series = next(stub for stub in parsed.stubs if stub.na_id == 589213)
    assert Prop.TITLE_START_DATE not in series.properties


def test_catalog_dates_win_over_the_title() -> None:
    dated = _file_unit(
        "Volume 740, June 6 - June 7, 1944",
        coverageStartDate={"year": 1944, "logicalDate": "1944-01-01"},
    )
    assert Prop.TITLE_START_DATE not in parse_record(dated).properties
    undated = parse_record(_file_unit("Volume 157"))
    assert Prop.TITLE_START_DATE not in undated.properties


def test_only_file_units_and_items_read_dates_from_their_titles() -> None:
    series = {
        "naId": 1,
        "levelOfDescription": "series",
        "recordType": "description",
        "title": "Photographs, 1942",
    }
    assert Prop.TITLE_START_DATE not in parse_record(series).properties


def test_the_title_before_its_dates_names_the_record() -> None:
    assert title_before_dates("Volume 740, June 6 \u2013 June 7, 1944") == "Volume 740"
    assert title_before_dates("Volume 696, January 22 - January 26, 1944") == "Volume 696"
    assert title_before_dates("Letters of the Secretary") is None
    assert title_before_dates("June 6, 1944") is None  # nothing but the dates
    assert title_before_dates(None) is None

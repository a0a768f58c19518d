"""The parts' JSON columns: orjson's text, read back to the same value, keys sorted, and the
standard library's where orjson writes nothing."""

from __future__ import annotations

import json

import pytest

from nara_kg.model.json_text import dumps, dumps_sorted

VALUE = {"title": 'Étude, "quoted"\n', "b": [1, 2.5, None, True], "a": {"z": 1, "y": "ü"}}


def test_sorted_text_is_compact_sorted_and_reads_back() -> None:
    text = dumps_sorted(VALUE)
    assert text == json.dumps(VALUE, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    assert json.loads(text) == VALUE
    assert dumps_sorted(dict(reversed(list(VALUE.items())))) == text


def test_unsorted_text_keeps_the_order() -> None:
    assert dumps({"b": 1, "a": "é"}) == '{"b":1,"a":"é"}'


@pytest.mark.parametrize("write", [dumps, dumps_sorted])
def test_an_integer_past_64_bits_is_written_exactly(write: object) -> None:
    big = {"naId": 10**25}
    text = write(big)  # type: ignore[operator]
    assert json.loads(text) == big

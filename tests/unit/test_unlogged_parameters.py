"""Parameters handed to the driver are never spelled out: neo4j 6.4 formats every RUN's
parameters with repr() for its debug log even when debug logging is off, which for pages of
vectors cost twenty times the write."""

from __future__ import annotations

from typing import Any

from neo4j._codec.packstream import v1 as packstream

from nara_kg.graph import batches
from nara_kg.graph.batches import Unlogged, unlogged

VECTOR = [0.123456789] * 384


def test_unlogged_lists_keep_their_values_but_not_their_text() -> None:
    params = unlogged({"vector": VECTOR, "ids": ("a", "b"), "k": 5, "query": "Volume 7"})
    assert params["vector"] == VECTOR and params["ids"] == ["a", "b"]
    assert params["k"] == 5 and params["query"] == "Volume 7"
    assert isinstance(params["vector"], Unlogged) and isinstance(params["ids"], Unlogged)
    assert repr(params["vector"]) == "<384 values>"
    assert len(repr(params)) < 120


def _packed(value: Any) -> bytes:
    buffer = packstream.PackableBuffer()
    packstream.Packer(buffer).pack(value)
    return bytes(buffer.data)


def test_the_driver_packs_an_unlogged_list_as_the_list_itself() -> None:
    rows = [{"id": "1-0", "vector": VECTOR}, {"id": "2-0", "vector": VECTOR[:3]}]
    assert _packed({"rows": Unlogged(rows)}) == _packed({"rows": rows})


class _Session:
    def __init__(self, sent: list[dict[str, Any]]) -> None:
        self.sent = sent

    def __enter__(self) -> _Session:
        return self

    def __exit__(self, *_: Any) -> None:
        pass

    def execute_write(self, work: Any, params: dict[str, Any]) -> None:
        self.sent.append(params)


class _Driver:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def session(self, **_: Any) -> _Session:
        return _Session(self.sent)


def test_batched_writes_send_rows_that_format_in_one_short_line() -> None:
    driver = _Driver()
    rows = [{"id": f"{n}-0", "vector": VECTOR} for n in range(1_200)]
    written = batches.write_batches(
        driver,  # type: ignore[arg-type]
        "neo4j",
        "UNWIND $rows AS row RETURN row",
        rows,
        batch_size=500,
        extra={"ids": ["x"] * 100},
    )
    assert written == 1_200
    assert [len(params["rows"]) for params in driver.sent] == [500, 500, 200]
    assert all(len(repr(params)) < 120 for params in driver.sent)

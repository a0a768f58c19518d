"""Raw JSON values -> Neo4j-storable values, and one FieldSpec read from a record.

A missing or blank value becomes None (the caller leaves the property out); a value of the
wrong kind where the field table demands an integer or a boolean rejects the record.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from nara_kg.ingest.parsing.fields import FieldSpec
from nara_kg.ingest.parsing.results import RejectRecord

_MAX_NA_ID: Final = 2**63 - 1  # Neo4j integers are signed 64-bit


def describe(value: Any) -> str:
    """The value's type and a short repr, for a reject reason."""
    text = repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{type(value).__name__} {text}"


def as_int(value: Any) -> int | None:
    """An int from an int, an integral float (the export writes 1.0) or a digit string."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str):
        text = value.strip()
        if text.isascii() and text.lstrip("-").isdigit():
            return int(text)
    return None


def as_na_id(value: Any) -> int | None:
    number = as_int(value)
    if number is None or number <= 0 or number > _MAX_NA_ID:
        return None
    return number


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if text == "true":
            return True
        if text == "false":
            return False
    return None


def nonblank(value: Any) -> str | None:
    """A non-blank string, else None."""
    if isinstance(value, str) and value.strip():
        return value
    return None


def as_scalar(value: Any) -> Any:
    """A Neo4j-storable scalar for one leaf value, or None when it holds nothing."""
    if isinstance(value, str):
        return value if value.strip() else None
    if isinstance(value, bool | int | float):
        return value
    if isinstance(value, dict):
        if not value:
            return None
        logical = value.get("logicalDate")
        if isinstance(logical, str) and logical.strip():
            return logical
        scalars = [v for v in value.values() if v is not None]
        if len(scalars) == 1 and isinstance(scalars[0], str | int | float):
            return as_scalar(scalars[0])
        # An object where a value was expected: keep it readable rather than drop it.
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return None


def _walk(node: Any, path: Sequence[str]) -> Iterator[Any]:
    """Leaf values at `path`, flattening every list met (nested lists included)."""
    if node is None:
        return
    if isinstance(node, list):
        for element in node:
            yield from _walk(element, path)
        return
    if not path:
        yield node
        return
    if isinstance(node, dict):
        for key in path[0].split("|"):
            if node.get(key) is not None:
                yield from _walk(node[key], path[1:])
                return
    elif isinstance(node, str) and path == ("logicalDate",):
        yield node  # a date written as a bare string


def _homogeneous(values: list[Any]) -> list[Any]:
    """Neo4j lists hold one type: mixed lists become lists of strings."""
    kinds = {type(v) for v in values}
    if len(kinds) <= 1:
        return values
    return [v if isinstance(v, str) else json.dumps(v) for v in values]


def extract(record: Mapping[str, Any], name: str, spec: FieldSpec) -> Any:
    """Property `name` of `record` as `spec` reads it: one value, a list, or None."""
    raw = list(_walk(record, spec.path))
    if not raw and spec.fallback is not None:
        raw = list(_walk(record, spec.fallback))
    values: list[Any] = []
    for value in raw:
        if spec.kind == "naid":
            number = as_na_id(value)
            if number is not None:
                values.append(number)
        elif spec.kind == "int":
            number = as_int(value)
            if number is None:
                raise RejectRecord(f"wrong type: {name} is {describe(value)}, expected integer")
            values.append(number)
        elif spec.kind == "bool":
            flag = _as_bool(value)
            if flag is None:
                raise RejectRecord(f"wrong type: {name} is {describe(value)}, expected boolean")
            values.append(flag)
        else:
            scalar = as_scalar(value)
            if scalar is not None:
                values.append(scalar)
    if not values:
        return None
    if spec.many or len(values) > 1:
        return _homogeneous(values)
    return values[0]


def date_value(value: Any) -> str | None:
    """The logicalDate of a date object (or a date written as a bare string), else None."""
    if isinstance(value, dict):
        logical = value.get("logicalDate")
        return logical if isinstance(logical, str) and logical.strip() else None
    return value if isinstance(value, str) and value.strip() else None

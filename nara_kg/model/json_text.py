"""JSON text of the pipeline's rows: the records' properties and references in the parsed parts,
and the chunks' node properties.

orjson writes these several times as fast as the standard library, which mattered: writing
them with `json` took a quarter of chunking and a sixth of parsing on the bench's 5,000
records. What orjson does not write (integers past 64 bits, other types) the standard library
writes, in the same compact form; a NaN becomes null, as in any strict JSON. Reading stays with
the standard library: orjson reads an integer past 64 bits as a float."""

from __future__ import annotations

import json
from typing import Any

import orjson


def dumps_sorted(value: Any) -> str:
    """Compact JSON with sorted keys and non-ASCII text kept: the same value always reads the
    same, so the text can be hashed."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode("utf-8")
    except TypeError:  # orjson.JSONEncodeError: a type or an integer orjson does not write
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def dumps(value: Any) -> str:
    """Compact JSON, keys in their order, non-ASCII text kept."""
    try:
        return orjson.dumps(value).decode("utf-8")
    except TypeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

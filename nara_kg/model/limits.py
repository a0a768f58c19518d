"""Bounds a request is checked against, the same in the API and the command line."""

from __future__ import annotations

#: The largest naId: naIds are Neo4j integers (signed 64-bit); a larger one cannot be sent.
MAX_NA_ID = 2**63 - 1
#: Records a search or a local answer returns at most.
MAX_K = 50
#: The deepest community level a global search may ask for.
MAX_LEVEL = 64


def is_utf8(text: str) -> bool:
    """False for text that holds a lone surrogate: what JSON's `\\ud800` and command-line bytes
    that are not UTF-8 (decoded with surrogateescape) become, and what no encoder accepts."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True

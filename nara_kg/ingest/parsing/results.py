"""What the parser yields: a ParsedRecord (with its References and StubRecords) or a Rejected.

`RejectRecord` is the exception form of a Rejected, raised inside the parser and turned into a
Rejected (by `parse_line`) or a ValueError (by `parse_record`) at its edge.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

#: The leading words of every `Rejected.reason`, for counting rejects by kind.
REJECT_CATEGORIES: Final[tuple[str, ...]] = (
    "malformed JSON",
    "no record object",
    "missing naId",
    "unknown type",
    "wrong type",
    "invalid UTF-8",
    "empty file",
    "truncated gzip stream",
    "corrupt gzip stream",
    "truncated zip archive",
    "corrupt zip member",
    "unreadable file",
    "parser error",
)


def reject_category(reason: str) -> str:
    """The category of a reject reason (one of REJECT_CATEGORIES, else the text before ':')."""
    for category in REJECT_CATEGORIES:
        if reason.startswith(category):
            return category
    return reason.split(":", 1)[0]


@dataclass(frozen=True, slots=True)
class Reference:
    """One entry of a reference list (`schema.REFERENCE_LISTS`) that carries a naId."""

    rel: str
    na_id: int
    heading: str | None
    authority_type: str | None


@dataclass(frozen=True, slots=True)
class StubRecord:
    """A node known only from a reference or an `ancestors[]` entry."""

    na_id: int
    node_type: str
    properties: dict[str, Any]
    title: str | None
    parent_na_id: int | None
    #: References the stub's own data holds (the creators of an ancestor series), so the
    #: graph can link them even when the ancestor's full record is not in the input.
    references: tuple[Reference, ...] = ()


@dataclass(frozen=True, slots=True)
class ParsedRecord:
    na_id: int
    node_type: str
    record_kind: str
    properties: dict[str, Any]
    body_text: str | None
    title: str | None
    parent_na_id: int | None
    parent_title: str | None
    date_range: str | None
    references: tuple[Reference, ...]
    stubs: tuple[StubRecord, ...]
    org_name_aliases: tuple[int, ...]
    completeness: int
    #: Where the line came from, as passed to parse_line (iter_file: member-qualified name,
    #: 1-based physical line number, blank lines counted).
    file_name: str = ""
    line_num: int = 0


@dataclass(frozen=True, slots=True)
class Rejected:
    file_name: str
    line_num: int
    reason: str
    raw: str


class RejectRecord(Exception):
    """The record is bad; the message is the reject reason."""

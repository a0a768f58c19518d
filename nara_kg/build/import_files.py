"""The CSV files `neo4j-admin database import` reads: the chosen chunks as nodes and the
relationships the writers compute, in the import tool's format.

A node's labels and properties come from the same functions the chunk-node writer uses
(:func:`nara_kg.build.nodes.node_properties`), and the relationships from the same desired sets
the relationship writers make the graph equal (:mod:`nara_kg.build.relationships`), so that an
imported graph is the graph the writers would have written: the writers, run afterwards, find
nothing to change.

Each file's header is a file of its own (the tool accepts ``header.csv,body.csv``): property
columns and their types are known only once every row was seen, so the body is written in one
pass while the types are collected, the rows being re-read from the chunk parts.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nara_kg.build.nodes import NODE_COLUMNS, node_properties
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.chunks import iter_chunks
from nara_kg.model.edges import Edge
from nara_kg.model.schema import Label, Prop, checked_label, checked_relationship
from nara_kg.model.tables import Col

#: Separates the elements of array fields and the labels of a node. The unit separator is in no
#: text the platform keeps; a string element holding it is refused, not split.
ARRAY_DELIMITER = "\x1f"


class ImportUnsupported(ValueError):
    """A value the import format cannot carry exactly as the writers store it (a property whose
    type varies between nodes, a nested map, a non-finite number): the writers load instead."""


def node_labels(node_type: str, embed: bool) -> list[str]:
    """The labels the chunk-node writer gives a chunk (:mod:`nara_kg.graph.nodes`)."""
    labels = [Label.CHUNK.value, checked_label(node_type)]
    if embed:
        labels.append(Label.RECORD_WITH_TEXT.value)
    return labels


def _scalar_type(value: Any) -> str:
    # bool first: it is an int in Python.
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "long"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ImportUnsupported(f"non-finite number {value!r}")
        return "double"
    if isinstance(value, str):
        return "string"
    raise ImportUnsupported(f"a value of type {type(value).__name__}")


def value_type(value: Any) -> str | None:
    """The import type of a property value (``string``, ``long[]``...); None for an empty list,
    whose element type the other nodes' values tell."""
    if isinstance(value, list):
        kinds = {_scalar_type(v) for v in value}
        if len(kinds) > 1:
            raise ImportUnsupported(f"a list of mixed types {sorted(kinds)}")
        return f"{kinds.pop()}[]" if kinds else None
    return _scalar_type(value)


def _quoted(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _scalar_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def field_text(value: Any) -> str:
    """One CSV field: strings and arrays quoted (so that an empty string stays a property, as
    the writers keep it), an absent value left empty (no property)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return _quoted(value)
    if isinstance(value, list):
        parts = [_scalar_text(v) for v in value]
        if any(ARRAY_DELIMITER in part for part in parts):
            raise ImportUnsupported("an array element holds the array delimiter")
        return _quoted(ARRAY_DELIMITER.join(parts))
    return _scalar_text(value)


@dataclass
class NodeColumns:
    """The property columns seen so far, in first-seen order, with their import types."""

    types: dict[str, str | None] = field(default_factory=dict)

    def add(self, props: dict[str, Any]) -> None:
        for name, value in props.items():
            if value is None:
                continue
            kind = value_type(value)
            known = self.types.get(name)
            if name not in self.types or known is None:
                self.types[name] = kind
            elif kind is not None and kind != known:
                raise ImportUnsupported(f"property {name!r} is both {known} and {kind}")

    def names(self) -> list[str]:
        return [name for name in self.types if name != Prop.CHUNK_ID]

    def header(self) -> str:
        columns = [f"{Prop.CHUNK_ID}:ID", ":LABEL"]
        for name in self.names():
            if ":" in name or '"' in name or "," in name:
                raise ImportUnsupported(f"property name {name!r}")
            # A property that only ever held empty lists: the writers store an empty array,
            # and its element type is then that of an empty string array.
            columns.append(f"{name}:{self.types[name] or 'string[]'}")
        return ",".join(columns) + "\n"


@dataclass
class ImportFiles:
    nodes_header: Path
    nodes: Path
    relationships_header: Path
    relationships: Path
    node_count: int = 0
    relationship_count: int = 0

    def arguments(self) -> list[str]:
        return [
            f"--nodes={self.nodes_header},{self.nodes}",
            f"--relationships={self.relationships_header},{self.relationships}",
        ]


def _node_line(row: dict[str, Any], props: dict[str, Any], names: list[str]) -> str:
    labels = ARRAY_DELIMITER.join(node_labels(row[Col.NODE_TYPE], bool(row[Col.EMBED])))
    fields = [field_text(row[Col.CHUNK_ID]), _quoted(labels)]
    fields.extend(field_text(props.get(name)) for name in names)
    return ",".join(fields) + "\n"


def _columns(rows: Iterable[dict[str, Any]]) -> NodeColumns:
    columns = NodeColumns()
    for row in rows:
        columns.add(node_properties(row))
    return columns


def write_node_file(layout: WorkLayout, header: Path, body: Path) -> int:
    """The chosen chunks as import rows; the number of nodes."""
    columns = _columns(iter_chunks(layout, NODE_COLUMNS))
    names = columns.names()
    header.write_text(columns.header(), encoding="utf-8")
    count = 0
    with body.open("w", encoding="utf-8", newline="") as out:
        for row in iter_chunks(layout, NODE_COLUMNS):
            out.write(_node_line(row, node_properties(row), names))
            count += 1
    return count


def write_relationship_file(
    edges_by_type: Iterator[tuple[str, set[Edge]]], header: Path, body: Path
) -> int:
    """Every relationship (chunkId to chunkId, by type); the number written."""
    header.write_text(":START_ID,:END_ID,:TYPE\n", encoding="utf-8")
    count = 0
    with body.open("w", encoding="utf-8", newline="") as out:
        for rel, edges in edges_by_type:
            rel_type = _quoted(checked_relationship(rel))
            for source, target in sorted(edges):
                out.write(f"{_quoted(source)},{_quoted(target)},{rel_type}\n")
                count += 1
    return count

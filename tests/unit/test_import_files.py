"""The import files of the first load: fields as the writers store values, refused otherwise."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from nara_kg.build.import_files import (
    ARRAY_DELIMITER,
    ImportUnsupported,
    NodeColumns,
    field_text,
    node_labels,
    write_relationship_file,
)
from nara_kg.devserver.admin_import import import_command
from nara_kg.devserver.bulk_load import first_load
from nara_kg.ingest.layout import WorkLayout
from nara_kg.settings import Neo4jSettings


def test_strings_are_quoted_so_an_empty_string_stays_a_property() -> None:
    assert field_text("") == '""'
    assert field_text(None) == ""
    assert field_text('say "hi",\nbye') == '"say ""hi"",\nbye"'
    parsed = next(csv.reader(io.StringIO(field_text('say "hi",\nbye'))))
    assert parsed == ['say "hi",\nbye']


def test_scalars_and_arrays() -> None:
    assert field_text(True) == "true"
    assert field_text(7) == "7"
    assert field_text(0.1) == "0.1"
    assert field_text(["a", "b"]) == f'"a{ARRAY_DELIMITER}b"'
    with pytest.raises(ImportUnsupported):
        field_text([f"a{ARRAY_DELIMITER}b"])


def test_columns_take_their_type_from_every_node() -> None:
    columns = NodeColumns()
    columns.add({"chunkId": "1-0", "title": "A", "tags": [], "n": 1, "gone": None})
    columns.add({"chunkId": "2-0", "tags": ["x"], "flag": False})
    header = columns.header()
    assert header == "chunkId:ID,:LABEL,title:string,tags:string[],n:long,flag:boolean\n"
    with pytest.raises(ImportUnsupported):
        columns.add({"n": 1.5})
    with pytest.raises(ImportUnsupported):
        NodeColumns().add({"mixed": [1, "a"]})
    with pytest.raises(ImportUnsupported):
        NodeColumns().add({"nested": {"a": 1}})
    with pytest.raises(ImportUnsupported):
        NodeColumns().add({"x": float("nan")})


def test_labels_are_the_node_writers() -> None:
    assert node_labels("series", True) == ["Chunk", "series", "recordWithText"]
    assert node_labels("item", False) == ["Chunk", "item"]
    with pytest.raises(ValueError):
        node_labels("NotALabel", False)


def test_relationships_file(tmp_path: Path) -> None:
    header, body = tmp_path / "h.csv", tmp_path / "b.csv"
    count = write_relationship_file(
        iter([("Next", {("1-0", "1-1")}), ("Includes", {("2-0", "1-0"), ("2-0", "3-0")})]),
        header,
        body,
    )
    assert count == 3
    assert header.read_text() == ":START_ID,:END_ID,:TYPE\n"
    assert list(csv.reader(body.open())) == [
        ["1-0", "1-1", "Next"],
        ["2-0", "1-0", "Includes"],
        ["2-0", "3-0", "Includes"],
    ]


def test_the_database_comes_right_after_the_subcommand(tmp_path: Path) -> None:
    command = import_command(
        tmp_path, "neo4j", ["--nodes=h,b"], array_delimiter=ARRAY_DELIMITER, report=tmp_path / "r"
    )
    full = command.index("full")
    assert command[full + 1] == "neo4j"
    assert command[-1] == "--nodes=h,b"


def test_a_remote_server_is_left_to_the_writers(tmp_path: Path) -> None:
    remote = Neo4jSettings.from_env({"NEO4J_URI": "bolt://graph.example.org:7687"})
    result = first_load(remote, tmp_path / "no-home", WorkLayout(tmp_path / "work"))
    assert not result.loaded and "NEO4J_URI" in result.reason


def test_the_import_relationships_by_ranges_equal_the_whole_sets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From the record index a range at a time (no record's links held), the same relationships
    as the whole sets from every record's links, on the demo export."""
    from nara_kg.demo import generate_demo_data
    from nara_kg.devserver import bulk_load
    from tests.stage_helpers import selected_layout

    data = tmp_path / "data"
    generate_demo_data(data, records=150)
    layout = selected_layout(data, tmp_path / "work")

    def by_type(monkeypatch_changes: bool) -> dict[str, list[tuple[str, str]]]:
        if monkeypatch_changes:
            monkeypatch.setattr(bulk_load, "read_changes", lambda _layout: None)
        found: dict[str, list[tuple[str, str]]] = {}
        for rel, edges in bulk_load.desired_relationships(layout):
            found.setdefault(str(rel), []).extend(edges)
        return {rel: sorted(edges) for rel, edges in found.items() if edges}

    assert bulk_load.read_changes(layout) is not None  # the index holds the selection
    ranged = by_type(False)
    whole = by_type(True)
    assert ranged == whole
    assert {"Next", "Includes"} <= set(ranged) and len(ranged) > 2

"""iter_chunks yields exactly the chunks of the chosen rows, in selection order, whether it
reads every chunk or the first ones alone, and record_links reads the first chunks alone."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from nara_kg.demo import generate_demo_data
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.chunks import iter_chunks, record_links
from nara_kg.ingest.stages.record_selection import (
    chosen_rows_by_file,
    select_live_records,
)
from nara_kg.model.tables import Col
from tests.stage_helpers import chunked_layout


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> WorkLayout:
    root = tmp_path_factory.mktemp("iter_chunks")
    data = root / "data"
    generate_demo_data(data, records=150, seed=5)
    layout = chunked_layout(data, root / "work")
    select_live_records(data, layout)
    return layout


def _expected(layout: WorkLayout) -> list[dict[str, object]]:
    """Every row of every chunk part, kept when its record row is chosen: the plain reading."""
    rows = []
    for file_id, chosen in chosen_rows_by_file(layout):
        for row in pq.read_table(layout.chunk_part(file_id)).to_pylist():
            if row[Col.RECORD_ROW] in chosen:
                rows.append(row)
    return rows


def test_every_chosen_chunk_in_selection_order(layout: WorkLayout) -> None:
    expected = _expected(layout)
    all_rows = sum(
        pq.read_metadata(layout.chunk_part(f)).num_rows for f, _ in chosen_rows_by_file(layout)
    )
    # Some rows are not chosen (other copies of a record), so the filter has work to do.
    assert 0 < len(expected) < all_rows
    assert list(iter_chunks(layout)) == expected
    columns = [Col.CHUNK_ID, Col.NA_ID]
    assert list(iter_chunks(layout, columns)) == [{c: r[c] for c in columns} for r in expected]


def test_first_only_keeps_each_records_first_chunk(layout: WorkLayout) -> None:
    expected = [r for r in _expected(layout) if r[Col.CHUNK_SEQ_ID] == 0]
    assert len(expected) < len(_expected(layout))  # some records have several chunks
    columns = [Col.NA_ID, Col.TEXT]
    firsts = list(iter_chunks(layout, columns, first_only=True))
    assert firsts == [{c: r[c] for c in columns} for r in expected]
    assert len({r[Col.NA_ID] for r in firsts}) == len(firsts)
    links = record_links(layout)
    assert [link.na_id for link in links] == [r[Col.NA_ID] for r in expected]
    assert [link.references for link in links] == [
        tuple((rel, int(na_id)) for rel, na_id, *_ in json.loads(str(r[Col.REFERENCES])))
        for r in expected
    ]


def test_record_links_are_read_again_only_when_a_file_they_come_from_changes(
    layout: WorkLayout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from nara_kg.ingest.stages import chunks

    copy = WorkLayout(tmp_path / "work")
    shutil.copytree(layout.root, copy.root)
    reads: list[int] = []
    read = chunks._read_record_links

    def counting(layout: WorkLayout) -> list[object]:
        reads.append(1)
        return read(layout)

    monkeypatch.setattr(chunks, "_read_record_links", counting)
    first = record_links(copy)
    assert record_links(copy) == first and len(reads) == 1
    # The selection rewritten (to a new file, renamed over the old one) with one record fewer.
    table = pq.read_table(copy.selection)
    dropped = table.slice(0, table.num_rows - 1)
    pq.write_table(dropped, copy.selection.with_suffix(".tmp"))
    copy.selection.with_suffix(".tmp").replace(copy.selection)
    again = record_links(copy)
    assert len(reads) == 2 and len(again) == len(first) - 1
    # Another work directory is never answered from this one's links.
    assert record_links(layout) == first and len(reads) == 3

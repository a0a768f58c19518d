"""entity_mentions without Neo4j: linking the demo's chunks, the label score, the per-chunk
cache (an edited chunk is the only one re-linked), and the pure helpers."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from nara_kg.build import mentions as mentions_module
from nara_kg.build.label_ledger import LabelLedger
from nara_kg.build.mention_comparison import MentionComparison
from nara_kg.build.mentions import (
    _first_row_of,
    desired_mentions,
    link_mentions,
    linkable_text,
    record_years,
)
from nara_kg.demo import generate_demo_data
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.chunks import iter_chunks
from nara_kg.linking import matcher as matcher_module
from nara_kg.linking.labels import LABELS_FILE, iter_labels, load_labels, score_labels
from nara_kg.linking.normalize import NormalizedText, normalize
from nara_kg.model.schema import chunk_id
from nara_kg.model.tables import Col
from tests.stage_helpers import chunked_layout


@pytest.fixture(scope="module")
def demo_layout(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, WorkLayout]:
    root = tmp_path_factory.mktemp("mentions")
    generate_demo_data(root / "data", records=400, seed=7)
    return root / "data", chunked_layout(root / "data", root / "work")


def test_linkable_text_blanks_the_parent_line_only() -> None:
    text = "Title: A\nType: item\nPart of: Larch Basin Papers\nDates: 1950\n\nPart of: body"
    linked = linkable_text(text)
    assert len(linked) == len(text)
    assert "Larch" not in linked and linked.endswith("Part of: body")


def test_record_years_reads_every_logical_date() -> None:
    props = {"logicalDate_productionDates": ["1957-01-01"], "logicalDate_x": "1949-12-31"}
    assert record_years(props) == (1949, 1957)
    assert record_years({"title": "x"}) is None


def test_score_labels_counts_labelled_records_only() -> None:
    score = score_labels({(1, 10), (1, 11), (2, 10), (3, 99)}, {1: {10, 12}, 2: set()})
    assert (score.true_positives, score.false_positives, score.false_negatives) == (1, 2, 1)
    assert score.precision == pytest.approx(1 / 3) and score.recall == pytest.approx(0.5)


def test_demo_mentions_meet_the_label_thresholds(demo_layout: tuple[Path, WorkLayout]) -> None:
    data, layout = demo_layout
    result = link_mentions(layout, labels_path=data / LABELS_FILE)
    assert result.labels is not None and result.labels.passed, result.labels
    assert result.labels.precision >= 0.95 and result.labels.recall >= 0.80
    assert {"person", "organization", "geographicPlaceName", "topicalSubject"} <= set(
        result.by_type
    )
    assert result.share_with_mentions > 0.5
    # The pairs found are the ones written as relationships, whether read from the cache or
    # kept from the linking pass.
    assert desired_mentions(layout)
    assert result.desired == desired_mentions(layout)
    assert link_mentions(layout).desired == result.desired  # all reused from the cache


def test_the_whole_path_streams_the_same_mentions_and_score_through_disk(
    demo_layout: tuple[Path, WorkLayout], tmp_path: Path
) -> None:
    """What the whole path keeps on disk instead of in memory: the desired set (compared in
    SQLite) and the label score (from the ledger rebuilt from the labels file and the desired
    pairs) equal the in-memory set and score."""
    data, layout = demo_layout
    in_memory = link_mentions(layout, labels_path=data / LABELS_FILE)
    with MentionComparison(tmp_path / "comparison.sqlite") as comparison:
        streamed = link_mentions(layout, desired=comparison)
        comparison.add_current([])
        comparison.seal()
        on_disk = {(a, b): (n, s) for rows in comparison.desired() for a, b, n, s in rows}
        with LabelLedger(tmp_path / "ledger.sqlite") as ledger:
            labels = data / LABELS_FILE
            ledger.rebuild("labels", iter_labels(labels), comparison.record_pairs(), "g1")
            score = ledger.score()
    assert on_disk == in_memory.desired and on_disk
    assert not streamed.desired and not streamed.record_pairs  # nothing of it held
    assert streamed.records_touched == in_memory.records_touched > 0
    assert score == in_memory.labels


def test_linking_and_the_word_index_share_one_normalization_per_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole path's word index reads each chunk's normalized text from the linker's own
    normalization: one `normalize` per chunk (it was two, and most of the step's time), and
    the mentions are those of linking alone."""
    generate_demo_data(tmp_path / "data", records=80, seed=3)
    alone = link_mentions(chunked_layout(tmp_path / "data", tmp_path / "alone"))
    layout = chunked_layout(tmp_path / "data", tmp_path / "work")
    calls: list[str] = []

    def counted(text: str) -> NormalizedText:
        calls.append(text)
        return normalize(text)

    monkeypatch.setattr(mentions_module, "normalize", counted)
    monkeypatch.setattr(matcher_module, "normalize", counted)
    seen: list[bool] = []

    def on_chunk(row: Mapping[str, Any], normalized: NormalizedText) -> None:
        seen.append(normalized.text == normalize(linkable_text(row[Col.TEXT])).text)

    result = link_mentions(layout, on_chunk=on_chunk)
    assert result.relinked == len(seen) == len(calls) > 0
    assert all(seen)
    assert result.desired == alone.desired and result.desired


def test_rerun_reuses_and_an_edited_chunk_alone_is_relinked(
    demo_layout: tuple[Path, WorkLayout],
) -> None:
    _, layout = demo_layout
    before_result = link_mentions(layout)
    before = desired_mentions(layout)
    again = link_mentions(layout)
    assert again.relinked == 0 and again.reused == before_result.chunks
    # Edit one item chunk: its text now names a person it did not name before.
    labels = load_labels(layout.root.parent / "data" / LABELS_FILE)
    person = next(
        row
        for row in iter_chunks(layout, [Col.NA_ID, Col.NODE_TYPE, Col.PROPS, Col.CHUNK_SEQ_ID])
        if row[Col.NODE_TYPE] == "person" and row[Col.CHUNK_SEQ_ID] == 0
    )
    person_props = json.loads(person[Col.PROPS])
    last, first = person_props["heading"].split(",")[:2]
    name = f"{first.strip()} {last.strip()}"
    target_record = next(r for r, names in labels.items() if person[Col.NA_ID] not in names)
    target = chunk_id(target_record, 0)
    part = next(
        p
        for p in sorted(layout.chunks_dir.glob("*.chunks.parquet"))
        if target in pq.read_table(p, columns=[Col.CHUNK_ID])[Col.CHUNK_ID].to_pylist()
    )
    table = pq.read_table(part)
    rows = table.to_pylist()
    for row in rows:
        if row[Col.CHUNK_ID] == target:
            row[Col.TEXT] = f"{row[Col.TEXT]}\n\nSigned by {name}."
            row[Col.ROW_HASH] = "edited-" + row[Col.ROW_HASH]
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), part)
    edited = link_mentions(layout)
    assert edited.relinked == 1
    after = desired_mentions(layout)
    changed = {edge for edge in before.keys() | after.keys() if before.get(edge) != after.get(edge)}
    assert changed == {(chunk_id(person[Col.NA_ID], 0), target)}


def test_chunks_out_of_step_with_the_first_chunks_are_a_clear_error() -> None:
    first_rows = iter([{Col.NA_ID: 1}, {Col.NA_ID: 3}])
    assert _first_row_of(first_rows, 1) == {Col.NA_ID: 1}
    with pytest.raises(RuntimeError, match="record 2 came where the first chunks give 3"):
        _first_row_of(first_rows, 2)
    with pytest.raises(RuntimeError, match="give none"):
        _first_row_of(first_rows, 4)

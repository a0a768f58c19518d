"""A changed input file re-chunks only its changed records: the others keep their rows from the
previous part, and the part equals one chunked from nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

from nara_kg.demo import generate_demo_data
from nara_kg.embedding.standin import StandinEmbedder
from nara_kg.ingest.inputs import file_id_of
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.chunks import ChunkResult, chunk_records
from nara_kg.ingest.stages.raw_jsonl import scan_inputs
from nara_kg.ingest.stages.record_selection import parse_inputs
from nara_kg.model.tables import Col


class CountingEmbedder(StandinEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.counted: list[str] = []

        self.batches: list[int] = []

    def count_tokens(self, text: str) -> int:
        self.counted.append(text)
        return super().count_tokens(text)

    def count_tokens_many(self, texts: list[str]) -> list[int]:
        self.batches.append(len(texts))
        return [super(CountingEmbedder, self).count_tokens(text) for text in texts]


def _chunk(
    data: Path,
    layout: WorkLayout,
    embedder: CountingEmbedder,
    *,
    force: bool = False,
    batch: bool = False,
) -> ChunkResult:
    files = scan_inputs(data, layout)
    parse_inputs(data, files, layout)
    return chunk_records(
        files,
        layout,
        count_tokens=embedder.count_tokens,
        count_tokens_many=embedder.count_tokens_many if batch else None,
        max_tokens=embedder.max_tokens,
        chunker_key=embedder.key,
        force=force,
    )


def _parts(layout: WorkLayout) -> dict[str, list[dict[str, object]]]:
    return {
        path.name: pq.read_table(path).to_pylist()
        for path in sorted(layout.chunks_dir.glob("*.chunks.parquet"))
    }


def test_a_changed_file_rechunks_only_its_changed_record(tmp_path: Path) -> None:
    data = tmp_path / "data"
    generate_demo_data(data, records=200, seed=3)
    layout = WorkLayout(tmp_path / "work")
    layout.ensure()
    first = _chunk(data, layout, CountingEmbedder())
    assert first.records_reused == 0

    # Edit one record's description in place, in the file that holds the most records.
    files = sorted(
        (p for p in data.rglob("*.jsonl") if p.parent != data), key=lambda p: p.stat().st_size
    )
    target = files[-1]
    lines = target.read_text(encoding="utf-8").splitlines()
    payload = json.loads(lines[3])
    marker = "Re-examined by the reuse test."
    payload["record"]["scopeAndContentNote"] = marker
    lines[3] = json.dumps(payload, ensure_ascii=False)
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")

    embedder = CountingEmbedder()
    second = _chunk(data, layout, embedder)
    assert second.parts_chunked == 1
    # Only the edited record was tokenized again (its header, then header + text).
    assert 1 <= len(embedder.counted) <= 4
    assert any(marker in text for text in embedder.counted)
    edited_na_id = payload["record"]["naId"]
    reused_parts = _parts(layout)
    edited_part = next(
        rows for rows in reused_parts.values() if any(r[Col.NA_ID] == edited_na_id for r in rows)
    )
    # Every other record of the file (stubs included) kept its rows.
    assert second.records_reused == len({row[Col.RECORD_ROW] for row in edited_part}) - 1

    fresh = CountingEmbedder()
    _chunk(data, layout, fresh, force=True)
    assert _parts(layout) == reused_parts
    assert len(fresh.counted) > 100  # a fresh chunking tokenizes every record again
    assert any(
        row[Col.NA_ID] == edited_na_id and marker in str(row[Col.TEXT])
        for rows in reused_parts.values()
        for row in rows
    )


def test_batch_counted_tokens_give_the_same_parts_with_few_single_counts(tmp_path: Path) -> None:
    data = tmp_path / "data"
    generate_demo_data(data, records=200, seed=3)
    layout = WorkLayout(tmp_path / "work")
    layout.ensure()
    one_by_one = CountingEmbedder()
    _chunk(data, layout, one_by_one)
    expected = _parts(layout)

    batched = CountingEmbedder()
    _chunk(data, layout, batched, force=True, batch=True)
    assert _parts(layout) == expected
    assert sum(batched.batches) > 0.9 * len(one_by_one.counted)
    # Only what chunking splits further (a part over the token budget) is counted alone.
    assert len(batched.counted) < 0.1 * len(one_by_one.counted)


def test_a_previous_part_with_other_columns_is_chunked_again_whole(tmp_path: Path) -> None:
    data = tmp_path / "data"
    generate_demo_data(data, records=120, seed=4)
    layout = WorkLayout(tmp_path / "work")
    layout.ensure()
    _chunk(data, layout, CountingEmbedder())
    expected = _parts(layout)
    target = max(
        (p for p in data.rglob("*.jsonl") if p.parent != data), key=lambda p: p.stat().st_size
    )
    # The part of that file as an older version might have written it: a column short.
    part = layout.chunk_part(file_id_of(target.relative_to(data).as_posix()))
    pq.write_table(pq.read_table(part).drop_columns([Col.TOKENS]), part)
    target.write_text(target.read_text(encoding="utf-8") + "\n", encoding="utf-8")

    second = _chunk(data, layout, CountingEmbedder())
    assert second.parts_chunked == 1 and second.records_reused == 0
    assert _parts(layout) == expected

"""Input just past the first round's guarantees: each a line or a file that once failed a
whole build (or passed silently), now a reject or a bounded, logged repair (unit level: the
pipeline functions on files made here)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from nara_kg.embedding.encoder import Embedder
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.chunks import chunk_records
from nara_kg.ingest.stages.raw_jsonl import scan_inputs
from nara_kg.ingest.stages.record_selection import parse_inputs
from nara_kg.model.tables import Col
from tests.reliability.test_input_faults import record, write


def _chunk_rows(data: Path, work: Path, embedder: Any) -> dict[int, list[dict[str, Any]]]:
    """naId -> its chunk rows, after scanning, parsing and chunking `data` into `work`."""
    layout = WorkLayout(work)
    layout.ensure()
    files = scan_inputs(data, layout)
    parse_inputs(data, files, layout)
    chunk_records(
        files,
        layout,
        count_tokens=embedder.count_tokens,
        count_tokens_many=embedder.count_tokens_many,
        max_tokens=embedder.max_tokens,
        chunker_key=embedder.key,
    )
    rows: dict[int, list[dict[str, Any]]] = {}
    for part in sorted(layout.chunks_dir.glob("*.chunks.parquet")):
        for row in pq.read_table(part).to_pylist():
            rows.setdefault(row[Col.NA_ID], []).append(row)
    return rows


def test_a_header_past_the_token_budget_is_clipped_and_the_file_still_chunks(
    tmp_path: Path,
) -> None:
    embedder = Embedder()  # the real model's tokenizer: "!" and "?" are a token each
    parent = {"naId": 9940000, "distance": 1, "levelOfDescription": "series", "title": "?" * 200}
    long_header = record(
        9940001,
        title="U.S.-" + "!" * 250,
        ancestors=[parent],
        scopeAndContentNote="A scope note long enough to need a chunk of its own. " * 30,
    )
    title_only = record(9940002, title="U.S.-" + "!" * 250, ancestors=[parent])
    others = [record(1, scopeAndContentNote="Flood control on the river. " * 40), record(2)]
    write(tmp_path / "clean" / "a.jsonl", others)
    write(tmp_path / "hostile" / "a.jsonl", [others[0], long_header, title_only, others[1]])
    clean = _chunk_rows(tmp_path / "clean", tmp_path / "clean-work", embedder)
    hostile = _chunk_rows(tmp_path / "hostile", tmp_path / "hostile-work", embedder)

    budget = embedder.max_tokens
    for na_id in (9940001, 9940002):
        rows = hostile[na_id]
        assert all(embedder.count_tokens(row[Col.TEXT]) <= budget for row in rows)
        assert all(row[Col.TEXT].startswith("Title: U.S.-!!!") for row in rows)
    # Every chunk keeps at least half the window for its text.
    body = [row for row in hostile[9940001] if "\n\n" in row[Col.TEXT]]
    head = body[0][Col.TEXT].split("\n\n")[0]
    assert embedder.count_tokens(head + "\n\n") <= budget // 2
    assert "".join(row[Col.TEXT].split("\n\n", 1)[1] for row in body).replace(" ", "") == (
        "A scope note long enough to need a chunk of its own. " * 30
    ).replace(" ", "")
    # The other records' chunks are what they are without the hostile lines.
    for na_id in (1, 2):
        assert [row[Col.TEXT] for row in hostile[na_id]] == [r[Col.TEXT] for r in clean[na_id]]
    assert json.loads(hostile[9940001][0][Col.PROPS])["naId"] == 9940001

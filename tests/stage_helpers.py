"""Helpers shared by the tests that run the file stages without Neo4j."""

from __future__ import annotations

from pathlib import Path

from nara_kg.embedding.standin import StandinEmbedder
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.chunks import chunk_records
from nara_kg.ingest.stages.raw_jsonl import scan_inputs
from nara_kg.ingest.stages.record_selection import parse_inputs


def chunked_layout(data: Path, work: Path) -> WorkLayout:
    """`data` scanned, parsed and chunked into `work` with the stand-in model's tokenizer."""
    layout = WorkLayout(work)
    layout.ensure()
    files = scan_inputs(data, layout)
    parse_inputs(data, files, layout)
    embedder = StandinEmbedder()
    chunk_records(
        files,
        layout,
        count_tokens=embedder.count_tokens,
        max_tokens=embedder.max_tokens,
        chunker_key=embedder.key,
    )
    return layout

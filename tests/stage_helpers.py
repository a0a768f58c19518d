"""Helpers shared by the tests that run the file stages without Neo4j."""

from __future__ import annotations

from pathlib import Path

from nara_kg.embedding.standin import StandinEmbedder
from nara_kg.ingest.inputs import InputFile
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.chunks import chunk_records
from nara_kg.ingest.stages.parsed_records import parse_file
from nara_kg.ingest.stages.raw_jsonl import scan_inputs
from nara_kg.ingest.stages.record_selection import parse_inputs, select_live_records


def chunked_layout(data: Path, work: Path) -> WorkLayout:
    """`data` scanned, parsed and chunked into `work` with the stand-in model's tokenizer."""
    layout = WorkLayout(work)
    layout.ensure()
    files = scan_inputs(data, layout)
    parse_inputs(data, files, layout)
    chunk_with_standin(files, layout)
    return layout


def chunk_with_standin(files: list[InputFile], layout: WorkLayout) -> None:
    embedder = StandinEmbedder()
    chunk_records(
        files,
        layout,
        count_tokens=embedder.count_tokens,
        max_tokens=embedder.max_tokens,
        chunker_key=embedder.key,
    )


def selected_layout(data: Path, work: Path) -> WorkLayout:
    """`data` parsed and chunked file by file, then selected, as a build does: the selection's
    change set then has a base, and the record index holds the selection. (chunked_layout's
    whole-export parse selects before it chunks.)"""
    layout = WorkLayout(work)
    layout.ensure()
    files = scan_inputs(data, layout)
    for file in files:
        parse_file(file, layout)
    chunk_with_standin(files, layout)
    select_live_records(data, layout)
    return layout

"""The entry point: generate a synthetic export and write it as shards under one folder.

Shards follow the real export's layout (descriptions/record-groups|collections/<folder>/ and
authority-records/<type>/); a marker file lets a later run delete the shards it made before.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from nara_kg.demo.authority_records import AUTHORITY_FOLDERS, authority_lines
from nara_kg.demo.build import build_world
from nara_kg.demo.questions import make_questions
from nara_kg.demo.real_creators import real_creator_lines
from nara_kg.linking.labels import LABELS_FILE

SHARD_LINES: Final = 200
MIN_RECORDS: Final = 40
#: Written into out_dir so a later run may delete shards it made before (and nothing else).
MARKER_FILE: Final = ".nara-demo-data"
QUESTIONS_FILE: Final = "questions.jsonl"

#: The order of `records_by_type` in the summary.
_RECORD_TYPE_ORDER: Final = (
    "item",
    "fileUnit",
    "series",
    "recordGroup",
    "collection",
    "person",
    "organization",
    "geographicPlaceName",
    "specificRecordsType",
    "topicalSubject",
)


@dataclass(frozen=True)
class DemoDataSummary:
    """What `generate_demo_data` wrote: the shard files, record counts, the questions and the
    mention labels."""

    files: list[Path]
    records_by_type: dict[str, int]
    questions_path: Path
    labels_path: Path


def _shards(lines: list[str], size: int) -> Iterator[tuple[int, list[str]]]:
    """(1-based shard number, lines) chunks of `size` lines."""
    for index, start in enumerate(range(0, len(lines), size), start=1):
        yield index, lines[start : start + size]


def _write(path: Path, lines: list[str]) -> None:
    """The lines, each ending in a bare newline on every platform."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        for line in lines:
            handle.write(line)
            handle.write("\n")


def _remove_stale(out_dir: Path, keep: set[Path]) -> None:
    """Delete shards a previous run wrote that this run did not, only under a marked dir."""
    if not (out_dir / MARKER_FILE).is_file():
        return
    roots = [out_dir / "descriptions", out_dir / "authority-records"]
    for root in roots:
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*.jsonl")):
            if path not in keep:
                path.unlink()


def generate_demo_data(
    out_dir: Path,
    *,
    records: int = 400,
    seed: int = 7,
    real_export_dir: Path | None = None,
    shard_lines: int = SHARD_LINES,
) -> DemoDataSummary:
    """Write a synthetic export of about `records` records (all ten types) under `out_dir`.

    Same arguments, same bytes. With `real_export_dir`, also writes authority records for the
    creators that the real records there reference.
    """
    if records < MIN_RECORDS:
        raise ValueError(f"records must be at least {MIN_RECORDS}, got {records}")
    if shard_lines < 1:
        raise ValueError(f"shard_lines must be at least 1, got {shard_lines}")
    world = build_world(records, seed)
    real: dict[str, list[str]] = {}
    if real_export_dir is not None and real_export_dir.is_dir():
        real = real_creator_lines(world, real_export_dir)

    planned: list[tuple[Path, list[str]]] = []
    for top in world.tops:
        group = "record-groups" if top.level == "recordGroup" else "collections"
        for index, shard in _shards(top.lines, shard_lines):
            planned.append(
                (
                    out_dir / "descriptions" / group / top.folder / f"{top.folder}-{index}.jsonl",
                    shard,
                )
            )
    for kind, lines in authority_lines(world, real).items():
        folder = AUTHORITY_FOLDERS[kind]
        for index, shard in _shards(lines, shard_lines):
            planned.append(
                (out_dir / "authority-records" / folder / f"{folder}-{index}.jsonl", shard)
            )

    out_dir.mkdir(parents=True, exist_ok=True)
    _remove_stale(out_dir, {path for path, _ in planned})
    (out_dir / MARKER_FILE).write_text(
        json.dumps({"generator": "nara_kg.demo_data", "records": records, "seed": seed}) + "\n",
        encoding="utf-8",
    )
    for path, lines in planned:
        _write(path, lines)
    questions_path = out_dir / QUESTIONS_FILE
    _write(questions_path, [json.dumps(q, ensure_ascii=False) for q in make_questions(world)])
    labels_path = out_dir / LABELS_FILE
    _write(labels_path, [json.dumps(label, ensure_ascii=False) for label in world.labels])
    return DemoDataSummary(
        files=sorted(path for path, _ in planned),
        records_by_type={
            kind: world.counts[kind] for kind in _RECORD_TYPE_ORDER if world.counts[kind]
        },
        questions_path=questions_path,
        labels_path=labels_path,
    )

"""What the per-file assets tell Dagster about their versions: a code version per stage, and a
data version from the files' content and the stage's parameters.

Dagster stamps one data version on every partition an asset materializes in one step
(`_get_output_asset_events` in dagster's execute_step), so the partitions of a run over several
files cannot each carry their own. The data version of a stage is therefore the same for every
partition at a given state of the export: a digest of the content hash of every file the
partitions name (as `raw_jsonl` last scanned it; for a file not scanned yet, its own) with the
stage's parameters and those of the stages before it. A run over one file or over a range of
them, with nothing changed, gives the same version again, so what is downstream stays
"Synced"; a file whose content changed (once its partition is run), a new model or new
chunking settings give the stages they affect a new version, and Dagster marks what reads them
"Unsynced".
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import dagster as dg

from nara_kg.ingest.chunking import SEED_CHUNK_OVERLAP, SEED_CHUNK_SIZE
from nara_kg.ingest.inputs import file_id_of, sha256_of
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.parsing.parse import PARSER_VERSION
from nara_kg.ingest.stages.common import read_json, write_json

#: Stage -> code version. Raise a stage's version when its output for the same input changes
#: (a new column, a different split): Dagster then shows it, and what reads it, as changed.
STAGE_CODE_VERSIONS: Mapping[str, str] = {
    "raw_jsonl": "raw_jsonl-1",
    "parsed_records": f"parsed_records-{PARSER_VERSION}",
    "chunks": "chunks-1",
    "chunk_embeddings": "chunk_embeddings-1",
}
#: The stages in pipeline order: each one's parameters include those of the stages before it.
STAGES = tuple(STAGE_CODE_VERSIONS)
#: Content of a partition whose file is neither scanned nor on disk.
MISSING = "missing"


def stage_parameters(
    stage: str, *, max_body_chars: int, model_key: str, max_tokens: int
) -> dict[str, Any]:
    """The settings a stage's output depends on, its upstream stages' included."""
    own: dict[str, dict[str, Any]] = {
        "raw_jsonl": {},
        "parsed_records": {"max_body_chars": max_body_chars},
        "chunks": {
            "chunk_size": SEED_CHUNK_SIZE,
            "chunk_overlap": SEED_CHUNK_OVERLAP,
            "chunker_model": model_key,
            "max_tokens": max_tokens,
        },
        "chunk_embeddings": {"model_key": model_key},
    }
    parameters: dict[str, Any] = {}
    for name in STAGES[: STAGES.index(stage) + 1]:
        parameters.update(own[name])
    return parameters


def content_hash(data_dir: Path, layout: WorkLayout, rel_path: str) -> str:
    """The file's content hash before `raw_jsonl` has scanned it: computed once per size and
    mtime and kept apart from the scans, which say what is built (the input sensor reads them),
    so that the version is the same before and after the file's own run scans it."""
    path = data_dir / rel_path
    if not path.is_file():
        return MISSING
    stat = path.stat()
    cache = layout.root / "content_hashes" / f"{file_id_of(rel_path)}.json"
    known = read_json(cache)
    if known and known.get("size") == stat.st_size and known.get("mtime_ns") == stat.st_mtime_ns:
        return str(known["sha256"])
    sha256 = sha256_of(path)
    write_json(cache, {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": sha256})
    return sha256


def scanned_contents(
    data_dir: Path, layout: WorkLayout, rel_paths: Iterable[str]
) -> dict[str, str]:
    """rel_path -> the content hash `raw_jsonl` recorded for it, else the file's own."""
    contents: dict[str, str] = {}
    for rel_path in rel_paths:
        entry = read_json(layout.raw_entry(file_id_of(rel_path)))
        contents[rel_path] = (
            str(entry["sha256"]) if entry else content_hash(data_dir, layout, rel_path)
        )
    return contents


def stage_data_version(
    stage: str, parameters: Mapping[str, Any], contents: Mapping[str, str]
) -> dg.DataVersion:
    """The data version of `stage` over files with these contents and these parameters."""
    payload = json.dumps(
        {
            "stage": stage,
            "code_version": STAGE_CODE_VERSIONS[stage],
            "parameters": dict(sorted(parameters.items())),
            "files": sorted(contents.items()),
        },
        sort_keys=True,
    )
    return dg.DataVersion(hashlib.sha256(payload.encode()).hexdigest()[:32])


def data_versions(
    data_dir: Path,
    layout: WorkLayout,
    partition_keys: Iterable[str],
    *,
    max_body_chars: int,
    model_key: str,
    max_tokens: int,
) -> dict[str, dg.DataVersion]:
    """Stage -> its data version over the files the partitions name."""
    contents = scanned_contents(data_dir, layout, partition_keys)
    return {
        stage: stage_data_version(
            stage,
            stage_parameters(
                stage, max_body_chars=max_body_chars, model_key=model_key, max_tokens=max_tokens
            ),
            contents,
        )
        for stage in STAGES
    }


def scanned_state(layout: WorkLayout, rel_path: str) -> str | None:
    """ "size:mtime_ns" of the file as `raw_jsonl` last scanned it (None if never): what the
    input sensor compares the disk with, so that it and `nara-kg build` agree on what is built."""
    entry = read_json(layout.raw_entry(file_id_of(rel_path)))
    if entry is None:
        return None
    return f"{entry['size']}:{entry['mtime_ns']}"

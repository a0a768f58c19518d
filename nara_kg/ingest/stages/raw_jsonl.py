"""raw_jsonl: each input file's size and content hash, the key every later stage skips on."""

from __future__ import annotations

from pathlib import Path

from nara_kg.ingest.inputs import (
    FileVanished,
    InputFile,
    file_id_of,
    list_input_paths,
    sha256_of,
    special_file_kind,
)
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.common import read_json, write_json


def scan_file(
    data_dir: Path, rel_path: str, layout: WorkLayout, *, force: bool = False
) -> InputFile:
    """The file's size and content hash. The hash is reused while size and mtime are unchanged
    (re-hashing a large export every night costs as much as reading it). Raises `FileVanished`
    for a file that is gone or has become something else than a regular file."""
    layout.ensure()
    path = data_dir / rel_path
    if not path.is_file():
        kind = special_file_kind(path)
        raise FileVanished(
            f"input file {path} "
            + (f"is no longer a regular file but {kind}" if kind else "does not exist")
        )
    try:
        return _scan(path, rel_path, layout, force=force)
    except FileNotFoundError as error:  # removed while it was being hashed
        raise FileVanished(f"input file {path} was removed while it was read") from error


def _scan(path: Path, rel_path: str, layout: WorkLayout, *, force: bool) -> InputFile:
    stat = path.stat()
    entry_path = layout.raw_entry(file_id_of(rel_path))
    known = None if force else read_json(entry_path)
    if (
        known is not None
        and known.get("size") == stat.st_size
        and known.get("mtime_ns") == stat.st_mtime_ns
    ):
        sha256 = str(known["sha256"])
    else:
        sha256 = sha256_of(path)
        write_json(
            entry_path,
            {
                "rel_path": rel_path,
                "size": stat.st_size,
                "mtime_ns": stat.st_mtime_ns,
                "sha256": sha256,
            },
        )
    return InputFile(path=path, rel_path=rel_path, size=stat.st_size, sha256=sha256)


def scanned_file(data_dir: Path, rel_path: str, layout: WorkLayout) -> InputFile:
    """The file as `raw_jsonl` last saw it (the later stages work from that, not the disk)."""
    entry = read_json(layout.raw_entry(file_id_of(rel_path)))
    if entry is None:
        raise FileNotFoundError(f"{rel_path} has not been scanned: materialize raw_jsonl first")
    return InputFile(
        path=data_dir / rel_path, rel_path=rel_path, size=entry["size"], sha256=entry["sha256"]
    )


def scan_inputs(data_dir: Path, layout: WorkLayout, *, force: bool = False) -> list[InputFile]:
    """Every input file under `data_dir`, scanned (the whole-export form of `scan_file`); a
    file that vanishes between listing and hashing is left out."""
    files = []
    for rel in list_input_paths(data_dir):
        try:
            files.append(scan_file(data_dir, rel, layout, force=force))
        except FileVanished:
            continue
    return files

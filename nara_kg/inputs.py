"""Finding the input files of an export and fingerprinting them."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

#: Suffixes of files that hold records, longest first so `.jsonl.gz` wins over `.gz`.
INPUT_SUFFIXES: tuple[str, ...] = (".jsonl.gz", ".json.gz", ".jsonl", ".json", ".zip")
#: Top folders of the real export layout; when any is present only they are read, so files
#: such as an evaluation question file beside them are never mistaken for records.
EXPORT_TOP_FOLDERS: tuple[str, ...] = ("descriptions", "authority-records")


@dataclass(frozen=True, slots=True)
class InputFile:
    path: Path
    #: Path relative to the data directory, with forward slashes: the stable name of the file.
    rel_path: str
    size: int
    sha256: str

    @property
    def file_id(self) -> str:
        return file_id_of(self.rel_path)


def file_id_of(rel_path: str) -> str:
    """A short, filesystem-safe key derived from the relative path (not the content)."""
    return hashlib.sha1(rel_path.encode("utf-8")).hexdigest()[:16]


def is_input_file(path: Path) -> bool:
    name = path.name.lower()
    return path.is_file() and not name.startswith(".") and name.endswith(INPUT_SUFFIXES)


def _candidate_paths(data_dir: Path) -> Iterator[Path]:
    roots = [data_dir / top for top in EXPORT_TOP_FOLDERS if (data_dir / top).is_dir()]
    for root in roots or [data_dir]:
        yield from root.rglob("*")


def sha256_of(path: Path, chunk_size: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(chunk_size):
            digest.update(block)
    return digest.hexdigest()


def list_input_paths(data_dir: Path) -> list[str]:
    """The relative paths of every record file under `data_dir`, sorted (no hashing: cheap
    enough for a sensor tick or a graph-wide step)."""
    if not data_dir.is_dir():
        raise FileNotFoundError(f"input directory {data_dir} does not exist (set NARA_DATA_DIR)")
    return sorted(
        path.relative_to(data_dir).as_posix()
        for path in _candidate_paths(data_dir)
        if is_input_file(path)
    )


def discover_input_files(data_dir: Path) -> list[InputFile]:
    """Every record file under `data_dir`, sorted by relative path (a stable processing order)."""
    if not data_dir.is_dir():
        raise FileNotFoundError(f"input directory {data_dir} does not exist (set NARA_DATA_DIR)")
    files = [
        InputFile(
            path=path,
            rel_path=path.relative_to(data_dir).as_posix(),
            size=path.stat().st_size,
            sha256=sha256_of(path),
        )
        for path in _candidate_paths(data_dir)
        if is_input_file(path)
    ]
    return sorted(files, key=lambda f: f.rel_path)

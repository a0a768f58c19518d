"""Finding the input files of an export and fingerprinting them."""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field
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


def sha256_of(path: Path, chunk_size: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(chunk_size):
            digest.update(block)
    return digest.hexdigest()


#: The reject category of a file that cannot be input (see `SkippedFile.reason`).
SKIPPED_FILE = "skipped file"


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A file of the export that cannot be read as input, and why (a file-level reject)."""

    rel_path: str
    detail: str

    @property
    def reason(self) -> str:
        return f"{SKIPPED_FILE}: {self.detail}"


@dataclass
class InputTree:
    files: list[str] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)


class FileVanished(FileNotFoundError):
    """A file listed as input that is gone, unreadable or no longer a regular file when a
    stage opens it: a skipped file, not a failed run. The next listing sees it as it is then
    (gone: its records leave the graph; unreadable, a FIFO or the like: a file-level reject
    that keeps its last parse)."""


def special_file_kind(path: Path) -> str | None:
    """What a path that is neither a regular file nor a folder is (a FIFO, a socket, a
    device), or None. Reading a FIFO would block the build; such a file is a file-level
    reject that keeps its last parse, like an unreadable one."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    kinds = (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    )
    return next((name for test, name in kinds if test(mode)), None)


def _walk_roots(data_dir: Path) -> list[Path]:
    roots = [data_dir / top for top in EXPORT_TOP_FOLDERS if (data_dir / top).is_dir()]
    return roots or [data_dir]


def _has_input_name(name: str) -> bool:
    lowered = name.lower()
    return not lowered.startswith(".") and lowered.endswith(INPUT_SUFFIXES)


def scan_input_tree(data_dir: Path, *, follow_external_links: bool = False) -> InputTree:
    """Every record file under `data_dir` (sorted relative paths), and the files that cannot
    be input, with the reason: a broken symbolic link, a link loop, a link that leads outside
    the folder (followed only with `follow_external_links`), an unreadable file or folder, a
    FIFO, socket or device under a record file's name. Never raises
    for a file: discovery must not fail a run."""
    if not data_dir.is_dir():
        raise FileNotFoundError(f"input directory {data_dir} does not exist (set NARA_DATA_DIR)")
    base = data_dir.resolve()
    tree = InputTree()

    def rel(path: Path) -> str:
        return path.relative_to(data_dir).as_posix()

    for root in _walk_roots(data_dir):
        unreadable: list[OSError] = []
        for folder, subfolders, names in os.walk(root, onerror=unreadable.append):
            subfolders.sort()
            for name in sorted(names):
                if not _has_input_name(name):
                    continue
                path = Path(folder) / name
                if path.is_symlink():
                    try:
                        target = path.resolve(strict=False)
                    except (RuntimeError, OSError):  # ELOOP: Python 3.11 raises RuntimeError
                        tree.skipped.append(SkippedFile(rel(path), "symbolic link loop"))
                        continue
                    if not target.exists():
                        tree.skipped.append(SkippedFile(rel(path), "broken symbolic link"))
                        continue
                    if not follow_external_links and not target.is_relative_to(base):
                        tree.skipped.append(
                            SkippedFile(
                                rel(path),
                                f"symbolic link to {target}, outside the data folder "
                                "(NARA_KG_FOLLOW_EXTERNAL_LINKS=1 follows such links)",
                            )
                        )
                        continue
                if not path.is_file():
                    kind = special_file_kind(path)
                    if kind is not None:
                        tree.skipped.append(SkippedFile(rel(path), f"not a regular file: {kind}"))
                    continue
                if not os.access(path, os.R_OK):
                    tree.skipped.append(SkippedFile(rel(path), "not readable: permission denied"))
                    continue
                tree.files.append(rel(path))
        for error in unreadable:
            where = Path(error.filename) if error.filename else root
            tree.skipped.append(
                SkippedFile(rel(where), f"folder not readable: {error.strerror or error}")
            )
    tree.files.sort()
    tree.skipped.sort(key=lambda skipped: skipped.rel_path)
    return tree


def list_input_paths(data_dir: Path, *, follow_external_links: bool = False) -> list[str]:
    """The relative paths of every readable record file under `data_dir`, sorted (no hashing:
    cheap enough for a sensor tick or a graph-wide step)."""
    return scan_input_tree(data_dir, follow_external_links=follow_external_links).files


def discover_input_files(data_dir: Path) -> list[InputFile]:
    """Every readable record file under `data_dir` with its hash, sorted by relative path."""
    files = []
    for rel_path in list_input_paths(data_dir):
        path = data_dir / rel_path
        files.append(
            InputFile(
                path=path, rel_path=rel_path, size=path.stat().st_size, sha256=sha256_of(path)
            )
        )
    return files

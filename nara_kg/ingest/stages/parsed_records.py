"""parsed_records: one input file -> its records part and rejects part (and the parse stats
kept beside them), skipped while the file's content and the body limit are unchanged; in a
changed file, a line whose bytes are unchanged keeps the rows its last parse made."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from nara_kg.ingest.inputs import FileVanished, InputFile
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.parsing.parse import PARSER_VERSION
from nara_kg.ingest.parsing.readers import iter_file, iter_lines_with, parse_line
from nara_kg.ingest.parsing.results import ParsedRecord, Rejected
from nara_kg.ingest.records import (
    DEFAULT_MAX_BODY_CHARS,
    DuplicateLine,
    ParseStats,
    ReusedLine,
    write_parsed_file,
)
from nara_kg.ingest.stages.common import (
    PARQUET_DAMAGE,
    parquet_readable,
    read_json,
    write_json,
)
from nara_kg.model.progress import Log, quiet
from nara_kg.model.tables import Col


@dataclass
class FileParseResult(ParseStats):
    """One file's parse statistics, kept beside its parts, and whether it was parsed now
    (False: its content and the body limit were unchanged, so the parts were reused)."""

    rel_path: str = ""
    parsed: bool = False
    sha256: str = ""
    seconds: float = 0.0
    max_body_chars: int = DEFAULT_MAX_BODY_CHARS
    parser_version: int = PARSER_VERSION

    @classmethod
    def from_json(cls, known: dict[str, Any]) -> FileParseResult:
        cut = [(int(a), int(b), int(c)) for a, b, c in known.get("cut", [])]
        return cls(**{**known, "cut": cut, "parsed": False})


def line_digest(line: bytes) -> str:
    return hashlib.blake2b(line, digest_size=16).hexdigest()


class LineReuse:
    """A line parser for a changed file: a line with the bytes of a line the last parse turned
    into a record gets that record's rows (renumbered); any other line is parsed. It keeps the
    digest of every line it reads, for the next parse."""

    def __init__(
        self,
        rows_by_line: dict[int, list[dict[str, Any]]],
        digests: dict[int, str],
        cut_from: dict[int, int],
    ) -> None:
        self._rows = rows_by_line
        self._cut_from = cut_from
        self._line_of: dict[str, int] = {}
        for line_num, digest in digests.items():
            if line_num in rows_by_line:
                self._line_of.setdefault(digest, line_num)
        self.digests: dict[int, str] = {}
        self._first_line: dict[str, int] = {}
        self._rejected: set[str] = set()

    @classmethod
    def load(
        cls, records_path: Path, digests_path: Path, known: dict[str, Any]
    ) -> LineReuse | None:
        """From the file's last parse, when its parts and line digests are there."""
        stored = read_json(digests_path)
        if stored is None or not records_path.exists():
            return None
        rows_by_line: dict[int, list[dict[str, Any]]] = {}
        try:
            rows = pq.read_table(records_path, page_checksum_verification=True).to_pylist()
        except PARQUET_DAMAGE:  # a damaged part: the file is parsed again whole
            return None
        for row in rows:
            rows_by_line.setdefault(int(row[Col.LINE_NUM]), []).append(row)
        digests = {int(line): str(digest) for line, digest in stored.get("lines", {}).items()}
        cut_from = {int(line): int(length) for _, line, length in known.get("cut", [])}
        return cls(rows_by_line, digests, cut_from)

    def __call__(
        self, line: bytes, file_name: str, line_num: int
    ) -> ParsedRecord | ReusedLine | DuplicateLine | Rejected:
        digest = line_digest(line)
        self.digests[line_num] = digest
        first = self._first_line.setdefault(digest, line_num)
        if first != line_num and digest not in self._rejected:
            return DuplicateLine(line_num, first)
        earlier = self._line_of.get(digest)
        if earlier is None:
            return _parse_noting_rejects(line, file_name, line_num, digest, self._rejected)
        rows = tuple({**row, Col.LINE_NUM: line_num} for row in self._rows[earlier])
        return ReusedLine(line_num, rows, self._cut_from.get(earlier))


class _Digesting:
    """`parse_line` that keeps each line's digest (a first parse, or a forced one)."""

    def __init__(self) -> None:
        self.digests: dict[int, str] = {}
        self._first_line: dict[str, int] = {}
        self._rejected: set[str] = set()

    def __call__(
        self, line: bytes, file_name: str, line_num: int
    ) -> ParsedRecord | DuplicateLine | Rejected:
        digest = self.digests[line_num] = line_digest(line)
        first = self._first_line.setdefault(digest, line_num)
        if first != line_num and digest not in self._rejected:
            return DuplicateLine(line_num, first)
        return _parse_noting_rejects(line, file_name, line_num, digest, self._rejected)


def _parse_noting_rejects(
    line: bytes, file_name: str, line_num: int, digest: str, rejected: set[str]
) -> ParsedRecord | Rejected:
    """`parse_line`, remembering the digest of a rejected line: a repeat of a bad line is
    rejected again rather than dropped as a duplicate, so the reject share counts every bad
    line the file holds."""
    parsed = parse_line(line, file_name, line_num)
    if isinstance(parsed, Rejected):
        rejected.add(digest)
    return parsed


def _items(
    file: InputFile, reuse: LineReuse | _Digesting | None
) -> Iterator[ParsedRecord | ReusedLine | DuplicateLine | Rejected]:
    if reuse is None:
        return iter_file(file.path, display_name=file.rel_path)
    return iter_lines_with(file.path, reuse, display_name=file.rel_path)


def _same_parse_settings(known: dict[str, Any], max_body_chars: int) -> bool:
    """Whether the last parse used this body limit and this parser (stats written before the
    parser had a version count as version 1)."""
    return (
        known.get("max_body_chars", DEFAULT_MAX_BODY_CHARS) == max_body_chars
        and known.get("parser_version", 1) == PARSER_VERSION
    )


def parse_file(
    file: InputFile,
    layout: WorkLayout,
    *,
    force: bool = False,
    max_body_chars: int = DEFAULT_MAX_BODY_CHARS,
    log: Log = quiet,
) -> FileParseResult:
    """Parse one file into its records and rejects parts, unless its content (and the body
    limit) is unchanged."""
    layout.ensure()
    records_path = layout.parsed_part(file.file_id)
    rejects_path = layout.rejects_part(file.file_id)
    known = read_json(layout.parse_stats(file.file_id))
    if (
        not force
        and known is not None
        and known.get("sha256") == file.sha256
        and _same_parse_settings(known, max_body_chars)
        and parquet_readable(records_path)
        and parquet_readable(rejects_path)
    ):
        return FileParseResult.from_json(known)
    started = time.perf_counter()
    digests_path = layout.line_digests(file.file_id)
    reuse: LineReuse | _Digesting | None = None
    if not file.path.name.lower().endswith(".zip"):  # members number their lines each from 1
        if not force and known is not None and _same_parse_settings(known, max_body_chars):
            reuse = LineReuse.load(records_path, digests_path, known)
        if reuse is None:
            reuse = _Digesting()
    digests_path.unlink(missing_ok=True)  # never beside parts it does not describe
    try:
        stats: ParseStats = write_parsed_file(
            _items(file, reuse),
            file.rel_path,
            records_path,
            rejects_path,
            max_body_chars=max_body_chars,
        )
    except (PermissionError, FileNotFoundError) as error:  # changed since it was listed
        raise FileVanished(f"{file.rel_path} cannot be read: {error}") from error
    result = FileParseResult(
        **asdict(stats),
        rel_path=file.rel_path,
        parsed=True,
        sha256=file.sha256,
        seconds=round(time.perf_counter() - started, 3),
        max_body_chars=max_body_chars,
    )
    for na_id, line, length in stats.cut:
        log(
            f"{file.rel_path}:{line}: naId {na_id}'s body text of {length:,} characters was cut "
            f"to {max_body_chars:,} (NARA_KG_MAX_BODY_CHARS)"
        )
    if reuse is not None:
        write_json(digests_path, {"lines": {str(n): d for n, d in reuse.digests.items()}})
    write_json(layout.parse_stats(file.file_id), {**asdict(result), "parsed": True})
    if stats.duplicate_lines:
        log(
            f"{file.rel_path}: {stats.duplicate_lines:,} lines repeat an earlier line of the "
            "file byte for byte: dropped before chunking"
        )
    reused = f", {stats.lines_reused} unchanged lines reused" if stats.lines_reused else ""
    log(
        f"parsed {file.rel_path}: {stats.records} records, {stats.stubs} stubs, "
        f"{stats.rejected} rejected{reused} ({result.seconds:.1f}s)"
    )
    return result

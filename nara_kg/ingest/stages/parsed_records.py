"""parsed_records: one input file -> its records part and rejects part (and the parse stats
kept beside them), skipped while the file's content and the body limit are unchanged."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

from nara_kg.ingest.inputs import InputFile
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.parsing.readers import iter_file
from nara_kg.ingest.records import DEFAULT_MAX_BODY_CHARS, ParseStats, write_parsed_file
from nara_kg.ingest.stages.common import Log, quiet, read_json, write_json


@dataclass
class FileParseResult(ParseStats):
    """One file's parse statistics, kept beside its parts, and whether it was parsed now
    (False: its content and the body limit were unchanged, so the parts were reused)."""

    rel_path: str = ""
    parsed: bool = False
    sha256: str = ""
    seconds: float = 0.0
    max_body_chars: int = DEFAULT_MAX_BODY_CHARS

    @classmethod
    def from_json(cls, known: dict[str, Any]) -> FileParseResult:
        cut = [(int(a), int(b), int(c)) for a, b, c in known.get("cut", [])]
        return cls(**{**known, "cut": cut, "parsed": False})


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
        and known.get("max_body_chars", DEFAULT_MAX_BODY_CHARS) == max_body_chars
        and records_path.exists()
        and rejects_path.exists()
    ):
        return FileParseResult.from_json(known)
    started = time.perf_counter()
    try:
        stats: ParseStats = write_parsed_file(
            iter_file(file.path, display_name=file.rel_path),
            file.rel_path,
            records_path,
            rejects_path,
            max_body_chars=max_body_chars,
        )
    except PermissionError as error:  # unreadable since it was listed: a file-level reject
        raise FileNotFoundError(f"{file.rel_path} cannot be read: {error}") from error
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
    write_json(layout.parse_stats(file.file_id), {**asdict(result), "parsed": True})
    log(
        f"parsed {file.rel_path}: {stats.records} records, {stats.stubs} stubs, "
        f"{stats.rejected} rejected ({result.seconds:.1f}s)"
    )
    return result

"""Where each pipeline stage keeps its files under the work directory (one place)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class WorkLayout:
    root: Path

    @property
    def manifest(self) -> Path:
        return self.root / "raw" / "manifest.parquet"

    @property
    def parsed_dir(self) -> Path:
        return self.root / "parsed"

    def parsed_part(self, file_id: str) -> Path:
        return self.parsed_dir / f"{file_id}.records.parquet"

    def rejects_part(self, file_id: str) -> Path:
        return self.parsed_dir / f"{file_id}.rejects.parquet"

    @property
    def parsed_index(self) -> Path:
        """The parts in processing order, with their input file and content hash."""
        return self.parsed_dir / "index.parquet"

    @property
    def selection(self) -> Path:
        return self.root / "selection" / "chosen.parquet"

    @property
    def aliases(self) -> Path:
        return self.root / "selection" / "aliases.parquet"

    @property
    def rejects(self) -> Path:
        """All rejected lines of the last parse, in one table for people to read."""
        return self.root / "rejects.parquet"

    @property
    def chunks_dir(self) -> Path:
        return self.root / "chunks"

    def chunk_part(self, file_id: str) -> Path:
        return self.chunks_dir / f"{file_id}.chunks.parquet"

    @property
    def chunks_index(self) -> Path:
        return self.chunks_dir / "index.parquet"

    def ensure(self) -> None:
        for folder in (
            self.manifest.parent,
            self.parsed_dir,
            self.selection.parent,
            self.chunks_dir,
        ):
            folder.mkdir(parents=True, exist_ok=True)

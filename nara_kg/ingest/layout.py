"""Where each pipeline stage keeps its files under the work directory (one place).

Per-file stages (one Dagster partition per input file) write one part per file, named by the
file's `file_id`; the graph-wide selection writes the tables that span every file.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path


def temporary_sibling(path: Path) -> Path:
    """A temporary name beside `path`, unique per process and call, so that two runs (or two
    partitions) writing the same part never share a temporary file; renamed into place."""
    return path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")


@dataclass(frozen=True)
class WorkLayout:
    root: Path

    # ------------------------------------------------------------------ raw_jsonl (per file)
    @property
    def raw_dir(self) -> Path:
        return self.root / "raw"

    def raw_entry(self, file_id: str) -> Path:
        """What the file was when last scanned: path, size, mtime and content hash."""
        return self.raw_dir / f"{file_id}.json"

    # ------------------------------------------------------------- parsed_records (per file)
    @property
    def parsed_dir(self) -> Path:
        return self.root / "parsed"

    def parsed_part(self, file_id: str) -> Path:
        return self.parsed_dir / f"{file_id}.records.parquet"

    def rejects_part(self, file_id: str) -> Path:
        return self.parsed_dir / f"{file_id}.rejects.parquet"

    def parse_stats(self, file_id: str) -> Path:
        return self.parsed_dir / f"{file_id}.stats.json"

    def line_digests(self, file_id: str) -> Path:
        """A digest of each line the last parse read: a changed file re-parses only the lines
        whose bytes changed."""
        return self.parsed_dir / f"{file_id}.lines.json"

    # ------------------------------------------------------------- record_selection (global)
    @property
    def parsed_index(self) -> Path:
        """The live parts in selection order, with their input file and content hash."""
        return self.root / "selection" / "files.parquet"

    @property
    def selection(self) -> Path:
        return self.root / "selection" / "chosen.parquet"

    @property
    def aliases(self) -> Path:
        return self.root / "selection" / "aliases.parquet"

    @property
    def record_index(self) -> Path:
        """The chosen records by naId, parent and cited naId (:mod:`record_index`)."""
        return self.root / "selection" / "records.sqlite"

    @property
    def changes(self) -> Path:
        """What the last selection changed (:mod:`nara_kg.ingest.stages.changes`)."""
        return self.root / "selection" / "changes.json"

    @property
    def selection_state(self) -> Path:
        """Every file's candidate rows and the choice made (:mod:`selection_store`)."""
        return self.root / "selection" / "state.sqlite"

    @property
    def check_memory(self) -> Path:
        """What the record_selection checks found in each file (:mod:`quality.memory`)."""
        return self.root / "selection" / "checks.sqlite"

    @property
    def rejects(self) -> Path:
        """All rejected lines of the live files, in one table for people to read."""
        return self.root / "rejects.parquet"

    # --------------------------------------------------------------------- chunks (per file)
    @property
    def chunks_dir(self) -> Path:
        return self.root / "chunks"

    def chunk_part(self, file_id: str) -> Path:
        return self.chunks_dir / f"{file_id}.chunks.parquet"

    def chunk_stats(self, file_id: str) -> Path:
        return self.chunks_dir / f"{file_id}.stats.json"

    # ----------------------------------------------------------- chunk_embeddings (per file)
    @property
    def vectors_dir(self) -> Path:
        return self.root / "embeddings"

    def vector_part(self, file_id: str) -> Path:
        return self.vectors_dir / f"{file_id}.vectors.parquet"

    # ----------------------------------------------------------- entity_mentions (global)
    @property
    def mentions_cache(self) -> Path:
        """Each chunk's mentions, keyed by its row, its record's context and the linker."""
        return self.root / "mentions" / "mentions.sqlite"

    @property
    def mention_comparison(self) -> Path:
        """Scratch of a whole run: the desired and current MENTIONED_IN, compared on disk."""
        return self.root / "mentions" / "comparison.sqlite"

    @property
    def mention_index(self) -> Path:
        """The linker's authorities and the chunks' words as the last complete write of
        MENTIONED_IN knew them (`nara_kg.build.mention_index`)."""
        return self.root / "mentions" / "mention-index.sqlite"

    @property
    def label_ledger(self) -> Path:
        """The label score's pairs as the last complete write of MENTIONED_IN left them
        (`nara_kg.build.label_ledger`)."""
        return self.root / "mentions" / "label-ledger.sqlite"

    # ------------------------------------------------------------ community_reports (global)
    @property
    def report_token_counts(self) -> Path:
        """Token counts of report-context texts, kept between runs."""
        return self.root / "reports" / "token-counts.sqlite"

    # --------------------------------------------- graph writers' snapshots (build/sync_state)
    def sync_snapshot(self, concern: str) -> Path:
        """What a by-difference writer last wrote to the graph (e.g. chunkId -> rowHash)."""
        return self.root / "graph-state" / f"{concern}.parquet"

    def sync_revision(self, concern: str) -> Path:
        """The graph revision and count that `sync_snapshot(concern)` describes."""
        return self.root / "graph-state" / f"{concern}.json"

    @property
    def work_folder_id(self) -> Path:
        """This work folder's id, put on the graph's sync-state nodes it writes."""
        return self.root / "graph-state" / "work-folder.json"

    @property
    def node_comparison(self) -> Path:
        """Scratch of graph_nodes' whole path: the chunk nodes' row hashes before the write,
        on disk (nara_kg.build.node_comparison)."""
        return self.root / "graph-state" / "node-comparison.sqlite"

    @property
    def pending_vectors(self) -> Path:
        """Scratch of text_embeddings' whole path: the keys of the chunks without a current
        vector, grouped by the per-file part that may hold it (nara_kg.build.embeddings)."""
        return self.root / "graph-state" / "pending-vectors.sqlite"

    @property
    def report_state(self) -> Path:
        """The digest of the sources community_reports last made every report from."""
        return self.root / "graph-state" / "reports.json"

    @property
    def report_scope(self) -> Path:
        """Each projected record's digest, and the records whose report inputs changed since
        community_reports last ran (nara_kg.generation.report_scope)."""
        return self.root / "graph-state" / "report-scope.sqlite"

    @property
    def projection_changes(self) -> Path:
        """The records the graph writers touched since graph_communities last streamed them
        (nara_kg.build.projection_changes)."""
        return self.root / "graph-state" / "projection-changes.sqlite"

    @property
    def leiden_state(self) -> Path:
        """What graph_communities last read and wrote (digests) and the result it reported."""
        return self.root / "graph-state" / "leiden.json"

    def per_file_paths(self, file_id: str) -> tuple[Path, ...]:
        """Everything the per-file stages keep for one input file."""
        return (
            self.raw_entry(file_id),
            self.parsed_part(file_id),
            self.rejects_part(file_id),
            self.parse_stats(file_id),
            self.line_digests(file_id),
            self.chunk_part(file_id),
            self.chunk_stats(file_id),
            self.vector_part(file_id),
        )

    def ensure(self) -> None:
        for folder in (
            self.raw_dir,
            self.parsed_dir,
            self.selection.parent,
            self.chunks_dir,
            self.vectors_dir,
        ):
            folder.mkdir(parents=True, exist_ok=True)

"""The per-file stages of one run over many files: scan -> parse -> chunk -> embed.

Files are scanned, parsed and chunked two at a time (`PREPARE_THREADS`) and taken in file
order, and the model encodes the texts of several files together (a window of
`EMBED_WINDOW_TEXTS`, sorted by length across them), so one process loads the model once for
the whole run. A file that fails (or a window whose encode fails) fails alone: the run goes on
with the others and says which failed (`FileStagesOutcome.failed`).

:func:`run_file_stages` is the one entry; the Dagster op `file_stages` maps its outcome to
materializations and metadata.
"""

from __future__ import annotations

import logging
import time
from collections import Counter, deque
from collections.abc import Callable, Collection, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from functools import partial
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from nara_kg.ingest.inputs import FileVanished
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages import chunk_embeddings, chunks, parsed_records, raw_jsonl

if TYPE_CHECKING:
    from nara_kg.embedding.encoder import Embedder

RAW_JSONL = "raw_jsonl"
PARSED_RECORDS = "parsed_records"
CHUNKS = "chunks"
CHUNK_EMBEDDINGS = "chunk_embeddings"
#: The stages in pipeline order.
STAGE_ORDER = (RAW_JSONL, PARSED_RECORDS, CHUNKS, CHUNK_EMBEDDINGS)

#: Files prepared (scanned, parsed, chunked, planned) at once: Parquet, hashing and the tokenizer
#: let go of the GIL, so two files' preparation overlap (an incremental build's 20 changed
#: files: 2.0 against 2.7 s here). Never beside a window's encode (`_InOrder.settle`).
PREPARE_THREADS = 2
#: Chunk rows shown in the chunks stage's preview.
CHUNK_PREVIEW_ROWS = 10
#: Texts to encode that files gather before the model encodes them together, sorted by length
#: across the files (`chunk_embeddings.encode_pending`): about eight files of the benchmark's.
EMBED_WINDOW_TEXTS = 4_096
#: ... or once it holds this many files: a file waiting in a window holds its texts and the
#: vectors it keeps, so many files with a few changed chunks each must not all wait at once.
EMBED_WINDOW_FILES = 64
#: Files with nothing to encode report progress every so many files (a window reports its own).
PROGRESS_EVERY_FILES = 250


class StageLog(Protocol):
    """Where the run logs (a `logging.Logger`, or Dagster's `context.log`)."""

    def debug(self, msg: str) -> None: ...
    def info(self, msg: str) -> None: ...
    def warning(self, msg: str) -> None: ...
    def error(self, msg: str) -> None: ...


@dataclass
class FileResult:
    """One file's stages: a worker thread fills it, the run's thread takes it in file order
    (`_Run.absorb`), so the run's totals are only ever touched by that thread."""

    rel_path: str
    #: Stage -> the file's figures in that stage (every stage the run went through).
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The rows of the stages the run reports (set once the file is done).
    reported: dict[str, dict[str, Any]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    pending: chunk_embeddings.PendingVectors | None = None
    parsed: parsed_records.FileParseResult | None = None
    chunked: tuple[dict[str, Any], bool] | None = None
    preview: list[dict[str, Any]] = field(default_factory=list)
    #: What the stages log, logged by the run's thread (Dagster's log writes run events).
    messages: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error: Exception | None = None
    #: Why the file was skipped: it left the export (or became unreadable, or a FIFO) after
    #: it was listed. Not an error: record_selection sees it as it is now.
    vanished: str | None = None


#: The figures a stage's one-line summary adds up over the run's files (where its rows have them).
_SUMMED = ("bytes", "lines", "records", "stubs", "rejected", "chunks", "encoded", "reused")


@dataclass
class FileStagesOutcome:
    """What a run over its files did: each finished file's results, the failures, and the
    run's totals of the stages it reports."""

    files: list[str]
    #: The stages reported, in pipeline order.
    stages: tuple[str, ...]
    #: Finished files, in the order they finished.
    done: list[FileResult] = field(default_factory=list)
    #: File -> "ErrorType: message" of each file that failed.
    failed: dict[str, str] = field(default_factory=dict)
    #: Files skipped because they left the export (or changed kind) after they were listed.
    vanished: list[dict[str, str]] = field(default_factory=list)
    #: Stage -> the finished files' rows.
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: Stage -> seconds spent in it over the run.
    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGE_ORDER, 0.0))
    by_type: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    cut: list[dict[str, Any]] = field(default_factory=list)
    chunk_total: chunks.ChunkResult = field(default_factory=chunks.ChunkResult)
    seconds_encoding: float = 0.0
    #: Distinct texts through the model: chunks that share a text share its one encoding.
    texts_encoded: int = 0

    def summary(self, stage: str) -> str:
        """The run's totals of `stage` in one line, for the run's log."""
        rows = self.rows.get(stage, [])
        figures = {
            name: sum(row[name] for row in rows) for name in _SUMMED if rows and name in rows[0]
        }
        return ", ".join(f"{name} {value}" for name, value in figures.items())


@dataclass
class _Run:
    """The stages of one file, with what the run needs to run them."""

    data_dir: Path
    layout: WorkLayout
    embedder: Embedder
    force: bool
    max_body_chars: int
    log: StageLog
    outcome: FileStagesOutcome
    #: Whether the run encodes (chunk_embeddings reported): only then is the model preloaded.
    encodes: bool = True

    def scan(self, rel_path: str, work: FileResult) -> dict[str, Any]:
        file = raw_jsonl.scan_file(self.data_dir, rel_path, self.layout, force=self.force)
        return {"file": rel_path, "bytes": file.size, "sha256": file.sha256}

    def parse(self, rel_path: str, work: FileResult) -> dict[str, Any]:
        file = raw_jsonl.scanned_file(self.data_dir, rel_path, self.layout)
        result = parsed_records.parse_file(
            file,
            self.layout,
            force=self.force,
            max_body_chars=self.max_body_chars,
            log=work.messages.append,
        )
        work.parsed = result
        if result.parsed and self.encodes:
            # A changed file will be chunked and encoded: the model loads meanwhile.
            self.embedder.preload()
        if result.rejected:
            work.warnings.append(
                f"{rel_path}: {result.rejected} of {result.lines} lines rejected; see "
                f"{self.layout.rejects_part(file.file_id)}"
            )
        return {
            "file": rel_path,
            "parsed": result.parsed,
            "lines": result.lines,
            "records": result.records,
            "stubs": result.stubs,
            "rejected": result.rejected,
            "lines_reused": result.lines_reused if result.parsed else 0,
            "body_cut": len(result.cut),
            "seconds": result.seconds,
        }

    def chunk(self, rel_path: str, work: FileResult) -> dict[str, Any]:
        file = raw_jsonl.scanned_file(self.data_dir, rel_path, self.layout)
        stats, computed = chunks.chunk_file(
            file,
            self.layout,
            count_tokens=self.embedder.count_tokens,
            # The texts' ids are kept for the window's encode, which then skips tokenizing them.
            count_tokens_many=partial(self.embedder.count_tokens_many, remember=True),
            max_tokens=self.embedder.max_tokens,
            chunker_key=self.embedder.key,
            force=self.force,
            preview=work.preview,
            preview_rows=CHUNK_PREVIEW_ROWS,
        )
        work.chunked = (stats, computed)
        return {
            "file": rel_path,
            "chunked": computed,
            "records": stats["records"],
            "stubs": stats["stubs"],
            "records_reused": stats.get("records_reused", 0) if computed else 0,
            "chunks": stats["chunks"],
            "max_tokens": stats["max_tokens_seen"],
        }

    def prepare(
        self,
        rel_path: str,
        steps: tuple[tuple[str, Callable[[str, FileResult], dict[str, Any]]], ...],
    ) -> FileResult:
        """The file's stages up to its encode (on a worker thread); an error is kept for the
        run's thread to report, so one bad file never takes the others down."""
        work = FileResult(rel_path)
        try:
            for stage, step in steps:
                started = time.perf_counter()
                work.rows[stage] = step(rel_path, work)
                work.seconds[stage] = time.perf_counter() - started
            if self.encodes:
                started = time.perf_counter()
                work.pending = self.plan_embedding(rel_path)
                work.seconds[CHUNK_EMBEDDINGS] = time.perf_counter() - started
        except FileVanished as error:
            work.vanished = str(error)
            work.warnings.append(
                f"{rel_path}: skipped file: {error}; the input sensor (or `nara-kg build`) "
                "brings its partition in step with the export"
            )
        except Exception as error:
            work.error = error
        return work

    def absorb(self, work: FileResult) -> None:
        """A prepared file's share of the run's totals, in file order."""
        outcome = self.outcome
        for message in work.messages:
            self.log.info(message)
        for message in work.warnings:
            self.log.warning(message)
        if work.vanished is not None:
            outcome.vanished.append({"file": work.rel_path, "reason": work.vanished})
        if work.error is not None or work.vanished is not None:
            return
        for stage, spent in work.seconds.items():
            outcome.seconds[stage] += spent
        if work.parsed is not None:
            outcome.by_type.update(work.parsed.by_type)
            outcome.cut.extend(
                {"file": work.rel_path, "naId": na_id, "line": line, "characters": length}
                for na_id, line, length in work.parsed.cut
            )
            outcome.reasons.update(work.parsed.reject_reasons)
        if work.chunked is not None:
            total = outcome.chunk_total
            total.token_limit = self.embedder.max_tokens
            total.count_part(*work.chunked)
            room = CHUNK_PREVIEW_ROWS - len(total.preview)
            total.preview.extend(work.preview[: max(room, 0)])

    def plan_embedding(self, rel_path: str) -> chunk_embeddings.PendingVectors:
        file = raw_jsonl.scanned_file(self.data_dir, rel_path, self.layout)
        return chunk_embeddings.plan_file(file, self.layout, self.embedder.key, force=self.force)

    def embed(self, window: list[chunk_embeddings.PendingVectors]) -> None:
        """Encode the window's files together (their texts sorted by length across files)."""
        self.outcome.texts_encoded += chunk_embeddings.encode_pending(
            [pending for pending in window if not pending.current],
            self.embedder,
            log=self.log.debug,
        )

    def write_vectors(self, pending: chunk_embeddings.PendingVectors) -> dict[str, Any]:
        result = chunk_embeddings.write_vectors(pending, self.embedder.dimension)
        self.outcome.seconds_encoding += result.seconds_encoding
        return {
            "file": pending.rel_path,
            "chunks": result.chunks,
            "encoded": result.encoded,
            "reused": result.reused,
            "encoding_seconds": result.seconds_encoding,
            "chunks_per_second": round(result.chunks_per_second, 1),
        }


class _InOrder:
    """`prepare` of each file on the pool's threads, taken in file order, at most one file per
    thread ahead of the one taken (a run over many files never holds their plans all at once).

    `settle` before a window's encode lets the files in flight finish first: the model runs on
    every core, and a file parsed beside it slowed both (the full build's encode is most of its
    time)."""

    def __init__(
        self, pool: ThreadPoolExecutor, prepare: Callable[[str], FileResult], files: list[str]
    ) -> None:
        self._pool = pool
        self._prepare = prepare
        self._queued = iter(files)
        self._ahead: deque[Future[FileResult]] = deque()

    def __iter__(self) -> Iterator[FileResult]:
        self._fill()
        while self._ahead:
            work = self._ahead.popleft().result()
            self._fill()
            yield work

    def settle(self) -> None:
        wait(self._ahead)

    def _fill(self) -> None:
        for rel_path in islice(self._queued, PREPARE_THREADS - len(self._ahead)):
            self._ahead.append(self._pool.submit(self._prepare, rel_path))


class ProgressLine:
    """The run's "files done" line. Kept files settle one at a time and windows several at
    once, in between each other: a line comes once `every` more files have settled since the
    last line, so no milestone is skipped or logged twice."""

    def __init__(self, log: StageLog, total: int) -> None:
        self._log, self._total, self._logged_at = log, total, 0

    def settled(self, count: int, *, every: int) -> None:
        if count - self._logged_at >= every:
            self._logged_at = count
            self._log.info(f"file stages: {count}/{self._total} files done")


def run_file_stages(
    files: Sequence[str],
    *,
    data_dir: Path,
    layout: WorkLayout,
    embedder: Embedder,
    max_body_chars: int,
    stages: Collection[str] = STAGE_ORDER,
    force: bool = False,
    log: StageLog | None = None,
) -> FileStagesOutcome:
    """Run the per-file stages over `files` (paths relative to `data_dir`) and report `stages`.

    The stages before a reported one run too (they skip what is unchanged), so that it reads
    current inputs. A file that fails is named in the outcome's `failed` and the others go on;
    a run of a single file raises that file's error instead (there is nothing to isolate).
    `force` recomputes what is unchanged (the full rebuild).
    """
    files = list(files)
    log = log or logging.getLogger(__name__)
    selected = tuple(stage for stage in STAGE_ORDER if stage in stages)
    if not selected:
        raise ValueError(f"no stage to run among {sorted(stages)}; the stages: {STAGE_ORDER}")
    through = STAGE_ORDER.index(selected[-1])
    encodes = CHUNK_EMBEDDINGS in selected
    outcome = FileStagesOutcome(files=files, stages=selected)
    run = _Run(
        data_dir=data_dir,
        layout=layout,
        embedder=embedder,
        force=force,
        max_body_chars=max_body_chars,
        log=log,
        outcome=outcome,
        encodes=encodes,
    )
    prepare = {RAW_JSONL: run.scan, PARSED_RECORDS: run.parse, CHUNKS: run.chunk}
    steps = tuple(
        (stage, prepare[stage]) for stage in STAGE_ORDER[: through + 1] if stage in prepare
    )
    #: Chunked files whose texts are encoded together once they add up to a window.
    window: list[tuple[FileResult, chunk_embeddings.PendingVectors]] = []

    def fail(rel_path: str, error: Exception) -> None:
        if len(files) == 1:
            raise error
        outcome.failed[rel_path] = f"{type(error).__name__}: {error}"
        log.error(f"{rel_path} failed: {outcome.failed[rel_path]}")

    def finish(work: FileResult) -> None:
        # The outcome keeps every finished file's figures until the op reports them: a file's
        # texts and vectors (a few MB per file, GBs over a large export) are let go now.
        work.pending = None
        work.reported = {stage: row for stage, row in work.rows.items() if stage in selected}
        for stage, row in work.reported.items():
            outcome.rows.setdefault(stage, []).append(row)
        outcome.done.append(work)

    def write_and_finish(work: FileResult, pending: chunk_embeddings.PendingVectors) -> None:
        try:
            work.rows[CHUNK_EMBEDDINGS] = run.write_vectors(pending)
        except Exception as error:
            fail(pending.rel_path, error)
            return
        finish(work)

    progress = ProgressLine(log, len(files))

    def log_progress(*, every: int) -> None:
        progress.settled(len(outcome.done) + len(outcome.failed), every=every)

    def keep_vectors(work: FileResult) -> None:
        assert work.pending is not None
        started = time.perf_counter()
        write_and_finish(work, work.pending)
        outcome.seconds[CHUNK_EMBEDDINGS] += time.perf_counter() - started
        log_progress(every=PROGRESS_EVERY_FILES)

    def encode_window() -> None:
        started = time.perf_counter()
        try:
            run.embed([pending for _, pending in window])
        except Exception as error:  # the window's files fail together; the others stand
            for _, pending in window:
                fail(pending.rel_path, error)
            window.clear()
            return
        for work, pending in window:
            write_and_finish(work, pending)
        outcome.seconds[CHUNK_EMBEDDINGS] += time.perf_counter() - started
        log_progress(every=1)
        window.clear()

    try:
        with ThreadPoolExecutor(PREPARE_THREADS, thread_name_prefix="file-stages") as pool:
            prepared = _InOrder(pool, partial(run.prepare, steps=steps), files)
            for work in prepared:
                run.absorb(work)
                if work.error is not None:
                    fail(work.rel_path, work.error)
                    continue
                if work.vanished is not None:
                    continue
                if work.pending is None:
                    finish(work)
                    continue
                if not work.pending.todo:
                    # Nothing to encode: written (or found current) now, never held in a
                    # window (a run over 4,839 unchanged files held every vector: 8.4 GB).
                    keep_vectors(work)
                    continue
                window.append((work, work.pending))
                if (
                    sum(len(pending.todo) for _, pending in window) >= EMBED_WINDOW_TEXTS
                    or len(window) >= EMBED_WINDOW_FILES
                ):
                    prepared.settle()
                    encode_window()
            if window:
                encode_window()
    finally:
        # The embedder outlives the run (a resource): token ids kept for texts that no
        # window encoded (a failed window, reused vectors) must not outlive it too.
        embedder.forget_token_ids()
    for stage in selected:
        log.info(f"{stage} over {len(files)} files: {outcome.summary(stage)}")
    return outcome

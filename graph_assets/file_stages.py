"""Per-file stages, one partition per input file: raw_jsonl -> parsed_records -> chunks ->
chunk_embeddings (Parquet under the work directory). Core: the module of the same name in
:mod:`nara_kg.ingest.stages` for each asset (:mod:`nara_kg.ingest.stages.raw_jsonl`, ...).

The four assets are computed by one op, `file_stages`: files are scanned, parsed and chunked two
at a time (`PREPARE_THREADS`) and taken in file order, and the model encodes the texts of
several files together (a window of `EMBED_WINDOW_TEXTS`, sorted by length across them). One
process per run loads the model once, and a run without partitions (e.g. `dagster job execute
-j kg_full_rebuild`) can cover the whole export, which Dagster allows only when no partitioned
asset reads another through an op input. Each asset keeps its own partition bar, metadata and
description.

The op is subsettable, and its stages' dependencies are not op inputs (`_subsettable`). A run
killed while Dagster stores its materializations leaves a file's first stages recorded and the
later ones not; the backfill's "re-execute from failure" then asks for those later stages only,
which a multi-asset that cannot be subset never runs (the retry ends COMPLETED_FAILED with
nothing launched). `@multi_asset(can_subset=True)` would make each stage's dependency an op
input again, and the run without partitions would fail on it.
"""

import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from functools import partial
from itertools import islice
from typing import Any

import dagster as dg

from graph_assets import file_metadata
from graph_assets.common import (
    EMBEDDING_MODEL_POOL,
    FILE_KINDS,
    OWNERS,
    PER_FILE_GROUP,
    counts_table,
    table,
)
from graph_assets.file_versions import STAGE_CODE_VERSIONS, data_versions
from graph_assets.partitions import files_of_run, input_files, is_full_rebuild
from nara_kg.embedding.encoder import Embedder
from nara_kg.ingest.inputs import FileVanished, file_id_of
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages import chunk_embeddings, chunks, parsed_records, raw_jsonl
from resources import EmbeddingModel, PipelinePaths

RAW_JSONL = dg.AssetKey("raw_jsonl")
PARSED_RECORDS = dg.AssetKey("parsed_records")
CHUNKS = dg.AssetKey("chunks")
CHUNK_EMBEDDINGS = dg.AssetKey("chunk_embeddings")

#: A backfill launches one run per 8 files: each run loads the model once, runs stay
#: parallel, and a file that fails leaves the others of its run materialized.
FILE_BACKFILL = dg.BackfillPolicy.multi_run(max_partitions_per_run=8)
#: On a cluster the file stages ask for a GPU (dagster-k8s reads this tag; elsewhere inert).
K8S_GPU_TAGS = {
    "dagster-k8s/config": {
        "container_config": {"resources": {"limits": {"nvidia.com/gpu": "1"}}},
    }
}

FILE_SPECS = [
    dg.AssetSpec(
        RAW_JSONL,
        code_version=STAGE_CODE_VERSIONS[RAW_JSONL.to_user_string()],
        group_name=PER_FILE_GROUP,
        owners=OWNERS,
        kinds=FILE_KINDS,
        description=(
            "One export file (.jsonl, .jsonl.gz, .zip) under NARA_DATA_DIR per partition: its "
            "size and content hash (reused while size and mtime are unchanged). Core: "
            "nara_kg.ingest.stages.raw_jsonl.scan_file."
        ),
    ),
    dg.AssetSpec(
        PARSED_RECORDS,
        code_version=STAGE_CODE_VERSIONS[PARSED_RECORDS.to_user_string()],
        deps=[RAW_JSONL],
        group_name=PER_FILE_GROUP,
        owners=OWNERS,
        kinds=FILE_KINDS,
        description=(
            "The file's records, all ten types flattened to one set of property names (the "
            "graph's, e.g. `logicalDate_inclusiveStartDate`), streamed to one Parquet part; "
            "stubs for parents and referenced authorities; bad lines to the file's rejects part "
            "(file, line, reason, raw text). Skipped when the content is unchanged, except in "
            "the full rebuild. Core: "
            "nara_kg.ingest.stages.parsed_records.parse_file."
        ),
    ),
    dg.AssetSpec(
        CHUNKS,
        code_version=STAGE_CODE_VERSIONS[CHUNKS.to_user_string()],
        deps=[PARSED_RECORDS],
        group_name=PER_FILE_GROUP,
        owners=OWNERS,
        kinds=FILE_KINDS,
        description=(
            "Every record of the file split into pieces of at most 500 characters (recursive, "
            "no overlap)"
            "with a search header (title, type, parent, dates) on every chunk, re-split by "
            "tokens so that no chunk exceeds the embedding model's maximum sequence length. "
            "chunkId = `<naId>-<seq>`. Core: nara_kg.ingest.stages.chunks.chunk_file."
        ),
    ),
    dg.AssetSpec(
        CHUNK_EMBEDDINGS,
        code_version=STAGE_CODE_VERSIONS[CHUNK_EMBEDDINGS.to_user_string()],
        deps=[CHUNKS],
        group_name=PER_FILE_GROUP,
        owners=OWNERS,
        kinds={"python", "parquet", "pytorch"},
        description=(
            "sentence-transformers vectors (default all-MiniLM-L6-v2, offline) of the file's "
            "embeddable chunks, one Parquet part per file; a chunk whose text and model are "
            "unchanged keeps its vector (the full rebuild re-encodes all). Core: "
            "nara_kg.ingest.stages.chunk_embeddings.plan_file, "
            "nara_kg.ingest.stages.chunk_embeddings.encode_pending, "
            "nara_kg.ingest.stages.chunk_embeddings.write_vectors."
        ),
    ),
]


@dataclass
class _FileWork:
    """One file's stages as a worker thread left them, for the run's thread to take in file
    order (`_Stages.absorb`): the run's totals are only ever touched by that thread."""

    rel_path: str
    rows: dict[dg.AssetKey, dict[str, Any]] = field(default_factory=dict)
    seconds: dict[dg.AssetKey, float] = field(default_factory=dict)
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


@dataclass
class _Stages:
    """The per-file work of one run and what each asset reports."""

    paths: PipelinePaths
    embedder: Embedder
    force: bool
    log: Any
    #: Whether the run encodes (chunk_embeddings selected): only then is the model preloaded.
    encodes: bool = True
    rows: dict[dg.AssetKey, list[dict[str, Any]]] = field(default_factory=dict)
    by_type: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    cut: list[dict[str, Any]] = field(default_factory=list)
    chunk_total: chunks.ChunkResult = field(default_factory=chunks.ChunkResult)
    seconds_encoding: float = 0.0
    #: Distinct texts through the model: chunks that share a text share its one encoding.
    texts_encoded: int = 0
    #: Files skipped because they left the export (or changed kind) after they were listed.
    vanished: list[dict[str, str]] = field(default_factory=list)

    @property
    def layout(self) -> WorkLayout:
        return self.paths.layout

    def scan(self, rel_path: str, work: _FileWork) -> dict[str, Any]:
        file = raw_jsonl.scan_file(self.paths.data_path, rel_path, self.layout, force=self.force)
        return {"file": rel_path, "bytes": file.size, "sha256": file.sha256}

    def parse(self, rel_path: str, work: _FileWork) -> dict[str, Any]:
        file = raw_jsonl.scanned_file(self.paths.data_path, rel_path, self.layout)
        result = parsed_records.parse_file(
            file,
            self.layout,
            force=self.force,
            max_body_chars=self.paths.max_body_chars,
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

    def chunk(self, rel_path: str, work: _FileWork) -> dict[str, Any]:
        file = raw_jsonl.scanned_file(self.paths.data_path, rel_path, self.layout)
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
            "records_reused": stats.get("records_reused", 0) if computed else 0,
            "chunks": stats["chunks"],
            "max_tokens": stats["max_tokens_seen"],
        }

    def prepare(
        self,
        rel_path: str,
        steps: tuple[tuple[dg.AssetKey, Callable[[str, _FileWork], dict[str, Any]]], ...],
    ) -> _FileWork:
        """The file's stages up to its encode (on a worker thread); an error is kept for the
        run's thread to report, so one bad file never takes the others down."""
        work = _FileWork(rel_path)
        try:
            for key, step in steps:
                started = time.perf_counter()
                work.rows[key] = step(rel_path, work)
                work.seconds[key] = time.perf_counter() - started
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

    def absorb(self, work: _FileWork, seconds: dict[dg.AssetKey, float]) -> None:
        """A prepared file's share of the run's totals, in file order."""
        for message in work.messages:
            self.log.info(message)
        for message in work.warnings:
            self.log.warning(message)
        if work.vanished is not None:
            self.vanished.append({"file": work.rel_path, "reason": work.vanished})
        if work.error is not None or work.vanished is not None:
            return
        for key, spent in work.seconds.items():
            seconds[key] += spent
        if work.parsed is not None:
            self.by_type.update(work.parsed.by_type)
            self.cut.extend(
                {"file": work.rel_path, "naId": na_id, "line": line, "characters": length}
                for na_id, line, length in work.parsed.cut
            )
            self.reasons.update(work.parsed.reject_reasons)
        if work.chunked is not None:
            self.chunk_total.token_limit = self.embedder.max_tokens
            self.chunk_total.count_part(*work.chunked)
            room = CHUNK_PREVIEW_ROWS - len(self.chunk_total.preview)
            self.chunk_total.preview.extend(work.preview[: max(room, 0)])

    def plan_embedding(self, rel_path: str) -> chunk_embeddings.PendingVectors:
        file = raw_jsonl.scanned_file(self.paths.data_path, rel_path, self.layout)
        return chunk_embeddings.plan_file(file, self.layout, self.embedder.key, force=self.force)

    def embed(self, window: list[chunk_embeddings.PendingVectors]) -> None:
        """Encode the window's files together (their texts sorted by length across files)."""
        self.texts_encoded += chunk_embeddings.encode_pending(
            [pending for pending in window if not pending.current],
            self.embedder,
            log=self.log.debug,
        )

    def write_vectors(self, pending: chunk_embeddings.PendingVectors) -> dict[str, Any]:
        result = chunk_embeddings.write_vectors(pending, self.embedder.dimension)
        self.seconds_encoding += result.seconds_encoding
        return {
            "file": pending.rel_path,
            "chunks": result.chunks,
            "encoded": result.encoded,
            "reused": result.reused,
            "encoding_seconds": result.seconds_encoding,
            "chunks_per_second": round(result.chunks_per_second, 1),
        }

    def file_metadata(
        self, key: dg.AssetKey, work: _FileWork, row: dict[str, Any]
    ) -> dict[str, Any]:
        """What the file's own partition of `key` shows: its figures and previews."""
        seconds = work.seconds.get(key, 0.0)
        file_id = file_id_of(work.rel_path)
        if key == RAW_JSONL:
            return file_metadata.raw_file_metadata(row, seconds)
        if key == PARSED_RECORDS:
            return file_metadata.parsed_file_metadata(
                row,
                work.parsed,
                seconds,
                layout=self.layout,
                file_id=file_id,
                max_body_chars=self.paths.max_body_chars,
            )
        if key == CHUNKS:
            return file_metadata.chunk_file_metadata(
                row,
                work.chunked[0] if work.chunked else None,
                work.preview,
                seconds,
                layout=self.layout,
                file_id=file_id,
                token_limit=self.embedder.max_tokens,
            )
        return file_metadata.embedding_file_metadata(
            row,
            seconds + row["encoding_seconds"],
            layout=self.layout,
            file_id=file_id,
            model_key=self.embedder.key,
        )

    def data_versions(self, partition_keys: list[str]) -> dict[dg.AssetKey, dg.DataVersion]:
        versions = data_versions(
            self.paths.data_path,
            self.layout,
            partition_keys,
            max_body_chars=self.paths.max_body_chars,
            model_key=self.embedder.key,
            max_tokens=self.embedder.max_tokens,
        )
        return {key: versions[key.to_user_string()] for key in STAGE_ORDER}

    def metadata(self, key: dg.AssetKey, seconds: float) -> dict[str, Any]:
        rows = self.rows.get(key, [])
        common: dict[str, Any] = {
            "seconds": dg.MetadataValue.float(round(seconds, 3)),
            "files": len(rows),
            "per_file": table(rows, limit=100),
        }
        total = self._sum(rows)
        if key == RAW_JSONL:
            return {
                **common,
                "data_dir": dg.MetadataValue.path(str(self.paths.data_path)),
                "bytes": total("bytes"),
                "files_vanished": len(self.vanished),
                "vanished": table(self.vanished),
            }
        if key == PARSED_RECORDS:
            lines, rejected = total("lines"), total("rejected")
            share = rejected / lines if lines else 0.0
            return {
                **common,
                "files_parsed": sum(1 for row in rows if row["parsed"]),
                "files_skipped_unchanged": sum(1 for row in rows if not row["parsed"]),
                "lines_reused_in_changed_files": total("lines_reused"),
                "lines": lines,
                "records": total("records"),
                "stubs": total("stubs"),
                "lines_rejected": rejected,
                "reject_share": dg.MetadataValue.float(round(share, 6)),
                "records_by_type": counts_table(self.by_type),
                "reject_reasons": counts_table(self.reasons, key="reason"),
                "records_body_cut": len(self.cut),
                "body_cut": table(self.cut),
                "max_body_chars": self.paths.max_body_chars,
                "parquet_dir": dg.MetadataValue.path(str(self.layout.parsed_dir)),
            }
        if key == CHUNKS:
            result = self.chunk_total
            return {
                **common,
                "records": result.records,
                "chunks": result.chunks,
                "files_chunked": result.parts_chunked,
                "files_reused_unchanged": result.parts_reused,
                "records_reused_in_changed_files": result.records_reused,
                "embedded_chunks": result.embedded_chunks,
                "multi_chunk_records": result.multi_chunk_records,
                "title_only_records": result.title_only_records,
                "max_tokens_seen": result.max_tokens_seen,
                "model_token_limit": result.token_limit,
                "records_by_type": counts_table(result.by_type),
                "preview": table(result.preview),
                "parquet_dir": dg.MetadataValue.path(str(self.layout.chunks_dir)),
            }
        encoded = total("encoded")
        rate = encoded / self.seconds_encoding if self.seconds_encoding else 0.0
        return {
            **common,
            "chunks": total("chunks"),
            "encoded": encoded,
            "distinct_texts_encoded": self.texts_encoded,
            "reused": total("reused"),
            "model_key": self.embedder.key,
            "encoding_seconds": dg.MetadataValue.float(round(self.seconds_encoding, 3)),
            "chunks_per_second": dg.MetadataValue.float(round(rate, 1)),
            "parquet_dir": dg.MetadataValue.path(str(self.layout.vectors_dir)),
        }

    def summary(self, key: dg.AssetKey) -> str:
        """The run's totals of `key` in one line, for the run's log."""
        rows = self.rows.get(key, [])
        figures = {
            name: sum(row[name] for row in rows)
            for name in ("bytes", "lines", "records", "rejected", "chunks", "encoded", "reused")
            if rows and name in rows[0]
        }
        return ", ".join(f"{name} {value}" for name, value in figures.items())

    @staticmethod
    def _sum(rows: list[dict[str, Any]]) -> Any:
        return lambda name: sum(row[name] for row in rows)


#: The stages in pipeline order.
STAGE_ORDER = (RAW_JSONL, PARSED_RECORDS, CHUNKS, CHUNK_EMBEDDINGS)
#: Files prepared (scanned, parsed, chunked, planned) at once: Parquet, hashing and the tokenizer
#: let go of the GIL, so two files' preparation overlap (an incremental build's 20 changed
#: files: 2.0 against 2.7 s here). Never beside a window's encode (`_InOrder.settle`).
PREPARE_THREADS = 2
#: Chunk rows shown in the chunks asset's preview.
CHUNK_PREVIEW_ROWS = 10
#: Texts to encode that files gather before the model encodes them together, sorted by length
#: across the files (`chunk_embeddings.encode_pending`): about eight files of the benchmark's.
EMBED_WINDOW_TEXTS = 4_096


class _InOrder:
    """`prepare` of each file on the pool's threads, taken in file order, at most one file per
    thread ahead of the one taken (a run over many files never holds their plans all at once).

    `settle` before a window's encode lets the files in flight finish first: the model runs on
    every core, and a file parsed beside it slowed both (the full build's encode is most of its
    time)."""

    def __init__(
        self, pool: ThreadPoolExecutor, prepare: Callable[[str], _FileWork], files: list[str]
    ) -> None:
        self._pool = pool
        self._prepare = prepare
        self._queued = iter(files)
        self._ahead: deque[Future[_FileWork]] = deque()

    def __iter__(self) -> Iterator[_FileWork]:
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


def _subsettable(whole: dg.AssetsDefinition) -> dg.AssetsDefinition:
    """The same op and specs (lineage included), subsettable, without op inputs for the
    dependencies between its own stages."""
    return dg.AssetsDefinition(
        keys_by_input_name=whole.keys_by_input_name,
        keys_by_output_name=whole.keys_by_output_name,
        node_def=whole.node_def,
        specs=list(whole.specs),
        backfill_policy=whole.backfill_policy,
        can_subset=True,
    )


@_subsettable
@dg.multi_asset(
    name="file_stages",
    specs=FILE_SPECS,
    partitions_def=input_files,
    backfill_policy=FILE_BACKFILL,
    # One user of the embedding model at a time (the pool's limit is the instance's), so
    # parallel runs never oversubscribe the cores; raise it where there are more workers.
    pool=EMBEDDING_MODEL_POOL,
    op_tags=K8S_GPU_TAGS,
)
def file_stages(
    context: dg.AssetExecutionContext, paths: PipelinePaths, embedding_model: EmbeddingModel
) -> Iterator[dg.AssetMaterialization | dg.MaterializeResult]:
    """Scan, parse, chunk and embed each file of the run."""
    selected = [key for key in STAGE_ORDER if key in context.selected_asset_keys]
    # The stages before a selected one run too (they skip what is unchanged), so that it reads
    # current inputs; only the selected ones are reported.
    through = STAGE_ORDER.index(selected[-1])
    encodes = CHUNK_EMBEDDINGS in selected
    stages = _Stages(
        paths=paths,
        embedder=embedding_model.get_embedder(),
        force=is_full_rebuild(context),
        log=context.log,
        encodes=encodes,
    )
    prepare = {RAW_JSONL: stages.scan, PARSED_RECORDS: stages.parse, CHUNKS: stages.chunk}
    steps = tuple((key, prepare[key]) for key in STAGE_ORDER[: through + 1] if key in prepare)
    files, partitioned = files_of_run(
        context, paths.data_path, follow_external_links=paths.follow_external_links
    )
    seconds = dict.fromkeys(STAGE_ORDER, 0.0)
    done: list[tuple[_FileWork, dict[dg.AssetKey, dict[str, Any]]]] = []
    failed: dict[str, str] = {}
    #: Chunked files whose texts are encoded together once they add up to a window.
    window: list[tuple[_FileWork, chunk_embeddings.PendingVectors]] = []

    def fail(rel_path: str, error: Exception) -> None:
        if len(files) == 1:
            raise error
        failed[rel_path] = f"{type(error).__name__}: {error}"
        context.log.error(f"{rel_path} failed: {failed[rel_path]}")

    def finish(work: _FileWork) -> None:
        reported = {key: row for key, row in work.rows.items() if key in selected}
        for key, row in reported.items():
            stages.rows.setdefault(key, []).append(row)
        done.append((work, reported))

    def encode_window() -> None:
        started = time.perf_counter()
        try:
            stages.embed([pending for _, pending in window])
        except Exception as error:  # the window's files fail together; the others stand
            for _, pending in window:
                fail(pending.rel_path, error)
            window.clear()
            return
        for work, pending in window:
            try:
                work.rows[CHUNK_EMBEDDINGS] = stages.write_vectors(pending)
            except Exception as error:
                fail(pending.rel_path, error)
                continue
            finish(work)
        seconds[CHUNK_EMBEDDINGS] += time.perf_counter() - started
        context.log.info(f"file stages: {len(done) + len(failed)}/{len(files)} files done")
        window.clear()

    try:
        with ThreadPoolExecutor(PREPARE_THREADS, thread_name_prefix="file-stages") as pool:
            prepared = _InOrder(pool, partial(stages.prepare, steps=steps), files)
            for work in prepared:
                stages.absorb(work, seconds)
                if work.error is not None:
                    fail(work.rel_path, work.error)
                    continue
                if work.vanished is not None:
                    continue
                if work.pending is None:
                    finish(work)
                    continue
                window.append((work, work.pending))
                if sum(len(pending.todo) for _, pending in window) >= EMBED_WINDOW_TEXTS:
                    prepared.settle()
                    encode_window()
            if window:
                encode_window()
    finally:
        # The embedder outlives the run (a resource): token ids kept for texts that no
        # window encoded (a failed window, reused vectors) must not outlive it too.
        stages.embedder.forget_token_ids()
    for key in selected:
        context.log.info(f"{key.to_user_string()} over {len(files)} files: {stages.summary(key)}")
    if failed or not partitioned:
        # Each finished file is recorded as its own partition, so a failure elsewhere in the
        # run leaves it materialized and only the failed files need another run.
        for work, rows in done:
            for key, row in rows.items():
                yield dg.AssetMaterialization(
                    asset_key=key,
                    partition=work.rel_path,
                    metadata=stages.file_metadata(key, work, row),
                )
    if failed:
        raise dg.Failure(
            description=f"{len(failed)} of {len(files)} files failed; the others are done",
            metadata={"failed_files": table([{"file": k, "error": v} for k, v in failed.items()])},
        )
    versions = stages.data_versions(
        context.instance.get_dynamic_partitions(input_files.name) if partitioned else files
    )
    if not partitioned:
        # A run without partitions (the whole export) records the run's totals on one
        # materialization without a partition; each file's partition got its own above.
        for key in selected:
            yield dg.MaterializeResult(
                asset_key=key,
                metadata=stages.metadata(key, seconds[key]),
                data_version=versions[key],
            )
        return
    # Each partition shows its own file's figures; Dagster adds them to that partition's
    # materialization of the run's result.
    for work, rows in done:
        for key, row in rows.items():
            context.add_asset_metadata(
                stages.file_metadata(key, work, row), asset_key=key, partition_key=work.rel_path
            )
    for key in selected:
        yield dg.MaterializeResult(asset_key=key, data_version=versions[key])


FILE_ASSETS = [file_stages]

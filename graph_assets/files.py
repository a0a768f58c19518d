"""Per-file stages, one partition per input file: raw_jsonl -> parsed_records -> chunks ->
chunk_embeddings (Parquet under the work directory; core: :mod:`nara_kg.pipeline`)."""

from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import dagster as dg

from graph_assets.common import (
    EMBEDDING_MODEL_POOL,
    FILE_KINDS,
    GROUP,
    OWNERS,
    counts_table,
    table,
    timed,
)
from graph_assets.partitions import files_of_run, input_files, is_full_rebuild
from nara_kg import pipeline
from resources import EmbeddingModel, PipelinePaths

#: A backfill launches one run per few files: retries stay small and runs stay parallel.
FILE_BACKFILL = dg.BackfillPolicy.multi_run(max_partitions_per_run=4)
#: On a cluster the embedding step asks for a GPU (dagster-k8s reads this tag; elsewhere inert).
K8S_GPU_TAGS = {
    "dagster-k8s/config": {
        "container_config": {"resources": {"limits": {"nvidia.com/gpu": "1"}}},
    }
}

FileWork = Callable[[str], dict[str, Any]]


def _per_file(
    context: dg.AssetExecutionContext, paths: PipelinePaths, work: FileWork
) -> Iterator[dg.AssetMaterialization | dict[str, Any]]:
    """Run `work` on each file of the run, yielding its row. A run without partitions (the
    whole export) also records each file's own materialization, so the partition bar shows it."""
    files, partitioned = files_of_run(context, paths.data_path)
    for position, rel_path in enumerate(files, start=1):
        row = work(rel_path)
        if not partitioned:
            yield dg.AssetMaterialization(
                asset_key=context.asset_key,
                partition=rel_path,
                metadata={k: v for k, v in row.items() if isinstance(v, int | float | str)},
            )
        if position % 50 == 0:
            context.log.info(f"{position}/{len(files)} files done")
        yield row


def _rows(
    context: dg.AssetExecutionContext, paths: PipelinePaths, work: FileWork
) -> tuple[list[dict[str, Any]], list[dg.AssetMaterialization]]:
    rows: list[dict[str, Any]] = []
    events: list[dg.AssetMaterialization] = []
    for item in _per_file(context, paths, work):
        if isinstance(item, dg.AssetMaterialization):
            events.append(item)
        else:
            rows.append(item)
    return rows, events


@dg.asset(
    group_name=GROUP,
    kinds=FILE_KINDS,
    owners=OWNERS,
    partitions_def=input_files,
    backfill_policy=FILE_BACKFILL,
    description=(
        "One export file (.jsonl, .jsonl.gz, .zip) under NARA_DATA_DIR per partition: its size "
        "and content hash (reused while size and mtime are unchanged). Core: "
        "nara_kg.pipeline.scan_file."
    ),
)
def raw_jsonl(
    context: dg.AssetExecutionContext, paths: PipelinePaths
) -> Iterator[dg.AssetMaterialization | dg.MaterializeResult]:
    force = is_full_rebuild(context)

    def work(rel_path: str) -> dict[str, Any]:
        try:
            file = pipeline.scan_file(paths.data_path, rel_path, paths.layout, force=force)
        except FileNotFoundError as error:
            raise dg.Failure(
                f"{error}: the file left the export; the input sensor (or `nara-kg build`) "
                "removes its partition"
            ) from error
        return {"file": rel_path, "bytes": file.size, "sha256": file.sha256}

    metadata: dict[str, Any] = {}
    with timed(metadata):
        rows, events = _rows(context, paths, work)
    yield from events
    yield dg.MaterializeResult(
        metadata={
            **metadata,
            "data_dir": dg.MetadataValue.path(str(paths.data_path)),
            "files": len(rows),
            "bytes": sum(row["bytes"] for row in rows),
            "file_list": table(rows),
        },
        data_version=dg.DataVersion(rows[0]["sha256"][:32]) if len(rows) == 1 else None,
    )


@dg.asset(
    group_name=GROUP,
    kinds=FILE_KINDS,
    owners=OWNERS,
    partitions_def=input_files,
    backfill_policy=FILE_BACKFILL,
    deps=[raw_jsonl],
    description=(
        "The file's records, all ten types flattened to seed 000's property names, streamed to "
        "one Parquet part; stubs for parents and referenced authorities; bad lines to the "
        "file's rejects part (file, line, reason, raw text). Skipped when the content is "
        "unchanged, except in the full rebuild. Core: nara_kg.pipeline.parse_file."
    ),
)
def parsed_records(
    context: dg.AssetExecutionContext, paths: PipelinePaths
) -> Iterator[dg.AssetMaterialization | dg.MaterializeResult]:
    force = is_full_rebuild(context)
    layout = paths.layout
    by_type: Counter[str] = Counter()
    reasons: Counter[str] = Counter()

    def work(rel_path: str) -> dict[str, Any]:
        file = pipeline.scanned_file(paths.data_path, rel_path, layout)
        result = pipeline.parse_file(file, layout, force=force, log=context.log.info)
        by_type.update(result.by_type)
        reasons.update(result.reject_reasons)
        if result.rejected:
            context.log.warning(
                f"{rel_path}: {result.rejected} of {result.lines} lines rejected; see "
                f"{layout.rejects_part(file.file_id)}"
            )
        return {
            "file": rel_path,
            "parsed": result.parsed,
            "lines": result.lines,
            "records": result.records,
            "stubs": result.stubs,
            "rejected": result.rejected,
            "seconds": result.seconds,
        }

    metadata: dict[str, Any] = {}
    with timed(metadata):
        rows, events = _rows(context, paths, work)
    yield from events
    lines = sum(row["lines"] for row in rows)
    rejected = sum(row["rejected"] for row in rows)
    yield dg.MaterializeResult(
        metadata={
            **metadata,
            "files": len(rows),
            "files_parsed": sum(1 for row in rows if row["parsed"]),
            "files_skipped_unchanged": sum(1 for row in rows if not row["parsed"]),
            "lines": lines,
            "records": sum(row["records"] for row in rows),
            "stubs": sum(row["stubs"] for row in rows),
            "lines_rejected": rejected,
            "reject_share": dg.MetadataValue.float(round(rejected / lines if lines else 0.0, 6)),
            "records_by_type": counts_table(by_type),
            "reject_reasons": counts_table(reasons, key="reason"),
            "per_file": table(rows),
            "parquet_dir": dg.MetadataValue.path(str(layout.parsed_dir)),
        }
    )


@dg.asset(
    group_name=GROUP,
    kinds=FILE_KINDS,
    owners=OWNERS,
    partitions_def=input_files,
    backfill_policy=FILE_BACKFILL,
    deps=[parsed_records],
    description=(
        "Every record of the file split like the seed (recursive, 500 chars, no overlap) with "
        "a search header (title, type, parent, dates) on every chunk, re-split by tokens so "
        "that no chunk exceeds the embedding model's maximum sequence length. chunkId = "
        "'<naId>-<seq>'. Core: nara_kg.pipeline.chunk_file."
    ),
)
def chunks(
    context: dg.AssetExecutionContext, paths: PipelinePaths, embedding_model: EmbeddingModel
) -> Iterator[dg.AssetMaterialization | dg.MaterializeResult]:
    force = is_full_rebuild(context)
    layout = paths.layout
    embedder = embedding_model.get_embedder()
    total = pipeline.ChunkResult(token_limit=embedder.max_tokens)

    def work(rel_path: str) -> dict[str, Any]:
        file = pipeline.scanned_file(paths.data_path, rel_path, layout)
        stats, computed = pipeline.chunk_file(
            file,
            layout,
            count_tokens=embedder.count_tokens,
            max_tokens=embedder.max_tokens,
            chunker_key=embedder.key,
            force=force,
            preview=total.preview,
        )
        total.add(stats)
        if computed:
            total.parts_chunked += 1
        else:
            total.parts_reused += 1
        return {
            "file": rel_path,
            "chunked": computed,
            "records": stats["records"],
            "chunks": stats["chunks"],
            "max_tokens": stats["max_tokens_seen"],
        }

    metadata: dict[str, Any] = {}
    with timed(metadata):
        rows, events = _rows(context, paths, work)
    yield from events
    yield dg.MaterializeResult(
        metadata={
            **metadata,
            "records": total.records,
            "chunks": total.chunks,
            "files_chunked": total.parts_chunked,
            "files_reused_unchanged": total.parts_reused,
            "embedded_chunks": total.embedded_chunks,
            "multi_chunk_records": total.multi_chunk_records,
            "title_only_records": total.title_only_records,
            "max_tokens_seen": total.max_tokens_seen,
            "model_token_limit": total.token_limit,
            "records_by_type": counts_table(total.by_type),
            "per_file": table(rows),
            "preview": table(total.preview),
            "parquet_dir": dg.MetadataValue.path(str(layout.chunks_dir)),
        }
    )


@dg.asset(
    group_name=GROUP,
    kinds={"python", "parquet", "pytorch"},
    owners=OWNERS,
    partitions_def=input_files,
    backfill_policy=FILE_BACKFILL,
    deps=[chunks],
    pool=EMBEDDING_MODEL_POOL,
    op_tags=K8S_GPU_TAGS,
    description=(
        "sentence-transformers vectors (default all-MiniLM-L6-v2, offline) of the file's "
        "embeddable chunks, in one Parquet part per file; a chunk whose text and model are "
        "unchanged keeps its vector (the full rebuild re-encodes all). The model's pool keeps "
        "parallel partitions from oversubscribing the CPU. Core: nara_kg.pipeline.embed_file."
    ),
)
def chunk_embeddings(
    context: dg.AssetExecutionContext, paths: PipelinePaths, embedding_model: EmbeddingModel
) -> Iterator[dg.AssetMaterialization | dg.MaterializeResult]:
    force = is_full_rebuild(context)
    layout = paths.layout
    embedder = embedding_model.get_embedder()
    seconds_encoding = 0.0

    def work(rel_path: str) -> dict[str, Any]:
        nonlocal seconds_encoding
        file = pipeline.scanned_file(paths.data_path, rel_path, layout)
        result = pipeline.embed_file(file, layout, embedder, force=force, log=context.log.debug)
        seconds_encoding += result.seconds_encoding
        return {
            "file": rel_path,
            "chunks": result.chunks,
            "encoded": result.encoded,
            "reused": result.reused,
            "chunks_per_second": round(result.chunks_per_second, 1),
        }

    metadata: dict[str, Any] = {}
    with timed(metadata):
        rows, events = _rows(context, paths, work)
    yield from events
    encoded = sum(row["encoded"] for row in rows)
    yield dg.MaterializeResult(
        metadata={
            **metadata,
            "chunks": sum(row["chunks"] for row in rows),
            "encoded": encoded,
            "reused": sum(row["reused"] for row in rows),
            "model_key": embedder.key,
            "encoding_seconds": dg.MetadataValue.float(round(seconds_encoding, 3)),
            "chunks_per_second": dg.MetadataValue.float(
                round(encoded / seconds_encoding, 1) if seconds_encoding else 0.0
            ),
            "per_file": table(rows),
            "parquet_dir": dg.MetadataValue.path(str(layout.vectors_dir)),
        }
    )


FILE_ASSETS = [raw_jsonl, parsed_records, chunks, chunk_embeddings]

"""File stages: raw_jsonl -> parsed_records -> chunks (Parquet under the work directory)."""

import hashlib
from typing import Any

import dagster as dg

from graph_assets.common import FILE_KINDS, GROUP, OWNERS, counts_table, md_table, timed
from nara_kg import pipeline
from resources import EmbeddingModel, PipelinePaths


@dg.asset(
    group_name=GROUP,
    kinds=FILE_KINDS,
    owners=OWNERS,
    description=(
        "The NARA export files under NARA_DATA_DIR (.jsonl, .jsonl.gz, .zip; export layout "
        "descriptions/… and authority-records/…, or any folder), each with a content hash."
    ),
)
def raw_jsonl(context: dg.AssetExecutionContext, paths: PipelinePaths) -> dg.MaterializeResult:
    metadata: dict[str, Any] = {}
    with timed(metadata):
        files = pipeline.scan_inputs(paths.data_path, paths.layout)
    if not files:
        raise dg.Failure(f"no input files (.jsonl, .jsonl.gz, .zip) under {paths.data_path}")
    fingerprint = hashlib.sha256(
        "\n".join(f"{f.rel_path}:{f.sha256}" for f in files).encode()
    ).hexdigest()
    context.log.info(f"{len(files)} input files under {paths.data_path}")
    return dg.MaterializeResult(
        metadata={
            **metadata,
            "data_dir": dg.MetadataValue.path(str(paths.data_path)),
            "files": len(files),
            "bytes": sum(f.size for f in files),
            "file_list": md_table(
                [{"file": f.rel_path, "bytes": f.size, "sha256": f.sha256[:12]} for f in files],
                limit=50,
            ),
        },
        data_version=dg.DataVersion(fingerprint[:32]),
    )


@dg.asset(
    group_name=GROUP,
    kinds=FILE_KINDS,
    owners=OWNERS,
    deps=[raw_jsonl],
    description=(
        "All ten record types flattened to seed 000's property names, one Parquet part per "
        "input file (streamed); stubs for parents and referenced authorities; one chosen row "
        "per naId (full beats stub, most complete copy wins); bad lines in the rejects table."
    ),
)
def parsed_records(context: dg.AssetExecutionContext, paths: PipelinePaths) -> dg.MaterializeResult:
    metadata: dict[str, Any] = {}
    layout = paths.layout
    with timed(metadata):
        files = pipeline.read_manifest(layout, paths.data_path)
        result = pipeline.parse_inputs(files, layout, log=context.log.info)
    if result.rejected:
        context.log.warning(
            f"{result.rejected} of {result.lines} lines rejected ({result.reject_share:.2%}); "
            f"see {layout.rejects}"
        )
    return dg.MaterializeResult(
        metadata={
            **metadata,
            "records": result.records,
            "records_chosen": result.chosen_records,
            "stubs_chosen": result.chosen_stubs,
            "lines": result.lines,
            "lines_rejected": result.rejected,
            "reject_share": dg.MetadataValue.float(round(result.reject_share, 6)),
            "files_parsed": result.files_parsed,
            "files_skipped_unchanged": result.files_skipped,
            "records_by_type": counts_table(result.by_type),
            "reject_reasons": counts_table(result.reject_reasons, key="reason"),
            "duplicates": md_table(result.duplicates),
            "duplicate_naids": len(result.duplicates),
            "organization_name_aliases": result.aliases,
            "per_file": md_table(result.per_file, limit=50),
            "rejects_path": dg.MetadataValue.path(str(layout.rejects)),
            "parquet_dir": dg.MetadataValue.path(str(layout.parsed_dir)),
        }
    )


@dg.asset(
    group_name=GROUP,
    kinds=FILE_KINDS,
    owners=OWNERS,
    deps=[parsed_records],
    description=(
        "Body text split like the seed (recursive, 500 chars, no overlap) with a search header "
        "(title, type, parent, dates) on every chunk, re-split by tokens so that no chunk "
        "exceeds the embedding model's maximum sequence length. chunkId = '<naId>-<seq>'."
    ),
)
def chunks(
    context: dg.AssetExecutionContext, paths: PipelinePaths, embedding_model: EmbeddingModel
) -> dg.MaterializeResult:
    metadata: dict[str, Any] = {}
    layout = paths.layout
    embedder = embedding_model.get_embedder()
    with timed(metadata):
        files = pipeline.read_manifest(layout, paths.data_path)
        result = pipeline.chunk_records(
            files,
            layout,
            count_tokens=embedder.count_tokens,
            max_tokens=embedder.max_tokens,
            chunker_key=embedder.key,
            log=context.log.info,
        )
    return dg.MaterializeResult(
        metadata={
            **metadata,
            "records": result.records,
            "chunks": result.chunks,
            "files_chunked": result.parts_chunked,
            "files_reused_unchanged": result.parts_reused,
            "embedded_chunks": result.embedded_chunks,
            "multi_chunk_records": result.multi_chunk_records,
            "title_only_records": result.title_only_records,
            "max_tokens_seen": result.max_tokens_seen,
            "model_token_limit": result.token_limit,
            "records_by_type": counts_table(result.by_type),
            "preview": md_table(result.preview, max_cell=240),
            "parquet_dir": dg.MetadataValue.path(str(layout.chunks_dir)),
        }
    )

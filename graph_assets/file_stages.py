"""Per-file stages, one partition per input file: raw_jsonl -> parsed_records -> chunks ->
chunk_embeddings (Parquet under the work directory). Core: the module of the same name in
:mod:`nara_kg.ingest.stages` for each asset (:mod:`nara_kg.ingest.stages.raw_jsonl`, ...), run
over the run's files by :func:`nara_kg.ingest.stages.file_run.run_file_stages`.

The four assets are computed by one op, `file_stages`: one process per run loads the model
once, and a run without partitions (e.g. `dagster job execute -j kg_full_rebuild`) can cover
the whole export, which Dagster allows only when no partitioned asset reads another through an
op input. Each asset keeps its own partition bar, metadata and description.

The op is subsettable, and its stages' dependencies are not op inputs (`_subsettable`). A run
killed while Dagster stores its materializations leaves a file's first stages recorded and the
later ones not; the backfill's "re-execute from failure" then asks for those later stages only,
which a multi-asset that cannot be subset never runs (the retry ends COMPLETED_FAILED with
nothing launched). `@multi_asset(can_subset=True)` would make each stage's dependency an op
input again, and the run without partitions would fail on it.
"""

from collections.abc import Iterator

import dagster as dg

from graph_assets.common import EMBEDDING_MODEL_POOL, FILE_KINDS, OWNERS, PER_FILE_GROUP, table
from graph_assets.file_run_metadata import (
    add_partitions_metadata,
    partition_metadata,
    partitions_metadata,
    run_metadata,
)
from graph_assets.file_versions import STAGE_CODE_VERSIONS, data_versions
from graph_assets.partitions import files_of_run, input_files, is_full_rebuild
from nara_kg.ingest.stages import file_run
from nara_kg.ingest.stages.file_run import run_file_stages
from resources import EmbeddingModel, PipelinePaths

RAW_JSONL = dg.AssetKey(file_run.RAW_JSONL)
PARSED_RECORDS = dg.AssetKey(file_run.PARSED_RECORDS)
CHUNKS = dg.AssetKey(file_run.CHUNKS)
CHUNK_EMBEDDINGS = dg.AssetKey(file_run.CHUNK_EMBEDDINGS)
#: The stages in pipeline order.
STAGE_ORDER = (RAW_JSONL, PARSED_RECORDS, CHUNKS, CHUNK_EMBEDDINGS)

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
    """Scan, parse, chunk and embed each file of the run; report the outcome per partition."""
    selected = [key for key in STAGE_ORDER if key in context.selected_asset_keys]
    embedder = embedding_model.get_embedder()
    files, partitioned = files_of_run(
        context, paths.data_path, follow_external_links=paths.follow_external_links
    )
    outcome = run_file_stages(
        files,
        data_dir=paths.data_path,
        layout=paths.layout,
        embedder=embedder,
        max_body_chars=paths.max_body_chars,
        stages=[key.to_user_string() for key in selected],
        force=is_full_rebuild(context),
        log=context.log,
    )
    if outcome.failed or not partitioned:
        # Each finished file is recorded as its own partition, so a failure elsewhere in the
        # run leaves it materialized and only the failed files need another run.
        for work in outcome.done:
            for stage, row in work.reported.items():
                yield dg.AssetMaterialization(
                    asset_key=dg.AssetKey(stage),
                    partition=work.rel_path,
                    metadata=partition_metadata(stage, work, row, paths, embedder),
                )
    if failed := outcome.failed:
        raise dg.Failure(
            description=f"{len(failed)} of {len(files)} files failed; the others are done",
            metadata={"failed_files": table([{"file": k, "error": v} for k, v in failed.items()])},
        )
    versions = data_versions(
        paths.data_path,
        paths.layout,
        context.instance.get_dynamic_partitions(input_files.name) if partitioned else files,
        max_body_chars=paths.max_body_chars,
        model_key=embedder.key,
        max_tokens=embedder.max_tokens,
    )
    if not partitioned:
        # A run without partitions (the whole export) records the run's totals on one
        # materialization without a partition; each file's partition got its own above.
        for key in selected:
            yield dg.MaterializeResult(
                asset_key=key,
                metadata=run_metadata(key.to_user_string(), outcome, paths, embedder),
                data_version=versions[key.to_user_string()],
            )
        return
    # Each partition shows its own file's figures; Dagster adds them to that partition's
    # materialization of the run's result.
    add_partitions_metadata(context, partitions_metadata(outcome, paths, embedder))
    for key in selected:
        yield dg.MaterializeResult(asset_key=key, data_version=versions[key.to_user_string()])


FILE_ASSETS = [file_stages]

"""`file_stages` runs a subset of its stages: what a backfill's "re-execute from failure" asks for
after a run was killed while Dagster stored its materializations (a file's first stages
recorded, the later ones not). The later stages then run on their own, for those files, and
write what a whole run writes; the earlier stages are not reported again."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq
import pytest

from benchmarks.data import generate_dataset
from graph_assets.file_stages import (
    CHUNK_EMBEDDINGS,
    CHUNKS,
    PARSED_RECORDS,
    RAW_JSONL,
    STAGE_ORDER,
    file_stages,
)
from graph_assets.partitions import sync_file_partitions
from resources import EmbeddingModel, PipelinePaths


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("export")
    generate_dataset(data, 120)
    return data


def _run(
    export: Path,
    work: Path,
    instance: dg.DagsterInstance,
    partition: str,
    selection: list[dg.AssetKey] | None = None,
) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [file_stages],
        selection=selection,
        partition_key=partition,
        resources={
            "paths": PipelinePaths(data_dir=str(export), work_dir=str(work)),
            "embedding_model": EmbeddingModel(backend="standin"),
        },
        instance=instance,
    )


def _reported(result: dg.ExecuteInProcessResult) -> set[dg.AssetKey | None]:
    return {event.asset_key for event in result.get_asset_materialization_events()}


def _vectors(work: Path) -> dict[str, list[float]]:
    parts = sorted((work / "embeddings").glob("*.parquet"))
    assert len(parts) == 1, parts
    table = pq.read_table(parts[0]).to_pylist()
    return {row["chunkId"]: row["vector"] for row in table}


def test_the_later_stages_run_alone_after_the_earlier_ones_were_recorded(
    export: Path, tmp_path: Path
) -> None:
    # Closed test instances, not bare ephemeral ones (see test_file_stages_windows.py).
    with dg.instance_for_test() as instance, dg.instance_for_test() as other:
        partition = sync_file_partitions(instance, export).added[0]
        assert file_stages.can_subset

        first = _run(export, tmp_path / "work", instance, partition, [RAW_JSONL, PARSED_RECORDS])
        assert _reported(first) == {RAW_JSONL, PARSED_RECORDS}
        assert not list((tmp_path / "work" / "embeddings").glob("*.parquet"))

        rest = _run(export, tmp_path / "work", instance, partition, [CHUNKS, CHUNK_EMBEDDINGS])
        assert _reported(rest) == {CHUNKS, CHUNK_EMBEDDINGS}
        recorded = {key: instance.get_materialized_partitions(key) for key in STAGE_ORDER}
        assert all(found == {partition} for found in recorded.values()), recorded

        # The same vectors as one run of every stage.
        sync_file_partitions(other, export)
        whole = _run(export, tmp_path / "whole", other, partition)
        assert _reported(whole) == set(STAGE_ORDER)
        assert _vectors(tmp_path / "work") == _vectors(tmp_path / "whole")

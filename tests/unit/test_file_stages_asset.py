"""The `file_stages` op over the core (`run_file_stages`, tested in test_file_run.py): the
outcome mapped to Dagster, and the op's subsets.

A subset is what a backfill's "re-execute from failure" asks for after a run was killed while
Dagster stored its materializations (a file's first stages recorded, the later ones not). The
later stages then run on their own, for those files, and write what a whole run writes; the
earlier stages are not reported again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
from nara_kg.ingest.stages import chunks
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
    # Closed test instances, not bare ephemeral ones (see `_whole_export`).
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


def _whole_export(export: Path, work: Path) -> dg.ExecuteInProcessResult:
    """A run without partitions (the whole export, as `kg_full_rebuild` without a range)."""
    # A closed test instance, not a bare ephemeral one: Dagster keeps the last instance's state
    # storage process-wide, and a garbage-collected one broke the next test that loads defs.
    with dg.instance_for_test() as instance:
        return dg.materialize(
            [file_stages],
            resources={
                "paths": PipelinePaths(data_dir=str(export), work_dir=str(work)),
                "embedding_model": EmbeddingModel(backend="standin"),
            },
            instance=instance,
            raise_on_error=False,
        )


def test_a_run_over_the_export_records_each_file_and_the_run_totals(
    export: Path, tmp_path: Path
) -> None:
    result = _whole_export(export, tmp_path / "work")
    assert result.success
    events = result.get_asset_materialization_events()
    files = {str(e.partition) for e in events if e.asset_key == CHUNK_EMBEDDINGS and e.partition}
    assert len(files) > 1
    for key in STAGE_ORDER:
        assert {str(e.partition) for e in events if e.asset_key == key and e.partition} == files
    summary = next(
        event.step_materialization_data.materialization.metadata
        for event in events
        if event.asset_key == CHUNK_EMBEDDINGS and not event.partition
    )
    assert summary["files"].value == len(files)
    assert 0 < summary["distinct_texts_encoded"].value <= summary["encoded"].value


def test_a_failed_file_fails_the_step_and_the_others_stay_materialized(
    export: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunk_file = chunks.chunk_file
    seen: list[str] = []

    def flaky(file: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(file.rel_path)
        if len(seen) == 2:
            raise ValueError("a broken part")
        return chunk_file(file, *args, **kwargs)

    monkeypatch.setattr(chunks, "chunk_file", flaky)
    result = _whole_export(export, tmp_path / "work")
    assert not result.success
    failure = next(event for event in result.all_events if event.is_step_failure)
    assert f"1 of {len(seen)} files failed" in str(failure.step_failure_data.error)
    for key in STAGE_ORDER:
        recorded = {
            str(event.partition)
            for event in result.get_asset_materialization_events()
            if event.asset_key == key
        }
        assert recorded == set(seen) - {seen[1]}

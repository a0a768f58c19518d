"""What the UI shows of the per-file assets is true: each partition carries its own file's
figures (which add up to the run's), data versions come from content and parameters (an
unchanged re-run leaves what is downstream Synced, a changed file does not), and the input
sensor and a build agree on what is already built, whichever ran first."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus
from dagster._core.loader import LoadingContextForTest

from benchmarks.data import generate_dataset
from graph_assets.common import plain_metadata
from graph_assets.file_metadata import run_totals
from graph_assets.file_stages import CHUNK_EMBEDDINGS, CHUNKS, PARSED_RECORDS, file_stages
from graph_assets.partitions import INPUT_FILES_PARTITIONS, sync_file_partitions
from graph_assets.record_selection import record_selection
from resources import EmbeddingModel, PipelinePaths
from schedules import RANGE_END, RANGE_START, input_files_sensor

ASSETS = [file_stages, record_selection]


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("export")
    generate_dataset(data, 150)
    return data


def _resources(export: Path, work: Path) -> dict[str, Any]:
    return {
        "paths": PipelinePaths(data_dir=str(export), work_dir=str(work)),
        "embedding_model": EmbeddingModel(backend="standin"),
    }


def _files(instance: dg.DagsterInstance, export: Path, work: Path, keys: list[str]) -> Any:
    """The file stages over `keys`: one partition, or a range as `nara-kg build` runs them."""
    tags = {} if len(keys) == 1 else {RANGE_START: keys[0], RANGE_END: keys[-1]}
    return dg.materialize(
        [file_stages],
        partition_key=keys[0] if len(keys) == 1 else None,
        tags=tags,
        resources=_resources(export, work),
        instance=instance,
    )


def _selection(instance: dg.DagsterInstance, export: Path, work: Path) -> None:
    result = dg.materialize(
        ASSETS, selection=[record_selection], resources=_resources(export, work), instance=instance
    )
    assert result.success


def _status(instance: dg.DagsterInstance, key: dg.AssetKey) -> StaleStatus:
    graph = dg.Definitions(
        assets=ASSETS, resources=_resources(Path("unused"), Path("unused"))
    ).resolve_asset_graph()
    resolver = CachingStaleStatusResolver(instance, graph, LoadingContextForTest(instance))
    return resolver.get_status(key)


def _lines(path: Path) -> int:
    opener: Any = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return sum(1 for line in handle if line.strip())


def _per_partition(result: Any, key: dg.AssetKey) -> dict[str, dict[str, Any]]:
    return {
        str(event.partition): plain_metadata(
            event.step_materialization_data.materialization.metadata
        )
        for event in result.get_asset_materialization_events()
        if event.asset_key == key and event.partition
    }


def test_each_partition_carries_its_own_files_figures(export: Path, tmp_path: Path) -> None:
    with dg.instance_for_test() as instance:
        keys = sync_file_partitions(instance, export).added
        assert len(keys) >= 3
        result = _files(instance, export, tmp_path / "work", keys)
        assert result.success
        parsed = _per_partition(result, PARSED_RECORDS)
        assert sorted(parsed) == sorted(keys)
        for rel, metadata in parsed.items():
            assert metadata["file"] == rel
            assert metadata["lines"] == _lines(export / rel), rel
            assert {row["type"] for row in metadata["records_by_type"]}
        lines = [metadata["lines"] for metadata in parsed.values()]
        assert len(set(lines)) > 1, "the partitions all carry the same figure"
        assert sum(lines) == sum(_lines(export / rel) for rel in keys)
        # The figures of each stage add up to the run's totals, each file once.
        chunks = _per_partition(result, CHUNKS)
        vectors = _per_partition(result, CHUNK_EMBEDDINGS)
        totals = run_totals(list(vectors.values()))
        assert totals["files"] == len(keys)
        assert totals["encoded"] + totals["reused"] == totals["chunks"]
        assert len({m["chunks"] for m in chunks.values()}) > 1
        # A file's chunks count its records as parsed_records does, its stubs apart.
        for rel, metadata in chunks.items():
            assert (metadata["records"], metadata["stubs"]) == (
                parsed[rel]["records"],
                parsed[rel]["stubs"],
            ), rel
            by_type = {row["type"]: row["count"] for row in metadata["records_by_type"]}
            assert sum(by_type.values()) == metadata["records"], rel
        assert sum(m["stubs"] for m in chunks.values()) > 0
        assert run_totals(list(parsed.values()))["files_parsed"] == len(keys)
        # No partition carries the run's per-file table.
        assert all("per_file" not in m for m in [*parsed.values(), *chunks.values()])


def test_an_unchanged_rerun_stays_synced_and_a_changed_file_does_not(
    export: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    with dg.instance_for_test() as instance:
        keys = sync_file_partitions(instance, export).added
        # Built as a backfill builds them: several runs over ranges of the partitions, the
        # later files not yet scanned while the first run stamps its versions.
        half = len(keys) // 2
        assert _files(instance, export, work, keys[:half]).success
        assert _files(instance, export, work, keys[half:]).success
        _selection(instance, export, work)
        assert _status(instance, record_selection.key) == StaleStatus.FRESH
        # One partition again, nothing changed: the same data versions, downstream Synced.
        assert _files(instance, export, work, [keys[1]]).success
        assert _status(instance, record_selection.key) == StaleStatus.FRESH
        # The whole range again: still Synced.
        assert _files(instance, export, work, keys).success
        assert _status(instance, record_selection.key) == StaleStatus.FRESH
        # A file's content changes and its partition runs: what reads it is no longer Synced.
        changed = export / keys[0]
        changed.write_bytes(changed.read_bytes() + b"\n")
        assert _files(instance, export, work, [keys[0]]).success
        assert _status(instance, record_selection.key) == StaleStatus.STALE


def _sensor(instance: dg.DagsterInstance, export: Path, work: Path) -> dg.SensorResult:
    with dg.build_sensor_context(
        instance=instance,
        resources={"paths": PipelinePaths(data_dir=str(export), work_dir=str(work))},
    ) as context:
        result = input_files_sensor(context)
    assert isinstance(result, dg.SensorResult)
    for request in result.dynamic_partitions_requests or []:
        if isinstance(request, dg.AddDynamicPartitionsRequest):
            instance.add_dynamic_partitions(request.partitions_def_name, request.partition_keys)
    return result


def test_the_sensor_and_a_build_agree_on_what_is_built(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    export = tmp_path_factory.mktemp("agree") / "export"
    generate_dataset(export, 60)
    # A build first (every partition in one run, as `nara-kg build` runs them): switched on
    # afterwards, the sensor asks for nothing.
    with dg.instance_for_test() as instance:
        work = export.parent / "work-build"
        keys = sync_file_partitions(instance, export).added
        assert _files(instance, export, work, keys).success
        quiet = _sensor(instance, export, work)
        assert not quiet.run_requests and quiet.skip_reason
        # Until a file changes.
        changed = export / keys[0]
        changed.write_bytes(changed.read_bytes() + b"\n")
        assert [r.partition_key for r in _sensor(instance, export, work).run_requests or []] == [
            keys[0]
        ]
    # The sensor first: its runs build each file; a build over every partition then finds
    # nothing to parse, chunk or encode.
    with dg.instance_for_test() as instance:
        work = export.parent / "work-sensor"
        requests = _sensor(instance, export, work).run_requests or []
        assert {r.partition_key for r in requests} == set(
            instance.get_dynamic_partitions(INPUT_FILES_PARTITIONS)
        )
        for request in requests:
            assert _files(instance, export, work, [str(request.partition_key)]).success
        assert not _sensor(instance, export, work).run_requests
        keys = list(instance.get_dynamic_partitions(INPUT_FILES_PARTITIONS))
        rebuild = _files(instance, export, work, keys)
        parsed = run_totals(list(_per_partition(rebuild, PARSED_RECORDS).values()))
        chunked = run_totals(list(_per_partition(rebuild, CHUNKS).values()))
        encoded = run_totals(list(_per_partition(rebuild, CHUNK_EMBEDDINGS).values()))
        assert parsed["files_parsed"] == 0 and parsed["files"] == len(keys)
        assert chunked["files_chunked"] == 0
        assert encoded["encoded"] == 0


def test_run_totals_keep_only_the_texts_every_file_shares() -> None:
    totals = run_totals(
        [
            {"file": "a.jsonl", "sha256": "aa", "model_key": "m", "lines": 3},
            {"file": "b.jsonl", "sha256": "bb", "model_key": "m", "lines": 4},
        ]
    )
    assert totals == {"files": 2, "model_key": "m", "lines": 7, "reject_share": 0.0}
    assert run_totals([{"file": "a.jsonl", "lines": 1}])["file"] == "a.jsonl"


def test_the_partitions_metadata_reads_the_partitions_once_not_per_file(
    export: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with dg.instance_for_test() as instance:
        keys = sync_file_partitions(instance, export).added
        reads = 0
        read = instance.get_dynamic_partitions

        def counting(*args: Any, **kwargs: Any) -> Any:
            nonlocal reads
            reads += 1
            return read(*args, **kwargs)

        monkeypatch.setattr(instance, "get_dynamic_partitions", counting)
        result = _files(instance, export, tmp_path / "work", keys)
        assert result.success
        # Dagster's add_asset_metadata read every partition once per file and stage.
        assert reads < len(keys) * 4

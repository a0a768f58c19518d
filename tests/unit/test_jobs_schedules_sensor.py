from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
import pytest

from graph_assets import FILE_SPECS, GRAPH_WIDE_ASSETS
from graph_assets.partitions import INPUT_FILES_PARTITIONS, sync_file_partitions
from jobs import (
    KG_EVALUATION,
    KG_FILE_STAGES,
    KG_FULL_REBUILD,
    KG_GRAPH,
    KG_INCREMENTAL,
    executor,
    kg_file_stages,
    kg_graph,
)
from nara_kg.app.definitions import defs
from nara_kg.app.launch import split_ranges
from resources import PipelinePaths
from schedules import (
    CHANGE_TAG,
    NIGHTLY_REBUILD,
    RANGE_END,
    RANGE_START,
    build_defs,
    input_files_sensor,
)


def evaluate(instance: dg.DagsterInstance, data: Path, cursor: str | None) -> dg.SensorResult:
    """One sensor tick; its partition requests are applied as the daemon would."""
    with dg.build_sensor_context(
        cursor=cursor,
        instance=instance,
        resources={"paths": PipelinePaths(data_dir=str(data), work_dir=str(data / "work"))},
    ) as context:
        result = input_files_sensor(context)
    for request in result.dynamic_partitions_requests or []:
        if isinstance(request, dg.AddDynamicPartitionsRequest):
            instance.add_dynamic_partitions(request.partitions_def_name, request.partition_keys)
        else:
            for key in request.partition_keys:
                instance.delete_dynamic_partition(request.partitions_def_name, key)
    return result


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def built(data: Path, *rel_paths: str) -> None:
    """What a run of the file stages leaves for each file: its scan (size, mtime, hash)."""
    from nara_kg.ingest.stages import raw_jsonl

    layout = PipelinePaths(data_dir=str(data), work_dir=str(data / "work")).layout
    for rel in rel_paths:
        raw_jsonl.scan_file(data, rel, layout)


def test_sensor_keeps_one_partition_per_file_and_requests_each_change_once(
    tmp_path: Path,
) -> None:
    instance = dg.DagsterInstance.ephemeral()
    data = tmp_path / "export"
    first_file = "descriptions/rg_1/rg_1-1.jsonl"
    write(data / first_file, '{"record": {}}\n')
    first = evaluate(instance, data, None)
    assert [(r.job_name, r.partition_key) for r in first.run_requests] == [
        (KG_FILE_STAGES, first_file)
    ]
    assert instance.get_dynamic_partitions(INPUT_FILES_PARTITIONS) == [first_file]
    # Until its run has built it, the file is asked for under the same run key (which Dagster
    # launches once); once built, nothing is requested.
    again = evaluate(instance, data, first.cursor)
    assert [r.run_key for r in again.run_requests] == [first.run_requests[0].run_key]
    built(data, first_file)
    same = evaluate(instance, data, again.cursor)
    assert not same.run_requests and same.skip_reason
    # A new file and a changed file: one run per file, with new run keys.
    person = "authority-records/person/person-1.jsonl"
    write(data / person, '{"record": {}}\n')
    changed = data / first_file
    changed.write_text('{"record": {"naId": 1}}\n')
    os.utime(changed, ns=(1, 10**18))
    second = evaluate(instance, data, same.cursor)
    assert sorted(r.partition_key for r in second.run_requests) == [person, first_file]
    assert {r.tags[CHANGE_TAG] for r in second.run_requests} == {"added", "changed"}
    assert first.run_requests[0].run_key not in {r.run_key for r in second.run_requests}
    assert set(instance.get_dynamic_partitions(INPUT_FILES_PARTITIONS)) == {first_file, person}
    built(data, first_file, person)
    # A removed file loses its partition, and the graph-wide job takes its records out.
    changed.unlink()
    third = evaluate(instance, data, second.cursor)
    assert [(r.job_name, r.partition_key) for r in third.run_requests] == [(KG_GRAPH, None)]
    assert instance.get_dynamic_partitions(INPUT_FILES_PARTITIONS) == [person]
    # Files that are not input files are ignored.
    write(data / "descriptions/notes.txt", "x")
    assert not evaluate(instance, data, third.cursor).run_requests


def test_partitions_follow_the_data_folder(tmp_path: Path) -> None:
    instance = dg.DagsterInstance.ephemeral()
    write(tmp_path / "a.jsonl", "{}\n")
    write(tmp_path / "b.jsonl.gz", "")
    first = sync_file_partitions(instance, tmp_path)
    assert first.added == ["a.jsonl", "b.jsonl.gz"] and first.total == 2
    (tmp_path / "a.jsonl").unlink()
    second = sync_file_partitions(instance, tmp_path)
    assert second.removed == ["a.jsonl"] and not second.added
    assert instance.get_dynamic_partitions(INPUT_FILES_PARTITIONS) == ["b.jsonl.gz"]


def test_nightly_schedule_covers_every_partition_and_reads_its_cron_from_env(
    tmp_path: Path,
) -> None:
    schedule = build_defs(
        {"NARA_KG_REBUILD_CRON": "30 3 * * 1-5", "NARA_KG_REBUILD_TIMEZONE": "America/New_York"}
    ).get_schedule_def(NIGHTLY_REBUILD)
    assert schedule.cron_schedule == "30 3 * * 1-5"
    assert schedule.execution_timezone == "America/New_York"
    default = build_defs({}).get_schedule_def(NIGHTLY_REBUILD)
    assert default.cron_schedule == "0 2 * * *" and default.execution_timezone == "UTC"
    assert default.job_name == KG_INCREMENTAL

    for name in ("b.jsonl", "a.jsonl", "c.jsonl"):
        write(tmp_path / name, "{}\n")
    # Both closed by `with`, the context first: it opens an instance of its own from the
    # test instance's ref (see tests/conftest.py).
    with (
        dg.instance_for_test() as instance,
        dg.build_schedule_context(
            instance=instance,
            resources={"paths": PipelinePaths(data_dir=str(tmp_path), work_dir=str(tmp_path))},
        ) as context,
    ):
        [request] = default.evaluate_tick(context).run_requests
    assert request.tags[RANGE_START] == "a.jsonl" and request.tags[RANGE_END] == "c.jsonl"


def test_composition_root_jobs_and_assets() -> None:
    repository = defs().get_repository_def()
    assert {KG_FILE_STAGES, KG_GRAPH, KG_FULL_REBUILD, KG_INCREMENTAL, KG_EVALUATION} <= {
        j.name for j in repository.get_all_jobs()
    }
    keys = {key.to_user_string() for key in repository.asset_graph.get_all_asset_keys()}
    assert {"raw_jsonl", "record_selection", "graph_communities", "retrieval_evaluation"} <= keys
    graph = repository.asset_graph
    for spec in FILE_SPECS:
        assert isinstance(graph.get(spec.key).partitions_def, dg.DynamicPartitionsDefinition)
    for asset in GRAPH_WIDE_ASSETS:
        assert graph.get(asset.key).partitions_def is None
    assert kg_file_stages.selection.resolve(graph) == {spec.key for spec in FILE_SPECS}
    assert kg_graph.selection.resolve(graph) == {a.key for a in GRAPH_WIDE_ASSETS}


def test_executor_is_chosen_by_environment() -> None:
    assert executor({}).name == "multiprocess_or_one_process"
    assert executor({"NARA_KG_EXECUTOR": "in_process"}).name == "in_process"
    assert executor({"NARA_KG_EXECUTOR": "k8s"}).name == "k8s"
    with pytest.raises(ValueError, match="NARA_KG_EXECUTOR"):
        executor({"NARA_KG_EXECUTOR": "threads"})


def test_step_processes_fork_from_a_server_that_imported_the_code_location() -> None:
    import importlib

    from jobs import CODE_LOCATION_MODULE, STEP_PRELOAD_MODULE, multiprocess_config

    config = multiprocess_config(3)
    assert config["max_concurrent"] == 3
    assert config["start_method"] == {"forkserver": {"preload_modules": [STEP_PRELOAD_MODULE]}}
    assert hasattr(importlib.import_module(CODE_LOCATION_MODULE), "defs")


def test_a_run_may_ask_for_its_steps_in_one_process() -> None:
    """The default executor forks step processes unless the run's config asks for one process
    (what `nara-kg build` asks after a small change); other executors are not asked."""
    from jobs import one_process_run_config

    schema = executor({}).config_schema.as_field().config_type
    assert "in_process" in schema.fields
    assert schema.fields["in_process"].default_value is False
    assert one_process_run_config({}) == {"execution": {"config": {"in_process": True}}}
    assert one_process_run_config({"NARA_KG_EXECUTOR": "k8s"}) == {}
    assert one_process_run_config({"NARA_KG_EXECUTOR": "in_process"}) == {}


@pytest.mark.parametrize("with_home", [True, False])
def test_the_step_preload_opens_the_instance_at_dagster_home(
    tmp_path: Path, with_home: bool
) -> None:
    """Imported in a fresh process (as the forkserver does), the preload module has imported the
    code location and, where DAGSTER_HOME is set, opened the instance there (its storage set up,
    which each step process otherwise paid for); without DAGSTER_HOME it opens none."""
    import subprocess
    import sys

    from jobs import CODE_LOCATION_MODULE, STEP_PRELOAD_MODULE

    probe = f"import sys, {STEP_PRELOAD_MODULE}; print({CODE_LOCATION_MODULE!r} in sys.modules)"
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    if with_home:
        home = tmp_path / "home"
        home.mkdir()
        env["DAGSTER_HOME"] = str(home)
    out = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "True"
    assert (tmp_path / "home" / "history").exists() == with_home


def test_split_ranges_is_contiguous_and_even() -> None:
    keys = [f"k{i:02d}" for i in range(7)]
    assert split_ranges(keys, 3) == [("k00", "k02"), ("k03", "k04"), ("k05", "k06")]
    assert split_ranges(keys[:1], 4) == [("k00", "k00")]


def test_the_test_helper_never_wipes_a_database_it_was_not_lent() -> None:
    from nara_kg.settings import Neo4jSettings
    from tests.graph_helpers import may_wipe

    assert may_wipe(Neo4jSettings.from_env({}), {})
    remote = Neo4jSettings.from_env({"NEO4J_URI": "neo4j+s://production.example:7687"})
    assert not may_wipe(remote, {})
    assert may_wipe(remote, {"NARA_KG_TESTS_MAY_WIPE": "1"})

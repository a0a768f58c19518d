from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from jobs import KG_EVALUATION, KG_FULL_REBUILD, KG_INCREMENTAL, kg_incremental
from nara_kg.definitions import defs
from resources import PipelinePaths
from schedules import NIGHTLY_REBUILD, build_defs, input_files_sensor


def evaluate(data: Path, cursor: str | None) -> dg.SensorResult:
    context = dg.build_sensor_context(
        cursor=cursor,
        resources={"paths": PipelinePaths(data_dir=str(data), work_dir=str(data / "work"))},
    )
    return input_files_sensor(context)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_sensor_requests_one_run_per_change_and_none_twice(tmp_path: Path) -> None:
    data = tmp_path / "export"
    write(data / "descriptions/rg_1/rg_1-1.jsonl", '{"record": {}}\n')
    first = evaluate(data, None)
    assert len(first.run_requests) == 1 and first.cursor
    # Same files: nothing is requested again.
    same = evaluate(data, first.cursor)
    assert not same.run_requests and same.skip_reason
    # A new file and a changed file: one more request, with another run key.
    write(data / "authority-records/person/person-1.jsonl", '{"record": {}}\n')
    changed = data / "descriptions/rg_1/rg_1-1.jsonl"
    changed.write_text('{"record": {"naId": 1}}\n')
    os.utime(changed, ns=(1, 10**18))
    second = evaluate(data, first.cursor)
    assert len(second.run_requests) == 1
    assert second.run_requests[0].run_key != first.run_requests[0].run_key
    assert "1 added, 1 changed" in second.run_requests[0].tags["nara_kg/changes"]
    # A removed file is a change too.
    changed.unlink()
    third = evaluate(data, second.cursor)
    assert third.run_requests[0].tags["nara_kg/changes"] == "1 removed"
    # Files that are not input files are ignored.
    write(data / "descriptions/notes.txt", "x")
    assert not evaluate(data, third.cursor).run_requests


def test_schedule_cron_and_timezone_come_from_the_environment() -> None:
    schedule = build_defs(
        {"NARA_KG_REBUILD_CRON": "30 3 * * 1-5", "NARA_KG_REBUILD_TIMEZONE": "America/New_York"}
    ).get_schedule_def(NIGHTLY_REBUILD)
    assert schedule.cron_schedule == "30 3 * * 1-5"
    assert schedule.execution_timezone == "America/New_York"
    default = build_defs({}).get_schedule_def(NIGHTLY_REBUILD)
    assert default.cron_schedule == "0 2 * * *" and default.execution_timezone == "UTC"


def test_composition_root_has_every_job_and_asset() -> None:
    repository = defs().get_repository_def()
    assert {KG_FULL_REBUILD, KG_INCREMENTAL, KG_EVALUATION} <= {
        j.name for j in repository.get_all_jobs()
    }
    keys = {key.to_user_string() for key in repository.asset_graph.get_all_asset_keys()}
    assert {"raw_jsonl", "graph_nodes", "graph_communities", "retrieval_evaluation"} <= keys
    selected = kg_incremental.selection.resolve(repository.asset_graph)
    assert dg.AssetKey("graph_nodes") in selected
    assert dg.AssetKey("retrieval_evaluation") not in selected

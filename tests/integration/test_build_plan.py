"""`nara-kg build` after a successful build launches only what changed: no run when nothing
did, the changed file's partition when one did, and still reaches the graph `--full` gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from click.testing import CliRunner

from benchmarks.incremental import change_one_file
from nara_kg.cli.main import main
from nara_kg.graph.fingerprint import graph_fingerprint
from schedules import RANGE_END, RANGE_START
from tests.graph_helpers import wipe

pytestmark = pytest.mark.integration


def test_no_run_when_nothing_changed_and_one_partition_when_one_file_did(
    neo4j_driver: Any, neo4j_settings: Any, tmp_path: Path
) -> None:
    env = {
        "NARA_KG_WORK_DIR": str(tmp_path / "work"),
        "DAGSTER_HOME": str(tmp_path / "dagster_home"),
        "NARA_KG_QUESTIONS": "",
        "NARA_KG_EMBEDDING_BACKEND": "standin",
    }
    Path(env["DAGSTER_HOME"]).mkdir()
    data = tmp_path / "data"
    runner = CliRunner()
    assert runner.invoke(main, ["demo-data", str(data), "--records", "100"]).exit_code == 0
    wipe(neo4j_driver)

    def build(*args: str, steps_env: dict[str, str] | None = None) -> dict[str, Any]:
        result = runner.invoke(
            main, ["build", "--data", str(data), "--json", *args], env={**env, **(steps_env or {})}
        )
        assert result.exit_code == 0, result.output
        summary: dict[str, Any] = json.loads(result.stdout)
        return summary

    first = build()
    assert first["run_ids"] and first["up_to_date_since_runs"] is None
    files = first["partitions"]["total"]
    # The first build forks its steps (the default executor's multiprocess placement).
    assert _in_one_process(env, first["run_ids"]) == [False] * len(first["run_ids"])

    unchanged = build()
    assert unchanged["success"] is True and unchanged["run_ids"] == []
    assert unchanged["up_to_date_since_runs"] == first["run_ids"]
    assert unchanged["files_skipped"] == files
    with dg.DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
        assert len(instance.get_runs()) == len(first["run_ids"])

    edited = change_one_file(data)["file"]
    changed = build()
    assert changed["run_ids"] and changed["files_processed"] == 1
    with dg.DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
        (run,) = [instance.get_run_by_id(run_id) for run_id in changed["run_ids"]]
        assert run is not None
        assert (run.tags[RANGE_START], run.tags[RANGE_END]) == (edited, edited)
    # A small change runs every step in the run's own process: none is forked.
    assert _in_one_process(env, changed["run_ids"]) == [True]
    incremental = graph_fingerprint(neo4j_driver, neo4j_settings.database)

    # The two builds below check which runs are launched and the graph they reach, not where
    # their steps run (checked above): one process each spares some forty step processes.
    one_process = {"NARA_KG_EXECUTOR": "in_process"}
    wipe(neo4j_driver)  # emptied outside a build (a reset): built again, not trusted
    restored = build(steps_env=one_process)
    assert restored["run_ids"] and restored["up_to_date_since_runs"] is None
    assert graph_fingerprint(neo4j_driver, neo4j_settings.database) == incremental

    full = build("--full", steps_env=one_process)
    assert full["files_processed"] == files
    assert graph_fingerprint(neo4j_driver, neo4j_settings.database) == incremental


def _in_one_process(env: dict[str, str], run_ids: list[str]) -> list[bool]:
    """Per run: whether it asked for one process and forked no step worker."""
    out = []
    with dg.DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
        for run_id in run_ids:
            run = instance.get_run_by_id(run_id)
            assert run is not None
            asked = run.run_config.get("execution", {}).get("config", {}).get("in_process")
            forked = any(
                record.dagster_event is not None
                and record.dagster_event.event_type_value == "STEP_WORKER_STARTING"
                for record in instance.all_logs(run_id)
            )
            assert bool(asked) != forked, (asked, forked)
            out.append(bool(asked))
    return out

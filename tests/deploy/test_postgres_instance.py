"""deploy/postgres/dagster.yaml against a real PostgreSQL: the instance it describes, and a whole
`nara-kg build` whose runs, events and partitions land in that database."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from graph_assets.common import EMBEDDING_MODEL_POOL, NEO4J_WRITES_POOL
from graph_assets.file_stages import FILE_SPECS
from graph_assets.partitions import FULL, INPUT_FILES_PARTITIONS, REBUILD_TAG
from nara_kg.settings import PROJECT_ROOT
from tests.deploy.conftest import PostgresServer

pytestmark = pytest.mark.integration

DEPLOY_CONFIG = PROJECT_ROOT / "deploy" / "postgres" / "dagster.yaml"
BIN = Path(sys.executable).parent


@pytest.fixture
def postgres_home(
    tmp_path: Path, postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """DAGSTER_HOME holding a copy of the deploy config, the DAGSTER_PG_* variables set."""
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(DEPLOY_CONFIG, home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    for key, value in postgres_server.dagster_env().items():
        monkeypatch.setenv(key, value)
    return home


@pytest.fixture
def instance(postgres_home: Path) -> Iterator[dg.DagsterInstance]:
    with dg.DagsterInstance.get() as loaded:
        yield loaded


def _run_ids(server: PostgresServer) -> dict[str, str]:
    """run_id -> status, read from PostgreSQL itself."""
    import psycopg2

    connection = psycopg2.connect(**server.connect_kwargs())
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT run_id, status FROM runs")
            return {run_id: status for run_id, status in cursor.fetchall()}
    finally:
        connection.close()


def test_instance_is_postgres_backed(instance: dg.DagsterInstance) -> None:
    from dagster._core.run_coordinator import QueuedRunCoordinator
    from dagster_postgres import (
        PostgresEventLogStorage,
        PostgresRunStorage,
        PostgresScheduleStorage,
    )

    assert isinstance(instance.run_storage, PostgresRunStorage)
    assert isinstance(instance.event_log_storage, PostgresEventLogStorage)
    assert isinstance(instance.schedule_storage, PostgresScheduleStorage)
    assert isinstance(instance.run_coordinator, QueuedRunCoordinator)
    assert instance.run_monitoring_enabled
    assert not instance.telemetry_enabled

    concurrency = instance.get_concurrency_config()
    assert concurrency.pool_config.default_pool_limit == 1
    assert concurrency.run_queue_config is not None
    assert concurrency.run_queue_config.max_concurrent_runs == 2
    assert concurrency.run_queue_config.tag_concurrency_limits == [
        {"key": REBUILD_TAG, "value": FULL, "limit": 1}
    ]


def test_pool_limits_set_as_documented(instance: dg.DagsterInstance) -> None:
    """deploy/README.md's `dagster instance concurrency set` stores the limits in PostgreSQL."""
    for pool in (NEO4J_WRITES_POOL, EMBEDDING_MODEL_POOL):
        done = subprocess.run(
            [str(BIN / "dagster"), "instance", "concurrency", "set", pool, "1"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert instance.event_log_storage.get_concurrency_info(pool).slot_count == 1


def test_build_stores_runs_in_postgres(
    postgres_home: Path,
    postgres_server: PostgresServer,
    instance: dg.DagsterInstance,
    neo4j_driver: Any,
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    env = {
        **os.environ,
        "NARA_DATA_DIR": str(data),
        "NARA_KG_WORK_DIR": str(tmp_path / "work"),
        "NARA_KG_QUESTIONS": "",
        # This checks the instance's storage; the multiprocess executor is tested elsewhere.
        "NARA_KG_EXECUTOR": "in_process",
        # As deploy/README.md sets it: the per-file materializations are inserted in batches.
        "DAGSTER_EVENT_BATCH_SIZE": "1000",
    }
    generated = subprocess.run(
        [str(BIN / "nara-kg"), "demo-data", str(data), "--records", "200", "--shard-lines", "20"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert generated.returncode == 0, generated.stdout + generated.stderr
    input_files = [p for p in data.rglob("*.jsonl") if p.parent != data]
    assert len(input_files) > 1, generated.stdout

    before = _run_ids(postgres_server)  # the instance fixture has created the tables
    build = subprocess.run(
        [str(BIN / "nara-kg"), "build", "--data", str(data), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert build.returncode == 0, (build.stdout + build.stderr)[-6000:]
    summary = json.loads(build.stdout)
    assert summary["success"] is True

    # The build's runs are rows of PostgreSQL's `runs` table, all of them successful ...
    new_runs = {
        run_id: status
        for run_id, status in _run_ids(postgres_server).items()
        if run_id not in before
    }
    assert new_runs, "the build stored no run in PostgreSQL"
    assert set(new_runs.values()) == {"SUCCESS"}, new_runs
    if "run_id" in summary:
        assert summary["run_id"] in new_runs
    # ... and nothing went to the SQLite files of a default instance.
    assert not list(postgres_home.rglob("*.db"))

    stored = instance.get_runs(filters=dg.RunsFilter(run_ids=list(new_runs)))
    assert {run.run_id for run in stored} == set(new_runs)
    assert all(run.status == dg.DagsterRunStatus.SUCCESS for run in stored)
    # Per-file dynamic partitions, registered in the event-log storage.
    partitions = instance.get_dynamic_partitions(INPUT_FILES_PARTITIONS)
    assert partitions, f"no {INPUT_FILES_PARTITIONS} partitions recorded"
    # Every per-file asset materialized for every file, its events written in batches.
    for spec in FILE_SPECS:
        materialized = instance.get_materialized_partitions(spec.key)
        assert materialized == set(partitions), spec.key

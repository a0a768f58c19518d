"""Backfills through the service: every partition of a 40+ file export plus the graph-wide
assets, run by the daemon's queue (2 runs at a time) with the multiprocess executor; then a
backfill killed midway (kill -9 of the run workers) and resumed from failure, which must end in
the same graph as the complete build."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from typing import Any

import pytest

from tests.service.conftest import (
    BUILD_TIMEOUT_S,
    FILE_ASSETS,
    MIN_FILES,
    SERVICE_LOGS,
    DagsterService,
    all_assets,
    describe,
    graph_fingerprint,
    input_partition_keys,
    nara_kg_bin,
    require_partitioned,
    wipe_graph,
)
from tests.service.dagster_api import RUN_FINISHED, Backfill

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

#: Partition runs (a few files each) that must have succeeded before the runs in progress are
#: killed.
SUCCEEDED_BEFORE_KILL = 2


def materialized_partitions(service: DagsterService, asset: str) -> tuple[set[str], set[str]]:
    """(materialized, failed) partition keys of a partitioned asset."""
    data = service.api.execute(
        """
        query ($key: AssetKeyInput!) {
          assetNodeOrError(assetKey: $key) {
            ... on AssetNode {
              assetPartitionStatuses {
                __typename
                ... on DefaultPartitionStatuses { materializedPartitions failedPartitions }
              }
            }
          }
        }
        """,
        {"key": {"path": [asset]}},
    )["assetNodeOrError"]
    statuses = data["assetPartitionStatuses"]
    assert statuses["__typename"] == "DefaultPartitionStatuses", statuses
    return set(statuses["materializedPartitions"]), set(statuses["failedPartitions"])


def latest_materialization_ts(service: DagsterService, asset: str) -> float | None:
    data = service.api.execute(
        """
        query ($key: AssetKeyInput!) {
          assetNodeOrError(assetKey: $key) {
            ... on AssetNode { assetMaterializations(limit: 1) { timestamp } }
          }
        }
        """,
        {"key": {"path": [asset]}},
    )["assetNodeOrError"]
    events = data.get("assetMaterializations") or []
    return float(events[0]["timestamp"]) / 1000 if events else None


def claimed_pool_slots(service: DagsterService) -> dict[str, int]:
    limits = service.api.execute(
        "query { instance { concurrencyLimits { concurrencyKey claimedSlots { runId } } } }"
    )["instance"]["concurrencyLimits"]
    return {c["concurrencyKey"]: len(c["claimedSlots"]) for c in limits}


def save_fact(name: str, value: Any) -> None:
    SERVICE_LOGS.mkdir(parents=True, exist_ok=True)
    (SERVICE_LOGS / f"{name}.json").write_text(
        json.dumps(value, indent=2, default=str), encoding="utf-8"
    )


def assert_every_partition_materialized(service: DagsterService) -> None:
    keys = set(input_partition_keys(service.data_dir))
    for asset in FILE_ASSETS:
        materialized, _failed = materialized_partitions(service, asset)
        assert materialized == keys, (asset, sorted(keys - materialized)[:5])


def test_backfill_of_every_partition_and_the_graph(
    built_service: DagsterService, neo4j_settings: Any
) -> None:
    backfill: Backfill = built_service.facts["full_backfill"]
    assert backfill.status == "COMPLETED_SUCCESS", describe(backfill)
    assert backfill.num_partitions is not None and backfill.num_partitions >= MIN_FILES
    runs = built_service.api.backfill_runs(backfill.id)
    assert runs and all(run["status"] == "SUCCESS" for run in runs), describe(backfill)
    n_files = len(input_partition_keys(built_service.data_dir))
    statuses = backfill.asset_statuses
    for asset in all_assets():
        expected = (
            {"targeted": n_files, "in_progress": 0, "materialized": n_files, "failed": 0}
            if asset in FILE_ASSETS
            else {"in_progress": False, "materialized": True, "failed": False}
        )
        assert statuses.get(asset) == expected, (asset, statuses.get(asset))
    assert_every_partition_materialized(built_service)
    started = min(float(run["startTime"]) for run in runs)
    for asset in all_assets():
        if asset in FILE_ASSETS:
            continue
        when = latest_materialization_ts(built_service, asset)
        assert when is not None and when >= started - 1, f"{asset} not rebuilt by the backfill"
    # The runs executed their steps with the multiprocess executor (each step its process).
    events = built_service.api.run_events(runs[0]["runId"])
    messages = [event.get("message") or "" for event in events]
    assert any("multiprocess executor" in message for message in messages), messages[:20]
    # No pool slot is left claimed once every run has finished.
    assert not any(claimed_pool_slots(built_service).values()), claimed_pool_slots(built_service)
    fingerprint = built_service.facts["fingerprint"]
    assert fingerprint["nodes"] > 0 and fingerprint["relationships"] > 0
    save_fact(
        "full-backfill",
        {
            "backfill": backfill.id,
            "partitions": backfill.num_partitions,
            "runs": len(runs),
            "seconds": round(built_service.facts["full_backfill_seconds"], 1),
            "fingerprint": fingerprint,
        },
    )


def kill_process_tree(service: DagsterService, pid: int) -> list[int]:
    """kill -9 of a run worker and every process below it (the executor's step processes)."""
    killed = []
    for member in reversed(service.descendants(pid)):
        try:
            os.kill(member, signal.SIGKILL)
            killed.append(member)
        except ProcessLookupError:
            pass
    return killed


def reset_work(service: DagsterService, driver: Any) -> None:
    """Empty graph and work directory: every step has real work to do (and to be killed in)."""
    wipe_graph(driver)
    for child in service.work_dir.iterdir():
        if child.is_dir():
            shutil.rmtree(child)
        else:
            child.unlink()


def test_backfill_killed_midway_resumes_to_the_same_graph(
    built_service: DagsterService, neo4j_driver: Any, neo4j_settings: Any
) -> None:
    service, api = built_service, built_service.api
    expected = service.facts["fingerprint"]
    require_partitioned(service)
    keys = service.register_partitions()
    reset_work(service, neo4j_driver)

    first = api.launch_backfill(all_assets(), title="service test: killed midway")

    def some_succeeded_and_some_running(b: Backfill) -> bool:
        statuses = b.run_statuses
        return b.finished or (
            statuses.get("SUCCESS", 0) >= SUCCEEDED_BEFORE_KILL and statuses.get("STARTED", 0) > 0
        )

    state = api.wait_for_backfill(
        first, timeout=BUILD_TIMEOUT_S, until=some_succeeded_and_some_running, poll=1.0
    )
    assert not state.finished, f"finished before it could be killed: {describe(state)}"

    # The crash: kill -9 every run worker in progress with its step processes.
    in_progress = [run for run in state.runs if run["status"] == "STARTED"]
    killed: dict[str, list[int]] = {}
    for run in in_progress:
        pid = api.run_worker_pid(run["runId"])
        if pid is not None:
            killed[run["runId"]] = kill_process_tree(service, pid)
    assert killed, f"no run worker to kill among {[r['runId'] for r in in_progress]}"
    # The code server notices its dead run workers and fails their runs. Only then may anything
    # ask it to terminate them: a termination request for a SIGKILLed worker blocks Dagster's
    # gRPC server for good (multiprocessing.Event.set() waits on the dead process while the
    # server holds its execution lock), so GraphQL terminateRuns is not used here.
    api.wait_for_backfill(
        first,
        timeout=120,
        until=lambda b: all(r["status"] in RUN_FINISHED for r in b.runs if r["runId"] in killed),
    )
    failed = {r["runId"]: r["status"] for r in api.backfill_runs(first) if r["runId"] in killed}
    assert set(failed.values()) == {"FAILURE"}, failed
    # What an operator does after such a crash: cancel the backfill (queued runs are canceled,
    # nothing new starts, runs still going are terminated), then retry what is missing.
    api.cancel_backfill(first)
    canceled = api.wait_for_backfill(
        first,
        timeout=300,
        until=lambda b: b.finished and all(r["status"] in RUN_FINISHED for r in b.runs),
    )
    assert canceled.status in {"CANCELED", "COMPLETED_FAILED", "FAILED"}, describe(canceled)
    done_before = canceled.asset_statuses
    embedded = done_before["chunk_embeddings"]["materialized"]
    assert 0 < embedded < len(keys), f"the kill was not midway: {done_before}"
    assert done_before["graph_nodes"]["materialized"] is False, done_before
    save_fact(
        "killed-backfill",
        {"backfill": describe(canceled), "killed": killed, "asset_statuses": done_before},
    )

    # The retry targets exactly what the first backfill did not materialize, and completes.
    retry = api.reexecute_backfill(first, "FROM_FAILURE")
    resumed = api.wait_for_backfill(retry, timeout=BUILD_TIMEOUT_S)
    assert resumed.status == "COMPLETED_SUCCESS", f"{describe(resumed)}\n{service.log_tail()}"
    for asset in FILE_ASSETS:
        missing = len(keys) - done_before[asset]["materialized"]
        assert resumed.asset_statuses[asset]["targeted"] == missing, (asset, resumed.asset_statuses)
        assert resumed.asset_statuses[asset]["materialized"] == missing, asset
    for asset in all_assets():
        if asset not in FILE_ASSETS:
            assert resumed.asset_statuses[asset]["materialized"] is True, asset
    assert_every_partition_materialized(service)
    assert not any(claimed_pool_slots(service).values()), claimed_pool_slots(service)

    actual = graph_fingerprint(neo4j_driver, neo4j_settings.database)
    save_fact("resumed-backfill", {"backfill": describe(resumed), "fingerprint": actual})
    assert actual == expected


def test_service_build_equals_a_one_shot_cli_build(
    built_service: DagsterService,
    neo4j_driver: Any,
    neo4j_settings: Any,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """`nara-kg build --data DIR` into a wiped graph (its own instance and work directory)
    gives the graph the partitioned backfills gave."""
    root = tmp_path_factory.mktemp("one-shot")
    env = dict(built_service.env)
    env.update({"DAGSTER_HOME": str(root / "dagster_home"), "NARA_KG_WORK_DIR": str(root / "work")})
    # The steps in one process: this checks the graph, the executor is checked above.
    env["NARA_KG_EXECUTOR"] = "in_process"
    wipe_graph(neo4j_driver)
    done = subprocess.run(
        [nara_kg_bin(), "build", "--data", str(built_service.data_dir), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    actual = graph_fingerprint(neo4j_driver, neo4j_settings.database)
    save_fact("one-shot-build", {"fingerprint": actual})
    assert actual == built_service.facts["fingerprint"]


def test_backfill_of_the_later_file_stages_alone_completes(built_service: DagsterService) -> None:
    """What "re-execute from failure" targets when a run was killed while Dagster stored its
    materializations: a file's `chunks` and `chunk_embeddings` without its earlier stages. The
    daemon runs such a subset only if the multi-asset can be subset; otherwise nothing is launched
    and the backfill ends COMPLETED_FAILED."""
    service, api = built_service, built_service.api
    partitions = sorted(service.register_partitions())[:3]
    later = ["chunks", "chunk_embeddings"]
    backfill_id = api.launch_backfill(later, partition_names=partitions, title="later stages")
    done = api.wait_for_backfill(backfill_id, timeout=BUILD_TIMEOUT_S)
    assert done.status == "COMPLETED_SUCCESS", f"{describe(done)}\n{service.log_tail()}"
    assert set(done.run_statuses) == {"SUCCESS"}, describe(done)
    assert set(done.asset_statuses) == set(later), done.asset_statuses
    for asset in later:
        counts = done.asset_statuses[asset]
        assert counts["targeted"] == counts["materialized"] == len(partitions), (asset, counts)

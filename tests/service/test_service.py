"""The service itself: `dagster dev` serves the code location, the instance has the queue and
pool limits of its dagster.yaml, and the input files become the dynamic partitions."""

from __future__ import annotations

import pytest

from tests.service.conftest import (
    FILE_ASSETS,
    MIN_FILES,
    PARTITIONS_DEF,
    POOLS,
    DagsterService,
    input_partition_keys,
    require_partitioned,
)

pytestmark = pytest.mark.integration

JOBS = ("kg_full_rebuild", "kg_incremental", "kg_evaluation")


def test_code_location_loads(dagster_service: DagsterService) -> None:
    status, error = dagster_service.api.location_status()
    assert (status, error) == ("LOADED", None)
    assert "nara_kg:__repository__" in dagster_service.api.repositories()
    nodes = dagster_service.api.asset_nodes()
    # Two groups: the stages of each file, and those over the whole graph.
    for asset in FILE_ASSETS:
        assert nodes[asset]["groupName"] == "per_file", (asset, nodes[asset]["groupName"])
    for asset in ("record_selection", "graph_nodes", "vector_index", "retrieval_evaluation"):
        assert asset in nodes, sorted(nodes)
        assert nodes[asset]["groupName"] == "graph", (asset, nodes[asset]["groupName"])
    data = dagster_service.api.execute(
        """
        query ($selector: RepositorySelector!) {
          repositoryOrError(repositorySelector: $selector) {
            ... on Repository { jobs { name } sensors { name } schedules { name } }
          }
        }
        """,
        {"selector": dagster_service.api.repository_selector},
    )["repositoryOrError"]
    assert set(JOBS) <= {job["name"] for job in data["jobs"]}
    assert "nara_input_files_sensor" in {sensor["name"] for sensor in data["sensors"]}
    assert "nightly_kg_rebuild" in {schedule["name"] for schedule in data["schedules"]}


def test_instance_has_the_queue_and_pool_limits(dagster_service: DagsterService) -> None:
    instance = dagster_service.api.execute(
        """
        query {
          instance {
            runQueuingSupported
            runQueueConfig { maxConcurrentRuns }
            daemonHealth { allDaemonStatuses { daemonType required healthy } }
            concurrencyLimits { concurrencyKey slotCount }
          }
        }
        """
    )["instance"]
    assert instance["runQueuingSupported"] is True
    assert instance["runQueueConfig"]["maxConcurrentRuns"] == 2
    limits = {c["concurrencyKey"]: c["slotCount"] for c in instance["concurrencyLimits"]}
    assert {pool: limits.get(pool) for pool in POOLS} == dict.fromkeys(POOLS, 1)
    daemons = {d["daemonType"]: d for d in instance["daemonHealth"]["allDaemonStatuses"]}
    for daemon in ("BACKFILL", "QUEUED_RUN_COORDINATOR", "MONITORING"):
        assert daemon in daemons and daemons[daemon]["required"], sorted(daemons)


def test_input_files_are_the_partitions(dagster_service: DagsterService) -> None:
    nodes = require_partitioned(dagster_service)
    for asset in FILE_ASSETS:
        definition = nodes[asset]["partitionDefinition"]
        assert definition["type"] == "DYNAMIC", (asset, definition)
        assert definition["name"] == PARTITIONS_DEF, (asset, definition)
    keys = dagster_service.register_partitions()
    assert len(keys) >= MIN_FILES
    assert keys == input_partition_keys(dagster_service.data_dir)
    assert all(not key.startswith("/") and key.endswith(".jsonl") for key in keys), keys[:5]
    for asset in FILE_ASSETS:
        assert sorted(dagster_service.api.partition_keys(asset)) == sorted(keys), asset
    # Registering twice adds nothing.
    assert dagster_service.api.add_dynamic_partitions(PARTITIONS_DEF, keys) == 0

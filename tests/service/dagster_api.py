"""A small client of the Dagster webserver's GraphQL API (POST /graphql, urllib only).

Only what the service tests need: the workspace, dynamic partitions, asset backfills (launch,
poll, cancel, re-execute from failure), runs (list, terminate, their run worker's pid).
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: Backfill statuses after which nothing more happens (BulkActionStatus).
BACKFILL_TERMINAL = frozenset(
    {"COMPLETED", "COMPLETED_SUCCESS", "COMPLETED_FAILED", "FAILED", "CANCELED"}
)
#: Run statuses after which the run does nothing more (RunStatus).
RUN_FINISHED = frozenset({"SUCCESS", "FAILURE", "CANCELED"})
RUN_IN_PROGRESS = frozenset({"STARTING", "STARTED", "CANCELING"})

#: The engine event the gRPC code server writes when it spawns a run worker.
_RUN_WORKER_PID = re.compile(r"Started process for run \(pid: (\d+)\)")


class GraphQLError(RuntimeError):
    """The server answered with `errors`, or a result of an error type."""


@dataclass(frozen=True)
class Backfill:
    id: str
    status: str
    num_partitions: int | None
    partition_names: list[str]
    asset_keys: list[str]
    runs: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    #: asset key -> the backfill's own counts: {"targeted", "in_progress", "materialized",
    #: "failed"} for a partitioned asset (numbers of partitions); booleans for another.
    asset_statuses: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def run_statuses(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for run in self.runs:
            counts[run["status"]] = counts.get(run["status"], 0) + 1
        return counts

    @property
    def finished(self) -> bool:
        return self.status in BACKFILL_TERMINAL


_BACKFILL_FIELDS = """
  id status numPartitions partitionNames
  assetSelection { path }
  error { message }
  runs { id runId status tags { key value } }
  assetBackfillData {
    assetBackfillStatuses {
      __typename
      ... on AssetPartitionsStatusCounts {
        assetKey { path }
        numPartitionsTargeted numPartitionsInProgress numPartitionsMaterialized numPartitionsFailed
      }
      ... on UnpartitionedAssetStatus { assetKey { path } inProgress materialized failed }
    }
  }
"""


def _asset_statuses(data: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    statuses: dict[str, dict[str, Any]] = {}
    for status in (data or {}).get("assetBackfillStatuses") or []:
        key = "/".join(status["assetKey"]["path"])
        if status["__typename"] == "AssetPartitionsStatusCounts":
            statuses[key] = {
                "targeted": status["numPartitionsTargeted"],
                "in_progress": status["numPartitionsInProgress"],
                "materialized": status["numPartitionsMaterialized"],
                "failed": status["numPartitionsFailed"],
            }
        else:
            statuses[key] = {
                "in_progress": status["inProgress"],
                "materialized": status["materialized"],
                "failed": status["failed"],
            }
    return statuses


_RUN_FIELDS = """
  id runId status jobName startTime endTime
  tags { key value }
  assetSelection { path }
"""


class DagsterGraphQL:
    """`DagsterGraphQL("http://127.0.0.1:3000")`, then `.launch_backfill([...])` etc."""

    def __init__(
        self,
        base_url: str,
        *,
        location: str = "nara_kg",
        repository: str = "__repository__",
        timeout: float = 60.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.location = location
        self.repository = repository
        self.timeout = timeout

    # ------------------------------------------------------------------ transport
    def execute(self, query: str, variables: Mapping[str, Any] | None = None) -> dict[str, Any]:
        body = json.dumps({"query": query, "variables": dict(variables or {})}).encode()
        request = urllib.request.Request(
            f"{self.base_url}/graphql",
            data=body,
            headers={"Content-Type": "application/json", "Accept": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                payload = json.load(response)
        except urllib.error.HTTPError as exc:
            raise GraphQLError(f"HTTP {exc.code}: {exc.read().decode(errors='replace')}") from exc
        if payload.get("errors"):
            raise GraphQLError(json.dumps(payload["errors"], indent=1)[:4000])
        return payload["data"]

    @property
    def repository_selector(self) -> dict[str, str]:
        return {"repositoryLocationName": self.location, "repositoryName": self.repository}

    # ------------------------------------------------------------------ workspace
    def location_status(self) -> tuple[str, str | None]:
        """(loadStatus, error message or None) of this code location; ("MISSING", None)."""
        data = self.execute(
            """
            query {
              workspaceOrError {
                __typename
                ... on Workspace {
                  locationEntries {
                    name loadStatus
                    locationOrLoadError {
                      __typename
                      ... on PythonError { message stack }
                    }
                  }
                }
                ... on PythonError { message }
              }
            }
            """
        )["workspaceOrError"]
        if data["__typename"] != "Workspace":
            return "ERROR", data.get("message")
        for entry in data["locationEntries"]:
            if entry["name"] == self.location:
                loaded = entry["locationOrLoadError"] or {}
                if loaded.get("__typename") == "PythonError":
                    return "ERROR", loaded["message"] + "".join(loaded.get("stack") or [])
                return entry["loadStatus"], None
        return "MISSING", None

    def repositories(self) -> list[str]:
        data = self.execute(
            """
            query {
              repositoriesOrError {
                __typename
                ... on RepositoryConnection { nodes { name location { name } } }
                ... on PythonError { message }
              }
            }
            """
        )["repositoriesOrError"]
        if data["__typename"] != "RepositoryConnection":
            raise GraphQLError(data.get("message", data["__typename"]))
        return [f"{n['location']['name']}:{n['name']}" for n in data["nodes"]]

    def asset_nodes(self) -> dict[str, dict[str, Any]]:
        """asset key ("a/b") -> {isPartitioned, partitionDefinition, groupName, jobNames}."""
        data = self.execute(
            """
            query ($selector: RepositorySelector!) {
              repositoryOrError(repositorySelector: $selector) {
                __typename
                ... on Repository {
                  assetNodes {
                    assetKey { path } groupName isPartitioned jobNames
                    partitionDefinition { type name description dimensionTypes { name } }
                  }
                }
                ... on PythonError { message }
              }
            }
            """,
            {"selector": self.repository_selector},
        )["repositoryOrError"]
        if data["__typename"] != "Repository":
            raise GraphQLError(data.get("message", data["__typename"]))
        return {"/".join(node["assetKey"]["path"]): node for node in data["assetNodes"]}

    def partition_keys(self, asset: str) -> list[str]:
        data = self.execute(
            """
            query ($key: AssetKeyInput!) {
              assetNodeOrError(assetKey: $key) {
                __typename
                ... on AssetNode { partitionKeys }
              }
            }
            """,
            {"key": {"path": asset.split("/")}},
        )["assetNodeOrError"]
        if data["__typename"] != "AssetNode":
            raise GraphQLError(f"no asset {asset}: {data['__typename']}")
        return list(data["partitionKeys"] or [])

    def add_dynamic_partitions(self, partitions_def: str, keys: Iterable[str]) -> int:
        """Adds each key not yet present (one mutation per key); returns how many were added."""
        added = 0
        for key in keys:
            result = self.execute(
                """
                mutation ($name: String!, $key: String!, $selector: RepositorySelector!) {
                  addDynamicPartition(
                    partitionsDefName: $name, partitionKey: $key, repositorySelector: $selector
                  ) {
                    __typename
                    ... on AddDynamicPartitionSuccess { partitionKey }
                    ... on DuplicateDynamicPartitionError { partitionName }
                    ... on PythonError { message }
                    ... on UnauthorizedError { message }
                  }
                }
                """,
                {"name": partitions_def, "key": key, "selector": self.repository_selector},
            )["addDynamicPartition"]
            kind = result["__typename"]
            if kind == "AddDynamicPartitionSuccess":
                added += 1
            elif kind != "DuplicateDynamicPartitionError":
                raise GraphQLError(f"addDynamicPartition({key}): {result}")
        return added

    # ------------------------------------------------------------------ backfills
    def launch_backfill(
        self,
        assets: Sequence[str],
        *,
        partition_names: Sequence[str] | None = None,
        title: str | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> str:
        """An asset backfill of `assets`: every partition unless `partition_names` is given
        (unpartitioned assets downstream of them are included as wholes)."""
        params: dict[str, Any] = {
            "assetSelection": [{"path": asset.split("/")} for asset in assets],
            "tags": [{"key": k, "value": v} for k, v in (tags or {}).items()],
        }
        if partition_names is None:
            params["allPartitions"] = True
        else:
            params["partitionNames"] = list(partition_names)
        if title:
            params["title"] = title
        result = self.execute(
            """
            mutation ($params: LaunchBackfillParams!) {
              launchPartitionBackfill(backfillParams: $params) {
                __typename
                ... on LaunchBackfillSuccess { backfillId }
                ... on PythonError { message stack }
                ... on UnauthorizedError { message }
                ... on InvalidStepError { invalidStepKey }
                ... on InvalidOutputError { invalidOutputName }
                ... on PartitionSetNotFoundError { message }
                ... on PartitionKeysNotFoundError { message }
                ... on RunConflict { message }
              }
            }
            """,
            {"params": params},
        )["launchPartitionBackfill"]
        if result["__typename"] != "LaunchBackfillSuccess":
            raise GraphQLError(f"launchPartitionBackfill: {json.dumps(result)[:4000]}")
        return str(result["backfillId"])

    def backfill(self, backfill_id: str) -> Backfill:
        data = self.execute(
            f"""
            query ($id: String!) {{
              partitionBackfillOrError(backfillId: $id) {{
                __typename
                ... on PartitionBackfill {{ {_BACKFILL_FIELDS} }}
                ... on BackfillNotFoundError {{ message }}
                ... on PythonError {{ message }}
              }}
            }}
            """,
            {"id": backfill_id},
        )["partitionBackfillOrError"]
        if data["__typename"] != "PartitionBackfill":
            raise GraphQLError(f"backfill {backfill_id}: {data}")
        return Backfill(
            id=data["id"],
            status=data["status"],
            num_partitions=data["numPartitions"],
            partition_names=list(data["partitionNames"] or []),
            asset_keys=["/".join(a["path"]) for a in data["assetSelection"] or []],
            runs=list(data["runs"] or []),
            error=(data["error"] or {}).get("message"),
            asset_statuses=_asset_statuses(data["assetBackfillData"]),
        )

    def backfills(self, limit: int = 20) -> list[dict[str, Any]]:
        data = self.execute(
            """
            query ($limit: Int) {
              partitionBackfillsOrError(limit: $limit) {
                __typename
                ... on PartitionBackfills {
                  results { id status numPartitions title assetSelection { path } }
                }
              }
            }
            """,
            {"limit": limit},
        )["partitionBackfillsOrError"]
        return list(data.get("results") or [])

    def wait_for_backfill(
        self,
        backfill_id: str,
        *,
        timeout: float,
        until: Callable[[Backfill], bool] | None = None,
        poll: float = 3.0,
        on_poll: Callable[[Backfill], None] | None = None,
    ) -> Backfill:
        """Polls until the backfill is finished (or `until` holds); TimeoutError otherwise."""
        condition = until or (lambda b: b.finished)
        deadline = time.monotonic() + timeout
        while True:
            current = self.backfill(backfill_id)
            if on_poll is not None:
                on_poll(current)
            if condition(current):
                return current
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"backfill {backfill_id} after {timeout:.0f}s: status {current.status}, "
                    f"runs {current.run_statuses}"
                )
            time.sleep(poll)

    def cancel_backfill(self, backfill_id: str) -> None:
        result = self.execute(
            """
            mutation ($id: String!) {
              cancelPartitionBackfill(backfillId: $id) {
                __typename
                ... on PythonError { message }
                ... on UnauthorizedError { message }
              }
            }
            """,
            {"id": backfill_id},
        )["cancelPartitionBackfill"]
        if result["__typename"] != "CancelBackfillSuccess":
            raise GraphQLError(f"cancelPartitionBackfill: {result}")

    def reexecute_backfill(self, backfill_id: str, strategy: str = "FROM_FAILURE") -> str:
        """A new backfill of what `backfill_id` did not materialize (FROM_FAILURE) or of all."""
        result = self.execute(
            """
            mutation ($params: ReexecutionParams!) {
              reexecutePartitionBackfill(reexecutionParams: $params) {
                __typename
                ... on LaunchBackfillSuccess { backfillId }
                ... on PythonError { message stack }
                ... on UnauthorizedError { message }
              }
            }
            """,
            {"params": {"parentRunId": backfill_id, "strategy": strategy}},
        )["reexecutePartitionBackfill"]
        if result["__typename"] != "LaunchBackfillSuccess":
            raise GraphQLError(f"reexecutePartitionBackfill: {json.dumps(result)[:4000]}")
        return str(result["backfillId"])

    # ------------------------------------------------------------------ runs
    def runs(
        self, run_filter: Mapping[str, Any] | None = None, limit: int = 500
    ) -> list[dict[str, Any]]:
        """`run_filter` is a RunsFilter, e.g. {"tags": [{"key": "dagster/backfill", ...}]}."""
        data = self.execute(
            f"""
            query ($filter: RunsFilter, $limit: Int) {{
              runsOrError(filter: $filter, limit: $limit) {{
                __typename
                ... on Runs {{ results {{ {_RUN_FIELDS} }} }}
                ... on PythonError {{ message }}
              }}
            }}
            """,
            {"filter": dict(run_filter or {}), "limit": limit},
        )["runsOrError"]
        if data["__typename"] != "Runs":
            raise GraphQLError(f"runsOrError: {data}")
        return list(data["results"])

    def backfill_runs(self, backfill_id: str) -> list[dict[str, Any]]:
        return self.runs({"tags": [{"key": "dagster/backfill", "value": backfill_id}]})

    def terminate_runs(
        self, run_ids: Sequence[str], policy: str = "MARK_AS_CANCELED_IMMEDIATELY"
    ) -> list[dict[str, Any]]:
        """policy: SAFE_TERMINATE (ask the run worker to stop) or MARK_AS_CANCELED_IMMEDIATELY.

        Never for a run whose worker was SIGKILLed and that is not yet marked failed: with the
        default run launcher the request blocks the code server (Dagster 1.13: its
        CancelExecution sets the dead worker's multiprocessing.Event under the server's
        execution lock, and Event.set() waits for the dead process forever)."""
        data = self.execute(
            """
            mutation ($ids: [String!]!, $policy: TerminateRunPolicy) {
              terminateRuns(runIds: $ids, terminatePolicy: $policy) {
                __typename
                ... on TerminateRunsResult {
                  terminateRunResults {
                    __typename
                    ... on TerminateRunSuccess { run { runId status } }
                    ... on TerminateRunFailure { message run { runId status } }
                    ... on RunNotFoundError { runId message }
                    ... on PythonError { message }
                    ... on UnauthorizedError { message }
                  }
                }
                ... on PythonError { message }
              }
            }
            """,
            {"ids": list(run_ids), "policy": policy},
        )["terminateRuns"]
        if data["__typename"] != "TerminateRunsResult":
            raise GraphQLError(f"terminateRuns: {data}")
        return list(data["terminateRunResults"])

    def run_events(self, run_id: str, limit: int = 1000) -> list[dict[str, Any]]:
        data = self.execute(
            """
            query ($runId: ID!, $limit: Int) {
              logsForRun(runId: $runId, limit: $limit) {
                __typename
                ... on EventConnection {
                  events { __typename ... on MessageEvent { message stepKey level } }
                }
                ... on PythonError { message }
              }
            }
            """,
            {"runId": run_id, "limit": limit},
        )["logsForRun"]
        if data["__typename"] != "EventConnection":
            raise GraphQLError(f"logsForRun({run_id}): {data}")
        return list(data["events"])

    def run_worker_pid(self, run_id: str) -> int | None:
        """The pid of the run's worker process, from the code server's engine event."""
        for event in self.run_events(run_id):
            match = _RUN_WORKER_PID.search(event.get("message") or "")
            if match:
                return int(match.group(1))
        return None

"""Dagster as a service: `dagster dev` (webserver + daemon) in its own process group, with a
temporary instance (DAGSTER_HOME), generated demo data (>= 40 files) and a temporary work
directory, driven over HTTP/GraphQL like a user or an operator would.

The graph goes to the Neo4j of the environment (NEO4J_URI, else the project's local server on
NARA_KG_BOLT_PORT); it is wiped once, when the service starts. Logs of the service are kept under
var/test-artifacts/service/ for a failed run to be read.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from graph_assets import GRAPH_WIDE_ASSETS, retrieval_evaluation
from tests.service.dagster_api import Backfill, DagsterGraphQL

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO_ROOT / "var" / "test-artifacts"
SCREENSHOTS = ARTIFACTS / "screenshots"
SERVICE_LOGS = ARTIFACTS / "service"

#: The target contract of the per-file partitions.
PARTITIONS_DEF = "nara_input_files"
FILE_ASSETS = ("raw_jsonl", "parsed_records", "chunks", "chunk_embeddings")
#: Every graph-wide asset of the Definitions (read from them, so a new asset is backfilled and
#: checked here too).
GRAPH_ASSETS = tuple(
    key.to_user_string()
    for asset in [*GRAPH_WIDE_ASSETS, retrieval_evaluation]
    for key in asset.keys
)
POOLS = ("neo4j_writes", "embedding_model")

#: Demo data: 200 records in files of 5 lines gives 43 files (>= 40 partitions) that are
#: small enough for the suite to stay within a few minutes on 2 cores.
DEMO_RECORDS = 200
DEMO_SHARD_LINES = 5
MIN_FILES = 40

#: The daemon's loop interval in the service (Dagster's is 30 s, a constant): see
#: `daemon_tick/sitecustomize.py`. A backfill waits for about three ticks.
DAEMON_INTERVAL_S = 5
DAEMON_TICK_PATH = Path(__file__).resolve().parent / "daemon_tick"

STARTUP_TIMEOUT_S = float(os.environ.get("NARA_KG_SERVICE_STARTUP_TIMEOUT", "180"))

DAGSTER_YAML = """\
telemetry:
  enabled: false
nux:
  enabled: false
run_monitoring:
  enabled: true
  poll_interval_seconds: 5
  start_timeout_seconds: 180
  cancel_timeout_seconds: 60
  free_slots_after_run_end_seconds: 5
# The queue's limit lives under concurrency.runs: Dagster refuses run_coordinator.config
# .max_concurrent_runs next to a `concurrency` section. The queue is looked at every second
# (5 by default): the suite launches some thirty runs one after another.
run_coordinator:
  module: dagster._core.run_coordinator
  class: QueuedRunCoordinator
  config:
    dequeue_interval_seconds: 1
concurrency:
  runs:
    max_concurrent_runs: 2
  pools:
    # Per-pool limits are not instance config: they are set with
    # `dagster instance concurrency set <pool> 1` before the service starts (see below);
    # the default covers any pool not set explicitly.
    default_limit: 1
"""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def dagster_bin() -> str:
    candidate = Path(sys.executable).parent / "dagster"
    return str(candidate) if candidate.exists() else "dagster"


def nara_kg_bin() -> str:
    candidate = Path(sys.executable).parent / "nara-kg"
    return str(candidate) if candidate.exists() else "nara-kg"


def checkout_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment with this checkout first on PYTHONPATH, so that subprocesses load it
    and not another install of the packages."""
    env = dict(os.environ if base is None else base)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p)
    return env


def input_partition_keys(data_dir: Path) -> list[str]:
    """The partition keys of an export: input file paths relative to the data folder."""
    from nara_kg.ingest import inputs

    if hasattr(inputs, "list_input_paths"):
        return list(inputs.list_input_paths(data_dir))
    return [file.rel_path for file in inputs.discover_input_files(data_dir)]


@dataclass
class DagsterService:
    url: str
    port: int
    home: Path
    data_dir: Path
    work_dir: Path
    env: dict[str, str]
    process: subprocess.Popen[bytes]
    log_path: Path
    api: DagsterGraphQL
    #: Filled by the `built_service` fixture: the fingerprint of the first complete build.
    facts: dict[str, Any] = field(default_factory=dict)

    def log_tail(self, chars: int = 6000) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")[-chars:]
        except OSError:
            return ""

    def alive(self) -> bool:
        return self.process.poll() is None

    def register_partitions(self) -> list[str]:
        """Adds every input file of the data folder as a partition (idempotent)."""
        keys = input_partition_keys(self.data_dir)
        self.api.add_dynamic_partitions(PARTITIONS_DEF, keys)
        return keys

    def process_tree(self) -> dict[int, int]:
        """pid -> parent pid of every process in the service's process group."""
        pgid = os.getpgid(self.process.pid)
        tree: dict[int, int] = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            # fields: state ppid pgrp ...
            if int(fields[2]) == pgid:
                tree[int(entry.name)] = int(fields[1])
        return tree

    def descendants(self, pid: int) -> list[int]:
        tree = self.process_tree()
        found = [pid]
        frontier = [pid]
        while frontier:
            parent = frontier.pop()
            children = [child for child, ppid in tree.items() if ppid == parent]
            found += children
            frontier += children
        return found


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _wait_until_loaded(service: DagsterService, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    status, error = "UNKNOWN", None
    while time.monotonic() < deadline:
        if not service.alive():
            pytest.fail(
                f"dagster dev exited with {service.process.returncode}:\n{service.log_tail()}",
                pytrace=False,
            )
        if _http_ok(f"{service.url}/server_info"):
            with contextlib.suppress(Exception):
                status, error = service.api.location_status()
                if error is not None:
                    pytest.fail(f"the code location failed to load:\n{error}", pytrace=False)
                if status == "LOADED" and service.api.repositories():
                    return
        time.sleep(1.0)
    pytest.fail(
        f"dagster dev did not serve a loaded code location within {timeout:.0f}s "
        f"(location status {status}):\n{service.log_tail()}",
        pytrace=False,
    )


def stop_process_group(process: subprocess.Popen[bytes], grace: float = 15.0) -> None:
    """SIGTERM to the whole group (webserver, daemon, code servers, run workers), then
    SIGKILL to whatever is left of it."""
    try:
        pgid = os.getpgid(process.pid)
    except ProcessLookupError:
        return
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=grace / 2)
            break
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=10)


@pytest.fixture(scope="session")
def service_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The generated export: >= 40 files of 5 records each."""
    data_dir = tmp_path_factory.mktemp("service") / "data"
    subprocess.run(
        [
            nara_kg_bin(),
            "demo-data",
            str(data_dir),
            "--records",
            str(DEMO_RECORDS),
            "--shard-lines",
            str(DEMO_SHARD_LINES),
        ],
        check=True,
        capture_output=True,
        env=checkout_env(),
    )
    files = input_partition_keys(data_dir)
    assert len(files) >= MIN_FILES, f"only {len(files)} input files under {data_dir}"
    return data_dir


def wipe_graph(driver: Any) -> None:
    with driver.session() as session:
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS").consume()


def graph_fingerprint(driver: Any, database: str) -> dict[str, Any]:
    from nara_kg.graph.fingerprint import graph_fingerprint as fingerprint

    return fingerprint(driver, database)


@pytest.fixture(scope="session")
def dagster_service(
    tmp_path_factory: pytest.TempPathFactory, service_data: Path, neo4j_driver: Any
) -> Iterator[DagsterService]:
    """`dagster dev -w workspace.yaml` on a free port, loaded, with a wiped graph."""
    root = tmp_path_factory.mktemp("dagster-service")
    home, work = root / "dagster_home", root / "work"
    home.mkdir()
    work.mkdir()
    (home / "dagster.yaml").write_text(DAGSTER_YAML, encoding="utf-8")
    shutil.rmtree(SERVICE_LOGS, ignore_errors=True)  # only this session's logs and facts
    SERVICE_LOGS.mkdir(parents=True)
    log_path = SERVICE_LOGS / "dagster-dev.log"

    env = checkout_env()
    env.update(
        {
            "DAGSTER_HOME": str(home),
            "NARA_DATA_DIR": str(service_data),
            "NARA_KG_WORK_DIR": str(work),
            "NARA_KG_QUESTIONS": str(service_data / "questions.jsonl"),
            "PYTHONUNBUFFERED": "1",
            # Each run's steps in their own processes (the jobs' default, made explicit).
            "NARA_KG_EXECUTOR": "multiprocess",
            "NARA_KG_TEST_DAEMON_INTERVAL_S": str(DAEMON_INTERVAL_S),
        }
    )
    env["PYTHONPATH"] = os.pathsep.join((str(DAEMON_TICK_PATH), env["PYTHONPATH"]))
    for pool in POOLS:
        subprocess.run(
            [dagster_bin(), "instance", "concurrency", "set", pool, "1"],
            env=env,
            cwd=REPO_ROOT,
            check=True,
            capture_output=True,
        )

    wipe_graph(neo4j_driver)
    port = free_port()
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [
                dagster_bin(),
                "dev",
                "-w",
                str(REPO_ROOT / "workspace.yaml"),
                "-h",
                "127.0.0.1",
                "-p",
                str(port),
            ],
            cwd=REPO_ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    service = DagsterService(
        url=url,
        port=port,
        home=home,
        data_dir=service_data,
        work_dir=work,
        env=env,
        process=process,
        log_path=log_path,
        api=DagsterGraphQL(url),
    )
    try:
        _wait_until_loaded(service, STARTUP_TIMEOUT_S)
        yield service
    finally:
        stop_process_group(process)
        # The instance's own logs (run workers' compute logs) next to the service log.
        storage = home / "storage"
        if storage.is_dir():
            shutil.copytree(storage, SERVICE_LOGS / "compute-logs", dirs_exist_ok=True)


def all_assets() -> list[str]:
    return [*FILE_ASSETS, *GRAPH_ASSETS]


def require_partitioned(service: DagsterService) -> dict[str, dict[str, Any]]:
    """The asset nodes, failing clearly while the code location is not partitioned per file."""
    nodes = service.api.asset_nodes()
    missing = [asset for asset in all_assets() if asset not in nodes]
    unpartitioned = [
        asset for asset in FILE_ASSETS if asset in nodes and not nodes[asset]["isPartitioned"]
    ]
    if missing or unpartitioned:
        pytest.fail(
            "the code location does not have the per-file partitions yet: "
            f"missing assets {missing}, unpartitioned file assets {unpartitioned}",
            pytrace=False,
        )
    return nodes


def describe(backfill: Backfill) -> str:
    return (
        f"backfill {backfill.id}: {backfill.status}, {backfill.num_partitions} partitions, "
        f"runs {backfill.run_statuses}" + (f", error {backfill.error}" if backfill.error else "")
    )


#: A complete build of 43 partitions + the graph-wide assets on 2 cores.
BUILD_TIMEOUT_S = float(os.environ.get("NARA_KG_SERVICE_BUILD_TIMEOUT", "900"))


def run_full_backfill(service: DagsterService, title: str) -> Backfill:
    """Registers the partitions, backfills every asset over all of them, waits for the end."""
    require_partitioned(service)
    keys = service.register_partitions()
    assert sorted(service.api.partition_keys("raw_jsonl")) == sorted(keys)
    backfill_id = service.api.launch_backfill(all_assets(), title=title)
    return service.api.wait_for_backfill(backfill_id, timeout=BUILD_TIMEOUT_S)


@pytest.fixture(scope="session")
def built_service(
    dagster_service: DagsterService, neo4j_driver: Any, neo4j_settings: Any
) -> DagsterService:
    """The service after one complete backfill of every partition and graph-wide asset; its
    `facts` hold the backfill and the graph fingerprint."""
    if "fingerprint" not in dagster_service.facts:
        started = time.monotonic()
        backfill = run_full_backfill(dagster_service, "service test: full build")
        dagster_service.facts["full_backfill"] = backfill
        dagster_service.facts["full_backfill_seconds"] = time.monotonic() - started
        if backfill.status != "COMPLETED_SUCCESS":
            pytest.fail(
                f"{describe(backfill)}\n{dagster_service.log_tail()}",
                pytrace=False,
            )
        dagster_service.facts["fingerprint"] = graph_fingerprint(
            neo4j_driver, neo4j_settings.database
        )
    return dagster_service

"""Launching the platform's real jobs, the way Dagster does, for the CLI and the benchmark.

`build` brings the file partitions in step with the data folder, then runs `kg_incremental`
(or `kg_full_rebuild`) over every partition in the instance at DAGSTER_HOME, so the UI shows
the runs, partitions and metadata. With `parallel` > 1 the per-file stages first run as that
many concurrent `kg_file_stages` runs (each `dagster job execute` over a range of partitions,
on the multiprocess executor; Dagster's pools keep the model and Neo4j from oversubscription),
then the graph-wide stages run once. The data folder travels as run config of `paths`.

Given the work folder, an incremental build first compares the inputs with those of the last
build that succeeded (:mod:`nara_kg.app.build_state`): nothing changed, it launches no run;
some files changed, their per-file stages run (not every partition's) and then the graph-wide
stages. `full` always runs everything.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg

from graph_assets import FILE_SPECS, GRAPH_WIDE_ASSETS, record_selection, retrieval_evaluation
from graph_assets.common import plain_metadata
from graph_assets.file_metadata import run_totals
from graph_assets.partitions import FULL, REBUILD_TAG, PartitionSync, input_files
from graph_assets.partitions import sync_file_partitions as sync_partitions
from jobs import (
    CODE_LOCATION_MODULE,
    KG_FILE_STAGES,
    KG_FULL_REBUILD,
    KG_INCREMENTAL,
    one_process_run_config,
)
from nara_kg.app import build_state, definitions
from nara_kg.model.progress import Log, quiet
from nara_kg.settings import PROJECT_ROOT
from schedules import RANGE_END, RANGE_START

#: Tag shared by every run of one `nara-kg build`, to find them in the instance.
BUILD_TAG = "nara_kg/build"
#: Which process on which host launched a run: a run left STARTED by a process that died
#: (kill -9) is marked failed by the next build.
PID_TAG = "nara_kg/pid"
HOST_TAG = "nara_kg/host"
FILE_ASSET_KEYS = {spec.key.to_user_string() for spec in FILE_SPECS}
#: An incremental build over at most this many changed files runs its steps in one process:
#: after a small change each step's work is smaller than forking a process for it (the
#: 0.1%-change build of `nara-kg bench --incremental`).
ONE_PROCESS_MAX_FILES = 4

_JOB_FACTORIES = {
    KG_FULL_REBUILD: definitions.kg_full_rebuild_job,
    KG_INCREMENTAL: definitions.kg_incremental_job,
    KG_FILE_STAGES: definitions.kg_file_stages_job,
}


@dataclass
class BuildOutcome:
    success: bool
    run_ids: list[str]
    partitions: PartitionSync
    seconds: float
    #: asset key -> its metadata (plain values); per-file assets summed over their runs.
    assets: dict[str, dict[str, Any]] = field(default_factory=dict)
    checks_failed: list[str] = field(default_factory=list)
    failed_steps: list[str] = field(default_factory=list)
    #: Nothing changed since the build of these runs: no run was launched.
    up_to_date_since: list[str] | None = None


def run_config(data_dir: Path) -> dict[str, Any]:
    from resources import resource_run_config

    return resource_run_config("paths", data_dir=str(data_dir))


def split_ranges(keys: list[str], parts: int) -> list[tuple[str, str]]:
    """Contiguous (first, last) key ranges, as even as possible, at most `parts` of them."""
    parts = max(1, min(parts, len(keys)))
    size, extra = divmod(len(keys), parts)
    ranges, start = [], 0
    for index in range(parts):
        end = start + size + (1 if index < extra else 0)
        ranges.append((keys[start], keys[end - 1]))
        start = end
    return ranges


def build(
    data_dir: Path,
    instance: dg.DagsterInstance,
    *,
    full: bool = False,
    parallel: int = 1,
    follow_external_links: bool = False,
    log: Log = quiet,
    extra_tags: dict[str, str] | None = None,
    work_dir: Path | None = None,
    before_graph_nodes: Callable[[], object] | None = None,
) -> BuildOutcome:
    """Run the build. With `work_dir`, an incremental build launches only what changed since
    the last successful build recorded there (see the module's docstring). With
    `before_graph_nodes` (the first load's bulk import), the per-file stages and
    `record_selection` run first, then it, then the rest of the graph-wide stages."""
    started = time.perf_counter()
    for run_id in fail_orphaned_runs(instance):
        log(f"run {run_id} was left STARTED by a build that died: marked failed")
    sync = sync_partitions(instance, data_dir, follow_external_links=follow_external_links)
    for rel in sync.invalid:
        log(f"{rel}: the name cannot be a Dagster partition key; file skipped")
    keys = list(input_files.get_partition_keys(dynamic_partitions_store=instance))
    if not keys:
        raise FileNotFoundError(f"no input files (.jsonl, .jsonl.gz, .zip) under {data_dir}")
    state_path = work_dir / build_state.STATE_FILE if work_dir is not None else None
    code = build_state.code_digest(PROJECT_ROOT)
    current = _current_state(instance, data_dir, keys, code) if state_path is not None else None
    files: list[str] | None = None
    if state_path is not None and current is not None:
        previous = None if full else build_state.load(state_path)
        plan = build_state.plan(previous, current, runs_in_flight=_runs_in_flight(instance))
        if plan.up_to_date and previous is not None:
            log(f"{plan.reason} (runs {', '.join(previous.run_ids)}): no run launched")
            return BuildOutcome(
                success=True,
                run_ids=[],
                partitions=sync,
                seconds=round(time.perf_counter() - started, 3),
                up_to_date_since=previous.run_ids,
            )
        if not full:
            log(f"incremental build: {plan.reason}")
        files = plan.files
        # A build that fails or is killed from here on leaves no record: the next one runs all.
        state_path.unlink(missing_ok=True)
    build_id = uuid.uuid4().hex[:12]
    tags = {
        "dagster/from": "nara-kg build",
        BUILD_TAG: build_id,
        REBUILD_TAG: FULL if full else "incremental",
        PID_TAG: str(os.getpid()),
        HOST_TAG: socket.gethostname(),
        **(extra_tags or {}),
    }
    job_name = KG_FULL_REBUILD if full else KG_INCREMENTAL
    config = run_config(data_dir)
    wanted = set(keys if files is None else files)
    targets = [key for key in keys if key in wanted]
    graph_wide = [a.key for a in [*GRAPH_WIDE_ASSETS, retrieval_evaluation]]
    if files is not None and len(targets) <= ONE_PROCESS_MAX_FILES:
        config = {**config, **one_process_run_config()}
    if not targets:
        log(f"{job_name}: no file changed; the graph-wide stages only")
        _execute(job_name, instance, config, tags, asset_selection=graph_wide)
    elif (parallel > 1 and len(targets) > 1) or before_graph_nodes is not None:
        ranges = split_ranges(targets, parallel)
        log(f"per-file stages: {len(targets)} files in {len(ranges)} parallel runs")
        if not _parallel_file_runs(ranges, tags, config, log):
            return _outcome(instance, build_id, sync, started)
        # The graph-wide stages once, over every file.
        if before_graph_nodes is not None:
            first = [record_selection.key]
            if not _execute(job_name, instance, config, tags, asset_selection=first):
                return _outcome(instance, build_id, sync, started)
            before_graph_nodes()
            graph_wide.remove(record_selection.key)
        _execute(job_name, instance, config, tags, asset_selection=graph_wide)
    else:
        span = build_state.key_range(keys, targets)
        assert span is not None
        log(f"{job_name}: {len(targets)} of {len(keys)} files in one run")
        _execute(job_name, instance, config, {**tags, RANGE_START: span[0], RANGE_END: span[1]})
    outcome = _outcome(instance, build_id, sync, started)
    if state_path is not None and current is not None and outcome.success:
        build_state.save(
            state_path,
            build_state.BuildState(
                # The graph's counts as this build left them.
                inputs_digest=_current_state(instance, data_dir, keys, code).inputs_digest,
                files=current.files,
                materializations=_latest_materializations(instance),
                run_ids=outcome.run_ids,
            ),
        )
    return outcome


def _latest_materializations(instance: dg.DagsterInstance) -> dict[str, int]:
    """Asset key -> storage id of its latest materialization, for every asset of the build."""
    keys = [spec.key for spec in FILE_SPECS] + [
        a.key for a in [*GRAPH_WIDE_ASSETS, retrieval_evaluation]
    ]
    latest = {}
    for record in instance.get_asset_records(keys):
        entry = record.asset_entry
        if entry.last_materialization_record is not None:
            latest[entry.asset_key.to_user_string()] = entry.last_materialization_record.storage_id
    return dict(sorted(latest.items()))


def _runs_in_flight(instance: dg.DagsterInstance) -> int:
    statuses = [
        dg.DagsterRunStatus.QUEUED,
        dg.DagsterRunStatus.NOT_STARTED,
        dg.DagsterRunStatus.STARTING,
        dg.DagsterRunStatus.STARTED,
    ]
    return instance.get_runs_count(filters=dg.RunsFilter(statuses=statuses))


#: In the inputs' digest: the graph's node and relationship counts, so that a graph emptied or
#: changed outside a build (a reset, a restored dump) is built again rather than trusted.
GRAPH_COUNTS = "graph.counts"


def _graph_counts() -> str:
    from nara_kg.graph.connection import open_driver
    from nara_kg.graph.emptiness import graph_counts
    from nara_kg.settings import Neo4jSettings

    settings = Neo4jSettings.from_env()
    try:
        with open_driver(settings) as driver:
            nodes, relationships = graph_counts(driver, settings.database)
    except Exception as error:  # unreachable: the build that follows says why
        return f"unknown: {type(error).__name__}"
    return f"{nodes} nodes, {relationships} relationships"


def _current_state(
    instance: dg.DagsterInstance, data_dir: Path, keys: list[str], code: str
) -> build_state.BuildState:
    digest = build_state.inputs_digest(
        code,
        {**build_state.settings_of(os.environ), GRAPH_COUNTS: _graph_counts()},
        data_dir.resolve(),
        instance.root_directory if instance.is_persistent else "ephemeral",
    )
    return build_state.BuildState(
        inputs_digest=digest,
        files=build_state.file_states(data_dir, keys),
        materializations=_latest_materializations(instance),
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def fail_orphaned_runs(instance: dg.DagsterInstance) -> list[str]:
    """Runs that a `nara-kg build` on this host launched and that are still STARTED although
    the process is gone: reported failed (what the daemon's run monitoring does for runs that
    it launched itself)."""
    host = socket.gethostname()
    orphaned = []
    for run in instance.get_runs(
        filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED], tags={HOST_TAG: host})
    ):
        pid = run.tags.get(PID_TAG, "")
        if pid.isdigit() and not _alive(int(pid)):
            instance.report_run_failed(
                run, message=f"the process that ran it (pid {pid} on {host}) is gone"
            )
            # Its pool slots (embedding_model, neo4j_writes) would otherwise stay claimed and
            # every later step of those pools would wait for them forever.
            if instance.event_log_storage.supports_global_concurrency_limits:
                instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)
            orphaned.append(run.run_id)
    return orphaned


def _execute(
    job_name: str,
    instance: dg.DagsterInstance,
    config: dict[str, Any],
    tags: dict[str, str],
    asset_selection: list[dg.AssetKey] | None = None,
) -> bool:
    job = dg.reconstructable(_JOB_FACTORIES[job_name])
    try:
        with dg.execute_job(
            job,
            instance=instance,
            run_config=config,
            tags=tags,
            raise_on_error=False,
            asset_selection=asset_selection,
        ) as result:
            return result.success
    finally:
        stop_step_forkserver()


def stop_step_forkserver() -> None:
    """Stop this process's forkserver (the multiprocess executor's), if one runs.

    Step processes are forked from it with the environment it started with, not the one of
    the run that forks them: a process that launched a second run after changing NARA_KG_WORK_DIR
    (the benchmark's builds) had that run's steps read the first run's work folder. Stopped after
    each run, the next run's steps start from a server with the current environment; a process
    that runs one build (`nara-kg build`) loses nothing. The standard library stops it only
    through this method, which its own tests use."""
    from multiprocessing import forkserver

    server = getattr(forkserver, "_forkserver", None)
    stop = getattr(server, "_stop", None)
    if callable(stop):
        stop()


def _parallel_file_runs(
    ranges: list[tuple[str, str]], tags: dict[str, str], config: dict[str, Any], log: Log
) -> bool:
    """`kg_file_stages` over each range at once, through Dagster's own command line."""
    logs_dir = PROJECT_ROOT / "var" / "logs"
    logs_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(config, handle)
        config_path = handle.name
    processes = []
    for index, (first, last) in enumerate(ranges):
        run_tags = {**tags, RANGE_START: first, RANGE_END: last}
        log_path = logs_dir / f"build-{tags[BUILD_TAG]}-files-{index}.log"
        command = [
            sys.executable,
            "-m",
            "dagster",
            "job",
            "execute",
            "-m",
            CODE_LOCATION_MODULE,
            "-j",
            KG_FILE_STAGES,
            "-c",
            config_path,
            "--tags",
            json.dumps(run_tags),
        ]
        with log_path.open("w", encoding="utf-8") as out:
            processes.append(
                (
                    subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT),
                    log_path,
                    f"{first} .. {last}",
                )
            )
    ok = True
    for process, log_path, span in processes:
        if process.wait() != 0:
            ok = False
            log(f"file stages over {span} failed; log: {log_path}")
    Path(config_path).unlink(missing_ok=True)
    return ok


def _events(
    instance: dg.DagsterInstance, run_ids: Iterable[str], event_type: dg.DagsterEventType
) -> list[tuple[str, Any]]:
    found = []
    for run_id in run_ids:
        for entry in instance.all_logs(run_id, of_type=event_type):
            if entry.dagster_event is not None:
                found.append((run_id, entry.dagster_event))
    return found


def _outcome(
    instance: dg.DagsterInstance, build_id: str, sync: PartitionSync, started: float
) -> BuildOutcome:
    runs = instance.get_runs(filters=dg.RunsFilter(tags={BUILD_TAG: build_id}))
    run_ids = [run.run_id for run in reversed(runs)]
    outcome = BuildOutcome(
        success=bool(runs) and all(run.status == dg.DagsterRunStatus.SUCCESS for run in runs),
        run_ids=run_ids,
        partitions=sync,
        seconds=round(time.perf_counter() - started, 3),
    )
    # Per-file assets: each partition carries its own file's figures, added up here; a run
    # without partitions also records its totals without a partition (left out, not counted
    # twice). Graph-wide assets: the latest materialization.
    per_file: dict[str, list[dict[str, Any]]] = {}
    for _, event in _events(instance, run_ids, dg.DagsterEventType.ASSET_MATERIALIZATION):
        materialization = event.step_materialization_data.materialization
        asset = materialization.asset_key.to_user_string()
        if event.step_key is None:
            continue
        metadata = plain_metadata(materialization.metadata)
        if asset in FILE_ASSET_KEYS:
            if materialization.partition is not None:
                per_file.setdefault(asset, []).append(metadata)
            continue
        outcome.assets[asset] = metadata
    for asset, files in per_file.items():
        outcome.assets[asset] = run_totals(files)
    for _, event in _events(instance, run_ids, dg.DagsterEventType.ASSET_CHECK_EVALUATION):
        evaluation = event.event_specific_data
        if not evaluation.passed:
            outcome.checks_failed.append(evaluation.check_name)
    outcome.checks_failed.sort()
    outcome.failed_steps = sorted(
        {
            event.step_key
            for _, event in _events(instance, run_ids, dg.DagsterEventType.STEP_FAILURE)
            if event.step_key
        }
    )
    return outcome

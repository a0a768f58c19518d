"""The nightly rebuild and the sensor that keeps one partition per input file."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path

import dagster as dg

from graph_assets.file_versions import scanned_state
from graph_assets.partitions import (
    INPUT_FILES_PARTITIONS,
    input_files,
    sync_file_partitions,
    valid_partition_key,
)
from jobs import KG_FILE_STAGES, KG_GRAPH, kg_file_stages, kg_graph, kg_incremental
from nara_kg.ingest.inputs import INPUT_SUFFIXES, list_input_paths
from resources import PipelinePaths

NIGHTLY_REBUILD = "nightly_kg_rebuild"
INPUT_FILES_SENSOR = "nara_input_files_sensor"
DEFAULT_CRON = "0 2 * * *"
DEFAULT_TIMEZONE = "UTC"
#: Run tags that make one run cover a range of partitions.
RANGE_START = "dagster/asset_partition_range_start"
RANGE_END = "dagster/asset_partition_range_end"
#: Run tag of the sensor's runs: what changed ("added", "changed", "<n> files removed").
CHANGE_TAG = "nara_kg/change"


def all_partitions_tags(instance: dg.DagsterInstance) -> dict[str, str] | None:
    """Tags of a run over every file partition (None when there is none)."""
    keys = input_files.get_partition_keys(dynamic_partitions_store=instance)
    if not keys:
        return None
    return {RANGE_START: keys[0], RANGE_END: keys[-1]}


def nightly_rebuild(
    cron: str = DEFAULT_CRON, timezone: str = DEFAULT_TIMEZONE
) -> dg.ScheduleDefinition:
    @dg.schedule(
        name=NIGHTLY_REBUILD,
        job=kg_incremental,
        cron_schedule=cron,
        execution_timezone=timezone,
        description=(
            f"Rebuild the knowledge graph on '{cron}' ({timezone}) over every file partition; "
            "unchanged work is skipped. Set NARA_KG_REBUILD_CRON / NARA_KG_REBUILD_TIMEZONE "
            "to change it."
        ),
        default_status=dg.DefaultScheduleStatus.STOPPED,
    )
    def _nightly(
        context: dg.ScheduleEvaluationContext, paths: PipelinePaths
    ) -> dg.RunRequest | dg.SkipReason:
        sync_file_partitions(
            context.instance, paths.data_path, follow_external_links=paths.follow_external_links
        )
        tags = all_partitions_tags(context.instance)
        if tags is None:
            return dg.SkipReason(f"no input files under {paths.data_path}")
        return dg.RunRequest(tags=tags)

    return _nightly


def file_state(data_dir: str, *, follow_external_links: bool = False) -> dict[str, str]:
    """rel_path -> "size:mtime_ns" of every input file: cheap to take every minute."""
    root = Path(data_dir).resolve()
    if not root.is_dir():
        return {}
    state: dict[str, str] = {}
    for rel in list_input_paths(root, follow_external_links=follow_external_links):
        try:
            stat = (root / rel).stat()
        except OSError:  # gone between the listing and now: the next tick sees it
            continue
        state[rel] = f"{stat.st_size}:{stat.st_mtime_ns}"
    return state


def built_state(paths: PipelinePaths, rel_paths: list[str]) -> dict[str, str]:
    """rel_path -> "size:mtime_ns" of each file as the file stages last scanned it (files never
    scanned left out): what every build leaves, from the CLI, the UI or this sensor's runs."""
    state: dict[str, str] = {}
    for rel in rel_paths:
        scanned = scanned_state(paths.layout, rel)
        if scanned is not None:
            state[rel] = scanned
    return state


def changes(before: Mapping[str, str], after: Mapping[str, str]) -> dict[str, list[str]]:
    return {
        "added": sorted(set(after) - set(before)),
        "changed": sorted(k for k in set(after) & set(before) if after[k] != before[k]),
        "removed": sorted(set(before) - set(after)),
    }


@dg.sensor(
    name=INPUT_FILES_SENSOR,
    jobs=[kg_file_stages, kg_graph],
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.STOPPED,
    description=(
        f"Keeps one partition per {', '.join(INPUT_SUFFIXES)} file under NARA_DATA_DIR: adds "
        f"partitions for new files and requests a {KG_FILE_STAGES} run for each new or changed "
        f"one; deletes the partitions of removed files and requests {KG_GRAPH}, so their records "
        "leave the graph. The graph-wide assets follow the file runs through the automation "
        "sensor. A file counts as built when the file stages last scanned it at its present "
        "size and modification time, whoever ran them (`nara-kg build`, the UI, this sensor), "
        "so switching the sensor on after a build requests nothing until a file changes."
    ),
)
def input_files_sensor(
    context: dg.SensorEvaluationContext, paths: PipelinePaths
) -> dg.SensorResult:
    after = file_state(paths.data_dir, follow_external_links=paths.follow_external_links)
    known = set(context.instance.get_dynamic_partitions(INPUT_FILES_PARTITIONS))
    # What is built is read from what the builds left, not from this sensor's own memory:
    # a file built by `nara-kg build` is as built as one this sensor asked for.
    before = built_state(paths, sorted(known | set(after)))
    diff = changes(before, after)
    # Files whose partition is missing (e.g. deleted by hand) count as added; partitions whose
    # file is gone are removed, scanned or not.
    diff["added"] = sorted(set(diff["added"]) | {rel for rel in after if rel not in known})
    diff["removed"] = sorted(set(diff["removed"]) | (known - set(after)))
    if not any(diff.values()):
        return dg.SensorResult(skip_reason=f"no change in {len(after)} input files")
    invalid = [rel for rel in after if not valid_partition_key(rel)]
    for rel in invalid:
        context.log.warning(f"{rel}: the name cannot be a partition key; file skipped")
    new_keys = [rel for rel in diff["added"] if valid_partition_key(rel)]
    gone = [rel for rel in diff["removed"] if rel in known]
    run_requests = [
        dg.RunRequest(
            run_key=f"{rel}:{after[rel]}",
            partition_key=rel,
            job_name=kg_file_stages.name,
            tags={CHANGE_TAG: "added" if rel in diff["added"] else "changed"},
        )
        for rel in [*new_keys, *diff["changed"]]
        if valid_partition_key(rel)
    ]
    if gone:
        digest = hashlib.sha256(json.dumps(gone).encode()).hexdigest()[:16]
        run_requests.append(
            dg.RunRequest(
                run_key=f"removed:{digest}:{len(after)}",
                job_name=kg_graph.name,
                tags={CHANGE_TAG: f"{len(gone)} files removed"},
            )
        )
    summary = ", ".join(f"{len(v)} {k}" for k, v in diff.items() if v)
    context.log.info(f"input files: {summary}")
    return dg.SensorResult(
        run_requests=run_requests,
        dynamic_partitions_requests=[
            request
            for request in (
                input_files.build_add_request(new_keys) if new_keys else None,
                input_files.build_delete_request(gone) if gone else None,
            )
            if request is not None
        ],
        cursor=json.dumps(after, sort_keys=True),
    )


def build_defs(env: Mapping[str, str] | None = None) -> dg.Definitions:
    """Called when the code location loads (not at import), so the environment is read then."""
    source = os.environ if env is None else env
    schedule = nightly_rebuild(cron=rebuild_cron(source), timezone=rebuild_timezone(source))
    return dg.Definitions(schedules=[schedule], sensors=[input_files_sensor])


def rebuild_cron(env: Mapping[str, str]) -> str:
    return env.get("NARA_KG_REBUILD_CRON") or DEFAULT_CRON


def rebuild_timezone(env: Mapping[str, str]) -> str:
    return env.get("NARA_KG_REBUILD_TIMEZONE") or DEFAULT_TIMEZONE

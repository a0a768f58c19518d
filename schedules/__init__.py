"""The nightly rebuild and the sensor that notices new or changed input files."""

import hashlib
import json
import os
from collections.abc import Mapping

import dagster as dg

from jobs import kg_full_rebuild, kg_incremental
from nara_kg.inputs import INPUT_SUFFIXES, is_input_file
from resources import PipelinePaths

NIGHTLY_REBUILD = "nightly_kg_rebuild"
INPUT_FILES_SENSOR = "nara_input_files_sensor"
DEFAULT_CRON = "0 2 * * *"
DEFAULT_TIMEZONE = "UTC"


def nightly_rebuild(
    cron: str = DEFAULT_CRON, timezone: str = DEFAULT_TIMEZONE
) -> dg.ScheduleDefinition:
    return dg.ScheduleDefinition(
        name=NIGHTLY_REBUILD,
        job=kg_full_rebuild,
        cron_schedule=cron,
        execution_timezone=timezone,
        description=(
            f"Rebuild the knowledge graph on '{cron}' ({timezone}); unchanged work is skipped. "
            "Set NARA_KG_REBUILD_CRON / NARA_KG_REBUILD_TIMEZONE to change it."
        ),
        default_status=dg.DefaultScheduleStatus.STOPPED,
    )


def file_state(data_dir: str) -> dict[str, str]:
    """rel_path -> "size:mtime_ns" of every input file: cheap to take every minute."""
    root = os.path.abspath(data_dir)
    state: dict[str, str] = {}
    if not os.path.isdir(root):
        return state
    from pathlib import Path

    from nara_kg.inputs import EXPORT_TOP_FOLDERS

    base = Path(root)
    tops = [base / top for top in EXPORT_TOP_FOLDERS if (base / top).is_dir()] or [base]
    for top in tops:
        for path in top.rglob("*"):
            if is_input_file(path):
                stat = path.stat()
                state[path.relative_to(base).as_posix()] = f"{stat.st_size}:{stat.st_mtime_ns}"
    return state


def changes(before: Mapping[str, str], after: Mapping[str, str]) -> dict[str, list[str]]:
    return {
        "added": sorted(set(after) - set(before)),
        "changed": sorted(k for k in set(after) & set(before) if after[k] != before[k]),
        "removed": sorted(set(before) - set(after)),
    }


@dg.sensor(
    name=INPUT_FILES_SENSOR,
    job=kg_incremental,
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.STOPPED,
    description=(
        f"Watches NARA_DATA_DIR for new, changed or removed {', '.join(INPUT_SUFFIXES)} files "
        "and requests one incremental rebuild per change set. The cursor holds the last state "
        "seen, so no change is processed twice and none is missed."
    ),
)
def input_files_sensor(
    context: dg.SensorEvaluationContext, paths: PipelinePaths
) -> dg.SensorResult:
    before: dict[str, str] = json.loads(context.cursor) if context.cursor else {}
    after = file_state(paths.data_dir)
    diff = changes(before, after)
    if not any(diff.values()):
        return dg.SensorResult(skip_reason=f"no change in {len(after)} input files")
    run_key = hashlib.sha256(json.dumps(after, sort_keys=True).encode()).hexdigest()[:20]
    summary = ", ".join(f"{len(v)} {k}" for k, v in diff.items() if v)
    context.log.info(f"input files: {summary}")
    return dg.SensorResult(
        run_requests=[
            dg.RunRequest(
                run_key=run_key,
                tags={"nara_kg/changes": summary[:200]},
            )
        ],
        cursor=json.dumps(after, sort_keys=True),
    )


def build_defs(env: Mapping[str, str] | None = None) -> dg.Definitions:
    """Called when the code location loads (not at import), so the environment is read then."""
    source = os.environ if env is None else env
    schedule = nightly_rebuild(
        cron=source.get("NARA_KG_REBUILD_CRON") or DEFAULT_CRON,
        timezone=source.get("NARA_KG_REBUILD_TIMEZONE") or DEFAULT_TIMEZONE,
    )
    return dg.Definitions(schedules=[schedule], sensors=[input_files_sensor])

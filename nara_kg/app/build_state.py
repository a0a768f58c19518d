"""What `nara-kg build` knew when its last build succeeded, so that the next one launches only
what changed since: no run at all when nothing did, the per-file stages of the changed files
only when some did.

Without this record a build that finds nothing changed would still repeat every step: a run
over every partition (each file re-stat'ed, re-hashed and its partition materialized again),
then every graph-wide step in a process of its own. That cost is mostly orchestration (process
starts, event writes) and grows with the number of files: 129 s for 3,000 records, against
about 10 s (the CLI's start-up) when nothing is launched.

The record is written only after a build whose runs all succeeded, and removed when a build
starts, so a failed or killed build leaves none and the next build runs everything. It holds:

* a digest of what every step's output depends on besides the files: the project's code, the
  settings (NARA_*, NEO4J_* and DAGSTER_* variables), the data folder and the files directly
  in it (the evaluation's questions), and the Dagster instance;
* each input file's size and mtime (a stat, no reading: a file touched without a change costs
  a run over that file, whose stages then skip it by content hash);
* the storage id of every asset's latest materialization in the instance: a run launched by
  anything else since (the input sensor, a backfill, the UI) may have changed what the graph
  was built from, so the next build then runs everything, as without a record.

Nothing is recorded in Dagster for a build that launched no run: each asset's latest
materialization is still the one that built the current state, which is what the UI shows.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from nara_kg.model.source_digest import source_digest
from nara_kg.settings import NEO4J_HEAP_VAR, NEO4J_PAGECACHE_VAR

#: The record, in the work folder.
STATE_FILE = "last_build.json"
#: Folders of the project whose Python code the build runs.
CODE_PACKAGES = ("nara_kg", "graph_assets", "jobs", "resources", "schedules", "quality")
#: Prefixes of the environment variables that configure a build.
SETTING_PREFIXES = ("NARA_", "NEO4J_", "DAGSTER_")
#: Of those, the ones that only size the local Neo4j's memory: a new heap or page cache (what
#: one tunes first at scale) must not make the next build run over every file.
NOT_OUTPUT_SETTINGS = frozenset({NEO4J_HEAP_VAR, NEO4J_PAGECACHE_VAR})


@dataclass(frozen=True)
class BuildState:
    #: Digest of the code, the settings, the data folder and the instance.
    inputs_digest: str
    #: rel_path -> "size:mtime_ns" of each input file.
    files: dict[str, str]
    #: asset key -> storage id of its latest materialization.
    materializations: dict[str, int] = field(default_factory=dict)
    #: The runs of the build that recorded this.
    run_ids: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class BuildPlan:
    #: Nothing changed since the recorded build: no run is needed.
    up_to_date: bool
    #: Files to run the per-file stages over (None: every file, as without a record).
    files: list[str] | None
    #: Why, for the log.
    reason: str


def code_digest(root: Path, packages: Iterable[str] = CODE_PACKAGES) -> str:
    """sha256 over the path and content of every .py file of the packages."""
    return source_digest(
        (path for package in packages for path in sorted((root / package).rglob("*.py"))),
        names_under=root,
    )


def settings_of(env: Mapping[str, str]) -> dict[str, str]:
    """The variables a build's output may depend on (their values only enter a digest)."""
    return {
        k: v
        for k, v in sorted(env.items())
        if k.startswith(SETTING_PREFIXES) and k not in NOT_OUTPUT_SETTINGS
    }


def beside_files(data_dir: Path) -> dict[str, str]:
    """The files directly in the data folder (the questions the evaluation asks, labels):
    not partitions, but read by the build."""
    if not data_dir.is_dir():
        return {}
    return file_states(data_dir, sorted(p.name for p in data_dir.iterdir() if p.is_file()))


def inputs_digest(code: str, settings: Mapping[str, str], data_dir: Path, instance: str) -> str:
    payload = json.dumps(
        {
            "code": code,
            "settings": dict(settings),
            "data_dir": str(data_dir),
            "beside": beside_files(data_dir),
            "instance": instance,
        },
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()


def file_states(data_dir: Path, rel_paths: Iterable[str]) -> dict[str, str]:
    """rel_path -> "size:mtime_ns" ("missing" for a file gone since it was listed)."""
    states = {}
    for rel in rel_paths:
        try:
            stat = (data_dir / rel).stat()
        except OSError:
            states[rel] = "missing"
            continue
        states[rel] = f"{stat.st_size}:{stat.st_mtime_ns}"
    return states


def plan(
    previous: BuildState | None,
    current: BuildState,
    *,
    runs_in_flight: int = 0,
) -> BuildPlan:
    """What the next incremental build must run, from the last successful build's record and
    the current state (`current.materializations`: the instance's latest, now)."""
    everything = BuildPlan(up_to_date=False, files=None, reason="")
    if previous is None:
        return _why(everything, "no record of a successful build")
    if previous.inputs_digest != current.inputs_digest:
        return _why(everything, "the code, the settings or the data folder changed")
    if previous.materializations != current.materializations:
        return _why(everything, "other runs materialized assets since the last build")
    if runs_in_flight:
        return _why(everything, f"{runs_in_flight} run(s) in flight")
    changed = [rel for rel, state in current.files.items() if previous.files.get(rel) != state]
    removed = sorted(set(previous.files) - set(current.files))
    if not changed and not removed:
        return BuildPlan(up_to_date=True, files=[], reason="nothing changed since the last build")
    return BuildPlan(
        up_to_date=False,
        files=changed,
        reason=f"{len(changed)} file(s) new or changed, {len(removed)} removed",
    )


def _why(plan_: BuildPlan, reason: str) -> BuildPlan:
    return BuildPlan(up_to_date=plan_.up_to_date, files=plan_.files, reason=reason)


def load(path: Path) -> BuildState | None:
    try:
        raw: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return BuildState(
            inputs_digest=str(raw["inputs_digest"]),
            files={str(k): str(v) for k, v in raw["files"].items()},
            materializations={str(k): int(v) for k, v in raw["materializations"].items()},
            run_ids=[str(r) for r in raw.get("run_ids", [])],
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def save(path: Path, state: BuildState) -> None:
    """Written whole to a temporary file and renamed, so a reader never sees half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(asdict(state), sort_keys=True), encoding="utf-8")
    os.replace(temporary, path)


def key_range(keys: Sequence[str], selected: Iterable[str]) -> tuple[str, str] | None:
    """(first, last) of the partition keys' order that spans every selected key."""
    wanted = set(selected)
    positions = [i for i, key in enumerate(keys) if key in wanted]
    if not positions:
        return None
    return keys[positions[0]], keys[positions[-1]]

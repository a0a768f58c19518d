"""Incremental builds at scale: at each N, `nara-kg build --full`, then `nara-kg build` with
nothing changed, then `nara-kg build` after 0.1% of the records of ONE file were edited, then
`nara-kg build` after 0.1% of one description file's records were given a subject another
file's record names, which changes Leiden's projection so that it runs again
(`nara-kg bench --scale 10000 --scale 100000 --incremental`).

Each build is the real command line (`nara-kg build`, the jobs, the step processes, the
Dagster instance at a DAGSTER_HOME of its own), run with the stand-in model
(`NARA_KG_EMBEDDING_BACKEND=standin`) so that only the graph side and the orchestration are
measured. Per build:

* wall seconds of the command, from its start to its exit (Python start and imports included);
* per-step seconds, from the STEP_START / STEP_SUCCESS events of the build's runs;
* orchestration seconds: the wall time during which no step of the build was running, i.e.
  wall minus the union of the step windows (steps that overlap are not counted twice), so
  process starts, imports, partition sync, run and event bookkeeping between steps;
* peak RSS: of the largest single process of the build (the command, the forkserver and the
  step processes, from getrusage of the reaped process tree), and of the whole tree at once
  (the sum of the tree's RSS, sampled from /proc);
* per asset, the `records_touched` figure its materializations report, where they do;
* `graph_communities`' figures: whether Leiden ran, the communities it changed and the
  memberships read back from the graph to compare.

The tables are in :mod:`benchmarks.incremental_report`.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.common import Log, open_driver, quiet, wipe_database
from benchmarks.data import _BODY_FIELD, generate_dataset_in_child
from benchmarks.scale import growth_exponent
from nara_kg.embedding.standin import STANDIN_BACKEND, standin_key
from nara_kg.settings import PROJECT_ROOT, Neo4jSettings

#: The builds at each N, in the order they run.
MODES = ("full", "no_change", "one_file_change", "one_file_relinked")
#: Share of all records edited (in one file) before the third build.
CHANGE_SHARE = 0.001
#: Metadata key the graph writers report the records they touched under.
RECORDS_TOUCHED = "records_touched"
#: graph_communities' metadata the report shows for each build.
COMMUNITY_FIGURES = (
    "leiden_skipped",
    "communities_changed",
    "memberships_read",
    "records_in_a_community",
)
#: Steps shorter than this at the larger N get no exponent: their ratio is noise.
_MIN_SECONDS_FOR_EXPONENT = 0.5

# The wrapper that runs one build and reports the peak RSS of the largest process of its
# tree: a fresh process, so that getrusage(RUSAGE_CHILDREN) covers this build only.
_WRAPPER = (
    "import json, resource, subprocess, sys\n"
    "code = subprocess.call(sys.argv[2:])\n"
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "open(sys.argv[1], 'w').write(json.dumps({'returncode': code, 'maxrss_kb': peak}))\n"
    "sys.exit(code)\n"
)


# --- the 0.1% edit ------------------------------------------------------------------------


def records_to_edit(total_records: int, file_records: int, share: float = CHANGE_SHARE) -> int:
    """`share` of all records, at least one, at most the file's own records."""
    return max(1, min(file_records, round(total_records * share)))


def edit_positions(lines: int, count: int) -> list[int]:
    """`count` line indexes spread evenly over a file of `lines` lines (deterministic)."""
    count = min(count, lines)
    return sorted({(i * lines) // count for i in range(count)}) if count else []


def edit_record_line(line: str, tag: str) -> str:
    """The record of one export line with a sentence appended to its body text (the field
    that is chunked), so that its chunks, vectors and mentions change."""
    payload = json.loads(line)
    record = payload["record"]
    body = _BODY_FIELD.get(record.get("authorityType", ""), "scopeAndContentNote")
    addition = f"Revised in incremental benchmark edit {tag}: the description was re-examined."
    record[body] = f"{record.get(body) or ''}\n\n{addition}".strip()
    return json.dumps(payload, ensure_ascii=False)


def edit_lines(lines: Sequence[str], count: int, tag: str = "1") -> tuple[list[str], list[int]]:
    """The lines with `count` of their records edited, and the indexes edited."""
    out = list(lines)
    positions = edit_positions(len(out), count)
    for number, index in enumerate(positions):
        out[index] = edit_record_line(out[index], f"{tag}.{number}")
    return out, positions


# --- the 0.1% relink -----------------------------------------------------------------------


def relink_record_line(line: str, subject: Mapping[str, Any]) -> str:
    """The record of one export line with `subject` (an entry of another record's `subjects`)
    added to its own: an authority edge of the projection Leiden reads."""
    payload = json.loads(line)
    payload["record"].setdefault("subjects", []).append(dict(subject))
    return json.dumps(payload, ensure_ascii=False)


def relink_lines(
    lines: Sequence[str], subjects: Sequence[Mapping[str, Any]], count: int
) -> tuple[list[str], list[int]]:
    """The lines with `count` of their records (spread as :func:`edit_positions` spreads them)
    each given the next of `subjects` it does not name yet, and the indexes changed."""
    out = list(lines)
    changed = []
    pool = itertools.cycle(subjects)
    for index in edit_positions(len(out), count):
        named = {s.get("naId") for s in json.loads(out[index])["record"].get("subjects") or []}
        # At most one lap of the pool: a record that names every subject is left as it is.
        lap = itertools.islice(pool, len(subjects))
        subject = next((s for s in lap if s["naId"] not in named), None)
        if subject is not None:
            out[index] = relink_record_line(out[index], subject)
            changed.append(index)
    return out, changed


def relink_one_file(data_dir: Path, share: float = CHANGE_SHARE) -> dict[str, Any]:
    """Give `share` of the export's records, all in its largest description file, a subject
    that records of other files name."""
    line_counts = {path: _line_count(path) for path in export_files(data_dir)}
    descriptions = {p: n for p, n in line_counts.items() if "descriptions" in p.parts}
    if not descriptions:
        raise ValueError(f"{data_dir} holds no description file to relink")
    target = pick_file(descriptions)
    count = records_to_edit(sum(line_counts.values()), descriptions[target], share)
    subjects: dict[int, dict[str, Any]] = {}
    for path in sorted(descriptions, key=str):
        if len(subjects) >= count:
            break
        if path == target:
            continue
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                for subject in json.loads(line)["record"].get("subjects") or []:
                    subjects.setdefault(subject["naId"], subject)
    lines = target.read_text(encoding="utf-8").splitlines()
    edited, positions = relink_lines(lines, list(subjects.values()), count)
    return _rewrite(data_dir, target, edited, positions, sum(line_counts.values()), share)


def export_files(data_dir: Path) -> list[Path]:
    """The export's record files (the questions and labels beside its top folders are not)."""
    return sorted(p for p in data_dir.rglob("*.jsonl") if p.parent != data_dir)


def pick_file(line_counts: dict[Path, int]) -> Path:
    """The file to edit: the one with the most records, the first by name among equals."""
    return min(line_counts, key=lambda path: (-line_counts[path], str(path)))


def _line_count(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(1 for line in handle if line.strip())


def change_one_file(data_dir: Path, share: float = CHANGE_SHARE, tag: str = "1") -> dict[str, Any]:
    """Edit `share` of the export's records, all in one file (see :func:`pick_file`)."""
    # Counted by streaming: at 10^6 records the whole export is several GB of text.
    line_counts = {path: _line_count(path) for path in export_files(data_dir)}
    total = sum(line_counts.values())
    target = pick_file(line_counts)
    lines = target.read_text(encoding="utf-8").splitlines()
    count = records_to_edit(total, len(lines), share)
    edited, positions = edit_lines(lines, count, tag)
    return _rewrite(data_dir, target, edited, positions, total, share)


def _rewrite(
    data_dir: Path,
    target: Path,
    lines: Sequence[str],
    positions: Sequence[int],
    total: int,
    share: float,
) -> dict[str, Any]:
    """Write `lines` to `target`, and what changed there, as the report shows it."""
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {
        "file": str(target.relative_to(data_dir)),
        "records_changed": len(positions),
        "records_total": total,
        "share_requested": share,
        "share": round(len(positions) / total, 6) if total else 0.0,
    }


# --- measuring one build ----------------------------------------------------------------


def _tree_rss_kb(root: int) -> dict[int, int]:
    """Resident KiB of `root` and of each of its descendants, by pid, from /proc."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    page_kb = os.sysconf("SC_PAGE_SIZE") // 1024
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = Path(f"/proc/{entry.name}/stat").read_text()
            fields = stat.rsplit(")", 1)[1].split()
            pid = int(entry.name)
            parents[pid] = int(fields[1])
            rss[pid] = int(Path(f"/proc/{entry.name}/statm").read_text().split()[1]) * page_kb
    tree, frontier = {root}, [root]
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    while frontier:
        for child in children.get(frontier.pop(), []):
            if child not in tree:
                tree.add(child)
                frontier.append(child)
    return {pid: rss.get(pid, 0) for pid in tree}


class TreeSampler(threading.Thread):
    """The peaks of a process tree's RSS, sampled every `interval` seconds: summed over the
    tree, of its largest process, and of each process (by pid: a step's own process, which
    Dagster's events name, gives the step's peak)."""

    def __init__(self, root: int, interval: float = 0.25) -> None:
        super().__init__(daemon=True)
        self.root, self.interval = root, interval
        self.peak_sum_kb = 0
        self.peak_single_kb = 0
        self.peak_by_pid_kb: dict[int, int] = {}
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            with contextlib.suppress(OSError):
                sizes = _tree_rss_kb(self.root)
                self.peak_sum_kb = max(self.peak_sum_kb, sum(sizes.values()))
                self.peak_single_kb = max(self.peak_single_kb, max(sizes.values(), default=0))
                for pid, kb in sizes.items():
                    self.peak_by_pid_kb[pid] = max(self.peak_by_pid_kb.get(pid, 0), kb)
            self._stop_event.wait(self.interval)

    def stop(self) -> None:
        self._stop_event.set()
        self.join()


def covered_seconds(windows: Iterable[tuple[float, float]]) -> float:
    """Length of the union of (start, end) intervals."""
    total, current_start, current_end = 0.0, None, None
    for start, end in sorted(windows):
        if current_end is None or start > current_end:
            if current_end is not None and current_start is not None:
                total += current_end - current_start
            current_start, current_end = start, end
        else:
            current_end = max(current_end, end)
    if current_end is not None and current_start is not None:
        total += current_end - current_start
    return total


def step_figures(instance: Any, run_ids: Sequence[str]) -> dict[str, Any]:
    """Per step: seconds (summed over the build's runs) and the union of the step windows."""
    from benchmarks.build import step_windows

    seconds: dict[str, float] = {}
    windows: list[tuple[float, float]] = []
    for run_id in run_ids:
        for step, (start, end) in step_windows(instance, run_id).items():
            seconds[step] = seconds.get(step, 0.0) + (end - start)
            windows.append((start, end))
    return {
        "steps": {k: round(v, 3) for k, v in sorted(seconds.items(), key=lambda kv: -kv[1])},
        "steps_covered_seconds": round(covered_seconds(windows), 3),
    }


def step_peak_rss_mb(
    instance: Any, run_ids: Sequence[str], peak_by_pid_kb: Mapping[int, int]
) -> dict[str, float]:
    """Step -> the sampled peak RSS of the process it ran in alone (the largest, when a step ran
    in more than one run). The multiprocess executor gives each step a process of its own; the
    steps of a run executed in one process (a small change set's run) share that process's
    peak, which is no step's own, so they are left out."""
    import dagster as dg

    steps_of_pid: dict[int, set[str]] = {}
    for run_id in run_ids:
        for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.STEP_START):
            pid = entry.dagster_event.pid if entry.dagster_event is not None else None
            if pid is not None and entry.step_key:
                steps_of_pid.setdefault(pid, set()).add(entry.step_key)
    peaks: dict[str, float] = {}
    for pid, steps in steps_of_pid.items():
        kb = peak_by_pid_kb.get(pid)
        if kb and len(steps) == 1:
            (step,) = steps
            peaks[step] = max(peaks.get(step, 0.0), round(kb / 1024, 1))
    return dict(sorted(peaks.items(), key=lambda kv: -kv[1]))


def records_touched(instance: Any, run_ids: Sequence[str]) -> dict[str, int]:
    """Asset -> the `records_touched` its materializations in these runs report, summed over
    partitions (a per-file asset's partition-less run total is used only when it has no
    partitioned materialization, so that nothing is counted twice). Assets that do not report
    it are left out."""
    from graph_assets.common import plain_metadata

    partitioned: dict[str, int] = {}
    whole: dict[str, int] = {}
    for materialization in _materializations(instance, run_ids):
        value = plain_metadata(materialization.metadata).get(RECORDS_TOUCHED)
        if not isinstance(value, int | float) or isinstance(value, bool):
            continue
        asset = materialization.asset_key.to_user_string()
        into = partitioned if materialization.partition is not None else whole
        into[asset] = into.get(asset, 0) + int(value)
    return dict(sorted({**whole, **partitioned}.items()))


def community_figures(instance: Any, run_ids: Sequence[str]) -> dict[str, Any]:
    """:data:`COMMUNITY_FIGURES` of the last `graph_communities` materialization in these runs
    (empty when none of them materialized it)."""
    from graph_assets.common import plain_metadata

    figures: dict[str, Any] = {}
    for materialization in _materializations(instance, run_ids):
        if materialization.asset_key.to_user_string() == "graph_communities":
            metadata = plain_metadata(materialization.metadata)
            figures = {key: metadata.get(key) for key in COMMUNITY_FIGURES}
    return figures


def _materializations(instance: Any, run_ids: Sequence[str]) -> Iterator[Any]:
    """The asset materializations of these runs, in order."""
    import dagster as dg

    for run_id in run_ids:
        for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION):
            if entry.dagster_event is not None:
                yield entry.dagster_event.step_materialization_data.materialization


def build_env(dagster_home: Path, work_dir: Path, settings: Neo4jSettings) -> dict[str, str]:
    return {
        **os.environ,
        "NARA_KG_EMBEDDING_BACKEND": STANDIN_BACKEND,
        "NARA_KG_WORK_DIR": str(work_dir),
        "DAGSTER_HOME": str(dagster_home),
        "NEO4J_URI": settings.uri,
        "NEO4J_USERNAME": settings.username,
        "NEO4J_PASSWORD": settings.password,
        "NEO4J_DATABASE": settings.database,
        "PYTHONPATH": os.pathsep.join(
            p for p in (str(PROJECT_ROOT), os.environ.get("PYTHONPATH", "")) if p
        ),
    }


def timed_build(
    data_dir: Path,
    dagster_home: Path,
    work_dir: Path,
    settings: Neo4jSettings,
    *,
    full: bool,
    timeout: float,
) -> dict[str, Any]:
    """One `nara-kg build` (with `--full` when asked) in a process tree of its own, measured."""
    import dagster as dg

    dagster_home.mkdir(parents=True, exist_ok=True)
    scratch = dagster_home.parent
    rusage_path = scratch / "build.rusage.json"
    out_path, log_path = scratch / "build.out.json", scratch / "build.log"
    rusage_path.unlink(missing_ok=True)
    command = [sys.executable, "-c", "from nara_kg.cli.main import main; main()"]
    command += ["build", "--data", str(data_dir), "--json", *(["--full"] if full else [])]
    started = time.perf_counter()
    with out_path.open("w") as out, log_path.open("w") as err:
        process = subprocess.Popen(
            [sys.executable, "-c", _WRAPPER, str(rusage_path), *command],
            cwd=PROJECT_ROOT,
            env=build_env(dagster_home, work_dir, settings),
            stdout=out,
            stderr=err,
        )
        sampler = TreeSampler(process.pid)
        sampler.start()
        try:
            code = process.wait(timeout=timeout)
        finally:
            sampler.stop()
    wall = time.perf_counter() - started
    if code != 0:
        tail = log_path.read_text(encoding="utf-8", errors="replace")[-4000:]
        raise RuntimeError(f"nara-kg build exited with {code}:\n{tail}")
    summary = json.loads(out_path.read_text(encoding="utf-8"))
    rusage = json.loads(rusage_path.read_text(encoding="utf-8"))
    run_ids = summary["run_ids"]
    with dg.DagsterInstance.from_config(str(dagster_home)) as instance:
        steps = step_figures(instance, run_ids)
        touched = records_touched(instance, run_ids)
        communities = community_figures(instance, run_ids)
        step_peaks = step_peak_rss_mb(instance, run_ids, sampler.peak_by_pid_kb)
    return {
        "wall_seconds": round(wall, 3),
        "build_seconds": summary.get("seconds"),
        "steps": steps["steps"],
        "steps_seconds": round(sum(steps["steps"].values()), 3),
        "steps_covered_seconds": steps["steps_covered_seconds"],
        "orchestration_seconds": round(wall - steps["steps_covered_seconds"], 3),
        # getrusage: the largest process of the tree; a sampled peak can only be lower.
        "peak_rss_mb": round(max(rusage["maxrss_kb"], sampler.peak_single_kb) / 1024, 1),
        "peak_tree_rss_mb": round(sampler.peak_sum_kb / 1024, 1),
        "step_peak_rss_mb": step_peaks,
        "records_touched": touched,
        "communities": communities,
        "run_ids": run_ids,
        "files_processed": summary.get("files_processed"),
        "files_skipped": summary.get("files_skipped"),
    }


# --- the runs -----------------------------------------------------------------------------


def incremental_run(
    records: int,
    scratch: Path,
    settings: Neo4jSettings,
    driver: Any,
    *,
    seed: int = 7,
    timeout: float = 6 * 3600,
    keep: bool = False,
    log: Log = quiet,
) -> dict[str, Any]:
    """One N: generate, wipe, then the full, no-change, one-file-change and one-file-relinked
    builds."""
    base = scratch.resolve() / "incremental" / str(records)
    data_dir, work_dir, dagster_home = base / "data", base / "work", base / "dagster_home"
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    dataset = generate_dataset_in_child(data_dir, records, seed)
    log(f"incremental {records}: {dataset['records']} records in {dataset['files']} files")
    wipe_database(driver, settings.database)
    builds: dict[str, Any] = {}
    change: dict[str, Any] | None = None
    relink: dict[str, Any] | None = None
    for mode in MODES:
        if mode == "one_file_change":
            change = change_one_file(data_dir)
            log(f"incremental {records}: edited {change['records_changed']} in {change['file']}")
        if mode == "one_file_relinked":
            relink = relink_one_file(data_dir)
            log(f"incremental {records}: relinked {relink['records_changed']} in {relink['file']}")
        builds[mode] = timed_build(
            data_dir, dagster_home, work_dir, settings, full=mode == "full", timeout=timeout
        )
        log(
            f"incremental {records} {mode}: {builds[mode]['wall_seconds']:.1f}s "
            f"(orchestration {builds[mode]['orchestration_seconds']:.1f}s), "
            f"peak {builds[mode]['peak_rss_mb']} MB"
        )
    if not keep:
        wipe_database(driver, settings.database)
        shutil.rmtree(base, ignore_errors=True)
    return {
        "records": dataset["records"],
        "requested_records": records,
        "files": dataset["files"],
        "change": change,
        "relink": relink,
        "builds": builds,
    }


def incremental_growth(runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Between consecutive N, per build mode: the exponents of wall, orchestration and step
    time and of peak RSS (log(v2/v1) / log(N2/N1))."""
    out = []
    for small, large in itertools.pairwise(runs):
        n1, n2 = small["records"], large["records"]
        modes: dict[str, Any] = {}
        for mode in MODES:
            a, b = small["builds"].get(mode), large["builds"].get(mode)
            if a is None or b is None:
                continue
            steps = {
                step: growth_exponent(n1, a["steps"].get(step), n2, seconds)
                for step, seconds in b["steps"].items()
                if seconds >= _MIN_SECONDS_FOR_EXPONENT
            }
            modes[mode] = {
                key: growth_exponent(n1, a[key], n2, b[key])
                for key in ("wall_seconds", "orchestration_seconds", "steps_seconds", "peak_rss_mb")
            } | {"steps": steps}
        out.append({"from_records": n1, "to_records": n2, "modes": modes})
    return out


def run_incremental(
    sizes: Sequence[int],
    scratch: Path,
    settings: Neo4jSettings,
    *,
    seed: int = 7,
    timeout: float = 6 * 3600,
    keep_last: bool = False,
    log: Log = quiet,
) -> dict[str, Any]:
    """Every N in `sizes` (ascending), then the growth between them: the `incremental` object
    of `nara-kg bench --scale ... --incremental --json`. With `keep_last`, the largest N's
    export, work directory, Dagster home and database are left as its last build left them."""
    import platform

    started_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    load_before = os.getloadavg()
    ordered = sorted(set(sizes))
    driver = open_driver(settings)
    try:
        runs = [
            incremental_run(
                n,
                scratch,
                settings,
                driver,
                seed=seed,
                timeout=timeout,
                keep=keep_last and n == ordered[-1],
                log=log,
            )
            for n in ordered
        ]
    finally:
        driver.close()
    return {
        "mode": "incremental",
        "model": standin_key(),
        "sizes": ordered,
        "runs": runs,
        "growth": incremental_growth(runs),
        "environment": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in os.getloadavg()],
        },
        "started_at": started_at,
    }

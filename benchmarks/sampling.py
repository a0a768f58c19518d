"""CPU and memory from /proc: snapshots, the CPU split between two of them, a background
sampler whose readings are attributed to each step of a run afterwards."""

from __future__ import annotations

import contextlib
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common import rounded

_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True)
class Snapshot:
    """One reading of /proc: this process's RSS and CPU, the local Neo4j server's CPU (in all,
    and per thread name), and the whole machine's busy and steal CPU (seconds since boot)."""

    wall: float
    rss_mb: float
    self_cpu: float
    server_cpu: float | None
    machine_busy: float
    machine_steal: float
    server_threads: dict[str, float] | None = None


def _stat_cpu(stat: str) -> float:
    """User + system CPU seconds of a /proc `stat` line (of a process or one of its threads)."""
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK


def _process_cpu(pid: int | str) -> float:
    return _stat_cpu(Path(f"/proc/{pid}/stat").read_text())


#: A pool thread's number at the end of its name ("GC Thread#1", "gds-3", "G1 Refine#0"): the
#: threads of one pool count together.
_THREAD_NUMBER = re.compile(r"[#-]?\d+$")
#: Most thread names a CPU split lists (the busiest); the rest are added up under "other".
THREAD_NAMES_LISTED = 8


def _threads_cpu(pid: int | str) -> dict[str, float]:
    """CPU seconds of the process's live threads, added up per thread name (Linux keeps 15
    characters of it: "neo4j.BoltWorke", "C2 CompilerThre")."""
    totals: dict[str, float] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError, IndexError, ValueError):
            text = (task / "stat").read_text()
            name = _THREAD_NUMBER.sub("", text[text.index("(") + 1 : text.rindex(")")]) or "?"
            totals[name] = totals.get(name, 0.0) + _stat_cpu(text)
    return totals


def threads_between(
    before: dict[str, float], after: dict[str, float], total: float
) -> dict[str, float]:
    """Where `total` seconds of a process's CPU went between two readings of `_threads_cpu`,
    busiest thread names first; "other" holds the names not listed and the threads that ended
    in between (whose CPU the process's total keeps and no live thread shows)."""
    spent = {name: after[name] - before.get(name, 0.0) for name in after}
    busiest = sorted((n for n in spent if spent[n] > 0), key=lambda n: -spent[n])
    listed = {name: round(spent[name], 3) for name in busiest[:THREAD_NAMES_LISTED]}
    rest = round(total - sum(spent[name] for name in busiest[:THREAD_NAMES_LISTED]), 3)
    if rest > 0:
        listed["other"] = rest
    return listed


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def snapshot(server_pid: int | None = None) -> Snapshot | None:
    """None where /proc is not there (not Linux)."""
    try:
        cpu = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
        user, nice, system, _idle, _iowait, irq, softirq, steal = cpu[:8]
        server = None
        server_threads = None
        if server_pid is not None:
            with contextlib.suppress(OSError, IndexError, ValueError):
                server = _process_cpu(server_pid)
                server_threads = _threads_cpu(server_pid)
        return Snapshot(
            wall=time.time(),
            rss_mb=_rss_mb(),
            self_cpu=_process_cpu("self"),
            server_cpu=server,
            machine_busy=(user + nice + system + irq + softirq) / _CLK_TCK,
            machine_steal=steal / _CLK_TCK,
            server_threads=server_threads,
        )
    except (OSError, IndexError, ValueError):
        return None


def cpu_between(before: Snapshot | None, after: Snapshot | None) -> dict[str, Any] | None:
    """Where the machine's CPU went between two snapshots: this process, the Neo4j server,
    everything else (other processes on a shared machine), and hypervisor steal."""
    if before is None or after is None:
        return None
    wall = after.wall - before.wall
    own = after.self_cpu - before.self_cpu
    server = (
        after.server_cpu - before.server_cpu
        if after.server_cpu is not None and before.server_cpu is not None
        else None
    )
    others = after.machine_busy - before.machine_busy - own - (server or 0.0)
    capacity = wall * (os.cpu_count() or 1)
    by_thread = (
        threads_between(before.server_threads, after.server_threads, server)
        if server is not None and before.server_threads and after.server_threads
        else None
    )
    return {
        "wall_seconds": rounded(wall),
        "process_cpu_seconds": rounded(own),
        "neo4j_cpu_seconds": rounded(server) if server is not None else None,
        "other_processes_cpu_seconds": rounded(max(others, 0.0)),
        "other_processes_share": rounded(max(others, 0.0) / capacity, 3) if capacity else None,
        "steal_seconds": rounded(after.machine_steal - before.machine_steal),
        "neo4j_cpu_by_thread": by_thread,
    }


def summed_cpu(parts: list[dict[str, Any] | None], *, mean: bool = False) -> dict[str, Any] | None:
    """:func:`cpu_between` over several spans of time, added up, or with `mean` their mean
    (None if any span has none)."""
    if not parts or any(part is None for part in parts):
        return None
    spans = [part for part in parts if part is not None]
    if mean:
        spans = [_scaled(span, 1 / len(spans)) for span in spans]
    total: dict[str, Any] = {}
    for name in (
        "wall_seconds",
        "process_cpu_seconds",
        "neo4j_cpu_seconds",
        "other_processes_cpu_seconds",
        "steal_seconds",
    ):
        values = [span[name] for span in spans]
        total[name] = None if None in values else rounded(sum(values))
    capacity = (total["wall_seconds"] or 0.0) * (os.cpu_count() or 1)
    others = total["other_processes_cpu_seconds"]
    total["other_processes_share"] = (
        rounded(others / capacity, 3) if capacity and others is not None else None
    )
    threads: dict[str, float] = {}
    for span in spans:
        for name, seconds in (span.get("neo4j_cpu_by_thread") or {}).items():
            threads[name] = round(threads.get(name, 0.0) + seconds, 3)
    total["neo4j_cpu_by_thread"] = dict(sorted(threads.items(), key=lambda kv: -kv[1])) or None
    return {name: total[name] for name in spans[0]}


def _scaled(span: dict[str, Any], factor: float) -> dict[str, Any]:
    scaled = {
        name: value * factor
        if isinstance(value, int | float) and name.endswith("seconds")
        else value
        for name, value in span.items()
    }
    threads = span.get("neo4j_cpu_by_thread")
    if threads:
        scaled["neo4j_cpu_by_thread"] = {name: s * factor for name, s in threads.items()}
    return scaled


class Sampler(threading.Thread):
    """Snapshots every `interval` seconds in the background, so that peak RSS and CPU can be
    attributed to each step of a run afterwards (by the steps' event timestamps)."""

    def __init__(self, server_pid: int | None, interval: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.server_pid = server_pid
        self.interval = interval
        self.samples: list[Snapshot] = []
        self._stop_event = threading.Event()

    def run(self) -> None:
        while True:
            sample = snapshot(self.server_pid)
            if sample is not None:
                self.samples.append(sample)
            if self._stop_event.wait(self.interval):
                return

    def stop(self) -> None:
        self._stop_event.set()
        self.join()
        sample = snapshot(self.server_pid)
        if sample is not None:
            self.samples.append(sample)

    def window(self, start: float, end: float) -> dict[str, Any] | None:
        """Peak RSS and CPU split between wall-clock times `start` and `end`."""
        if not self.samples:
            return None
        before = max(
            (s for s in self.samples if s.wall <= start),
            default=self.samples[0],
            key=lambda s: s.wall,
        )
        after = min(
            (s for s in self.samples if s.wall >= end),
            default=self.samples[-1],
            key=lambda s: s.wall,
        )
        inside = [s.rss_mb for s in self.samples if before.wall <= s.wall <= after.wall]
        return {"peak_rss_mb": rounded(max(inside), 1), **(cpu_between(before, after) or {})}


def local_server_pid() -> int | None:
    """The pid of the project's local Neo4j (NARA_KG_NEO4J_HOME), when it runs here."""
    with contextlib.suppress(Exception):
        from nara_kg.devserver.process import running_pid
        from nara_kg.settings import neo4j_home

        return running_pid(neo4j_home())
    return None

"""Which part of the graph a graph check verifies on this run, and what it remembers between runs.

A graph check verifies the whole graph unless it verified, and passed on, the graph as it stood
at the selection the current change set (:mod:`nara_kg.ingest.stages.changes`) is relative to,
with the same definition (the digest of the checks' modules and parameters). Then only the
records the change can reach are verified, with the global invariants that stay cheap at any
size (Neo4j's count store; totals kept per file and updated for the changed files). The whole
graph is verified on the full rebuild, on the first run, when no change set is known, when the
check failed last time or its definition changed, and when it runs again on a selection it has
already checked (someone wants the graph checked again: anything may have changed since).

What a check remembers is small (its verdict, the selection it checked, per-file totals or the
ancestor cycles), in one JSON file per check, replaced whole by a rename: a killed run leaves
the previous memory, which the next run does not trust unless it names the change set's base.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.changes import ChangeSet
from nara_kg.ingest.stages.common import read_json, write_json
from nara_kg.model.source_digest import source_digest

WHOLE = "whole graph"
CHANGED = "changed records"
#: The code a remembered verdict follows from: a change to any of these checks whole again.
_SOURCES = ("graph_checks.py", "graph_scope.py", "scoped_checks.py")
#: Longest parent chain walked up from one record (it bounds the walk on damaged input).
MAX_WALK = 10_000

#: Per record type: [chunk rows, rows marked for embedding, records].
TypeFigures = dict[str, list[int]]


@dataclass(frozen=True)
class Remembered:
    """What a check found the last time it ran."""

    config: str
    #: The selection generation it verified (None: no change set was known).
    generation: str | None
    passed: bool
    state: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Scope:
    """How a check runs now: `mode` WHOLE or CHANGED (then `changes` is what to verify)."""

    mode: str
    reason: str
    changes: ChangeSet | None = None
    remembered: Remembered | None = None

    @property
    def scoped(self) -> bool:
        return self.mode == CHANGED


def config_digest(*params: object) -> str:
    """The graph checks' definition: their modules' source and the check's parameters."""
    return source_digest(
        (Path(__file__).parent / name for name in _SOURCES), prefix=repr(params).encode()
    )


def plan_scope(
    remembered: Remembered | None, changes: ChangeSet | None, config: str, *, full: bool
) -> Scope:
    """Whether a check verifies the change set's records only, or the whole graph (and why)."""
    if full:
        return Scope(WHOLE, "full rebuild", changes, remembered)
    if changes is None:
        return Scope(WHOLE, "no change set is known", changes, remembered)
    if remembered is None:
        return Scope(WHOLE, "first run of the check", changes, remembered)
    if remembered.config != config:
        return Scope(WHOLE, "the check's code or settings changed", changes, remembered)
    if not remembered.passed:
        return Scope(WHOLE, "the check failed last time", changes, remembered)
    if remembered.generation == changes.generation:
        return Scope(WHOLE, "run again on a selection it has checked", changes, remembered)
    if changes.base is None or remembered.generation != changes.base:
        return Scope(WHOLE, "it did not check the selection this change is from", changes)
    return Scope(CHANGED, "the graph it passed on, changed by the change set", changes, remembered)


# --------------------------------------------------------------------------- memory
def memory_path(layout: WorkLayout, check: str) -> Path:
    return layout.check_memory.parent / "graph_checks" / f"{check}.json"


def recall(layout: WorkLayout, check: str) -> Remembered | None:
    payload = read_json(memory_path(layout, check))
    if payload is None:
        return None
    try:
        return Remembered(
            config=str(payload["config"]),
            generation=None if payload.get("generation") is None else str(payload["generation"]),
            passed=bool(payload["passed"]),
            state=dict(payload.get("state") or {}),
        )
    except (KeyError, TypeError, ValueError):
        return None


def remember(layout: WorkLayout, check: str, remembered: Remembered) -> None:
    write_json(
        memory_path(layout, check),
        {
            "config": remembered.config,
            "generation": remembered.generation,
            "passed": remembered.passed,
            "state": remembered.state,
        },
    )


# --------------------------------------------------------------------------- per-file totals
def type_figures(
    rows: Iterable[Mapping[str, Any]], type_key: str, embed_key: str, seq_key: str
) -> TypeFigures:
    """Chunk rows, embeddable rows and records (first chunks) per record type."""
    figures: TypeFigures = {}
    for row in rows:
        entry = figures.setdefault(str(row[type_key]), [0, 0, 0])
        entry[0] += 1
        entry[1] += int(bool(row[embed_key]))
        entry[2] += int(row[seq_key] == 0)
    return figures


def update_files(
    previous: Mapping[str, TypeFigures], fresh: Mapping[str, TypeFigures], gone: Iterable[str]
) -> dict[str, TypeFigures]:
    """The per-file figures with the changed files' replaced and the removed files' dropped."""
    files = {f: figures for f, figures in previous.items()}
    for file_id in gone:
        files.pop(file_id, None)
    files.update(fresh)
    return files


def totals_by_type(files: Mapping[str, TypeFigures]) -> dict[str, dict[str, int]]:
    """type -> {chunks, embed, records} over every file."""
    totals: dict[str, dict[str, int]] = {}
    for figures in files.values():
        for node_type, (chunks, embed, records) in figures.items():
            entry = totals.setdefault(node_type, {"chunks": 0, "embed": 0, "records": 0})
            entry["chunks"] += chunks
            entry["embed"] += embed
            entry["records"] += records
    return totals


# --------------------------------------------------------------------------- Includes reach
@dataclass(frozen=True)
class Reach:
    """The records whose Includes a change can affect, and the ancestor cycles among them."""

    records: frozenset[int]
    cycles: tuple[tuple[int, ...], ...]

    def broken_links(self) -> dict[int, int]:
        """child -> parent of each link dropped to break a cycle (its smallest naId's link:
        :func:`nara_kg.model.edges.break_cycles`)."""
        return {c[0]: c[1] for c in self.cycles if len(c) > 1}


def _walk_up(start: int, parent: Callable[[int], int | None]) -> tuple[list[int], int | None]:
    """The records walked up from `start` (parent after parent), and where the walk closed on
    itself (None when it reached a root)."""
    walk: list[int] = []
    seen: set[int] = set()
    node: int | None = start
    while node is not None and node not in seen and len(walk) < MAX_WALK:
        seen.add(node)
        walk.append(node)
        node = parent(node)
    return walk, node if node in seen else None


def _cycle_of(walk: list[int], closed_at: int) -> tuple[int, ...]:
    cycle = walk[walk.index(closed_at) :]
    first = cycle.index(min(cycle))
    return tuple(cycle[first:] + cycle[:first])


def includes_reach(
    changed: Iterable[int],
    old_parents: Iterable[int],
    parent: Callable[[int], int | None],
    children: Callable[[set[int]], set[int]],
) -> Reach:
    """What a change can reach in the Includes hierarchy: the changed (added, edited, removed)
    records and their children (their incoming Includes follow from the change), and the
    records of every ancestor cycle a walk up from them or from a changed record's old parent
    enters or, having been left by a changed record, no longer closes (its smallest member gets
    its link back). `parent(naId)`: the parent in the graph now (None for a root, a self-parent
    or a parent not chosen); `children(naIds)`: the chosen records naming one of them."""
    changed_set = set(changed)
    records = changed_set | children(changed_set)
    cycles: set[tuple[int, ...]] = set()
    for start in sorted(records | set(old_parents)):
        walk, closed_at = _walk_up(start, parent)
        if closed_at is not None:
            cycles.add(_cycle_of(walk, closed_at))
    for old_parent in old_parents:
        walk, _ = _walk_up(old_parent, parent)
        # A walk from an old parent back to a changed record went round a cycle the change
        # broke: every record on it may have its link back.
        hits = [i for i, node in enumerate(walk) if node in changed_set]
        if hits:
            records.update(walk[: hits[0] + 1])
    for cycle in cycles:
        records.update(cycle)
    return Reach(frozenset(records), tuple(sorted(cycles)))


def cycles_now(remembered: Iterable[Iterable[int]], reach: Reach) -> list[list[int]]:
    """The ancestor cycles of the whole selection after a change: those remembered that no
    reached record belongs to (nothing of them changed), and those found from the change."""
    kept = {tuple(c) for c in remembered if not set(c) & reach.records}
    return [list(c) for c in sorted(kept | set(reach.cycles))]

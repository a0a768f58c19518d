"""Making the linker's MENTIONED_IN equal a desired set, by difference (against the last
complete write while the graph still holds it, :mod:`nara_kg.build.sync_state`), compared on
disk (:mod:`nara_kg.build.mention_comparison`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from tempfile import TemporaryDirectory

import pyarrow as pa
from neo4j import Driver

from nara_kg.build import sync_state
from nara_kg.build.mention_comparison import BATCH_ROWS, MentionComparison
from nara_kg.build.projection_changes import ends_of, mark_touched
from nara_kg.graph import mentions as mention_cypher
from nara_kg.graph.mentions import MENTION_COUNT
from nara_kg.ingest.layout import WorkLayout
from nara_kg.model.schema import Rel


@dataclass(frozen=True)
class MentionSync:
    desired: int
    added: int
    updated: int
    removed: int
    #: "snapshot" (the last complete write, which the graph still holds), "graph" (read back)
    #: or "changes" (nothing changed since the last complete write: nothing read).
    existing_from: str = "graph"


#: The linker's concern in :mod:`nara_kg.build.sync_state`; the count is of every MENTIONED_IN
#: (the LLM's too: when entity_extraction changes them, the graph is read back).
MENTIONS_CONCERN = "linker-mentions"
_MENTION_COLUMNS = ("authority", "chunk", "count", "surface")
_SNAPSHOT_SCHEMA = pa.schema(
    [
        ("authority", pa.string()),
        ("chunk", pa.string()),
        ("count", pa.int64()),
        ("surface", pa.string()),
    ]
)


def mention_set(driver: Driver, database: str, layout: WorkLayout) -> sync_state.SyncedSet:
    return sync_state.SyncedSet(
        driver,
        database,
        layout,
        MENTIONS_CONCERN,
        MENTION_COUNT,
        endpoint_columns=_MENTION_COLUMNS[:2],
        rel_types=(Rel.MENTIONED_IN.value,),
    )


def _load_current(
    driver: Driver,
    database: str,
    comparison: MentionComparison,
    synced: sync_state.SyncedSet | None,
) -> str:
    """The graph's MENTIONED_IN into `comparison`: from the last complete write while the graph
    still holds it ("snapshot": its Arrow table, columnar and a few tens of bytes a row, is the
    one whole set this holds), else streamed from the graph ("graph")."""
    table = synced.trusted() if synced is not None else None
    if table is not None:
        for batch in table.to_batches(BATCH_ROWS):
            columns = (batch.column(name).to_pylist() for name in _MENTION_COLUMNS)
            comparison.add_current(zip(*columns, strict=True))
        return "snapshot"
    comparison.add_current(mention_cypher.iter_mentions(driver, database))
    return "graph"


def sync_mentions(
    driver: Driver,
    database: str,
    desired: Mapping[tuple[str, str], tuple[int, str]],
    layout: WorkLayout | None = None,
    *,
    trust_snapshot: bool = True,
    generation: str | None = None,
) -> MentionSync:
    """:func:`sync_compared` of a desired set held in memory (a small one: the LLM's writer
    and tests; the linker's whole set streams into a comparison instead)."""
    with (
        TemporaryDirectory(prefix="mentions-") as scratch,
        MentionComparison(Path(scratch) / "comparison.sqlite") as comparison,
    ):
        for edge, value in desired.items():
            comparison[edge] = value
        return sync_compared(
            driver,
            database,
            comparison,
            layout,
            trust_snapshot=trust_snapshot,
            generation=generation,
        )


def sync_compared(
    driver: Driver,
    database: str,
    comparison: MentionComparison,
    layout: WorkLayout | None = None,
    *,
    trust_snapshot: bool = True,
    generation: str | None = None,
) -> MentionSync:
    """Make the linker's MENTIONED_IN equal the desired set of `comparison` (filled, not yet
    sealed): missing and changed relationships written (properties set), the rest deleted, a
    batch at a time. With `layout`, the current ones come from the last complete write when the
    graph still holds it (not with `trust_snapshot` False), and this write is recorded there for
    the next run (as equal to the change set `generation`)."""
    synced = mention_set(driver, database, layout) if layout is not None else None
    existing_from = _load_current(driver, database, comparison, synced if trust_snapshot else None)
    comparison.seal()
    if synced is not None:
        synced.begin()
    added, updated, removed = write_difference(
        driver, database, layout, comparison.to_write(), comparison.to_remove()
    )
    desired = comparison.count()
    if synced is not None:
        with synced.snapshot_writer(_SNAPSHOT_SCHEMA) as snapshot:
            for desired_rows in comparison.desired():
                for row in desired_rows:
                    snapshot.add(*row)
        synced.commit_snapshot(snapshot, generation)
    return MentionSync(desired, added, updated, removed, existing_from)


#: A relationship to write: (authority, chunk, count, surface, whether the graph lacks it).
WriteRow = tuple[str, str, int, str, bool]


def write_difference(
    driver: Driver,
    database: str,
    layout: WorkLayout | None,
    to_write: Iterable[list[WriteRow]],
    to_remove: Iterable[list[tuple[str, str]]],
) -> tuple[int, int, int]:
    """Write and delete a difference a batch at a time, each batch's ends marked touched first
    (so that a run killed part way still finds them changed); (added, updated, removed)."""
    added = updated = removed = 0
    for rows in to_write:
        mark_touched(layout, ends_of((row[0], row[1]) for row in rows))
        mention_cypher.write_mentions(driver, database, [list(row[:4]) for row in rows])
        new = sum(1 for row in rows if row[4])
        added, updated = added + new, updated + len(rows) - new
    for edges in to_remove:
        mark_touched(layout, ends_of(edges))
        mention_cypher.delete_mentions(driver, database, [list(edge) for edge in edges])
        removed += len(edges)
    return added, updated, removed

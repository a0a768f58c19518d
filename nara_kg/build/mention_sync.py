"""Making the linker's MENTIONED_IN equal a desired set, by difference (against the last
complete write while the graph still holds it, :mod:`nara_kg.build.sync_state`)."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
from neo4j import Driver

from nara_kg.build import sync_state
from nara_kg.build.projection_changes import ends_of, mark_touched
from nara_kg.graph import mentions as mention_cypher
from nara_kg.graph.mentions import MENTION_COUNT, DesiredMentions
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


def _current(
    driver: Driver, database: str, synced: sync_state.SyncedSet | None
) -> tuple[DesiredMentions, str]:
    table = synced.trusted() if synced is not None else None
    if table is not None:
        a, b, count, surface = (table[c].to_pylist() for c in _MENTION_COLUMNS)
        mentions = {(x, y): (n, s) for x, y, n, s in zip(a, b, count, surface, strict=True)}
        return mentions, "snapshot"
    return mention_cypher.existing_mentions(driver, database), "graph"


def sync_mentions(
    driver: Driver,
    database: str,
    desired: DesiredMentions,
    layout: WorkLayout | None = None,
    *,
    trust_snapshot: bool = True,
    generation: str | None = None,
) -> MentionSync:
    """Add missing and changed relationships (properties set), delete the rest. With `layout`,
    the current ones come from the last complete write when the graph still holds it (not with
    `trust_snapshot` False), and this write is recorded there for the next run (as equal to
    the change set `generation`)."""
    synced = mention_set(driver, database, layout) if layout is not None else None
    current, existing_from = _current(driver, database, synced if trust_snapshot else None)
    if synced is not None:
        synced.begin()
    to_write = sorted(edge for edge, value in desired.items() if current.get(edge) != value)
    to_remove = sorted(set(current) - set(desired))
    mark_touched(layout, ends_of([*to_write, *to_remove]))
    mention_cypher.write_mentions(driver, database, [[a, b, *desired[(a, b)]] for a, b in to_write])
    mention_cypher.delete_mentions(driver, database, [list(edge) for edge in to_remove])
    added = sum(1 for edge in to_write if edge not in current)
    if synced is not None:
        ordered = sorted(desired)
        synced.commit(
            pa.table(
                {
                    "authority": pa.array([a for a, _ in ordered], type=pa.string()),
                    "chunk": pa.array([b for _, b in ordered], type=pa.string()),
                    "count": pa.array([desired[e][0] for e in ordered], type=pa.int64()),
                    "surface": pa.array([desired[e][1] for e in ordered], type=pa.string()),
                }
            ),
            generation,
        )
    return MentionSync(len(desired), added, len(to_write) - added, len(to_remove), existing_from)

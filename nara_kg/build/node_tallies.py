"""graph_nodes' counts of the chunk nodes (per record type: chunks, records, stubs), kept by
difference.

Counting them is a read of every chunk node, whatever the change: at 10^6 records about 3
million nodes, read in a run that changed 200 records. A run that applied a change set knows
the nodes it replaced and the rows it wrote in their place, so it takes the counts of the
last write (kept in the writer's sync state, :mod:`nara_kg.build.sync_state`) and adds the
difference. The result is checked against what
the count store answers without reading a node (the chunks per type label); a mismatch, or no
counts to start from, falls back to the read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from nara_kg.graph.nodes import NODE_COUNT_MEASURES


@dataclass(frozen=True)
class CountedChunk:
    """What the counts see of one chunk node."""

    node_type: str
    seq: int
    is_stub: bool


def tally(chunks: Iterable[CountedChunk]) -> Counter[str]:
    """``"<type>.<measure>"`` -> count over `chunks`."""
    counts: Counter[str] = Counter()
    for chunk in chunks:
        counts[f"{chunk.node_type}.chunks"] += 1
        counts[f"{chunk.node_type}.records"] += chunk.seq == 0
        counts[f"{chunk.node_type}.stubs"] += chunk.is_stub
    return counts


def shaped(counts: Mapping[str, int]) -> dict[str, int]:
    """The counts as the read of every node gives them: every measure of each type that has a
    chunk, none of a type that has none."""
    return {
        f"{t}.{m}": int(counts.get(f"{t}.{m}", 0))
        for t in sorted(chunks_per_type(counts))
        for m in NODE_COUNT_MEASURES
    }


def apply_difference(
    before: Mapping[str, int],
    replaced: Iterable[CountedChunk],
    written: Iterable[CountedChunk],
) -> dict[str, int] | None:
    """The counts after the nodes `replaced` gave way to `written`; None when a count would go
    below zero (the counts started from were not the graph's)."""
    counts = Counter(dict(before))
    counts.update(tally(written))
    counts.subtract(tally(replaced))
    if any(value < 0 for value in counts.values()):
        return None
    return shaped(counts)


def chunks_per_type(counts: Mapping[str, int]) -> dict[str, int]:
    """``type`` -> chunk nodes, from the counts."""
    return {
        key.rsplit(".", 1)[0]: int(value)
        for key, value in counts.items()
        if key.endswith(".chunks") and value
    }


def agrees_with_labels(counts: Mapping[str, int], label_counts: Mapping[str, int]) -> bool:
    """Whether the counts' chunks per type equal the count store's nodes per type label."""
    return chunks_per_type(counts) == {t: n for t, n in label_counts.items() if n}

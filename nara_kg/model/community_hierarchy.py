"""Hierarchical communities from Leiden's intermediate levels (pure functions).

GDS returns, per node, ``intermediateCommunityIds``: index 0 is the finest level (the first
local-moving phase), the last index the coarsest. We keep that convention: **level 0 = finest**.
Each community's parent is the next level's community most of its members are in, so the
communities form a tree, and the records under a community are those of its sub-communities
plus those whose finest community it is. That tree is what the graph holds (members
`-[:IN_COMMUNITY]->` their finest community, each community `-[:IN_COMMUNITY]->` its parent)
and what a community's `size` counts. GDS's levels usually nest, but not always, so Leiden's own
count at a level can differ from it.

Singletons are not communities here: a record alone in its community at some level (an isolated
node, or one Leiden could not merge) gets no Community node at that level, because a "report"
on one record says nothing its own node does not. Disconnected components never share a
community (Leiden only merges along edges), so each component is summarized on its own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

#: The level id of a node that has no community at a level (a ragged assignment's padding).
NO_COMMUNITY = -1


def community_key(level: int, community_id: int) -> str:
    return f"{level}-{community_id}"


@dataclass(frozen=True, slots=True)
class Community:
    id: str
    level: int
    #: The records under it in the graph (whose finest community it is or is above).
    size: int
    #: Leiden's members at its level (naIds, sorted): what its members' hash follows.
    members: tuple[int, ...]
    parent: str | None
    children: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Hierarchy:
    communities: dict[str, Community]
    levels: int
    #: naId -> id of its finest (lowest level) community, for members that have one.
    finest: dict[int, str]

    def at_level(self, level: int) -> list[Community]:
        return sorted(
            (c for c in self.communities.values() if c.level == level), key=lambda c: c.id
        )


@dataclass(frozen=True)
class Assignments:
    """Leiden's levels of every node, as two arrays rather than a Python object per node (at
    10^6 nodes, 4 levels, the lists cost about 600 MB, these 40 MB): `na_ids` (n) and `levels`
    (n x levels, finest first; NO_COMMUNITY where a node has none at a level)."""

    na_ids: npt.NDArray[np.int64]
    levels: npt.NDArray[np.int64]

    @classmethod
    def of(cls, pairs: Iterable[tuple[int, Sequence[int]]]) -> Assignments:
        """From (naId, intermediateCommunityIds) pairs, as GDS streams them."""
        listed = [(na_id, list(ids)) for na_id, ids in pairs]
        width = max((len(ids) for _, ids in listed), default=0)
        levels = np.full((len(listed), width), NO_COMMUNITY, dtype=np.int64)
        for row, (_, ids) in enumerate(listed):
            levels[row, : len(ids)] = ids
        na_ids = np.fromiter((na_id for na_id, _ in listed), dtype=np.int64, count=len(listed))
        return cls(na_ids, levels)


def _as_assignments(
    assignments: Assignments | Iterable[tuple[int, Sequence[int]]],
) -> Assignments:
    return assignments if isinstance(assignments, Assignments) else Assignments.of(assignments)


def canonical_assignments(
    assignments: Assignments | Iterable[tuple[int, Sequence[int]]],
) -> Assignments:
    """`assignments` with each level's community ids replaced by the smallest naId among the
    community's members. GDS numbers communities by its internal node order (or, seeded, by
    the seed values), so the same partition can come back under other numbers; named by a
    member, a community has the same id whichever run found it, and one whose members did not
    change keeps its id (and its report)."""
    given = _as_assignments(assignments)
    levels = np.full_like(given.levels, NO_COMMUNITY)
    for level in range(given.levels.shape[1]):
        column = given.levels[:, level]
        present = column != NO_COMMUNITY
        ids, of_node = np.unique(column[present], return_inverse=True)
        smallest = np.full(len(ids), np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(smallest, of_node, given.na_ids[present])
        levels[present, level] = smallest[of_node]
    return Assignments(given.na_ids, levels)


def build_hierarchy(
    assignments: Assignments | Iterable[tuple[int, Sequence[int]]], *, min_size: int = 2
) -> Hierarchy:
    """`assignments`: each node's community id at each level, as GDS streams them. A
    community's parent is the next level's community most of its members are in (usually all
    of them, but GDS's levels do not always nest; a tie goes to the smaller id)."""
    given = _as_assignments(assignments)
    na_ids, levels = given.na_ids, given.levels
    width = levels.shape[1]
    # kept[:, l]: whether the node's community at level l has at least `min_size` members.
    kept = np.zeros(levels.shape, dtype=bool)
    communities: dict[str, Community] = {}
    for level in range(width):
        column = levels[:, level]
        present = np.flatnonzero(column != NO_COMMUNITY)
        order = present[np.lexsort((na_ids[present], column[present]))]
        ids, starts, sizes = np.unique(column[order], return_index=True, return_counts=True)
        for cid, start, size in zip(ids.tolist(), starts.tolist(), sizes.tolist(), strict=True):
            if size < min_size:
                continue
            rows = order[start : start + size]
            kept[rows, level] = True
            key = community_key(level, cid)
            communities[key] = Community(
                key, level, size, tuple(na_ids[rows].tolist()), _parent(levels, rows, level), ()
            )
    children: dict[str, list[str]] = {}
    for key, community in list(communities.items()):
        parent = community.parent
        if parent is not None and (parent not in communities or parent == key):
            communities[key] = dataclasses.replace(community, parent=None)
        elif parent is not None:
            children.setdefault(parent, []).append(key)
    for parent, keys in children.items():
        communities[parent] = dataclasses.replace(communities[parent], children=tuple(sorted(keys)))
    finest = _finest(na_ids, levels, kept)
    return Hierarchy(_with_tree_sizes(communities, finest), width, finest)


def _with_tree_sizes(
    communities: dict[str, Community], finest: dict[int, str]
) -> dict[str, Community]:
    """Each community with `size` the records under it in the graph: those whose finest
    community it is and those under its sub-communities (what its report covers). GDS's levels
    do not always nest (a record's community one level up can differ from its finest
    community's parent, chosen by majority), so Leiden's count at the level can differ: by up
    to 625 records a community at 10^5."""
    sizes = dict.fromkeys(communities, 0)
    for key in finest.values():
        sizes[key] += 1
    for community in sorted(communities.values(), key=lambda c: c.level):
        if community.parent is not None:
            sizes[community.parent] += sizes[community.id]
    return {
        key: community
        if community.size == sizes[key]
        else dataclasses.replace(community, size=sizes[key])
        for key, community in communities.items()
    }


def _parent(levels: npt.NDArray[np.int64], rows: npt.NDArray[np.intp], level: int) -> str | None:
    """The next level's key most of `rows` are in (None at the top, or with no next level)."""
    if level + 1 >= levels.shape[1]:
        return None
    above = levels[rows, level + 1]
    above = above[above != NO_COMMUNITY]
    if len(above) == 0:
        return None
    ids, counts = np.unique(above, return_counts=True)
    return community_key(level + 1, int(ids[int(np.argmax(counts))]))


def _finest(
    na_ids: npt.NDArray[np.int64], levels: npt.NDArray[np.int64], kept: npt.NDArray[np.bool_]
) -> dict[int, str]:
    """naId -> key of the lowest level at which the node is in a kept community; one string
    per community, shared by its members."""
    has = kept.any(axis=1) if kept.shape[1] else np.zeros(len(na_ids), dtype=bool)
    rows = np.flatnonzero(has)
    at = kept[rows].argmax(axis=1)
    cids = levels[rows, at]
    keys: dict[tuple[int, int], str] = {}
    finest: dict[int, str] = {}
    for na_id, level, cid in zip(na_ids[rows].tolist(), at.tolist(), cids.tolist(), strict=True):
        key = keys.get((level, cid))
        if key is None:
            key = keys[(level, cid)] = community_key(level, cid)
        finest[na_id] = key
    return finest

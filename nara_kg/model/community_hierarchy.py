"""Hierarchical communities from Leiden's intermediate levels (pure functions).

GDS returns, per node, ``intermediateCommunityIds``: index 0 is the finest level (the first
local-moving phase), the last index the coarsest. We keep that convention: **level 0 = finest**.
A community at level l+1 is a union of communities at level l, so its children are the level-l
communities of its members.

Singletons are not communities here: a record alone in its community at some level (an isolated
node, or one Leiden could not merge) gets no Community node at that level, because a "report"
on one record says nothing its own node does not. Disconnected components never share a
community (Leiden only merges along edges), so each component is summarized on its own.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


def community_key(level: int, community_id: int) -> str:
    return f"{level}-{community_id}"


@dataclass(frozen=True, slots=True)
class Community:
    id: str
    level: int
    size: int
    members: tuple[int, ...]  # naIds, sorted
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


def canonical_assignments(
    assignments: Iterable[tuple[int, Sequence[int]]],
) -> list[tuple[int, list[int]]]:
    """`assignments` with each level's community ids replaced by the smallest naId among the
    community's members. GDS numbers communities by its internal node order (or, seeded, by
    the seed values), so the same partition can come back under other numbers; named by a
    member, a community has the same id whichever run found it, and one whose members did not
    change keeps its id (and its report)."""
    listed = [(na_id, list(ids)) for na_id, ids in assignments]
    smallest: dict[tuple[int, int], int] = {}
    for na_id, ids in listed:
        for level, cid in enumerate(ids):
            key = (level, int(cid))
            if key not in smallest or na_id < smallest[key]:
                smallest[key] = na_id
    return [
        (na_id, [smallest[(level, int(cid))] for level, cid in enumerate(ids)])
        for na_id, ids in listed
    ]


def build_hierarchy(
    assignments: Iterable[tuple[int, Sequence[int]]], *, min_size: int = 2
) -> Hierarchy:
    """`assignments`: (naId, intermediateCommunityIds) per node, as GDS streams them."""
    members: dict[str, list[int]] = defaultdict(list)
    path_of: dict[int, list[str]] = {}
    levels = 0
    for na_id, ids in assignments:
        keys = [community_key(level, int(cid)) for level, cid in enumerate(ids)]
        path_of[na_id] = keys
        levels = max(levels, len(keys))
        for key in keys:
            members[key].append(na_id)
    kept = {key for key, ms in members.items() if len(ms) >= min_size}

    parents: dict[str, str | None] = {}
    children: dict[str, set[str]] = defaultdict(set)
    for key in kept:
        level = int(key.split("-", 1)[0])
        # Majority vote over members: Leiden nests levels, the vote just makes it explicit.
        votes = Counter(path_of[m][level + 1] for m in members[key] if len(path_of[m]) > level + 1)
        parent = votes.most_common(1)[0][0] if votes else None
        parent = parent if parent in kept and parent != key else None
        parents[key] = parent
        if parent is not None:
            children[parent].add(key)

    communities = {
        key: Community(
            id=key,
            level=int(key.split("-", 1)[0]),
            size=len(members[key]),
            members=tuple(sorted(members[key])),
            parent=parents[key],
            children=tuple(sorted(children.get(key, ()))),
        )
        for key in kept
    }
    finest = {
        na_id: next(k for k in keys if k in kept)
        for na_id, keys in path_of.items()
        if any(k in kept for k in keys)
    }
    return Hierarchy(communities, levels, finest)

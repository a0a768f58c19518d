"""The order a community_reports run makes its reports in: groups of whole community trees,
and within a group, batches of one level, finest first.

A community's context needs its members, the relationships between them and its
sub-communities' reports, so every level of the hierarchy reads the same records again. The run
keeps what it derived from them (member rows, relationships, row digests, token counts) while a
coarser community may still need it, and no longer: the community tree the graph holds nests
(:mod:`nara_kg.model.community_hierarchy`; GDS's own levels need not), so no community reads
a record outside its own tree (the communities under one top-level community). Run tree group
by tree group, what the run holds is bounded by the largest group, not by the graph: at 10^6
records the largest of 49 trees held 45,369 of 939,158 records.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

#: Records a tree group holds (unless one tree alone holds more).
TREE_GROUP_MEMBERS = 20_000
#: A batch's communities and records: read in one query each.
BATCH_COMMUNITIES = 200
BATCH_MEMBERS = 20_000


def parent_ids(communities: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Each sub-community's id -> its parent's id, from the parents' `children`."""
    return {
        str(child): str(community["id"])
        for community in communities
        for child in community["children"] or ()
    }


def tree_groups(
    communities: Sequence[dict[str, Any]], *, max_members: int = TREE_GROUP_MEMBERS
) -> Iterator[list[dict[str, Any]]]:
    """The communities (finest level first, each with `id`, `level`, `size` and `children`)
    split into groups of whole trees: a community and everything under it among `communities`
    are in the same group, in their order here. A tree's size is its topmost community's; trees
    join a group in the order their topmost communities come, while the group's records stay
    within `max_members`."""
    parent_of = parent_ids(communities)

    def root_of(community_id: str) -> str:
        while community_id in parent_of:
            community_id = parent_of[community_id]
        return community_id

    roots = {str(c["id"]): root_of(str(c["id"])) for c in communities}
    sizes = {str(c["id"]): int(c["size"] or 0) for c in communities}
    # Topmost communities in the order the plan gives them (a group keeps that order).
    order: dict[str, int] = {}
    for community in communities:
        if str(community["id"]) == roots[str(community["id"])]:
            order[str(community["id"])] = len(order)
    group_of: dict[str, int] = {}
    group, members = 0, 0
    for root in order:
        if members and members + sizes[root] > max_members:
            group, members = group + 1, 0
        group_of[root] = group
        members += sizes[root]
    grouped: list[list[dict[str, Any]]] = [[] for _ in range(group + 1)] if order else []
    for community in communities:
        grouped[group_of[roots[str(community["id"])]]].append(community)
    yield from grouped


def same_level_batches(
    communities: Sequence[dict[str, Any]],
    *,
    max_communities: int = BATCH_COMMUNITIES,
    max_members: int = BATCH_MEMBERS,
) -> Iterator[list[dict[str, Any]]]:
    """Consecutive communities of one level, few enough (and with few enough members between
    them) to read their contexts in one query; levels never mix, so a batch's sub-communities
    are all done before it."""
    batch: list[dict[str, Any]] = []
    members = 0
    for community in communities:
        size = int(community["size"] or 0)
        if batch and (
            community["level"] != batch[-1]["level"]
            or len(batch) >= max_communities
            or members + size > max_members
        ):
            yield batch
            batch, members = [], 0
        batch.append(community)
        members += size
    if batch:
        yield batch

"""The Community nodes and IN_COMMUNITY relationships written from Leiden's hierarchy, by
difference: which memberships are read back and compared, and the hashes that say a community's
memberships are written."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from typing import Any, Final

from neo4j import Driver

from nara_kg.graph.batches import read_all, write_batches, write_one
from nara_kg.graph.communities import COMMUNITY_SCHEMA, hierarchy_code_digest
from nara_kg.model.community_hierarchy import Hierarchy
from nara_kg.model.schema import CommunityProp, Label, Prop, Rel

UPSERT_COMMUNITIES = f"""
UNWIND $rows AS row
MERGE (c:{Label.COMMUNITY} {{{CommunityProp.ID}: row.id}})
SET c.{CommunityProp.LEVEL} = row.level, c.{CommunityProp.SIZE} = row.size
"""

#: Written after the memberships, so that a hash on a node says its members are written: a run
#: stopped half-way leaves the old hashes, and the next one compares memberships again.
SET_MEMBER_HASHES = f"""
UNWIND $rows AS row
MATCH (c:{Label.COMMUNITY} {{{CommunityProp.ID}: row.id}})
SET c.{CommunityProp.MEMBER_HASH} = row.memberHash
"""

#: Taken off the communities whose members are about to change, before any membership is: a
#: run stopped half-way leaves them without one, so the next run compares them whatever its own
#: hashes are (one of them may be the hash taken off).
CLEAR_MEMBER_HASHES = f"""
UNWIND $rows AS id
MATCH (c:{Label.COMMUNITY} {{{CommunityProp.ID}: id}})
REMOVE c.{CommunityProp.MEMBER_HASH}
"""

DELETE_STALE_COMMUNITIES = f"""
MATCH (c:{Label.COMMUNITY}) WHERE NOT c.{CommunityProp.ID} IN $ids
DETACH DELETE c
"""

#: The parent links between communities, as (member, community) rows of REMOVE_MEMBERSHIP.
EXISTING_PARENT_LINKS = f"""
MATCH (m:{Label.COMMUNITY})-[:{Rel.IN_COMMUNITY}]->(c:{Label.COMMUNITY})
RETURN 'community:' + m.{CommunityProp.ID} AS member, c.{CommunityProp.ID} AS community
"""

#: The memberships of the chunks of the records with naIds in ($after, $upto], by a range seek
#: on the naId index.
MEMBERSHIPS_OF_RANGE = f"""
MATCH (m:{Label.CHUNK})-[:{Rel.IN_COMMUNITY}]->(c:{Label.COMMUNITY})
WHERE m.{Prop.NA_ID} > $after AND m.{Prop.NA_ID} <= $upto
RETURN m.{Prop.CHUNK_ID} AS member, c.{CommunityProp.ID} AS community
"""

#: The memberships held by the communities with the given ids.
MEMBERSHIPS_OF_COMMUNITIES = f"""
UNWIND $ids AS id
MATCH (m:{Label.CHUNK})-[:{Rel.IN_COMMUNITY}]->(c:{Label.COMMUNITY} {{{CommunityProp.ID}: id}})
RETURN m.{Prop.CHUNK_ID} AS member, c.{CommunityProp.ID} AS community
"""

#: Past this share of the members in communities whose members changed, the comparison goes
#: through every naId range instead of asking for those communities by id.
CHANGED_MEMBERS_SHARE = 0.5

#: Members compared at a time: the desired and current memberships of one range are held, never
#: all of them (at 10^6 records, two sets of a million pairs of strings).
MEMBERS_PER_RANGE = 50_000

#: Bounds below and above every naId, for the first and the last range.
_BELOW_ALL_NA_IDS: Final = -1
_ABOVE_ALL_NA_IDS: Final = 2**63 - 1


ADD_MEMBERS = f"""
UNWIND $rows AS row
MATCH (m:{Label.CHUNK} {{{Prop.CHUNK_ID}: row[0]}})
MATCH (c:{Label.COMMUNITY} {{{CommunityProp.ID}: row[1]}})
MERGE (m)-[:{Rel.IN_COMMUNITY}]->(c)
"""

ADD_PARENTS = f"""
UNWIND $rows AS row
MATCH (child:{Label.COMMUNITY} {{{CommunityProp.ID}: row[0]}})
MATCH (parent:{Label.COMMUNITY} {{{CommunityProp.ID}: row[1]}})
MERGE (child)-[:{Rel.IN_COMMUNITY}]->(parent)
"""

REMOVE_MEMBERSHIP = f"""
UNWIND $rows AS row
MATCH (m)-[r:{Rel.IN_COMMUNITY}]->(c:{Label.COMMUNITY} {{{CommunityProp.ID}: row[1]}})
WHERE coalesce(m.{Prop.CHUNK_ID}, 'community:' + m.{CommunityProp.ID}) = row[0]
DELETE r
"""


def member_hashes(hierarchy: Hierarchy) -> dict[str, str]:
    """Each community's hash as its node keeps it: of its Leiden members, of the records under
    it (its size) and of the code that made them (:func:`hierarchy_code_digest`). A community
    whose node would be written otherwise gets another hash, so that the write does not take
    the graph for written already when only, say, its size changed."""
    code = hierarchy_code_digest()
    return {
        c.id: hashlib.sha256(
            f"{code}|{c.size}|{','.join(map(str, c.members))}".encode()
        ).hexdigest()[:16]
        for c in hierarchy.communities.values()
    }


def hierarchy_is_written(
    state: dict[str, Any], hierarchy: Hierarchy, member_hashes: dict[str, str]
) -> bool:
    """Whether the graph holds `hierarchy` already, judged from its state
    (:func:`nara_kg.graph.communities.community_state`): every community with its members'
    hash (written only once its memberships were) and no other, and as many memberships and
    parent links as the hierarchy has."""
    return (
        dict(map(tuple, state["communities"])) == member_hashes
        and state["members"] == len(hierarchy.finest)
        and state["parentLinks"] == sum(1 for c in hierarchy.communities.values() if c.parent)
    )


def write_hierarchy(
    driver: Driver,
    database: str,
    hierarchy: Hierarchy,
    member_hashes: dict[str, str],
    state: dict[str, Any],
    *,
    hashes_trusted: bool = False,
) -> dict[str, int]:
    """Make Community nodes and IN_COMMUNITY relationships equal `hierarchy`, by difference,
    from the graph's state as the caller read it (`state`,
    :func:`nara_kg.graph.communities.community_state`).
    When the graph's communities carry the hierarchy's member hashes and its numbers of
    memberships (Leiden ran again on changed weights and found the same communities), the
    memberships are not read back. With `hashes_trusted` (the graph is as the last successful
    run left it: each hash on a community is that of its members), only the communities whose
    hash changes are compared, by id, MEMBERS_PER_RANGE members at a time: a member that moves
    leaves one and joins another, and both change. Otherwise, or when those communities hold
    most members, every membership is compared, MEMBERS_PER_RANGE members at a time in naId
    ranges. `memberships_read` counts the memberships read back from the graph."""
    desired_parents = {
        (f"community:{c.id}", c.parent) for c in hierarchy.communities.values() if c.parent
    }
    outcome = {
        "memberships": len(hierarchy.finest),
        "parent_links": len(desired_parents),
        "added": 0,
        "removed": 0,
        "memberships_read": 0,
    }
    if hierarchy_is_written(state, hierarchy, member_hashes):
        return outcome
    for statement in COMMUNITY_SCHEMA:
        write_one(driver, database, statement)
    graph_hashes: dict[str, str | None] = {str(cid): digest for cid, digest in state["communities"]}
    changing = sorted(
        cid for cid, digest in member_hashes.items() if graph_hashes.get(cid) != digest
    )
    write_batches(driver, database, CLEAR_MEMBER_HASHES, [c for c in changing if c in graph_hashes])
    rows = [{"id": c.id, "level": c.level, "size": c.size} for c in hierarchy.communities.values()]
    write_batches(driver, database, UPSERT_COMMUNITIES, rows)
    write_one(driver, database, DELETE_STALE_COMMUNITIES, ids=list(hierarchy.communities))
    current_parents = {
        (r["member"], r["community"]) for r in read_all(driver, database, EXISTING_PARENT_LINKS)
    }
    added, removed = _write_difference(driver, database, desired_parents, current_parents)
    in_changing = set(changing)
    changing_members = sum(1 for cid in hierarchy.finest.values() if cid in in_changing)
    scoped = hashes_trusted and changing_members <= CHANGED_MEMBERS_SHARE * len(hierarchy.finest)
    batches: Iterator[tuple[str, dict[str, Any], set[tuple[str, str]]]] = (
        (
            (MEMBERSHIPS_OF_COMMUNITIES, {"ids": ids}, desired)
            for ids, desired in community_batches(hierarchy.finest, changing, MEMBERS_PER_RANGE)
        )
        if scoped
        else (
            (MEMBERSHIPS_OF_RANGE, {"after": after, "upto": upto}, desired)
            for after, upto, desired in member_ranges(hierarchy.finest, MEMBERS_PER_RANGE)
        )
    )
    read = 0
    for query, params, desired in batches:
        current = {
            (r["member"], r["community"]) for r in read_all(driver, database, query, **params)
        }
        read += len(current)
        more, fewer = _write_difference(driver, database, desired, current)
        added, removed = added + more, removed + fewer
    write_batches(
        driver,
        database,
        SET_MEMBER_HASHES,
        [{"id": cid, "memberHash": member_hashes[cid]} for cid in changing],
    )
    return {**outcome, "added": added, "removed": removed, "memberships_read": read}


def member_ranges(
    finest: dict[int, str], size: int
) -> Iterator[tuple[int, int, set[tuple[str, str]]]]:
    """(after, upto, memberships) for `size` members at a time in naId order, the first range
    open below and the last above, so that together they cover every naId: a chunk that is no
    member any more loses its membership."""
    ordered = sorted(finest)
    if not ordered:
        yield _BELOW_ALL_NA_IDS, _ABOVE_ALL_NA_IDS, set()
        return
    after = _BELOW_ALL_NA_IDS
    for start in range(0, len(ordered), size):
        chunk = ordered[start : start + size]
        last = start + size >= len(ordered)
        upto = _ABOVE_ALL_NA_IDS if last else chunk[-1]
        yield after, upto, {(f"{na_id}-0", finest[na_id]) for na_id in chunk}
        after = upto


def community_batches(
    finest: dict[int, str], changing: Sequence[str], size: int
) -> Iterator[tuple[list[str], set[tuple[str, str]]]]:
    """(community ids, memberships) for the communities `changing`, in their order, about `size`
    members at a time (a larger community alone): each id's desired members, from `finest`
    (naId -> finest community), and none for a community that holds no record directly, whose
    memberships in the graph are read all the same."""
    members: dict[str, list[int]] = {cid: [] for cid in changing}
    for na_id, cid in finest.items():
        if cid in members:
            members[cid].append(na_id)
    ids: list[str] = []
    desired: set[tuple[str, str]] = set()
    for cid in changing:
        links = {(f"{na_id}-0", cid) for na_id in members.pop(cid)}
        if ids and len(desired) + len(links) > size:
            yield ids, desired
            ids, desired = [], set()
        ids.append(cid)
        desired |= links
    if ids:
        yield ids, desired


def _write_difference(
    driver: Driver, database: str, desired: set[tuple[str, str]], current: set[tuple[str, str]]
) -> tuple[int, int]:
    """Add the desired (member, community) links the graph lacks and remove those it has but
    should not; members are chunkIds, or 'community:' + id for a parent link."""
    to_remove = sorted(current - desired)
    write_batches(driver, database, REMOVE_MEMBERSHIP, [list(e) for e in to_remove])
    to_add = sorted(desired - current)
    write_batches(
        driver, database, ADD_MEMBERS, [list(e) for e in to_add if not _is_parent_link(e)]
    )
    write_batches(
        driver,
        database,
        ADD_PARENTS,
        [[m.removeprefix("community:"), c] for m, c in to_add if _is_parent_link((m, c))],
    )
    return len(to_add), len(to_remove)


def _is_parent_link(link: tuple[str, str]) -> bool:
    return link[0].startswith("community:")

"""graph_communities: hierarchical Leiden over first chunks, written by difference."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from neo4j import Driver

from nara_kg.build.projection_changes import ProjectionChanges
from nara_kg.generation.report_scope import ReportScope
from nara_kg.graph.communities import DigestSums, Projection, ProjectionDigests
from nara_kg.ingest.stages.common import read_json, write_json


@dataclass
class CommunityResult:
    nodes: int
    relationships: int
    levels: int
    modularities: list[float]
    communities_per_level: dict[int, int]
    size_distribution: dict[str, int]
    members_with_community: int
    #: Memberships added, removed and read back from the graph to compare (none when Leiden
    #: was skipped).
    write: dict[str, int] = field(
        default_factory=lambda: {"added": 0, "removed": 0, "memberships_read": 0}
    )
    #: False when the projection and the graph's communities were as the last run left them,
    #: so that Leiden (deterministic) could only have found the same communities again.
    leiden_ran: bool = True
    #: Whether Leiden started from the last run's communities.
    seeded: bool = False
    #: Digests of the projection's rows and of its records' rows (ProjectionDigests).
    projection_digest: str = ""
    content_digest: str = ""
    #: Communities added, removed or with other members than the graph held before.
    communities_changed: int = 0
    #: Records whose data the step read or wrote one by one (Leiden's assignments read back).
    records_touched: int = 0
    #: Records whose row or edges differ from the last stream's (queued for the reports).
    report_records_changed: int = 0
    #: Projected records read from the graph to digest the projection.
    records_streamed: int = 0
    #: Why every projected record was read rather than those the writers touched (None: only
    #: those were).
    whole_stream_because: str | None = None


def _size_bucket(size: int) -> str:
    for limit in (2, 5, 10, 50, 100, 500, 1000):
        if size <= limit:
            return f"<= {limit}"
    return "> 1000"


def changed_communities(before: Mapping[str, str | None], after: Mapping[str, str]) -> int:
    """How many communities (id -> members' hash) were added, removed or got other members."""
    return sum(1 for cid in before.keys() | after.keys() if before.get(cid) != after.get(cid))


def can_skip_leiden(
    known: Mapping[str, Any] | None, projection_digest: str, graph_digest: str
) -> bool:
    """Whether the last successful run (`known`, its state file) read this projection and left
    the graph's communities as they are now: Leiden would find the same communities again."""
    return (
        known is not None
        and known.get("input") == projection_digest
        and known.get("graph") == graph_digest
    )


#: Past this share of the stored records touched, one stream of the whole projection costs less
#: than asking for the touched ones by key.
WHOLE_STREAM_SHARE = 0.5


def whole_stream_because(
    *,
    force: bool,
    stored: DigestSums | None,
    stored_log: str | None,
    log: str | None,
    every_record: bool,
    written_elsewhere: bool,
    touched: int,
) -> str | None:
    """Why graph_communities reads the whole projection rather than the records the writers
    touched (:mod:`nara_kg.build.projection_changes`), or None when those suffice: the stored
    digests (`stored`, with the id of the change log they were last brought up to date from,
    `stored_log`) describe the graph as the last run read it, and the log (`log`) holds every
    change since. A graph emptied or edited behind the writers' backs is caught by the writers
    themselves (:mod:`nara_kg.build.sync_state`): they compare it whole and note what they
    write again; one another work folder wrote is not this log's to describe."""
    if force:
        return "full rebuild"
    if log is None:
        return "no change log"
    if stored is None:
        return "no stored digests (first run)"
    if stored_log != log:
        return "the change log is not the one the digests were last updated from"
    if every_record:
        return "a writer noted every record (first-load import, LLM mentions)"
    if written_elsewhere:
        return "another work folder wrote the graph"
    if touched > WHOLE_STREAM_SHARE * stored.records:
        return f"{touched} of {stored.records} records touched"
    return None


def detect_communities(
    driver: Driver,
    database: str,
    open_gds: Callable[[], Any],
    *,
    state_path: Path | None = None,
    force: bool = False,
    seed: bool = False,
    report_scope_path: Path | None = None,
    changes_path: Path | None = None,
    written_elsewhere: bool = False,
) -> CommunityResult:
    """Hierarchical Leiden over first chunks; Community nodes and IN_COMMUNITY by difference.

    The projection's digests are sums of its records' (:class:`DigestSums`), kept with each
    record's in the report scope (`report_scope_path`): with the change log the graph writers
    fill (`changes_path`, :mod:`nara_kg.build.projection_changes`), only the records they
    touched are read from Neo4j and the sums updated from them; the first run, the full
    rebuild, state that does not match (:func:`whole_stream_because`) read every record, as one
    stream (nothing of it held here). The log is drained only once the digests are committed.
    With `state_path`, the digests and the result are remembered there: a run whose projection and
    communities are as the last run left them reports the remembered result without running
    Leiden. With `seed`, one whose projection changed starts Leiden from the last run's
    communities (seeded), so that regions the change did not reach keep their members and ids
    (see `resources.PipelinePaths.leiden_seeded` for why it is not the default). `force` (the
    full rebuild) neither skips nor seeds: it clusters the graph as if for the first time.
    When Leiden runs whatever the digests say (`force`, or no remembered run), its projection is
    made on a thread of its own while they stream.
    Leiden itself needs the whole projection: modularity is a property of the whole graph.
    `open_gds` makes the `graphdatascience` client, only when Leiden runs: a skipped run (most
    nightly runs) does not pay for its import and its server handshake."""
    from nara_kg.graph import communities as community_cypher
    from nara_kg.graph.community_memberships import member_hashes, write_hierarchy
    from nara_kg.model.community_hierarchy import build_hierarchy, canonical_assignments

    known = read_json(state_path) if state_path is not None else None
    before = community_cypher.community_state(driver, database)
    graph_digest = community_cypher.digest_of_state(before)
    previous_hashes = {str(cid): digest for cid, digest in before["communities"]}
    seeded = seed and not force and bool(previous_hashes)
    # Two traversals of the same rows, the stream's about half Python's decoding: side by side
    # they share the two cores.
    ahead = _ProjectionAhead(open_gds(), seeded) if force or known is None else None
    try:
        stream = _read_digests(
            driver,
            database,
            report_scope_path,
            changes_path,
            force=force,
            written_elsewhere=written_elsewhere,
        )
    except BaseException:
        if ahead is not None:
            ahead.discard()
        raise
    digests, report_records_changed = stream.digests, stream.report_records_changed
    if not force and can_skip_leiden(known, digests.projection, graph_digest):
        assert known is not None and ahead is None
        remembered = dict(known["result"])
        remembered["communities_per_level"] = {
            int(level): count for level, count in remembered["communities_per_level"].items()
        }
        result = CommunityResult(
            **remembered,
            leiden_ran=False,
            projection_digest=digests.projection,
            content_digest=digests.content,
            report_records_changed=report_records_changed,
            records_streamed=stream.records_streamed,
            whole_stream_because=stream.whole_because,
        )
        if state_path is not None:
            write_json(
                state_path,
                {
                    **known,
                    "content": digests.content,
                    "last_run": {"leiden_skipped": True, "communities_changed": 0},
                },
            )
        return result

    if ahead is not None:
        gds, projection = ahead.gds, ahead.take()
    else:
        gds = open_gds()
        projection = community_cypher.project(gds, seeded=seeded)
    leiden = community_cypher.cluster(gds, driver, database, projection)
    hierarchy = build_hierarchy(canonical_assignments(leiden.assignments))
    hashes = member_hashes(hierarchy)
    # The graph as the last successful run left it: its member hashes describe its memberships.
    hashes_trusted = not force and known is not None and known.get("graph") == graph_digest
    written = write_hierarchy(
        driver, database, hierarchy, hashes, before, hashes_trusted=hashes_trusted
    )
    per_level = Counter(c.level for c in hierarchy.communities.values())
    sizes = Counter(_size_bucket(c.size) for c in hierarchy.communities.values() if c.level == 0)
    result = CommunityResult(
        nodes=leiden.nodes,
        relationships=leiden.relationships,
        levels=leiden.ran_levels,
        modularities=leiden.modularities,
        communities_per_level=dict(sorted(per_level.items())),
        size_distribution=dict(sizes),
        members_with_community=len(hierarchy.finest),
        write=written,
        seeded=leiden.seeded,
        projection_digest=digests.projection,
        content_digest=digests.content,
        communities_changed=changed_communities(previous_hashes, hashes),
        report_records_changed=report_records_changed,
        records_touched=len(leiden.assignments.na_ids),
        records_streamed=stream.records_streamed,
        whole_stream_because=stream.whole_because,
    )
    if state_path is not None:
        remembered = {k: v for k, v in asdict(result).items() if k in _REMEMBERED}
        write_json(
            state_path,
            {
                "input": digests.projection,
                "content": digests.content,
                "graph": community_cypher.community_state_digest(driver, database),
                "result": remembered,
                "last_run": {
                    "leiden_skipped": False,
                    "seeded": result.seeded,
                    "communities_changed": result.communities_changed,
                },
            },
        )
    return result


class _ProjectionAhead:
    """Leiden's projection, made on a thread of its own while the caller streams the digests."""

    def __init__(self, gds: Any, seeded: bool) -> None:
        from nara_kg.graph import communities as community_cypher

        self.gds = gds
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="leiden-projection")
        self._made: Future[Projection] = self._pool.submit(
            community_cypher.project, gds, seeded=seeded
        )

    def take(self) -> Projection:
        """The projection, once made (its error, if it failed)."""
        try:
            return self._made.result()
        finally:
            self._pool.shutdown()

    def discard(self) -> None:
        """Drop the projection once made: the run failed before it was used."""
        try:
            projection = self._made.result()
        except Exception:  # the caller raises the error that stopped the run
            return
        finally:
            self._pool.shutdown()
        self.gds.graph.drop(projection.graph)


@dataclass(frozen=True)
class _Stream:
    digests: ProjectionDigests
    report_records_changed: int
    records_streamed: int
    whole_because: str | None


def _read_digests(
    driver: Driver,
    database: str,
    report_scope_path: Path | None,
    changes_path: Path | None,
    *,
    force: bool,
    written_elsewhere: bool,
) -> _Stream:
    """The projection's digests and how many records changed; with `report_scope_path`,
    each record read is also compared with the last stream's, so that community_reports learns
    whose report inputs changed (:mod:`nara_kg.generation.report_scope`)."""
    from nara_kg.graph import communities as community_cypher

    if report_scope_path is None:
        digests = community_cypher.read_projection_digests(driver, database)
        return _Stream(digests, 0, digests.records, "no report scope")
    with (
        ReportScope(report_scope_path) as scope,
        _open_log(changes_path) as log,
    ):
        log_id = log.store_id() if log is not None else None
        up_to = log.high_water() if log is not None else 0
        stored, stored_log = scope.sums(), scope.changes_store()
        # Counted only when it can matter: after a first build the log holds every record.
        counted = log is not None and stored is not None and stored_log == log_id
        because = whole_stream_because(
            force=force,
            stored=stored,
            stored_log=stored_log,
            log=log_id,
            every_record=log is not None and log.every_record(up_to),
            written_elsewhere=written_elsewhere,
            touched=log.count(up_to) if counted and log is not None else 0,
        )
        with scope.transaction():
            if because is not None or stored is None or log is None:
                comparison = scope.comparison()
                sums = community_cypher.read_projection_sums(driver, database, comparison.add)
                changed = comparison.finish()
                scope.set_sums(sums, log_id)
                streamed = sums.records
            else:
                touched = scope.touched_comparison(stored)
                streamed = 0
                for ids in log.batches(up_to):
                    for asked, records in community_cypher.read_projected_records(
                        driver, database, ids
                    ):
                        touched.add(asked, records)
                        streamed += len(records)
                changed = touched.finish(log_id)
                sums = touched.sums
        if log is not None:
            log.drain(up_to)
    return _Stream(sums.digests(), changed, streamed, because)


@contextmanager
def _open_log(path: Path | None) -> Iterator[ProjectionChanges | None]:
    if path is None:
        yield None
        return
    with ProjectionChanges(path) as log:
        yield log


#: What a skipped run reports of the run that found its communities.
_REMEMBERED = (
    "nodes",
    "relationships",
    "levels",
    "modularities",
    "communities_per_level",
    "size_distribution",
    "members_with_community",
)

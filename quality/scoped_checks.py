"""The graph checks over the whole graph, or over what the last change set can reach
(:mod:`quality.graph_scope` decides which, and why), each reporting which it did.

Every outcome carries `scope` (graph_scope.WHOLE or graph_scope.CHANGED), `scope_reason` and
`records_checked` (the records whose nodes and relationships its statements read; the whole
selection on a whole run, where it is known without reading more), beside the figures over the
whole graph it vouches for.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from neo4j import Driver

from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.changes import chunks_of_records, read_changes
from nara_kg.ingest.stages.chunks import chunk_batches_of_file, record_links
from nara_kg.ingest.stages.record_index import RecordIndex
from nara_kg.ingest.stages.record_selection import chosen_rows_by_file
from nara_kg.model import edges
from nara_kg.model.tables import Col
from quality import graph_checks, names
from quality.graph_checks import GraphCheckOutcome
from quality.graph_scope import (
    WHOLE,
    Reach,
    Remembered,
    Scope,
    TypeFigures,
    config_digest,
    cycles_now,
    includes_reach,
    plan_scope,
    recall,
    remember,
    totals_by_type,
    type_figures,
    update_files,
)

#: The chunk-row columns the node check compares with the nodes.
_ROW_COLUMNS = [Col.NA_ID, Col.CHUNK_ID, Col.NODE_TYPE, Col.EMBED, Col.CHUNK_SEQ_ID]
#: Those the per-file totals are counted from.
_FIGURE_COLUMNS = [Col.NODE_TYPE, Col.EMBED, Col.CHUNK_SEQ_ID]


def scope_of(layout: WorkLayout, check: str, config: str, *, full: bool) -> Scope:
    return plan_scope(recall(layout, check), read_changes(layout), config, full=full)


def _finish(
    layout: WorkLayout,
    check: str,
    config: str,
    scope: Scope,
    outcome: GraphCheckOutcome,
    state: dict[str, Any],
    records_checked: int | None,
) -> GraphCheckOutcome:
    """Report the scope on `outcome` and remember the verdict for the next run."""
    outcome.measures["scope"] = scope.mode
    outcome.measures["scope_reason"] = scope.reason
    if records_checked is not None:
        outcome.measures["records_checked"] = records_checked
    generation = scope.changes.generation if scope.changes is not None else None
    remember(layout, check, Remembered(config, generation, outcome.passed, state))
    return outcome


def _figures(rows: Iterable[dict[str, Any]]) -> TypeFigures:
    return type_figures(rows, Col.NODE_TYPE, Col.EMBED, Col.CHUNK_SEQ_ID)


def _whole(scope: Scope, reason: str) -> Scope:
    return Scope(WHOLE, reason, scope.changes, scope.remembered)


def _scope_with_file_totals(
    layout: WorkLayout, check: str, config: str, *, full: bool
) -> tuple[Scope, dict[str, Any] | None]:
    """The check's scope and the per-file totals its last run kept; whole when it kept none
    (a scoped check adds the changed files' totals to the others')."""
    scope = scope_of(layout, check, config, full=full)
    remembered = (scope.remembered.state.get("files") if scope.remembered else None) or None
    if scope.scoped and remembered is None:
        scope = _whole(scope, "no per-file totals were kept")
    return scope, remembered


# --------------------------------------------------------------------------- nodes
def node_counts(
    driver: Driver, database: str, layout: WorkLayout, *, full: bool
) -> GraphCheckOutcome:
    check = names.GRAPH_NODES_MATCH_PARQUET
    config = config_digest(check)
    scope, remembered = _scope_with_file_totals(layout, check, config, full=full)
    if scope.scoped and scope.changes is not None and remembered is not None:
        changes = scope.changes
        ids = set(changes.na_ids)
        with RecordIndex(layout.record_index) as index:
            live = set(index.fingerprints())
            # Every added or changed record is in a changed file: one read of those files
            # gives both their totals and the changed records' rows.
            dirty = {f: index.records_of_file(f) for f in changes.files if f in live}
        fresh: dict[str, TypeFigures] = {}
        rows: list[dict[str, Any]] = []
        for file_id, records in dirty.items():
            file_rows = list(chunks_of_records(layout, records, _ROW_COLUMNS))
            fresh[file_id] = _figures(file_rows)
            rows.extend(r for r in file_rows if r[Col.NA_ID] in ids)
        files = update_files(remembered, fresh, [f for f in changes.files if f not in live])
        outcome = graph_checks.check_node_counts_of(
            driver, database, sorted(ids), rows, totals_by_type(files)
        )
        return _finish(layout, check, config, scope, outcome, {"files": files}, len(ids))
    files = {
        file_id: _figures(
            row
            for batch in chunk_batches_of_file(layout, file_id, chosen, _FIGURE_COLUMNS)
            for row in batch.to_pylist()
        )
        for file_id, chosen in chosen_rows_by_file(layout)
    }
    totals = totals_by_type(files)
    parquet = {t: {"chunks": v["chunks"], "embed": v["embed"]} for t, v in totals.items()}
    outcome = graph_checks.check_node_counts(driver, database, layout, parquet)
    chosen_records = sum(v["records"] for v in totals.values())
    return _finish(layout, check, config, scope, outcome, {"files": files}, chosen_records)


# --------------------------------------------------------------------------- embeddings
def embeddings(
    driver: Driver, database: str, layout: WorkLayout, dimension: int, model_key: str, *, full: bool
) -> GraphCheckOutcome:
    check = names.TEXT_EMBEDDINGS_COMPLETE
    config = config_digest(check, dimension, model_key)
    scope = scope_of(layout, check, config, full=full)
    if scope.scoped and scope.changes is not None:
        ids = list(scope.changes.na_ids)
        outcome = graph_checks.check_embeddings_of(driver, database, ids, dimension, model_key)
        return _finish(layout, check, config, scope, outcome, {}, len(ids))
    outcome = graph_checks.check_embeddings(driver, database, dimension, model_key)
    # Every recordWithText node (recordWithText_nodes); the records are not counted apart.
    return _finish(layout, check, config, scope, outcome, {}, None)


# --------------------------------------------------------------------------- Includes
def reach_of_change(layout: WorkLayout, scope: Scope) -> Reach:
    """What the change set can reach in the hierarchy, with parents and children from the
    record index (a parent counts when it is chosen and not the record itself, as
    :func:`nara_kg.model.edges.parent_links`)."""
    assert scope.changes is not None
    changes = scope.changes
    with RecordIndex(layout.record_index) as index:
        known: dict[int, int | None] = {}

        def parent(na_id: int) -> int | None:
            if na_id not in known:
                record = index.records([na_id]).get(na_id)
                named = record.parent if record is not None else None
                present = named is not None and named != na_id and bool(index.records([named]))
                known[na_id] = named if present else None
            return known[na_id]

        return includes_reach(
            changes.na_ids, [p for _, p in changes.old_parents], parent, index.children
        )


def whole_cycles(layout: WorkLayout, scope: Scope) -> tuple[list[list[int]], dict[int, int], int]:
    """The ancestor cycles of the whole selection, the parent link each breaks (child ->
    parent, as :func:`nara_kg.model.edges.break_cycles`) and the records read. When the record
    index holds the selection (the change set confirmed it) the cycles are found in it
    (:meth:`RecordIndex.cycle_links`) and no record is held here; otherwise from every record's
    links."""
    if scope.changes is not None:
        with RecordIndex(layout.record_index) as index:
            parents, checked = index.cycle_links(), index.count()
    else:
        links = record_links(layout)
        parents, checked = edges.parent_links(links, {link.na_id for link in links}), len(links)
    _, cycles = edges.break_cycles(parents)
    return cycles, {cycle[0]: parents[cycle[0]] for cycle in cycles}, checked


def includes(driver: Driver, database: str, layout: WorkLayout, *, full: bool) -> GraphCheckOutcome:
    check = names.INCLUDES_CONSISTENT
    config = config_digest(check)
    scope = scope_of(layout, check, config, full=full)
    if scope.scoped:
        reach = reach_of_change(layout, scope)
        ids = sorted(reach.records)
        outcome = graph_checks.check_includes_of(driver, database, ids, reach.broken_links())
        return _finish(layout, check, config, scope, outcome, {}, len(ids))
    _, broken, checked = whole_cycles(layout, scope)
    outcome = graph_checks.check_includes(driver, database, broken)
    return _finish(layout, check, config, scope, outcome, {}, checked)


def ancestor_cycles(layout: WorkLayout, *, full: bool) -> tuple[list[list[int]], Scope, int]:
    """The ancestor cycles of the whole selection (from memory and the change's reach when
    scoped), the scope, and the records read; remembered for the next run."""
    check = names.ANCESTOR_CYCLES
    config = config_digest(check)
    scope = scope_of(layout, check, config, full=full)
    known = scope.remembered.state.get("cycles") if scope.remembered else None
    if scope.scoped and known is None:
        scope = _whole(scope, "no cycles were kept")
    if scope.scoped and known is not None:
        reach = reach_of_change(layout, scope)
        cycles, checked = cycles_now(known, reach), len(reach.records)
    else:
        cycles, _, checked = whole_cycles(layout, scope)
    generation = scope.changes.generation if scope.changes is not None else None
    remember(layout, check, Remembered(config, generation, not cycles, {"cycles": cycles}))
    return cycles, scope, checked


# --------------------------------------------------------------------------- Next
def _chain_figures(index: RecordIndex, file_id: str) -> list[int]:
    """[records, chunks] of one file's chosen records."""
    records = index.records_of_file(file_id)
    return [len(records), sum(r.chunk_count for r in records)]


def next_chains(
    driver: Driver, database: str, layout: WorkLayout, *, full: bool
) -> GraphCheckOutcome:
    check = names.NEXT_CONSISTENT
    config = config_digest(check)
    scope, remembered = _scope_with_file_totals(layout, check, config, full=full)
    if scope.scoped and scope.changes is not None and remembered is not None:
        changes = scope.changes
        with RecordIndex(layout.record_index) as index:
            live = set(index.fingerprints())
            fresh = {f: _chain_figures(index, f) for f in changes.files if f in live}
        files = {f: v for f, v in remembered.items() if f not in changes.files} | fresh
        expected = sum(chunks - records for records, chunks in files.values())
        ids = list(changes.na_ids)
        outcome = graph_checks.check_next_of(driver, database, ids, expected)
        return _finish(layout, check, config, scope, outcome, {"files": files}, len(ids))
    outcome = graph_checks.check_next(driver, database)
    state: dict[str, Any] = {}
    checked = None
    if scope.changes is not None:
        # The index agrees with the selection (read_changes confirmed it): its per-file totals
        # are what the next run adjusts by the files that change.
        with RecordIndex(layout.record_index) as index:
            state["files"] = {f: _chain_figures(index, f) for f in index.fingerprints()}
        checked = sum(records for records, _ in state["files"].values())
    return _finish(layout, check, config, scope, outcome, state, checked)

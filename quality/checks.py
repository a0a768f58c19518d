"""The Dagster asset checks: bad input, Great Expectations suites, graph checks.

Which checks block downstream assets, and why, is decided in :mod:`quality.names`.
"""

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import dagster as dg

from graph_assets.common import failure_on_project_error
from graph_assets.common import table as md_table
from graph_assets.community_reports import community_reports
from graph_assets.graph_nodes import graph_nodes
from graph_assets.partitions import is_full_rebuild
from graph_assets.record_selection import record_selection
from graph_assets.relationships import includes_relationships, next_relationships
from graph_assets.text_embeddings import text_embeddings
from graph_assets.vector_index import vector_index
from nara_kg.ingest.layout import WorkLayout
from quality import (
    expectations,
    frames,
    graph_checks,
    graph_scope,
    incremental,
    names,
    scoped_checks,
)
from quality.config import RejectShareConfig, reject_share_limit
from quality.expectations import SuiteOutcome
from quality.graph_checks import GraphCheckOutcome
from quality.memory import CheckMemory
from quality.rejects import reject_summary
from resources import EmbeddingModel, Neo4jResource, PipelinePaths

SAMPLE_CELL = 400
#: Rows a record_selection check validated in this run, and rows whose results it took from
#: its memory of the files that did not change (quality.incremental).
ROWS_VALIDATED = "rows_validated"
ROWS_FROM_MEMORY = "rows_from_memory"


# --------------------------------------------------------------------------- metadata
def _table(rows: Sequence[dict[str, Any]], limit: int = 50, max_cell: int = 200) -> Any:
    """md_table over rows that may not share their keys (union of keys, in order)."""
    headers: dict[str, None] = {}
    for row in rows:
        headers.update(dict.fromkeys(row))
    return md_table(
        [{h: row.get(h, "") for h in headers} for row in rows], limit=limit, max_cell=max_cell
    )


def _sample_cell(sample: list[dict[str, Any]]) -> str:
    return "; ".join(" ".join(f"{k}={v}" for k, v in row.items()) for row in sample)


def suite_metadata(outcome: SuiteOutcome) -> dict[str, Any]:
    """Each expectation with its result and a sample of offending values, as Markdown."""
    rows = [
        {
            "frame": o.frame,
            "expectation": o.description,
            "type": o.expectation,
            "column": o.column,
            "success": "pass" if o.success else "FAIL",
            "observed": o.observed,
            "unexpected": "" if o.unexpected_count is None else o.unexpected_count,
            "of": "" if o.element_count is None else o.element_count,
            "sample (up to 10)": (
                f"error: {o.error}" if o.error else _sample_cell(o.sample) or "—"
            ),
        }
        for o in outcome.outcomes
    ]
    offending = [{"expectation": o.description, **row} for o in outcome.failed for row in o.sample]
    metadata: dict[str, Any] = {
        "suite": outcome.suite,
        "expectations": md_table(rows, limit=100, max_cell=SAMPLE_CELL),
        "expectations_evaluated": len(outcome.outcomes),
        "expectations_failed": len(outcome.failed),
        "offending_values": _table(offending, limit=100),
    }
    for frame, count in outcome.rows.items():
        metadata[f"rows_{frame}"] = count
    if outcome.rows_validated is not None:
        metadata[ROWS_VALIDATED] = outcome.rows_validated
        metadata[ROWS_FROM_MEMORY] = outcome.rows_from_memory
    return metadata


def graph_metadata(outcome: GraphCheckOutcome) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "findings": _table(outcome.findings),
        "offending_sample": _table(outcome.sample),
    }
    for name, rows in outcome.tables.items():
        metadata[name] = _table(rows, limit=100)
    for name, value in outcome.measures.items():
        metadata[name] = value
    return metadata


def _missing_input(
    check: str, error: FileNotFoundError, asset_key: dg.AssetKey | None = None
) -> dg.AssetCheckResult:
    """A failed check that says which input is missing (`asset_key` names the checked asset,
    which a check among several in one step must)."""
    return dg.AssetCheckResult(
        asset_key=asset_key,
        check_name=check if asset_key is not None else None,
        passed=False,
        severity=names.severity(check),
        description=str(error),
        metadata={"error": str(error)},
    )


def _suite_result(check: str, build: Callable[[], SuiteOutcome]) -> dg.AssetCheckResult:
    """The outcome of one suite on the chosen records, named for the asset check that runs it."""
    try:
        outcome = build()
    except FileNotFoundError as error:
        return _missing_input(check, error, record_selection.key)
    failed = ", ".join(o.description for o in outcome.failed)
    return dg.AssetCheckResult(
        asset_key=record_selection.key,
        check_name=check,
        passed=outcome.success,
        severity=names.severity(check),
        description=(
            f"all {len(outcome.outcomes)} expectations pass"
            if outcome.success
            else f"{len(outcome.failed)} of {len(outcome.outcomes)} expectations fail: {failed}"
        ),
        metadata=suite_metadata(outcome),
    )


def _scope_note(measures: dict[str, Any]) -> str:
    """What a scoped or whole graph check looked at, for its one-line description."""
    scope = measures.get("scope")
    if scope is None:
        return ""
    if scope == graph_scope.CHANGED:
        return f" (checked the {measures.get('records_checked', 0)} records the change reaches)"
    return f" (checked the whole graph: {measures.get('scope_reason')})"


def _graph_result(check: str, outcome: GraphCheckOutcome) -> dg.AssetCheckResult:
    failing = [f.get("check") or f.get("index") for f in outcome.findings if not f.get("ok")]
    verdict = "passes" if outcome.passed else f"fails: {', '.join(map(str, failing))}"
    return dg.AssetCheckResult(
        passed=outcome.passed,
        severity=names.severity(check),
        description=verdict + _scope_note(outcome.measures),
        metadata=graph_metadata(outcome),
    )


# --------------------------------------------------------------------------- bad input
@dg.asset_check(
    asset=record_selection,
    name=names.PARSED_RECORDS_REJECT_SHARE,
    blocking=names.is_blocking(names.PARSED_RECORDS_REJECT_SHARE),
    description=(
        "Fails when the share of rejected input lines is above the limit: run config "
        "max_reject_share, else NARA_KG_MAX_REJECT_SHARE at run time (a fraction such as 0.05 "
        "or a percentage such as 5%), else 1%. Blocking: nothing downstream is built from a "
        "bad parse."
    ),
)
def parsed_records_reject_share(
    config: RejectShareConfig, paths: PipelinePaths
) -> dg.AssetCheckResult:
    check = names.PARSED_RECORDS_REJECT_SHARE
    limit = reject_share_limit(config.max_reject_share)
    layout = paths.layout
    try:
        summary = reject_summary(layout)
    except FileNotFoundError as error:
        return _missing_input(check, error)
    passed = summary.share <= limit
    return dg.AssetCheckResult(
        passed=passed,
        severity=names.severity(check),
        description=(
            f"{summary.rejected} of {summary.lines} lines rejected ({summary.share:.2%}); "
            f"limit {limit:.2%}"
        ),
        metadata={
            "lines": summary.lines,
            "lines_rejected": summary.rejected,
            "reject_share": dg.MetadataValue.float(round(summary.share, 6)),
            "max_reject_share": dg.MetadataValue.float(limit),
            "rejects_by_reason": md_table(
                [{"reason": k, "count": v} for k, v in summary.by_reason.items()], limit=100
            ),
            "reject_sample": md_table(summary.sample, limit=len(summary.sample) or 1),
            "rejects_path": dg.MetadataValue.path(str(layout.rejects)),
        },
    )


@dg.asset_check(
    asset=record_selection,
    name=names.PARSED_RECORDS_BODY_CUT,
    blocking=names.is_blocking(names.PARSED_RECORDS_BODY_CUT),
    description=(
        "Advisory (WARN): lists the chosen records whose body text was longer than "
        "NARA_KG_MAX_BODY_CHARS and was cut (property bodyTextCutFrom holds the full length)."
    ),
)
def parsed_records_body_cut(
    context: dg.AssetCheckExecutionContext, paths: PipelinePaths
) -> dg.AssetCheckResult:
    check = names.PARSED_RECORDS_BODY_CUT
    try:
        found = incremental.cut_records(paths.layout, whole=is_full_rebuild(context))
    except FileNotFoundError as error:
        return _missing_input(check, error)
    cut = found.records
    return dg.AssetCheckResult(
        passed=not cut,
        severity=names.severity(check),
        description=(
            "no record was cut"
            if not cut
            else f"{len(cut)} records cut to {paths.max_body_chars:,} characters"
        ),
        metadata={
            "records_cut": len(cut),
            "max_body_chars": paths.max_body_chars,
            "cut_records": md_table(cut, limit=100),
            ROWS_VALIDATED: found.rows_validated,
            ROWS_FROM_MEMORY: found.rows_from_memory,
        },
    )


# --------------------------------------------------------------------------- GE suites
#: The Great Expectations suites over the chosen records and their chunks, each with what the UI
#: shows of it.
SUITE_DESCRIPTIONS: dict[str, str] = {
    names.PARSED_RECORDS_INTEGRITY: (
        "Great Expectations over the chosen record per naId: naId present and unique, nodeType "
        "one of the ten types, recordKind description/authority (and agreeing with the type), "
        "source = https://catalog.archives.gov/id/<naId>."
    ),
    names.PARSED_RECORDS_DATES: (
        "Great Expectations, advisory (WARN): every logicalDate_* value of the chosen records "
        "is a valid YYYY-MM-DD date."
    ),
    names.CHUNKS_INTEGRITY: (
        "Great Expectations over the chunks of the chosen records: tokens within the embedding "
        "model's maximum sequence length, chunkIds unique, chunkSeqId 0..n-1 per record "
        "(n = chunkCount)."
    ),
}


def _remembered_or_whole(
    check: str,
    layout: WorkLayout,
    remembered: Callable[[bool], SuiteOutcome],
    every_row: Callable[[], SuiteOutcome],
    *,
    whole: bool,
) -> SuiteOutcome:
    """The suite over the changed files' rows with the rest from memory (every file's rows
    when `whole`); a result that cannot be added up per file (an expectation that raised) is
    forgotten and the suite validates every row at once, as GX reports it."""
    try:
        return remembered(whole)
    except incremental.NotSplit:
        with CheckMemory(layout.check_memory) as memory, memory.transaction():
            memory.forget(check)
        return every_row()


def parsed_records_integrity(paths: PipelinePaths, *, whole: bool = False) -> dg.AssetCheckResult:
    layout = paths.layout
    return _suite_result(
        names.PARSED_RECORDS_INTEGRITY,
        lambda: _remembered_or_whole(
            names.PARSED_RECORDS_INTEGRITY,
            layout,
            lambda w: incremental.validate_parsed_records(layout, whole=w),
            lambda: expectations.validate_parsed_records(frames.load_records_frame(layout)),
            whole=whole,
        ),
    )


def parsed_records_dates(paths: PipelinePaths, *, whole: bool = False) -> dg.AssetCheckResult:
    layout = paths.layout
    return _suite_result(
        names.PARSED_RECORDS_DATES,
        lambda: _remembered_or_whole(
            names.PARSED_RECORDS_DATES,
            layout,
            lambda w: incremental.validate_dates(layout, whole=w),
            lambda: expectations.validate_dates(frames.load_dates_frame(layout)),
            whole=whole,
        ),
    )


def chunks_integrity(
    paths: PipelinePaths, embedding_model: EmbeddingModel, *, whole: bool = False
) -> dg.AssetCheckResult:
    layout = paths.layout

    def every_row() -> SuiteOutcome:
        table = frames.load_chunks_frame(layout)
        max_tokens = embedding_model.get_embedder().max_tokens
        return expectations.validate_chunks(table, frames.chunk_sequences_frame(table), max_tokens)

    return _suite_result(
        names.CHUNKS_INTEGRITY,
        lambda: _remembered_or_whole(
            names.CHUNKS_INTEGRITY,
            layout,
            lambda w: incremental.validate_chunks(
                layout, embedding_model.get_embedder().max_tokens, whole=w
            ),
            every_row,
            whole=whole,
        ),
    )


@dg.multi_asset_check(
    name=names.RECORD_SELECTION_SUITES,
    specs=[
        dg.AssetCheckSpec(
            name, asset=record_selection, blocking=names.is_blocking(name), description=text
        )
        for name, text in SUITE_DESCRIPTIONS.items()
    ],
    can_subset=True,
    description=(
        "The Great Expectations suites over the chosen records and their chunks, in one step: "
        "a step process imports Great Expectations first (3.5 s on two cores), which three "
        "steps paid three times, holding both of a run's step slots before graph_nodes."
    ),
)
def record_selection_suites(
    context: dg.AssetCheckExecutionContext, paths: PipelinePaths, embedding_model: EmbeddingModel
) -> Iterator[dg.AssetCheckResult]:
    whole = is_full_rebuild(context)
    suites: dict[str, Callable[[], dg.AssetCheckResult]] = {
        names.PARSED_RECORDS_INTEGRITY: lambda: parsed_records_integrity(paths, whole=whole),
        names.PARSED_RECORDS_DATES: lambda: parsed_records_dates(paths, whole=whole),
        names.CHUNKS_INTEGRITY: lambda: chunks_integrity(paths, embedding_model, whole=whole),
    }
    selected = {key.name for key in context.selected_asset_check_keys}
    for name, run in suites.items():
        if name in selected:
            yield run()


# --------------------------------------------------------------------------- graph checks
@dg.asset_check(
    asset=graph_nodes,
    name=names.GRAPH_NODES_MATCH_PARQUET,
    blocking=names.is_blocking(names.GRAPH_NODES_MATCH_PARQUET),
    description=(
        "Chunk nodes per type = chunk rows per type in Parquet; recordWithText nodes = rows "
        "marked for embedding; every node carries its record-type label. After a change set "
        "(metadata scope: changed records): the changed records' nodes equal their chunk rows "
        "(chunkId, type, recordWithText) and carry their label; over the whole graph, chunk "
        "nodes per type label and recordWithText nodes (Neo4j's count store) equal the chunk "
        "rows, totalled per file and recounted for the changed files. The whole graph is "
        "checked on a full rebuild, a first run, after a failure or a change of the check."
    ),
)
@failure_on_project_error
def graph_nodes_match_parquet(
    context: dg.AssetCheckExecutionContext, neo4j: Neo4jResource, paths: PipelinePaths
) -> dg.AssetCheckResult:
    outcome = scoped_checks.node_counts(
        neo4j.get_driver(), neo4j.database, paths.layout, full=is_full_rebuild(context)
    )
    return _graph_result(names.GRAPH_NODES_MATCH_PARQUET, outcome)


@dg.asset_check(
    asset=text_embeddings,
    name=names.TEXT_EMBEDDINGS_COMPLETE,
    blocking=names.is_blocking(names.TEXT_EMBEDDINGS_COMPLETE),
    description=(
        "Every recordWithText node has a textEmbedding of the model's dimension, computed from "
        "its current text with the current model. After a change set (metadata scope: changed "
        "records): the recordWithText nodes of the added and changed records; the others kept "
        "the vectors this check passed last time (a change of model or dimension checks every "
        "node again, as do a full rebuild, a first run and a failure)."
    ),
)
@failure_on_project_error
def text_embeddings_complete(
    context: dg.AssetCheckExecutionContext,
    neo4j: Neo4jResource,
    embedding_model: EmbeddingModel,
    paths: PipelinePaths,
) -> dg.AssetCheckResult:
    embedder = embedding_model.get_embedder()
    outcome = scoped_checks.embeddings(
        neo4j.get_driver(),
        neo4j.database,
        paths.layout,
        embedder.dimension,
        embedder.key,
        full=is_full_rebuild(context),
    )
    return _graph_result(names.TEXT_EMBEDDINGS_COMPLETE, outcome)


@dg.asset_check(
    asset=vector_index,
    name=names.VECTOR_INDEX_ONLINE,
    blocking=names.is_blocking(names.VECTOR_INDEX_ONLINE),
    description=(
        "The vector index texts_from_records (of the model's dimension) and the full-text "
        "index texts_fulltext exist and are ONLINE."
    ),
)
@failure_on_project_error
def vector_index_online(
    neo4j: Neo4jResource, embedding_model: EmbeddingModel
) -> dg.AssetCheckResult:
    outcome = graph_checks.check_indexes(
        neo4j.get_driver(), neo4j.database, embedding_model.get_embedder().dimension
    )
    return _graph_result(names.VECTOR_INDEX_ONLINE, outcome)


@dg.asset_check(
    asset=includes_relationships,
    name=names.INCLUDES_CONSISTENT,
    blocking=names.is_blocking(names.INCLUDES_CONSISTENT),
    description=(
        "No record has more than one incoming Includes; every first chunk whose nearest "
        "ancestor (ancestors[0]) is in the graph is Included by that ancestor's first chunk, "
        "unless that link was broken to break an ancestor cycle; no Includes links anything "
        "else. After a change set (metadata scope: changed records): the Includes into and out "
        "of the records the change reaches (the added, changed and removed records, their "
        "children, and the members of any ancestor cycle a walk up from them or their old "
        "parents enters); the total is reported from the count store. The whole graph is "
        "checked on a full rebuild, a first run, after a failure or a change of the check."
    ),
)
@failure_on_project_error
def includes_relationships_consistent(
    context: dg.AssetCheckExecutionContext, neo4j: Neo4jResource, paths: PipelinePaths
) -> dg.AssetCheckResult:
    try:
        outcome = scoped_checks.includes(
            neo4j.get_driver(), neo4j.database, paths.layout, full=is_full_rebuild(context)
        )
    except FileNotFoundError as error:
        return _missing_input(names.INCLUDES_CONSISTENT, error)
    return _graph_result(names.INCLUDES_CONSISTENT, outcome)


@dg.asset_check(
    asset=includes_relationships,
    name=names.ANCESTOR_CYCLES,
    blocking=names.is_blocking(names.ANCESTOR_CYCLES),
    description=(
        "Advisory (WARN): no chosen record is its own ancestor. A cycle (A's parent is B, B's "
        "parent is A, of any length) is broken deterministically (its smallest naId becomes "
        "the root) and listed here. After a change set (metadata scope: changed records): the "
        "cycles kept from the last run that no changed record belongs to, and those a walk up "
        "from the records the change reaches enters (every record is walked on a full "
        "rebuild, a first run, or when cycles were found last time)."
    ),
)
def includes_relationships_no_cycles(
    context: dg.AssetCheckExecutionContext, paths: PipelinePaths
) -> dg.AssetCheckResult:
    check = names.ANCESTOR_CYCLES
    try:
        cycles, scope, checked = scoped_checks.ancestor_cycles(
            paths.layout, full=is_full_rebuild(context)
        )
    except FileNotFoundError as error:
        return _missing_input(check, error)
    found = "no ancestor cycle" if not cycles else f"{len(cycles)} ancestor cycles broken"
    return dg.AssetCheckResult(
        passed=not cycles,
        severity=names.severity(check),
        description=found
        + _scope_note(
            {"scope": scope.mode, "scope_reason": scope.reason, "records_checked": checked}
        ),
        metadata={
            "scope": scope.mode,
            "scope_reason": scope.reason,
            "records_checked": checked,
            "cycles": len(cycles),
            "broken_cycles": md_table(
                [{"cycle": " -> ".join(map(str, c)), "root": c[0]} for c in cycles]
            ),
        },
    )


@dg.asset_check(
    asset=next_relationships,
    name=names.NEXT_CONSISTENT,
    blocking=names.is_blocking(names.NEXT_CONSISTENT),
    description=(
        "No dangling Next: each links chunk k to chunk k+1 of the same naId, every chunk k > 0 "
        "has an incoming Next, no chunk has two. After a change set (metadata scope: changed "
        "records): the chains of the added, changed and removed records, and the whole graph's "
        "Next count (count store) = chunks less records of every chosen record (totalled per "
        "file, recounted for the changed files). The whole graph is checked on a full "
        "rebuild, a first run, after a failure or a change of the check."
    ),
)
@failure_on_project_error
def next_relationships_consistent(
    context: dg.AssetCheckExecutionContext, neo4j: Neo4jResource, paths: PipelinePaths
) -> dg.AssetCheckResult:
    outcome = scoped_checks.next_chains(
        neo4j.get_driver(), neo4j.database, paths.layout, full=is_full_rebuild(context)
    )
    return _graph_result(names.NEXT_CONSISTENT, outcome)


# --------------------------------------------------------------------------- communities
def community_report_check(
    asset: Any,
    *,
    report_property: str = "summary",
    id_property: str = "id",
    name: str = names.COMMUNITY_REPORTS_COMPLETE,
    blocking: bool | None = None,
) -> dg.AssetChecksDefinition:
    """ "Every community has a report", as a check on `asset` (e.g. the community_reports asset).

    Wired on the community_reports asset in ``quality.ALL_CHECKS``. The report is considered
    present when the Community node's `report_property` is set and not blank.
    """
    is_blocking = names.is_blocking(name) if blocking is None else blocking
    severity = dg.AssetCheckSeverity.ERROR if is_blocking else dg.AssetCheckSeverity.WARN

    @dg.asset_check(
        asset=asset,
        name=name,
        blocking=is_blocking,
        description=(
            f"Every Community node has a report (property `{report_property}` set and not blank)."
        ),
    )
    @failure_on_project_error
    def _community_reports_complete(neo4j: Neo4jResource) -> dg.AssetCheckResult:
        outcome = graph_checks.check_community_reports(
            neo4j.get_driver(),
            neo4j.database,
            report_property=report_property,
            id_property=id_property,
        )
        result = _graph_result(name, outcome)
        return dg.AssetCheckResult(
            passed=result.passed,
            severity=severity,
            description=result.description,
            metadata=result.metadata,
        )

    return _community_reports_complete


#: Every check wired to an existing asset.
community_reports_complete = community_report_check(community_reports)

FILE_CHECKS = [parsed_records_reject_share, record_selection_suites, parsed_records_body_cut]
GRAPH_CHECKS = [
    graph_nodes_match_parquet,
    text_embeddings_complete,
    vector_index_online,
    includes_relationships_consistent,
    includes_relationships_no_cycles,
    next_relationships_consistent,
    community_reports_complete,
]
ALL_CHECKS = [*FILE_CHECKS, *GRAPH_CHECKS]

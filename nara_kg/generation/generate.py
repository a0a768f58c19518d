"""community_reports' work: one report per community, finest level first, cached by context,
written by difference, then the summaries embedded; skipped when no report's sources changed,
and scoped to the communities whose inputs changed.

The loop itself is :mod:`.report_loop`; one report from its context, :mod:`.single_report`. What
a report is made of lives beside them: the context (:mod:`.report_context`), the prompt
(:mod:`.report_prompts`), parsing (:mod:`.report_parse`), the no-model report
(:mod:`.extractive`) and the rows to and from the graph (:mod:`.report_rows`).
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

from neo4j import Driver

from nara_kg.embedding.encoder import Embedder
from nara_kg.generation.llm import LLM, GenerationCache, describe
from nara_kg.generation.report_loop import ReportRunResult, ReportRunSetup, generate_all
from nara_kg.generation.report_plan import ReportPlan, plan_reports, report_settings_key
from nara_kg.generation.report_scope import ReportScope
from nara_kg.generation.report_sources import can_skip_reports, report_sources_digest
from nara_kg.generation.token_counts import remembered_token_counts
from nara_kg.graph import reports as report_cypher
from nara_kg.ingest.stages.common import read_json, write_json
from nara_kg.model.progress import Log, quiet

__all__ = ["ReportRunResult", "generate_community_reports"]


def generate_community_reports(
    driver: Driver,
    database: str,
    llm: LLM,
    cache: GenerationCache | None,
    embedder: Embedder,
    *,
    token_budget: int,
    log: Log = quiet,
    token_counts_path: Path | None = None,
    force: bool = False,
    state_path: Path | None = None,
    leiden_state_path: Path | None = None,
    scope_path: Path | None = None,
) -> ReportRunResult:
    """One report per community, finest level first, so that a coarser community whose members
    do not fit the budget can use its sub-communities' reports instead. With
    `token_counts_path`, the token counts of context texts are remembered there between runs
    (:mod:`nara_kg.generation.token_counts`). A community whose inputs are as its node
    recorded keeps its report without its context being built, unless `force`.

    With `state_path` and `leiden_state_path` (graph_communities' digests of the projection
    and of its records' rows), the digest of every report's sources is remembered: a run that
    finds it unchanged, and every report current, reads no community and builds no context
    (`skipped`), unless `force`. With `scope_path` (:mod:`nara_kg.generation.report_scope`,
    filled by graph_communities), a run looks only at the communities holding a record whose
    inputs changed since its last complete run, and at their parents."""
    sources = _sources_digest(driver, database, llm, embedder, token_budget, leiden_state_path)
    if not force and sources is not None and state_path is not None:
        known = read_json(state_path)
        if can_skip_reports(
            known, sources, report_cypher.stale_reports(driver, database, embedder.key)
        ):
            assert known is not None
            return ReportRunResult(communities=int(known.get("communities", 0)), skipped=True)
    settings = report_settings_key(describe(llm), embedder.key, token_budget)
    scope = ReportScope(scope_path) if scope_path is not None else None
    try:
        plan = plan_reports(
            driver,
            database,
            embedder.key,
            scope=scope,
            settings=settings,
            force=force,
            reads=report_cypher,
        )
        result = _generate_with_counts(
            driver,
            database,
            llm,
            cache,
            embedder,
            plan,
            token_budget=token_budget,
            log=log,
            token_counts_path=token_counts_path,
            force=force,
            remembered=scope,
        )
        if scope is not None:
            scope.reports_written(
                up_to=plan.seen_up_to,
                members={str(c["id"]): c.get("memberHash") for c in plan.communities},
                gone=plan.gone,
                settings=settings,
            )
    finally:
        if scope is not None:
            scope.close()
    if state_path is not None:
        write_json(state_path, {"sources": sources, "communities": result.communities})
    return result


def _sources_digest(
    driver: Driver,
    database: str,
    llm: LLM,
    embedder: Embedder,
    token_budget: int,
    leiden_state_path: Path | None,
) -> str | None:
    """:func:`report_sources_digest` of the graph now; None without graph_communities' digests."""
    from nara_kg.graph.communities import community_state_digest

    leiden = read_json(leiden_state_path) if leiden_state_path is not None else None
    if not leiden or not leiden.get("input") or not leiden.get("content"):
        return None
    return report_sources_digest(
        projection=leiden["input"],
        content=leiden["content"],
        communities=community_state_digest(driver, database),
        generator=describe(llm),
        counter_key=embedder.key,
        token_budget=token_budget,
    )


def _generate_with_counts(
    driver: Driver,
    database: str,
    llm: LLM,
    cache: GenerationCache | None,
    embedder: Embedder,
    plan: ReportPlan,
    *,
    token_budget: int,
    log: Log,
    token_counts_path: Path | None,
    force: bool,
    remembered: ReportScope | None = None,
) -> ReportRunResult:
    """:func:`~nara_kg.generation.report_loop.generate_all` with the embedder's token
    counter, answered from the counts remembered at `token_counts_path` when there is one."""
    with ExitStack() as stack:
        counts = (
            None
            if token_counts_path is None
            else stack.enter_context(
                remembered_token_counts(
                    token_counts_path,
                    embedder.key,
                    embedder.count_tokens,
                    embedder.count_tokens_many,
                )
            )
        )
        result = generate_all(
            ReportRunSetup(
                driver=driver,
                database=database,
                llm=llm,
                cache=cache,
                embedder=embedder,
                plan=plan,
                count_tokens=embedder.count_tokens if counts is None else counts.count,
                count_tokens_many=(
                    embedder.count_tokens_many if counts is None else counts.count_many
                ),
                token_budget=token_budget,
                log=log,
                reads=report_cypher,
                force=force,
                remembered=remembered,
            ),
            between_groups=(lambda: None) if counts is None else counts.release,
        )
        if counts is not None:
            result.token_counts_reused = counts.looked_up - counts.counted
            result.token_counts_new = counts.counted
            # The contexts not built this run looked none of their rows up; the run that next
            # builds one of them needs those counts.
            counts.drop_unused_when_done = result.unchanged_inputs == 0
        return result

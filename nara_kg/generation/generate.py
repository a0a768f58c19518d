"""The generation loop of community_reports: one report per community, finest level first,
cached by context, written by difference, then the summaries embedded.

What a report is made of lives beside it: the context (:mod:`.report_context`), the prompt
(:mod:`.report_prompts`), parsing (:mod:`.report_parse`), the no-model report
(:mod:`.extractive`) and the rows to and from the graph (:mod:`.report_rows`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from neo4j import Driver

from nara_kg.embedding.encoder import Embedder, release_free_memory
from nara_kg.generation.community_report import CommunityReport
from nara_kg.generation.extractive import (
    GENERATED_BY_EXTRACTIVE,
    extractive_cache_key,
    extractive_report,
)
from nara_kg.generation.llm import LLM, GenerationCache, cached_complete, describe, is_extractive
from nara_kg.generation.report_context import ReportContext
from nara_kg.generation.report_context_data import MentionTotals
from nara_kg.generation.report_context_render import forget_rendered
from nara_kg.generation.report_order import same_level_batches, tree_groups
from nara_kg.generation.report_parse import ReportFormatError, parse_report, repair_report
from nara_kg.generation.report_plan import (
    ReportPlan,
    plan_reports,
    report_settings_key,
    stored_report,
)
from nara_kg.generation.report_prompts import format_report_prompt
from nara_kg.generation.report_rows import (
    MemberFieldStore,
    RunRows,
    context_from_rows,
    mention_totals,
    merge_mention_totals,
    rank_mentioned,
    report_context_key,
    report_input_key,
    report_row,
    summary_embedding_key,
    summary_embedding_text,
    top_members,
)
from nara_kg.generation.report_scope import ReportScope
from nara_kg.generation.report_sources import can_skip_reports, report_sources_digest
from nara_kg.generation.token_counts import remembered_token_counts
from nara_kg.graph import reports as report_cypher
from nara_kg.ingest.chunking import TokenCounter, TokensCounter
from nara_kg.ingest.stages.common import read_json, write_json
from nara_kg.model.progress import Log, quiet


@dataclass
class ReportRunResult:
    communities: int = 0
    generated: int = 0
    cached: int = 0
    used_sub_reports: int = 0
    truncated: int = 0
    #: Communities with the same members as their only sub-community, given its report.
    copied_from_sub_community: int = 0
    #: Communities whose context inputs (report_input_key) were as their node recorded: the
    #: report on the node stands, without building the context again.
    unchanged_inputs: int = 0
    summaries_embedded: int = 0
    #: Distinct summary texts encoded (equal summaries share one vector).
    summaries_encoded: int = 0
    #: Of `summaries_encoded`: those encoded while the coarser levels' reports were made.
    summaries_encoded_early: int = 0
    #: Context texts whose token count was remembered from an earlier run, and those counted.
    token_counts_reused: int = 0
    token_counts_new: int = 0
    #: Model reports whose JSON was repaired, and those replaced by the extractive report.
    reports_repaired: int = 0
    reports_replaced: int = 0
    #: True when the sources of every report were as the last run found them: nothing read.
    skipped: bool = False
    #: Records whose rows were read from the graph (row hash and degree at least): in a run
    #: scoped by the change, those pending; the others' rows and relationships are the store's.
    records_touched: int = 0
    #: Of those: records whose rows were read with their text (the others' report rows were
    #: remembered from a node of the same row hash).
    member_texts_read: int = 0
    #: Records that are members of the communities in scope (read or taken from the store).
    members_in_scope: int = 0
    #: Communities whose reports this run looked at (all, unless scoped by the change).
    communities_in_scope: int = 0
    #: Whether the run was scoped by the records whose inputs changed (report_scope), and if
    #: not, why.
    scoped: bool = False
    whole_because: str = ""
    per_level: Counter[int] = field(default_factory=Counter)
    preview: list[dict[str, Any]] = field(default_factory=list)


def _mention_parts(
    community: dict[str, Any],
    members: Sequence[dict[str, Any]],
    done: dict[str, tuple[CommunityReport, frozenset[int]]],
    totals_of: dict[str, MentionTotals],
) -> tuple[list[str], list[int]]:
    """The sub-communities whose mention totals a community adds up, and its members outside
    them (whose mentions are read). Sub-communities that do not split its members between them
    (never seen from Leiden) are not used: every member is read."""
    na_ids = {int(m["naId"]) for m in members}
    children = [c for c in community["children"] if c in done and c in totals_of]
    covered: set[int] = set()
    for child in children:
        child_ids = done[child][1]
        if not covered.isdisjoint(child_ids) or not child_ids <= na_ids:
            return [], sorted(na_ids)
        covered |= child_ids
    return children, sorted(na_ids - covered)


class _EarlySummaryVectors:
    """Summaries encoded on a thread of their own while the next level's contexts are read and
    built: the model releases the GIL, and those steps leave a core idle (Python waits for
    Neo4j, Neo4j for Python). Counting tokens meanwhile is safe: the model tokenizes with its
    own copy of the tokenizer."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="summary-encoder")
        self._vectors: dict[str, tuple[Future[Any], int]] = {}

    def submit(self, texts: Iterable[str]) -> None:
        new = sorted({text for text in texts if text not in self._vectors})
        if new:
            future = self._pool.submit(self._embedder.encode, new)
            self._vectors.update((text, (future, i)) for i, text in enumerate(new))

    def get(self, text: str) -> Any | None:
        found = self._vectors.get(text)
        return None if found is None else found[0].result()[found[1]]

    def __enter__(self) -> _EarlySummaryVectors:
        return self

    def __exit__(self, *_: object) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


@dataclass
class ReportRepairs:
    """How many model reports needed their JSON repaired, and how many were replaced."""

    repaired: int = 0
    replaced: int = 0


def generate_report(
    context: ReportContext,
    llm: LLM,
    cache: GenerationCache | None,
    *,
    retries: int = 2,
    repairs: ReportRepairs | None = None,
) -> tuple[CommunityReport, bool]:
    """The community's report and whether it came from the cache.

    The extractive backend builds :func:`extractive_report` (cached under the context text).
    A model gets :data:`~nara_kg.generation.report_prompts.REPORT_PROMPT`; output that does not
    parse has its JSON repaired (:func:`repair_report`), else is regenerated up to `retries`
    times, bypassing and overwriting its cache entry. A community with no usable report after
    that gets the extractive report, so one bad reply never fails the run; `repairs` counts both.
    """
    if is_extractive(llm):
        key = extractive_cache_key(context)
        if cache is not None:
            stored = cache.get(key)
            if stored is not None:
                try:
                    return (
                        parse_report(
                            stored, context.community_id, context.level, GENERATED_BY_EXTRACTIVE
                        ),
                        True,
                    )
                except ReportFormatError:
                    pass  # a damaged entry: rebuild and overwrite it
        report = extractive_report(context)
        if cache is not None:
            cache.put(key, report.to_json())
        return report, False

    prompt = format_report_prompt(context)
    generated_by = describe(llm)
    # A deterministic model's fresh reply would only come again: it is repaired or replaced.
    deterministic = bool(getattr(llm, "deterministic", False))
    for attempt in range(retries + 1):
        text, cached = cached_complete(llm, prompt, cache, refresh=attempt > 0)
        try:
            return parse_report(text, context.community_id, context.level, generated_by), cached
        except ReportFormatError:
            pass
        try:
            report = repair_report(text, context.community_id, context.level, generated_by)
        except ReportFormatError:
            if deterministic and not cached:
                break
            continue
        if repairs is not None:
            repairs.repaired += 1
        return report, cached
    if repairs is not None:
        repairs.replaced += 1
    return extractive_report(context), False


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
    """:func:`_generate_all` with the embedder's token counter, answered from the counts
    remembered at `token_counts_path` when there is one."""
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
        result = _generate_all(
            driver,
            database,
            llm,
            cache,
            embedder,
            plan,
            embedder.count_tokens if counts is None else counts.count,
            embedder.count_tokens_many if counts is None else counts.count_many,
            token_budget=token_budget,
            log=log,
            force=force,
            remembered=remembered,
            between_groups=(lambda: None) if counts is None else counts.release,
        )
        if counts is not None:
            result.token_counts_reused = counts.looked_up - counts.counted
            result.token_counts_new = counts.counted
            # The contexts not built this run looked none of their rows up; the run that next
            # builds one of them needs those counts.
            counts.drop_unused_when_done = result.unchanged_inputs == 0
        return result


def _generate_all(
    driver: Driver,
    database: str,
    llm: LLM,
    cache: GenerationCache | None,
    embedder: Embedder,
    plan: ReportPlan,
    count_tokens: TokenCounter,
    count_tokens_many: TokensCounter,
    *,
    token_budget: int,
    log: Log,
    force: bool = False,
    remembered: ReportScope | None = None,
    between_groups: Callable[[], None] = lambda: None,
) -> ReportRunResult:
    """The loop. With `remembered` (the report scope's store), each community's mention totals
    and each member's report row are kept there: a later run's communities take the totals of
    their sub-communities outside that run instead of reading those members' mentions, and the
    rows of members whose nodes did not change instead of reading their text. Tree group by
    tree group (:mod:`.report_order`), each group's reports written when it is done and
    `between_groups` called then (the token counts let go of the group's)."""
    result = ReportRunResult()
    #: community id -> (its report, its members' naIds)
    done: dict[str, tuple[CommunityReport, frozenset[int]]] = dict(plan.outside)
    context_keys: dict[str, str] = dict(plan.outside_context_keys)
    #: community id -> its members of highest degree (kept with the report for provenance)
    tops: dict[str, list[dict[str, Any]]] = {}
    #: community id -> what its members' text names, until its parent community has used it
    mention_totals_of: dict[str, MentionTotals] = dict(plan.outside_mention_totals)
    totals_to_remember: list[tuple[str, str | None, MentionTotals]] = []
    rows: list[dict[str, Any]] = []
    #: what the store keeps of each record (settled records are not read: see the class)
    store = MemberFieldStore(remembered, plan.pending)
    communities = plan.communities
    generator = describe(llm)
    position = 0
    members_seen, records_touched, member_texts_read = 0, 0, 0
    summaries_to_embed: list[str] = []
    repairs = ReportRepairs()
    with (
        _EarlySummaryVectors(embedder) as early,
        ThreadPoolExecutor(max_workers=1, thread_name_prefix="report-reader") as reader,
    ):
        for group in tree_groups(communities):
            # What the run derives from a tree's records serves that tree alone (see
            # report_order): each group starts empty, so the run holds one group's at a time.
            row_costs: dict[str, int] = {}
            #: each record's relationships, read at the finest level and reused at the coarser ones
            relationships = report_cypher.OutgoingRelationships()
            #: each record's member row, read once, at its finest level
            known_members = report_cypher.KnownMembers(fields=store)
            #: each member's and relationship's key line and context row, made once
            run_rows = RunRows()
            for batch in same_level_batches(group):
                # A community whose only sub-community has all of its members is that sub-community
                # seen one level up: it takes the sub-community's report instead of a second
                # generation (an LLM call with a real backend) that could only say the same.
                copies = {
                    c["id"]: c["children"][0]
                    for c in batch
                    if len(c["children"]) == 1
                    and c["children"][0] in done
                    and len(done[c["children"][0]][1]) == int(c["size"] or 0)
                }
                to_read = [c["id"] for c in batch if c["id"] not in copies]
                members_of = report_cypher.members_of_many(
                    driver, database, to_read, known=known_members
                )
                # The relationships are read on the reader's thread while the mentions are read
                # here: each read leaves a core idle half the time (Neo4j answers, the driver
                # decodes).
                groups = {cid: [int(m["naId"]) for m in members_of[cid]] for cid in to_read}
                relationships.adopt(
                    store.settled_outgoing(
                        relationships.missing(n for na_ids in groups.values() for n in na_ids)
                    )
                )
                relationships_read = reader.submit(
                    report_cypher.relationships_within,
                    driver,
                    database,
                    groups,
                    known_members.rows,
                    known=relationships,
                )
                # What a community's text names is its sub-communities' totals plus its other
                # members' (Leiden's levels nest, so the sub-communities split their members):
                # each record's mentions are read once per run, not once per level.
                parts = {
                    cid: _mention_parts(community, members_of[cid], done, mention_totals_of)
                    for community in batch
                    if (cid := community["id"]) in members_of
                }
                mentions = report_cypher.mentions_of_records(
                    driver, database, [na_id for _, rest in parts.values() for na_id in rest]
                )
                relationships_of = relationships_read.result()
                store.remember_outgoing(relationships.take_read())
                for community in batch:
                    position += 1
                    community_id = community["id"]
                    level = int(community["level"])
                    child = copies.get(community_id)
                    if child is not None:
                        child_report, na_ids = done[child]
                        report = replace(child_report, community_id=community_id, level=level)
                        context_key = context_keys[child]
                        mention_totals_of[community_id] = mention_totals_of.pop(child)
                        tops[community_id] = tops[child]
                        input_key, used_sub_reports, truncated = None, False, False
                        result.copied_from_sub_community += 1
                    else:
                        children, rest = parts[community_id]
                        totals = merge_mention_totals(
                            [
                                *(mention_totals_of.pop(c) for c in children),
                                mention_totals(mentions, rest),
                            ]
                        )
                        mention_totals_of[community_id] = totals
                        input_key = report_input_key(
                            generator=generator,
                            counter_key=embedder.key,
                            token_budget=token_budget,
                            community=community,
                            members=members_of[community_id],
                            relationships=relationships_of[community_id],
                            totals=totals,
                            sub_report_keys={c: context_keys.get(c) for c in community["children"]},
                            run_rows=run_rows,
                        )
                        stored = None if force else stored_report(community, input_key)
                        if stored is not None:
                            report, used_sub_reports, truncated = stored
                            context_key = community["reportContextKey"]
                            result.unchanged_inputs += 1
                        else:
                            context = context_from_rows(
                                community,
                                members_of[community_id],
                                relationships_of[community_id],
                                done,
                                token_budget=token_budget,
                                count_tokens=count_tokens,
                                row_costs=row_costs,
                                count_tokens_many=count_tokens_many,
                                mentioned=rank_mentioned(totals),
                                run_rows=run_rows,
                            )
                            report, was_cached = generate_report(
                                context, llm, cache, repairs=repairs
                            )
                            context_key = report_context_key(generator, context.text)
                            used_sub_reports, truncated = (
                                context.used_sub_reports,
                                context.truncated,
                            )
                            result.cached += int(was_cached)
                            result.generated += int(not was_cached)
                        na_ids = frozenset(int(m["naId"]) for m in members_of[community_id])
                        tops[community_id] = top_members(members_of[community_id])
                        result.used_sub_reports += int(used_sub_reports)
                        result.truncated += int(truncated)
                    done[community_id] = (report, na_ids)
                    context_keys[community_id] = context_key
                    totals_to_remember.append(
                        (community_id, community.get("memberHash"), mention_totals_of[community_id])
                    )
                    if community.get("summaryEmbeddingKey") != summary_embedding_key(
                        embedder.key, context_key
                    ):
                        summaries_to_embed.append(summary_embedding_text(report))
                    result.communities_in_scope += 1
                    rows.append(
                        report_row(
                            community_id,
                            report,
                            context_key,
                            tops[community_id],
                            input_key=input_key,
                            used_sub_reports=used_sub_reports,
                            truncated=truncated,
                        )
                    )
                    if len(result.preview) < 15:
                        result.preview.append(
                            {
                                "id": community_id,
                                "size": len(na_ids),
                                "title": report.title,
                                "rating": report.rating,
                            }
                        )
                    if position % 200 == 0:
                        log(f"reports: {position}/{len(communities)} ({result.cached} from cache)")
                early.submit(summaries_to_embed)
                summaries_to_embed.clear()
                if remembered is not None:
                    remembered.remember_mention_totals(totals_to_remember)
                totals_to_remember.clear()
            report_cypher.write_reports(driver, database, rows)
            rows = []
            members_seen += len(known_members.rows)
            records_touched += known_members.keys_read
            member_texts_read += known_members.read_with_text
            for community in group:
                for gone in (community["id"], *community["children"]):
                    done.pop(gone, None)
                    context_keys.pop(gone, None)
                    tops.pop(gone, None)
                    mention_totals_of.pop(gone, None)
            between_groups()
            forget_rendered()
            release_free_memory()

        report_cypher.ensure_summary_index(driver, database, embedder.dimension)
        pending = list(report_cypher.pending_summary_embeddings(driver, database, embedder.key))
        if pending:
            # A community with the same members as its only sub-community gets the same report,
            # so many summaries repeat across levels; each distinct text is encoded once.
            texts = sorted({row["text"] for row in pending})
            vectors = {text: early.get(text) for text in texts}
            late = [text for text, vector in vectors.items() if vector is None]
            if late:
                vectors.update(zip(late, embedder.encode(late), strict=True))
            report_cypher.write_summary_embeddings(
                driver,
                database,
                [
                    {
                        "id": row["id"],
                        "vector": vectors[row["text"]],
                        "key": summary_embedding_key(embedder.key, row["key"]),
                    }
                    for row in pending
                ],
            )
            result.summaries_encoded = len(texts)
            result.summaries_encoded_early = len(texts) - len(late)
            release_free_memory()
    result.summaries_embedded = len(pending)
    result.communities, result.per_level, result.scoped = plan.total, plan.per_level, plan.scoped
    result.whole_because = plan.whole_because
    result.records_touched = records_touched
    result.members_in_scope = members_seen
    result.member_texts_read = member_texts_read
    result.reports_repaired, result.reports_replaced = repairs.repaired, repairs.replaced
    return result

"""The loop of a community_reports run: tree group by tree group (:mod:`.report_order`), and
within a group batch by batch of one level, finest first. Each community takes its only
sub-community's report when that one has all its members, keeps the report on its node when its
inputs are as recorded, or gets a report made from its context; each group's reports are
written when the group is done, and what the group's records gave is let go of then."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from neo4j import Driver

from nara_kg.embedding.encoder import Embedder, release_free_memory
from nara_kg.generation.community_report import CommunityReport
from nara_kg.generation.llm import LLM, GenerationCache, describe
from nara_kg.generation.report_context_data import MentionTotals
from nara_kg.generation.report_context_render import forget_rendered
from nara_kg.generation.report_order import same_level_batches, tree_groups
from nara_kg.generation.report_plan import ReportPlan, stored_report
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
from nara_kg.generation.single_report import ReportRepairs, generate_report
from nara_kg.graph.reports import KnownMembers, OutgoingRelationships
from nara_kg.ingest.chunking import TokenCounter, TokensCounter
from nara_kg.model.progress import Log

#: Communities listed in the run's preview table.
PREVIEW_COMMUNITIES = 15
#: A progress line every so many communities.
PROGRESS_EVERY_COMMUNITIES = 200


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
    #: Communities whose members' naIds were their sub-communities' together, not read.
    member_ids_composed: int = 0
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


def members_of_sub_communities(
    community: Mapping[str, Any], done: Mapping[str, tuple[CommunityReport, frozenset[int]]]
) -> list[int] | None:
    """A community's members' naIds as its sub-communities' together, when `done` (community
    id -> its report and members' naIds) holds every sub-community and together they are all of
    its members (its size counts the records under it: see
    :mod:`nara_kg.model.community_hierarchy`): then they need not be asked of the graph, level
    after level. None otherwise (a record whose finest community it is, or one unknown)."""
    children = community["children"]
    if not children or any(child not in done for child in children):
        return None
    parts = [done[child][1] for child in children]
    union = frozenset().union(*parts)
    if len(union) != int(community["size"] or 0) or sum(map(len, parts)) != len(union):
        return None
    return sorted(union)


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


@dataclass(frozen=True)
class ReportRunSetup:
    """What one run of the loop works with. `reads`: the module of reads and writes
    (:mod:`nara_kg.graph.reports`, or a stand-in in tests). With `remembered` (the report
    scope's store), each community's mention totals and each member's report row are kept
    there: a later run's communities take the totals of their sub-communities outside that run
    instead of reading those members' mentions, and the rows of members whose nodes did not
    change instead of reading their text."""

    driver: Driver
    database: str
    llm: LLM
    cache: GenerationCache | None
    embedder: Embedder
    plan: ReportPlan
    count_tokens: TokenCounter
    count_tokens_many: TokensCounter
    token_budget: int
    log: Log
    reads: Any
    force: bool = False
    remembered: ReportScope | None = None


@dataclass
class _GroupReads:
    """What the run derives from one tree group's records. It serves that tree alone (see
    :mod:`.report_order`), so each group starts with an empty one."""

    known_members: KnownMembers
    relationships: OutgoingRelationships
    row_costs: dict[str, int] = field(default_factory=dict)
    run_rows: RunRows = field(default_factory=RunRows)
    #: the group's report rows, written when the group is done
    rows: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Made:
    """A community's report and how the run came by it."""

    report: CommunityReport
    context_key: str
    na_ids: frozenset[int]
    input_key: str | None = None
    used_sub_reports: bool = False
    truncated: bool = False


@dataclass
class _Batch:
    """What one batch read: its communities' members, relationships and mentions."""

    copies: dict[str, str]
    members_of: dict[str, list[dict[str, Any]]]
    relationships_of: dict[str, Any]
    parts: dict[str, tuple[list[str], list[int]]]
    mentions: dict[int, list[dict[str, Any]]]


class ReportLoop:
    """One run's reports (:class:`ReportRunSetup`): what it keeps between batches and groups,
    and its figures."""

    def __init__(
        self, setup: ReportRunSetup, early: _EarlySummaryVectors, reader: ThreadPoolExecutor
    ) -> None:
        self._setup, plan = setup, setup.plan
        self._early, self._reader = early, reader
        self._generator = describe(setup.llm)
        self.result = ReportRunResult()
        self.repairs = ReportRepairs()
        #: community id -> (its report, its members' naIds)
        self._done: dict[str, tuple[CommunityReport, frozenset[int]]] = dict(plan.outside)
        self._context_keys: dict[str, str] = dict(plan.outside_context_keys)
        #: community id -> its members of highest degree (kept with the report for provenance)
        self._tops: dict[str, list[dict[str, Any]]] = {}
        #: community id -> what its members' text names, until its parent community has used it
        self._mention_totals_of: dict[str, MentionTotals] = dict(plan.outside_mention_totals)
        #: what the store keeps of each record (settled records are not read: see the class)
        self._store = MemberFieldStore(setup.remembered, plan.pending)
        self._position = 0
        self.members_seen = self.records_touched = self.member_texts_read = 0
        #: Communities whose members' naIds were their sub-communities', not read.
        self.member_ids_composed = 0

    def run_group(self, group: Sequence[dict[str, Any]]) -> None:
        """The group's reports, level by level, then written; then the group's entries go."""
        reads = _GroupReads(
            known_members=self._setup.reads.KnownMembers(fields=self._store),
            relationships=self._setup.reads.OutgoingRelationships(),
        )
        for batch in same_level_batches(group):
            self._run_batch(batch, reads)
        self._setup.reads.write_reports(self._setup.driver, self._setup.database, reads.rows)
        self.members_seen += len(reads.known_members.rows)
        self.records_touched += reads.known_members.keys_read
        self.member_texts_read += reads.known_members.read_with_text
        for community in group:
            for gone in (community["id"], *community["children"]):
                self._done.pop(gone, None)
                self._context_keys.pop(gone, None)
                self._tops.pop(gone, None)
                self._mention_totals_of.pop(gone, None)

    def _run_batch(self, batch: Sequence[dict[str, Any]], reads: _GroupReads) -> None:
        read = self._read_batch(batch, reads)
        summaries: list[str] = []
        totals_to_remember: list[tuple[str, str | None, MentionTotals]] = []
        for community in batch:
            self._position += 1
            community_id = community["id"]
            child = read.copies.get(community_id)
            made = (
                self._copied(community, child)
                if child is not None
                else self._kept_or_built(community, read, reads)
            )
            self._done[community_id] = (made.report, made.na_ids)
            self._context_keys[community_id] = made.context_key
            totals_to_remember.append(
                (community_id, community.get("memberHash"), self._mention_totals_of[community_id])
            )
            if community.get("summaryEmbeddingKey") != summary_embedding_key(
                self._setup.embedder.key, made.context_key
            ):
                summaries.append(summary_embedding_text(made.report))
            self.result.communities_in_scope += 1
            reads.rows.append(
                report_row(
                    community_id,
                    made.report,
                    made.context_key,
                    self._tops[community_id],
                    input_key=made.input_key,
                    used_sub_reports=made.used_sub_reports,
                    truncated=made.truncated,
                )
            )
            if len(self.result.preview) < PREVIEW_COMMUNITIES:
                self.result.preview.append(
                    {
                        "id": community_id,
                        "size": len(made.na_ids),
                        "title": made.report.title,
                        "rating": made.report.rating,
                    }
                )
            if self._position % PROGRESS_EVERY_COMMUNITIES == 0:
                self._setup.log(
                    f"reports: {self._position}/{len(self._setup.plan.communities)}"
                    f" ({self.result.cached} from cache)"
                )
        self._early.submit(summaries)
        if self._setup.remembered is not None:
            self._setup.remembered.remember_mention_totals(totals_to_remember)

    def _read_batch(self, batch: Sequence[dict[str, Any]], reads: _GroupReads) -> _Batch:
        driver, database, done = self._setup.driver, self._setup.database, self._done
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
        composed = {
            c["id"]: na_ids
            for c in batch
            if c["id"] not in copies and (na_ids := members_of_sub_communities(c, done))
        }
        self.member_ids_composed += len(composed)
        members_of = self._setup.reads.members_of_many(
            driver, database, to_read, known=reads.known_members, member_ids=composed
        )
        # The relationships are read on the reader's thread while the mentions are read here:
        # each read leaves a core idle half the time (Neo4j answers, the driver decodes).
        groups = {cid: [int(m["naId"]) for m in members_of[cid]] for cid in to_read}
        reads.relationships.adopt(
            self._store.settled_outgoing(
                reads.relationships.missing(n for na_ids in groups.values() for n in na_ids)
            )
        )
        relationships_read = self._reader.submit(
            self._setup.reads.relationships_within,
            driver,
            database,
            groups,
            reads.known_members.rows,
            known=reads.relationships,
        )
        # What a community's text names is its sub-communities' totals plus its other members'
        # (the graph's community tree nests, so the sub-communities split their members): each
        # record's mentions are read once per run, not once per level.
        parts = {
            cid: _mention_parts(community, members_of[cid], done, self._mention_totals_of)
            for community in batch
            if (cid := community["id"]) in members_of
        }
        mentions = self._setup.reads.mentions_of_records(
            driver, database, [na_id for _, rest in parts.values() for na_id in rest]
        )
        relationships_of = relationships_read.result()
        self._store.remember_outgoing(reads.relationships.take_read())
        return _Batch(copies, members_of, relationships_of, parts, mentions)

    def _copied(self, community: dict[str, Any], child: str) -> _Made:
        community_id = community["id"]
        child_report, na_ids = self._done[child]
        report = replace(child_report, community_id=community_id, level=int(community["level"]))
        self._mention_totals_of[community_id] = self._mention_totals_of.pop(child)
        self._tops[community_id] = self._tops[child]
        self.result.copied_from_sub_community += 1
        return _Made(report, self._context_keys[child], na_ids)

    def _kept_or_built(self, community: dict[str, Any], read: _Batch, reads: _GroupReads) -> _Made:
        community_id = community["id"]
        members = read.members_of[community_id]
        relationships = read.relationships_of[community_id]
        children, rest = read.parts[community_id]
        totals = merge_mention_totals(
            [
                *(self._mention_totals_of.pop(c) for c in children),
                mention_totals(read.mentions, rest),
            ]
        )
        self._mention_totals_of[community_id] = totals
        input_key = report_input_key(
            generator=self._generator,
            counter_key=self._setup.embedder.key,
            token_budget=self._setup.token_budget,
            community=community,
            members=members,
            relationships=relationships,
            totals=totals,
            sub_report_keys={c: self._context_keys.get(c) for c in community["children"]},
            run_rows=reads.run_rows,
        )
        na_ids = frozenset(int(m["naId"]) for m in members)
        self._tops[community_id] = top_members(members)
        stored = None if self._setup.force else stored_report(community, input_key)
        if stored is not None:
            report, used_sub_reports, truncated = stored
            context_key = community["reportContextKey"]
            self.result.unchanged_inputs += 1
        else:
            context = context_from_rows(
                community,
                members,
                relationships,
                self._done,
                token_budget=self._setup.token_budget,
                count_tokens=self._setup.count_tokens,
                row_costs=reads.row_costs,
                count_tokens_many=self._setup.count_tokens_many,
                mentioned=rank_mentioned(totals),
                run_rows=reads.run_rows,
            )
            report, was_cached = generate_report(
                context, self._setup.llm, self._setup.cache, repairs=self.repairs
            )
            context_key = report_context_key(self._generator, context.text)
            used_sub_reports, truncated = context.used_sub_reports, context.truncated
            self.result.cached += int(was_cached)
            self.result.generated += int(not was_cached)
        self.result.used_sub_reports += int(used_sub_reports)
        self.result.truncated += int(truncated)
        return _Made(report, context_key, na_ids, input_key, used_sub_reports, truncated)

    def embed_summaries(self) -> int:
        """The summaries' vectors of every report whose vector key is not current: those
        encoded early taken, the others encoded now. Returns how many reports got one."""
        driver, database, embedder = self._setup.driver, self._setup.database, self._setup.embedder
        self._setup.reads.ensure_summary_index(driver, database, embedder.dimension)
        pending = list(self._setup.reads.pending_summary_embeddings(driver, database, embedder.key))
        if not pending:
            return 0
        # A community with the same members as its only sub-community gets the same report, so
        # many summaries repeat across levels; each distinct text is encoded once.
        texts = sorted({row["text"] for row in pending})
        vectors = {text: self._early.get(text) for text in texts}
        late = [text for text, vector in vectors.items() if vector is None]
        if late:
            vectors.update(zip(late, embedder.encode(late), strict=True))
        self._setup.reads.write_summary_embeddings(
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
        self.result.summaries_encoded = len(texts)
        self.result.summaries_encoded_early = len(texts) - len(late)
        release_free_memory()
        return len(pending)

    def finish(self, summaries_embedded: int) -> ReportRunResult:
        result, plan = self.result, self._setup.plan
        result.summaries_embedded = summaries_embedded
        result.communities, result.per_level = plan.total, plan.per_level
        result.scoped = plan.scoped
        result.whole_because = plan.whole_because
        result.records_touched = self.records_touched
        result.members_in_scope = self.members_seen
        result.member_texts_read = self.member_texts_read
        result.member_ids_composed = self.member_ids_composed
        result.reports_repaired = self.repairs.repaired
        result.reports_replaced = self.repairs.replaced
        return result


def generate_all(
    setup: ReportRunSetup, *, between_groups: Callable[[], None] = lambda: None
) -> ReportRunResult:
    """Every report of the setup's plan (:class:`ReportLoop`), tree group by tree group, with
    `between_groups` called after each (the token counts let go of the group's), then the
    summaries embedded."""
    with (
        _EarlySummaryVectors(setup.embedder) as early,
        ThreadPoolExecutor(max_workers=1, thread_name_prefix="report-reader") as reader,
    ):
        loop = ReportLoop(setup, early, reader)
        for group in tree_groups(setup.plan.communities):
            loop.run_group(group)
            between_groups()
            forget_rendered()
            release_free_memory()
        embedded = loop.embed_summaries()
    return loop.finish(embedded)

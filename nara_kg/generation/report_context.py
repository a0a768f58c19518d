"""The context a community report is written from: its members, relationships and
sub-community reports as CSV tables within a token budget.

Pure functions over plain data (:mod:`nara_kg.generation.report_rows` makes that data from the
rows that :mod:`nara_kg.graph.reports` reads).

Context (GraphRAG, seeds 001-003)
---------------------------------
A community's context is two CSV-like tables, members (``id,title,type,degree,excerpt``) and
relationships (``id,source,target,type,degree``), members ranked by degree and relationships by
the combined degree of their two ends, highest first (ties by naId, so the order is total).
When the members' text names authorities (MENTIONED_IN), a third table, ``-----Mentioned-----``
(``id,authority,type,mentions,records``), lists the most named, most mentions first; it is no
candidate for the budget rules below but part of every context (like the section headers).

1. **Everything fits.** When all members and relationships fit ``token_budget``, that is the
   context.
2. **Sub-report substitution.** Otherwise, if sub-community reports exist, they are sorted largest
   sub-community first (ties by community id) and substituted one at a time: after substituting
   the first *k*, the context is a sub-report table holding those *k* reports, plus every member
   not in any of the *k* sub-communities, plus every relationship except those with both ends
   inside the same substituted sub-community (the sub-report already summarises those; an edge
   *between* two sub-communities or to an unsubstituted member is what the parent adds). The
   first *k* whose context fits is used, whole.
3. **Truncation.** When even all sub-reports plus the remaining members do not fit (or there are
   no sub-reports), the context is filled greedily until the next element would exceed the
   budget: first sub-reports, largest first; then, for members and relationships not covered by
   an included sub-report, GraphRAG's leaf order — for each relationship by descending combined
   degree, its source member, its target member (each once), then the relationship itself; then
   members without a relationship, by degree. ``truncated`` is then true.

Token counts are additive estimates per row (the tokenizer's special tokens subtracted once per
row) checked against a real count of the final text; the rare text that a non-additive tokenizer
tips over the budget loses its last-added elements until it fits.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from nara_kg.generation.community_profile import profile_of_ranked
from nara_kg.generation.report_context_data import (
    EXCERPT_MAX_CHARS,
    TITLE_MAX_CHARS,
    MemberInfo,
    MentionedInfo,
    RelationshipInfo,
    ReportContext,
    SubReport,
)
from nara_kg.generation.report_context_render import (
    SUB_FOOTER,
    SUB_HEADER,
    RelKey,
    clip,
    member_row,
    rel_key,
    rel_row,
    render_mentioned,
    render_tables,
    sub_row,
)
from nara_kg.ingest.chunking import TokenCounter, TokensCounter

__all__ = [
    "EXCERPT_MAX_CHARS",
    "TITLE_MAX_CHARS",
    "MemberInfo",
    "MentionedInfo",
    "RelationshipInfo",
    "ReportContext",
    "SubReport",
    "build_context",
    "clip",
    "render_mentioned",
]


def _member_rank(member: MemberInfo) -> tuple[int, int]:
    """Members rank by degree, highest first, then by naId."""
    return (-member.degree, member.na_id)


@dataclass
class _Ranked:
    """Members and relationships of one community, deduplicated and ranked; each row rendered
    when first asked for (a coarse community's context uses a few of its many rows)."""

    members: list[MemberInfo]
    rels: list[RelationshipInfo]
    #: A relationship's rank in the whole community: its row's id.
    rank_of: dict[RelKey, int]
    #: The members by naId, in rank order, and their naIds.
    by_id: dict[int, MemberInfo] = field(default_factory=dict)
    member_ids: frozenset[int] = frozenset()
    #: The rendered Mentioned table: part of every selection, like the section headers.
    mentioned: str = ""
    _member_rows: dict[int, str] = field(default_factory=dict)
    _rel_rows: dict[RelKey, str] = field(default_factory=dict)

    @classmethod
    def of(
        cls, members: Iterable[MemberInfo], relationships: Iterable[RelationshipInfo]
    ) -> _Ranked:
        unique_members: dict[int, MemberInfo] = {}
        for member in sorted(members, key=_member_rank):
            unique_members.setdefault(member.na_id, member)
        unique_rels: dict[RelKey, RelationshipInfo] = {}
        for rel in sorted(
            relationships,
            key=lambda r: (-r.degree, r.source_na_id, r.target_na_id, r.rel_type),
        ):
            unique_rels.setdefault(rel_key(rel), rel)
        return cls(
            members=list(unique_members.values()),
            rels=list(unique_rels.values()),
            # The row id is the rank in the whole community, so a row reads the same whether or
            # not the rows before it made the cut.
            rank_of={key: rank for rank, key in enumerate(unique_rels, 1)},
            by_id=unique_members,
            member_ids=frozenset(unique_members),
        )

    def member_row(self, member: MemberInfo) -> str:
        row = self._member_rows.get(member.na_id)
        if row is None:
            row = self._member_rows[member.na_id] = member_row(member)
        return row

    def rel_row(self, rel: RelationshipInfo) -> str:
        key = rel_key(rel)
        row = self._rel_rows.get(key)
        if row is None:
            row = self._rel_rows[key] = rel_row(self.rank_of[key], rel)
        return row

    def row_of(self, item: MemberInfo | RelationshipInfo) -> str:
        return self.member_row(item) if isinstance(item, MemberInfo) else self.rel_row(item)

    def all_rows(self) -> list[str]:
        return [*map(self.member_row, self.members), *map(self.rel_row, self.rels)]

    def members_in(self, na_ids: Iterable[int]) -> list[MemberInfo]:
        """These members in rank order, found without walking every member."""
        return sorted((self.by_id[na_id] for na_id in na_ids), key=_member_rank)

    def rels_in(self, keys: Iterable[RelKey]) -> list[RelationshipInfo]:
        """These relationships in rank order (`keys`: of relationships of the community)."""
        ranks = sorted(map(self.rank_of.__getitem__, keys))
        # rank_of counts from 1 in the order of `rels`.
        return [self.rels[rank - 1] for rank in ranks]


@dataclass
class _Selection:
    subs: list[SubReport]
    member_ids: set[int]
    rel_keys: set[RelKey]


def _internal_to_one(rel: RelationshipInfo, subs: Sequence[SubReport]) -> bool:
    """Both ends inside the same sub-community: its report already covers the relationship."""
    return any(
        rel.source_na_id in sub.member_na_ids and rel.target_na_id in sub.member_na_ids
        for sub in subs
    )


def _first_holders(subs: Sequence[SubReport]) -> tuple[dict[int, int], bool]:
    """naId -> the index of the first of `subs` that holds it, and whether no record is in two
    of them (Leiden's sub-communities split their community). Built a sub-community at a time
    by dict operations, last first so that the first holder's index stays: a coarse community's
    members are looked up here, not walked one by one in Python."""
    first_at: dict[int, int] = {}
    for index in range(len(subs) - 1, -1, -1):
        first_at.update(dict.fromkeys(subs[index].member_na_ids, index))
    return first_at, len(first_at) == sum(len(sub.member_na_ids) for sub in subs)


@dataclass
class _Coverage:
    """When substituting the first k sub-reports (in order) covers each member and relationship:
    a member from the first sub-community that holds it, a relationship from the first that
    holds both its ends. Lets step 2 find the rows left for every k from one pass instead of
    one per k (which grew with the square of a coarse community's sub-communities)."""

    member_at: dict[int, int]
    rel_at: dict[RelKey, int]

    @classmethod
    def of(cls, ranked: _Ranked, sub_order: Sequence[SubReport]) -> _Coverage:
        # `member_at` may hold records of the sub-communities that are not members: it is only
        # asked about members.
        member_at, disjoint = _first_holders(sub_order)
        rel_at: dict[RelKey, int] = {}
        if disjoint:
            # A relationship is inside a sub-community only when both ends are in that one.
            for rel in ranked.rels:
                at = member_at.get(rel.source_na_id)
                if at is not None and at == member_at.get(rel.target_na_id):
                    rel_at[rel_key(rel)] = at
            return cls(member_at, rel_at)
        subs_of: dict[int, list[int]] = {}
        for index, sub in enumerate(sub_order):
            for na_id in sub.member_na_ids:
                subs_of.setdefault(na_id, []).append(index)
        for rel in ranked.rels:
            source = subs_of.get(rel.source_na_id)
            target = subs_of.get(rel.target_na_id)
            if source and target:
                shared = set(source).intersection(target)
                if shared:
                    rel_at[rel_key(rel)] = min(shared)
        return cls(member_at, rel_at)

    def remaining(self, ranked: _Ranked, k: int) -> tuple[list[MemberInfo], list[RelationshipInfo]]:
        """The members not in the first k sub-communities and the relationships not inside one
        of them, in rank order."""
        members = [m for m in ranked.members if self.member_at.get(m.na_id, k) >= k]
        rels = [r for r in ranked.rels if self.rel_at.get(rel_key(r), k) >= k]
        return members, rels


@dataclass
class _Left:
    """The members and relationships left outside the first k sub-communities (in rank order)
    for the smallest k step 2 prices, their rows counted: those of every larger k are among
    them."""

    ranked: _Ranked
    coverage: _Coverage
    members: list[MemberInfo]
    rels: list[RelationshipInfo]
    budget: _Budget

    @classmethod
    def of(cls, ranked: _Ranked, sub_order: Sequence[SubReport], k: int, budget: _Budget) -> _Left:
        coverage = _Coverage.of(ranked, sub_order)
        members, rels = coverage.remaining(ranked, k)
        budget.prefetch([*map(ranked.member_row, members), *map(ranked.rel_row, rels)])
        return cls(ranked, coverage, members, rels, budget)

    def remaining(self, k: int) -> tuple[list[MemberInfo], list[RelationshipInfo]]:
        """:meth:`_Coverage.remaining` for this k (no smaller than the one priced)."""
        member_at, rel_at = self.coverage.member_at, self.coverage.rel_at
        return (
            [m for m in self.members if member_at.get(m.na_id, k) >= k],
            [r for r in self.rels if rel_at.get(rel_key(r), k) >= k],
        )

    def cost(self, members: Iterable[MemberInfo], rels: Iterable[RelationshipInfo]) -> int:
        ranked, row = self.ranked, self.budget.row
        return sum(row(ranked.member_row(m)) for m in members) + sum(
            row(ranked.rel_row(r)) for r in rels
        )


def _leaf_schedule(
    rels: Iterable[RelationshipInfo],
    member_of: Callable[[int], MemberInfo | None],
    loners: Iterable[MemberInfo],
) -> Iterator[MemberInfo | RelationshipInfo]:
    """GraphRAG's leaf order: per relationship (ranked) its two ends that are candidates
    (`member_of` gives them, None for the others), then itself; then the candidates not placed
    (`loners`, ranked). Lazy: the greedy fill stops at the first element that does not fit."""
    placed: set[int] = set()
    for rel in rels:
        for end in (rel.source_na_id, rel.target_na_id):
            if end not in placed:
                member = member_of(end)
                if member is not None:
                    placed.add(end)
                    yield member
        yield rel
    yield from (m for m in loners if m.na_id not in placed)


def _left_after(
    ranked: _Ranked, subs: Sequence[SubReport]
) -> tuple[Iterable[RelationshipInfo], Callable[[int], MemberInfo | None], Iterable[MemberInfo]]:
    """What step 3 fills from after the sub-reports `subs`, for :func:`_leaf_schedule`: the
    relationships inside none of them and the members in none of them. When the
    sub-communities do not overlap, both are found as the fill asks for them, so a coarse
    community whose budget the sub-reports nearly fill does not sort out every row."""
    first_at, disjoint = _first_holders(subs)
    if not disjoint:
        members, rels = _remaining(ranked, subs)
        return rels, {m.na_id: m for m in members}.get, members

    def rels_left() -> Iterator[RelationshipInfo]:
        for rel in ranked.rels:
            at = first_at.get(rel.source_na_id)
            if at is None or at != first_at.get(rel.target_na_id):
                yield rel

    def member_of(na_id: int) -> MemberInfo | None:
        return None if na_id in first_at else ranked.by_id.get(na_id)

    return rels_left(), member_of, (m for m in ranked.members if m.na_id not in first_at)


def _inside_one(subs: Sequence[SubReport]) -> Callable[[RelationshipInfo], bool]:
    """Whether a relationship has both ends in one of `subs` (whose report covers it)."""
    first_at, disjoint = _first_holders(subs)
    if not disjoint:
        return lambda rel: _internal_to_one(rel, subs)

    def inside(rel: RelationshipInfo) -> bool:
        at = first_at.get(rel.source_na_id)
        return at is not None and at == first_at.get(rel.target_na_id)

    return inside


#: Rows of the greedy fill counted per batch (the tokenizer's batch call is faster than one
#: call per row, and a fill seldom uses more rows than this).
_FILL_BATCH = 64


def _batched_rows(
    ranked: _Ranked, items: Iterator[MemberInfo | RelationshipInfo], budget: _Budget
) -> Iterator[tuple[MemberInfo | RelationshipInfo, str]]:
    """Each item with its row, the rows counted a batch ahead."""
    while batch := list(itertools.islice(items, _FILL_BATCH)):
        rows = [ranked.row_of(item) for item in batch]
        budget.prefetch(rows)
        yield from zip(batch, rows, strict=True)


def _remaining(
    ranked: _Ranked, subs: Sequence[SubReport]
) -> tuple[list[MemberInfo], list[RelationshipInfo]]:
    """The members in none of `subs` and the relationships inside none of them, in rank order,
    without pricing any row."""
    return _Coverage.of(ranked, subs).remaining(ranked, len(subs))


def _uncovered(ranked: _Ranked, sub_order: Sequence[SubReport]) -> list[int]:
    """A floor under the rows left outside the first k sub-communities, for k = 1..len: the
    members in none of them, and, when the sub-communities do not overlap (Leiden's nest and
    split their community), the relationships inside none of them too."""
    member_ids = ranked.member_ids
    first_at, disjoint = _first_holders(sub_order)
    freed = [0] * (len(sub_order) + 1)
    if disjoint:
        for index, sub in enumerate(sub_order):
            freed[index] = len(member_ids.intersection(sub.member_na_ids))
    else:
        for na_id in member_ids.intersection(first_at):
            freed[first_at[na_id]] += 1
    left = len(member_ids)
    if disjoint:
        # A relationship is inside a sub-community only when both ends are in that one.
        left += len(ranked.rels)
        for rel in ranked.rels:
            at = first_at.get(rel.source_na_id)
            if at is not None and at == first_at.get(rel.target_na_id):
                freed[at] += 1
    counts: list[int] = []
    for index in range(len(sub_order)):
        left -= freed[index]
        counts.append(left)
    return counts


class _Budget:
    def __init__(
        self,
        count_tokens: TokenCounter,
        token_budget: int,
        row_costs: dict[str, int] | None = None,
        count_many: TokensCounter | None = None,
    ) -> None:
        self.count = count_tokens
        self.count_many = count_many
        self.budget = token_budget
        self.specials = count_tokens("")
        self._row_costs: dict[str, int] = {} if row_costs is None else row_costs

    def prefetch(self, texts: Iterable[str]) -> None:
        """Count the rows not yet counted in one batch (the tokenizer's batch call is several
        times faster than one call per row)."""
        if self.count_many is None:
            return
        todo = list(dict.fromkeys(t for t in texts if t not in self._row_costs))
        if todo:
            for text, tokens in zip(todo, self.count_many(todo), strict=True):
                self._row_costs[text] = max(tokens - self.specials, 0)

    def counted_at_least(self, texts: Iterable[str]) -> int:
        """The tokens of the texts already counted (the others as none): a lower bound of what
        they cost, found without counting anything."""
        costs = self._row_costs
        return sum(costs.get(text, 0) for text in texts)

    def least_row_cost(self) -> int:
        """A floor under every member, relationship and sub-report row's cost: each is a line
        that begins with a number, so a counter that gives a bare number a token gives every
        row one (a word, a word piece or a byte-pair token alike); 0 for one that does not."""
        return min(self.row("0\n"), 1)

    def row(self, text: str) -> int:
        cost = self._row_costs.get(text)
        if cost is None:
            cost = max(self.count(text) - self.specials, 0)
            self._row_costs[text] = cost
        return cost


def _render_selection(ranked: _Ranked, selection: _Selection) -> str:
    return render_tables(
        [sub_row(sub) for sub in selection.subs],
        [ranked.member_row(m) for m in ranked.members_in(selection.member_ids)],
        [ranked.rel_row(r) for r in ranked.rels_in(selection.rel_keys)],
        ranked.mentioned,
    )


def _greedy(
    ranked: _Ranked, sub_order: Sequence[SubReport], budget: _Budget
) -> tuple[_Selection, str, int]:
    """Step 3: fill in priority order until the next element would not fit."""
    base = budget.count(render_tables([], [], [], ranked.mentioned))
    sub_section = budget.row(SUB_HEADER + SUB_FOOTER)
    used = base
    # Every addition is logged so that a real count over budget can undo the latest ones.
    log: list[SubReport | MemberInfo | RelationshipInfo] = []
    subs: list[SubReport] = []
    for sub in sub_order:
        cost = budget.row(sub_row(sub)) + (0 if subs else sub_section)
        if used + cost > budget.budget:
            break
        used += cost
        subs.append(sub)
        log.append(sub)
    selection = _Selection(subs=subs, member_ids=set(), rel_keys=set())
    schedule = _leaf_schedule(*_left_after(ranked, subs))
    for item, row in _batched_rows(ranked, schedule, budget):
        cost = budget.row(row)
        if used + cost > budget.budget:
            break
        used += cost
        log.append(item)
        if isinstance(item, MemberInfo):
            selection.member_ids.add(item.na_id)
        else:
            selection.rel_keys.add(rel_key(item))
    text = _render_selection(ranked, selection)
    tokens = budget.count(text)
    while tokens > budget.budget and log:
        last = log.pop()
        if isinstance(last, SubReport):
            selection.subs.remove(last)
        elif isinstance(last, MemberInfo):
            selection.member_ids.discard(last.na_id)
        else:
            selection.rel_keys.discard(rel_key(last))
        text = _render_selection(ranked, selection)
        tokens = budget.count(text)
    return selection, text, tokens


def build_context(
    community_id: str,
    level: int,
    members: Sequence[MemberInfo],
    relationships: Sequence[RelationshipInfo],
    sub_reports: Sequence[SubReport],
    *,
    token_budget: int,
    count_tokens: TokenCounter,
    row_costs: dict[str, int] | None = None,
    count_tokens_many: TokensCounter | None = None,
    mentioned: Sequence[MentionedInfo] = (),
) -> ReportContext:
    """The report context of one community within `token_budget` (rules in the module doc).

    `row_costs` (row text -> tokens) may be shared between the calls of one run with the same
    `count_tokens`: a member's row reads the same at every level of the hierarchy. `mentioned`
    (the authorities most named in the members' text, ranked) is a table of its own after the
    relationships, left out only when the budget cannot hold it beside the empty sections.
    """
    ranked = _Ranked.of(members, relationships)
    profile = profile_of_ranked(ranked.by_id, ranked.rels)
    budget = _Budget(count_tokens, token_budget, row_costs, count_tokens_many)
    skeleton = budget.count(render_tables([], [], []))
    if skeleton > token_budget:
        raise ValueError(
            f"token budget {token_budget} is smaller than the empty context ({skeleton} tokens)"
        )
    ranked.mentioned = render_mentioned(mentioned)
    if ranked.mentioned:
        with_mentioned = budget.count(render_tables([], [], [], ranked.mentioned))
        if with_mentioned > token_budget:
            ranked.mentioned, mentioned = "", ()
        else:
            skeleton = with_mentioned

    def result(selection: _Selection, text: str, tokens: int) -> ReportContext:
        included_members = tuple(ranked.members_in(selection.member_ids))
        included_rels = tuple(ranked.rels_in(selection.rel_keys))
        covered = frozenset[int]().union(*(sub.member_na_ids for sub in selection.subs))
        inside_one = _inside_one(selection.subs)
        truncated = bool(ranked.member_ids - covered - selection.member_ids) or any(
            rel_key(r) not in selection.rel_keys and not inside_one(r) for r in ranked.rels
        )
        return ReportContext(
            community_id=community_id,
            level=level,
            text=text,
            tokens=tokens,
            used_sub_reports=bool(selection.subs),
            members_included=len(included_members),
            relationships_included=len(included_rels),
            sub_reports_included=tuple(sub.community_id for sub in selection.subs),
            truncated=truncated,
            members=included_members,
            relationships=included_rels,
            sub_reports=tuple(selection.subs),
            members_total=len(ranked.members),
            relationships_total=len(ranked.rels),
            mentioned=tuple(mentioned),
            profile=profile,
        )

    # Every row costs at least `least`: the floors below decide, without rendering or counting
    # the rows of a community of thousands of records, what its rows' costs would decide.
    least = budget.least_row_cost()

    # 1. Everything, unless its rows alone cost over twice the budget: rows' costs add up (step
    # 2's estimates rely on it too), and a community of thousands of records would otherwise be
    # rendered whole, every run, to learn that it does not fit.
    if skeleton + least * (len(ranked.members) + len(ranked.rels)) <= 2 * token_budget:
        rows = ranked.all_rows()
        # Every word is at least one token (below), so the rows' words are a closer floor,
        # had without counting any row.
        words = least * sum(len(row.split()) for row in rows)
        if skeleton + words <= 2 * token_budget:
            budget.prefetch(rows)
        if skeleton + max(words, budget.counted_at_least(rows)) <= 2 * token_budget:
            everything = _Selection(
                subs=[],
                member_ids={m.na_id for m in ranked.members},
                rel_keys={rel_key(r) for r in ranked.rels},
            )
            text = _render_selection(ranked, everything)
            # Every word is at least one token for word-piece and byte-pair tokenizers alike, so
            # a text of more than twice as many words as the budget cannot fit either.
            if len(text.split()) <= 2 * token_budget:
                tokens = count_tokens(text)
                if tokens <= token_budget:
                    return result(everything, text, tokens)

    # 2. Substitute sub-reports, largest sub-community first, until the whole context fits. A k
    # whose sub-reports and uncovered members alone (each member row at its floor) exceed the
    # budget is passed over unpriced; the rows are priced once, when some k might fit.
    sub_order = sorted(sub_reports, key=lambda sub: (-sub.size, sub.community_id))
    sub_section = budget.row(SUB_HEADER + SUB_FOOTER)
    uncovered = _uncovered(ranked, sub_order)
    # The rows left outside the first k sub-communities only shrink as k grows, so the rows
    # priced are those left at the first k that passes the floor: with a floor of a token a
    # row, no more than the budget holds, however large the community.
    left: _Left | None = None
    sub_costs = 0
    for k in range(1, len(sub_order) + 1):
        sub_costs += budget.row(sub_row(sub_order[k - 1]))
        if skeleton + sub_section + sub_costs > token_budget:
            break  # the sub-reports alone exceed it, and only grow with k
        if skeleton + sub_section + sub_costs + least * uncovered[k - 1] > token_budget:
            continue
        if left is None:
            left = _Left.of(ranked, sub_order, k, budget)
        rest_members, rest_rels = left.remaining(k)
        estimate = skeleton + sub_section + sub_costs + left.cost(rest_members, rest_rels)
        if estimate > token_budget:
            continue
        selection = _Selection(
            subs=sub_order[:k],
            member_ids={m.na_id for m in rest_members},
            rel_keys={rel_key(r) for r in rest_rels},
        )
        text = _render_selection(ranked, selection)
        tokens = count_tokens(text)
        if tokens <= token_budget:
            return result(selection, text, tokens)

    # 3. Nothing complete fits: fill greedily and say so.
    selection, text, tokens = _greedy(ranked, sub_order, budget)
    return result(selection, text, tokens)

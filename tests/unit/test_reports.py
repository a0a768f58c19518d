from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from nara_kg.generation.community_report import CommunityReport, Finding
from nara_kg.generation.extractive import (
    GENERATED_BY_EXTRACTIVE,
    extractive_cache_key,
    extractive_rating,
    extractive_report,
)
from nara_kg.generation.llm import (
    ExtractiveLLM,
    GenerationCache,
    OpenAICompatibleLLM,
    llm_cache_key,
)
from nara_kg.generation.report_context import (
    MemberInfo,
    MentionedInfo,
    RelationshipInfo,
    ReportContext,
    SubReport,
    build_context,
)
from nara_kg.generation.report_parse import ReportFormatError, parse_report, repair_report
from nara_kg.generation.report_prompts import format_report_prompt
from nara_kg.generation.single_report import ReportRepairs, generate_report
from tests.openai_server import Reply, openai_test_server


def count_words(text: str) -> int:
    """A stand-in tokenizer: one token per whitespace word, plus two special tokens."""
    return len(text.split()) + 2


#: Tokens of a context with no rows: 8 header/fence words + 2 specials.
SKELETON = 10
#: Tokens the sub-report section header and fences add.
SUB_SECTION = 5


def member(na_id: int, degree: int, excerpt_words: int = 0, **kwargs: Any) -> MemberInfo:
    """A member whose row costs `max(excerpt_words, 1)` words (a one-word title)."""
    excerpt = " ".join(f"w{na_id}x{i}" for i in range(excerpt_words)) or None
    return MemberInfo(
        na_id=na_id,
        title=kwargs.get("title", f"m{na_id}"),
        node_type=kwargs.get("node_type", "series"),
        degree=degree,
        excerpt=excerpt,
        source=f"https://catalog.archives.gov/id/{na_id}",
    )


def rel(source: int, target: int, degree: int, rel_type: str = "Includes") -> RelationshipInfo:
    """A relationship whose row costs 3 words."""
    return RelationshipInfo(
        source_na_id=source,
        target_na_id=target,
        rel_type=rel_type,
        source_title=f"m{source}",
        target_title=f"m{target}",
        degree=degree,
    )


def report(community_id: str, title: str = "T", summary: str = "s") -> CommunityReport:
    return CommunityReport(
        community_id=community_id,
        level=0,
        title=title,
        summary=summary,
        rating=1.0,
        rating_explanation="r",
        findings=(),
        generated_by="extractive",
    )


def sub(community_id: str, members: set[int]) -> SubReport:
    """A sub-report whose row costs 1 word."""
    return SubReport(
        community_id=community_id,
        size=len(members),
        report=report(community_id),
        member_na_ids=frozenset(members),
    )


def ids(context: ReportContext) -> list[int]:
    return [m.na_id for m in context.members]


def rel_pairs(context: ReportContext) -> list[tuple[int, int]]:
    return [(r.source_na_id, r.target_na_id) for r in context.relationships]


# --- build_context ----------------------------------------------------------------------------


def test_whole_community_fits_ranked_by_degree() -> None:
    members = [member(1, 2), member(2, 9), member(3, 5)]
    rels = [rel(1, 3, 7), rel(2, 3, 14)]
    context = build_context(
        "0-7", 0, members, rels, [], token_budget=1000, count_tokens=count_words
    )
    assert ids(context) == [2, 3, 1]
    assert rel_pairs(context) == [(2, 3), (1, 3)]
    assert context.text == (
        "-----Records-----\n```csv\nid,title,type,degree,excerpt\n"
        "2,m2,series,9,\n3,m3,series,5,\n1,m1,series,2,\n```\n"
        "-----Relationships-----\n```csv\nid,source,target,type,degree\n"
        "1,m2 (2),m3 (3),Includes,14\n2,m1 (1),m3 (3),Includes,7\n```\n"
    )
    assert context.tokens == count_words(context.text) == SKELETON + 3 + 6
    assert not context.truncated
    assert not context.used_sub_reports
    assert (context.members_included, context.relationships_included) == (3, 2)
    assert (context.members_total, context.relationships_total) == (3, 2)
    assert context.sub_reports_included == ()


def test_budget_cuts_lowest_degree_members_first() -> None:
    members = [member(1, 1), member(2, 9), member(3, 5), member(4, 3)]
    context = build_context(
        "0-1", 0, members, [], [], token_budget=SKELETON + 2, count_tokens=count_words
    )
    assert ids(context) == [2, 3]
    assert context.tokens == SKELETON + 2
    assert context.truncated
    assert (context.members_total, context.members_included) == (4, 2)


def test_degree_ties_break_by_na_id_and_duplicates_are_dropped() -> None:
    members = [member(9, 4), member(3, 4), member(3, 4), member(5, 4)]
    context = build_context("0-1", 0, members, [], [], token_budget=1000, count_tokens=count_words)
    assert ids(context) == [3, 5, 9]


def test_leaf_order_adds_both_ends_then_the_relationship() -> None:
    # Member 4 has the highest degree but no relationship: GraphRAG's leaf order puts the
    # prominent edge (2-3) and its ends first, and loners last.
    members = [member(2, 6), member(3, 5), member(4, 8, excerpt_words=1)]
    rels = [rel(2, 3, 11)]
    fits_edge = build_context(
        "0-1", 0, members, rels, [], token_budget=SKELETON + 5, count_tokens=count_words
    )
    assert ids(fits_edge) == [2, 3]
    assert rel_pairs(fits_edge) == [(2, 3)]
    assert fits_edge.truncated

    # One token short of the edge: the greedy fill stops there (it does not skip ahead to 4).
    short = build_context(
        "0-1", 0, members, rels, [], token_budget=SKELETON + 4, count_tokens=count_words
    )
    assert ids(short) == [2, 3]
    assert rel_pairs(short) == []

    everything = build_context(
        "0-1", 0, members, rels, [], token_budget=SKELETON + 6, count_tokens=count_words
    )
    assert ids(everything) == [4, 2, 3]  # rendered in rank order
    assert not everything.truncated


def test_relationship_rows_keep_their_community_rank_when_cut() -> None:
    members = [member(1, 5), member(2, 4), member(3, 3)]
    rels = [rel(1, 2, 9), rel(2, 3, 7), rel(1, 3, 8)]
    context = build_context(
        "0-1", 0, members, rels, [], token_budget=SKELETON + 2 + 3 + 1 + 3, count_tokens=count_words
    )
    # Schedule: 1, 2, (1,2), 3, (1,3) -- then (2,3) does not fit.
    assert rel_pairs(context) == [(1, 2), (1, 3)]
    assert "\n2,m1 (1),m3 (3),Includes,8\n" in context.text


SUB_MEMBERS = [
    member(1, 9, excerpt_words=10),
    member(2, 8, excerpt_words=10),
    member(3, 7, excerpt_words=10),
    member(4, 6, excerpt_words=10),
    member(5, 5, excerpt_words=10),
    member(6, 4, excerpt_words=10),
]
SUB_RELS = [rel(1, 2, 17), rel(3, 4, 13), rel(5, 6, 9)]
# "0-b" is the larger sub-community; "0-a" sorts first by id, so order proves largest-first.
LARGE = sub("0-b", {1, 2, 3})
SMALL = sub("0-a", {4, 5})
FULL_TOKENS = SKELETON + 60 + 9


def test_full_context_within_budget_ignores_sub_reports() -> None:
    context = build_context(
        "1-0",
        1,
        SUB_MEMBERS,
        SUB_RELS,
        [SMALL, LARGE],
        token_budget=FULL_TOKENS,
        count_tokens=count_words,
    )
    assert context.tokens == FULL_TOKENS
    assert not context.used_sub_reports
    assert context.members_included == 6
    assert "Sub-community" not in context.text


def test_substitutes_the_largest_sub_community_first() -> None:
    context = build_context(
        "1-0",
        1,
        SUB_MEMBERS,
        SUB_RELS,
        [SMALL, LARGE],
        token_budget=FULL_TOKENS - 1,
        count_tokens=count_words,
    )
    assert context.used_sub_reports
    assert context.sub_reports_included == ("0-b",)
    assert [s.community_id for s in context.sub_reports] == ["0-b"]
    # Its members are replaced by its report; the edge inside it (1-2) goes with them, the edge
    # leaving it (3-4) and the unrelated one (5-6) stay.
    assert ids(context) == [4, 5, 6]
    assert rel_pairs(context) == [(3, 4), (5, 6)]
    assert context.tokens == SKELETON + SUB_SECTION + 1 + 30 + 6
    assert not context.truncated
    assert context.text.startswith(
        "-----Sub-community reports-----\n```csv\nid,size,title,summary,findings\n0-b,3,T,s,\n```\n"
    )


def test_substitutes_more_sub_communities_until_it_fits() -> None:
    context = build_context(
        "1-0", 1, SUB_MEMBERS, SUB_RELS, [SMALL, LARGE], token_budget=40, count_tokens=count_words
    )
    assert context.sub_reports_included == ("0-b", "0-a")
    assert ids(context) == [6]
    # 3-4 joins the two substituted sub-communities: it stays, as does 5-6 (6 is not covered).
    assert rel_pairs(context) == [(3, 4), (5, 6)]
    assert context.tokens == SKELETON + SUB_SECTION + 2 + 10 + 6
    assert not context.truncated


def test_truncates_after_all_sub_reports_when_still_too_big() -> None:
    context = build_context(
        "1-0", 1, SUB_MEMBERS, SUB_RELS, [SMALL, LARGE], token_budget=20, count_tokens=count_words
    )
    assert context.sub_reports_included == ("0-b", "0-a")
    # Then the leaf order over what is left: edge 3-4 (both ends covered) fits; member 6 not.
    assert rel_pairs(context) == [(3, 4)]
    assert ids(context) == []
    assert context.tokens == 20
    assert context.truncated


def test_sub_reports_themselves_are_cut_largest_first() -> None:
    context = build_context(
        "1-0",
        1,
        SUB_MEMBERS,
        SUB_RELS,
        [SMALL, LARGE],
        token_budget=SKELETON + SUB_SECTION + 1,
        count_tokens=count_words,
    )
    assert context.sub_reports_included == ("0-b",)
    assert context.truncated


def test_no_sub_reports_means_plain_truncation() -> None:
    context = build_context(
        "1-0", 1, SUB_MEMBERS, SUB_RELS, [], token_budget=40, count_tokens=count_words
    )
    assert not context.used_sub_reports
    assert context.truncated
    # Schedule: 1 (10), 2 (10), edge 1-2 (3), then 3 (10) would make 43.
    assert ids(context) == [1, 2]
    assert rel_pairs(context) == [(1, 2)]
    assert context.tokens == 33


def test_budget_below_the_skeleton_is_an_error() -> None:
    with pytest.raises(ValueError, match="smaller than the empty context"):
        build_context("0-1", 0, [member(1, 1)], [], [], token_budget=9, count_tokens=count_words)


def test_a_non_additive_tokenizer_never_ends_over_budget() -> None:
    def lumpy(text: str) -> int:
        # One extra token per four lines: the per-row estimate undercounts.
        return len(text.split()) + 2 + text.count("\n") // 4

    members = [member(i, 10 - i) for i in range(1, 9)]
    budget = (
        lumpy(
            "-----Records-----\n```csv\nid,title,type,degree,excerpt\n```\n"
            "-----Relationships-----\n```csv\nid,source,target,type,degree\n```\n"
        )
        + 8
    )
    context = build_context("0-1", 0, members, [], [], token_budget=budget, count_tokens=lumpy)
    assert budget == 20
    assert context.tokens == lumpy(context.text) <= budget
    assert context.members_included == 7


def test_a_context_far_over_budget_is_never_counted_whole_and_row_costs_are_shared() -> None:
    members = [member(i, 100 - i, excerpt_words=5) for i in range(1, 60)]
    counted: list[str] = []

    def recording(text: str) -> int:
        counted.append(text)
        return count_words(text)

    shared: dict[str, int] = {}
    budget = 40
    context = build_context(
        "1-0", 1, members, [], [], token_budget=budget, count_tokens=recording, row_costs=shared
    )
    baseline = build_context(
        "1-0", 1, members, [], [], token_budget=budget, count_tokens=count_words
    )
    assert context == baseline
    # The whole text (about 350 words, over twice the budget) was not tokenized.
    assert max(len(text.split()) for text in counted) <= 2 * budget
    # A second community with the same members reuses every row's count.
    counted.clear()
    build_context(
        "2-0", 2, members, [], [], token_budget=budget, count_tokens=recording, row_costs=shared
    )
    rows = set(shared)
    assert not rows & set(counted)


@pytest.mark.parametrize("seed", range(12))
def test_substitution_prices_the_rows_left_at_the_first_k_for_every_larger_k(seed: int) -> None:
    """Step 2 prices the rows left at the first k it looks at; the rows and prices it takes
    from them for every larger k equal the direct per-k ones, overlapping sub-communities and
    foreign naIds included."""
    import random

    from nara_kg.generation import report_context as rc

    rng = random.Random(seed)
    members = [member(i, rng.randint(0, 9), rng.randint(0, 4)) for i in range(1, 60)]
    rels = [
        rel(rng.randint(1, 59), rng.randint(1, 59), rng.randint(0, 9), rng.choice(["A", "B"]))
        for _ in range(120)
    ]
    subs = [sub(f"s{i}", {rng.randint(1, 70) for _ in range(rng.randint(1, 15))}) for i in range(9)]
    if seed % 2:  # sub-communities that split their members, as Leiden's do
        shuffled = rng.sample(range(1, 60), 59)
        subs = [sub(f"s{i}", set(shuffled[i * 6 : i * 6 + 6])) for i in range(9)]
    ranked = rc._Ranked.of(members, rels)
    order = sorted(subs, key=lambda s: (-s.size, s.community_id))
    budget = rc._Budget(count_words, 10_000)
    coverage = rc._Coverage.of(ranked, order)
    first = rng.randint(1, len(order))
    left = rc._Left.of(ranked, order, first, budget)
    for k in range(1, len(order) + 1):
        # The direct computation: every member outside the k, every relationship not inside one.
        covered = set().union(*(sub.member_na_ids for sub in order[:k]))
        rest_members = [m for m in ranked.members if m.na_id not in covered]
        rest_rels = [r for r in ranked.rels if not rc._internal_to_one(r, order[:k])]
        assert coverage.remaining(ranked, k) == (rest_members, rest_rels)
        assert rc._remaining(ranked, order[:k]) == (rest_members, rest_rels)
        # A floor: exact for sub-communities that do not overlap, members only otherwise.
        floor = rc._uncovered(ranked, order)[k - 1]
        assert len(rest_members) <= floor <= len(rest_members) + len(rest_rels)
        holdings = [n for sub in order for n in sub.member_na_ids]
        if len(holdings) == len(set(holdings)):
            assert floor == len(rest_members) + len(rest_rels)
        if k >= first:
            assert left.remaining(k) == (rest_members, rest_rels)
            assert left.cost(*left.remaining(k)) == sum(
                budget.row(ranked.member_row(m)) for m in rest_members
            ) + sum(budget.row(ranked.rel_row(r)) for r in rest_rels)


@pytest.mark.parametrize("seed", range(40))
def test_the_floors_choose_the_context_that_pricing_every_row_chooses(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A community's context is the same whether its rows are priced only when a floor cannot
    rule a step out, or all priced (a floor of 0 tokens a row, which rules nothing out): small
    and coarse communities, nested sub-communities (as Leiden's are) and ones that do not split
    the members, budgets that leave each of the three steps to decide."""
    import random

    from nara_kg.generation import report_context as rc

    rng = random.Random(seed)
    size = rng.choice([3, 12, 40, 150, 400])
    members = [member(i, rng.randint(0, 30), rng.randint(0, 6)) for i in range(1, size + 1)]
    rels = [
        rel(rng.randint(1, size), rng.randint(1, size), rng.randint(0, 40), rng.choice("AB"))
        for _ in range(rng.randint(0, 3 * size))
    ]
    order = list(range(1, size + 1))
    rng.shuffle(order)
    parts = sorted(rng.sample(range(1, size), min(size - 1, rng.randint(0, 12))))
    groups = [set(order[a:b]) for a, b in zip([0, *parts], [*parts, size], strict=True)]
    if seed % 4 == 3:  # sub-communities that overlap and hold records from outside
        groups = [g | {rng.randint(1, size + 20)} for g in groups] + [set(order[: size // 2])]
    subs = [
        SubReport(
            community_id=f"s{i}",
            size=len(group),
            report=report(f"s{i}", summary=" ".join(["w"] * rng.randint(1, 60))),
            member_na_ids=frozenset(group),
        )
        for i, group in enumerate(groups)
        if len(groups) > 1 or seed % 2
    ]
    budget = rng.choice([40, 80, 150, 300, 1_200])

    def context() -> ReportContext:
        return build_context(
            "c", 1, members, rels, subs, token_budget=budget, count_tokens=count_words
        )

    floors = context()
    monkeypatch.setattr(rc._Budget, "least_row_cost", lambda self: 0)
    assert floors == context()


def test_excerpts_are_clipped_and_flattened() -> None:
    long_member = MemberInfo(1, "A, title", "item", 1, "line one\nline two " + "x" * 1000, None)
    context = build_context(
        "0-1", 0, [long_member], [], [], token_budget=10_000, count_tokens=count_words
    )
    row = context.text.split("\n")[3]
    assert row.startswith('1,"A, title",item,1,line one line two xxx')
    assert row.endswith("…")
    assert len(row) < 450


# --- prompt and parsing -----------------------------------------------------------------------

VALID = {
    "title": "Harbor records",
    "summary": "Survey records.",
    "rating": 6.5,
    "rating_explanation": "Useful.",
    "findings": [{"summary": "S1", "explanation": "E1"}, {"summary": "S2", "explanation": "E2"}],
}


def test_prompt_carries_the_context_and_the_output_format() -> None:
    context = build_context(
        "0-1", 0, [member(1, 1)], [], [], token_budget=100, count_tokens=count_words
    )
    prompt = format_report_prompt(context)
    assert context.text in prompt
    assert '"rating_explanation": <rating_explanation>' in prompt
    assert '"findings": [' in prompt
    assert "{input_text}" not in prompt


def test_parse_clean_json() -> None:
    parsed = parse_report(json.dumps(VALID), "0-1", 0, "openai:m")
    assert parsed == CommunityReport(
        community_id="0-1",
        level=0,
        title="Harbor records",
        summary="Survey records.",
        rating=6.5,
        rating_explanation="Useful.",
        findings=(Finding("S1", "E1"), Finding("S2", "E2")),
        generated_by="openai:m",
    )


def test_parse_fenced_json_inside_prose() -> None:
    text = "Here is the report:\n```json\n" + json.dumps(VALID, indent=2) + "\n```\nHope it helps {"
    assert parse_report(text, "0-1", 0, "x").title == "Harbor records"


def test_parse_outermost_object_in_prose() -> None:
    text = "Sure! " + json.dumps(VALID) + " Let me know if you need {more}."
    parsed = parse_report(text, "0-1", 0, "x")
    assert parsed.findings[1] == Finding("S2", "E2")


def test_parse_repairs_string_rating_and_string_findings() -> None:
    data = dict(VALID, rating=" 7 ", findings=["First insight", "Second insight"])
    parsed = parse_report(json.dumps(data), "0-1", 0, "x")
    assert parsed.rating == 7.0
    assert parsed.findings == (Finding("First insight", ""), Finding("Second insight", ""))


def test_parse_integer_rating_becomes_float() -> None:
    parsed = parse_report(json.dumps(dict(VALID, rating=4)), "0-1", 0, "x")
    assert parsed.rating == 4.0
    assert isinstance(parsed.rating, float)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"rating": None}, "'rating' must be a number"),
        ({"rating": "high"}, "'rating' must be a number, got 'high'"),
        ({"rating": 15}, "'rating' 15 is outside 0-10"),
        ({"rating": True}, "'rating' must be a number"),
        ({"title": 3}, "'title' must be text"),
        ({"summary": "  "}, "'summary' is empty"),
        ({"findings": "none"}, "'findings' must be a list"),
        ({"findings": [{"summary": "S"}]}, "findings[0] has no text 'explanation'"),
        ({"findings": [{"explanation": "E"}]}, "findings[0] has no text 'summary'"),
        ({"findings": [7]}, "findings[0] must be an object or a string"),
    ],
)
def test_parse_rejects_wrong_types(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ReportFormatError) as raised:
        parse_report(json.dumps(dict(VALID, **change)), "2-5", 2, "x")
    assert message in str(raised.value)
    assert "community 2-5" in str(raised.value)


def test_parse_names_every_missing_key() -> None:
    data = {"title": "T", "summary": "S", "rating_explanation": "R"}
    with pytest.raises(ReportFormatError, match="missing 'rating', 'findings'"):
        parse_report(json.dumps(data), "0-1", 0, "x")


def test_parse_rejects_output_without_json() -> None:
    with pytest.raises(ReportFormatError, match="no JSON object"):
        parse_report("I could not write a report.", "0-1", 0, "x")
    with pytest.raises(ReportFormatError, match="no JSON object"):
        parse_report('{"title": "cut off', "0-1", 0, "x")


def test_report_json_round_trips() -> None:
    original = parse_report(json.dumps(VALID), "0-1", 0, "x")
    assert json.loads(original.to_json()) == VALID
    assert parse_report(original.to_json(), "0-1", 0, "x") == original


# --- extractive report ------------------------------------------------------------------------


def extractive_context() -> ReportContext:
    members = [
        member(10, 9, excerpt_words=3, title="War Department records", node_type="recordGroup"),
        member(11, 4, title="Maps of the Pacific", node_type="series"),
        member(12, 2, title="Stimson, Henry L. (Henry Lewis), 1867-1950", node_type="person"),
        member(13, 1, title="Letters", node_type="series"),
        member(14, 0, title=None, node_type="item"),
    ]
    members[1] = replace(members[1], dates="1941-12-07\u20131945-09-02")
    members[3] = replace(members[3], dates="ca. 1940", part_of="War Department records")
    rels = [rel(10, 11, 13), rel(12, 11, 6, "creator"), rel(12, 13, 3, "creator")]
    mentioned = [
        MentionedInfo(20, "United States. War Department. 1789-1947", "organization", 4, 2),
        MentionedInfo(21, "Pacific Ocean", "geographicPlaceName", 3, 1),
        MentionedInfo(12, "Stimson, Henry L. (Henry Lewis), 1867-1950", "person", 2, 2),
    ]
    return build_context(
        "0-3",
        0,
        members,
        rels,
        [],
        token_budget=500,
        count_tokens=count_words,
        mentioned=mentioned,
    )


#: Words of graph statistics that a report's title, summary and findings never use.
STATISTICS = re.compile(
    r"\bdegree|\brelationships?\b|context budget|\bcommunity\b|-\[|\bmentions?\b|"
    r"Extractive summary|No text excerpt",
    re.IGNORECASE,
)


def test_extractive_rating_formula() -> None:
    # size: 5*log10(6)/log10(1001) = 1.297 -> 1.3; degree: 5*log10(10)/log10(101) = 2.495 -> 2.5
    assert extractive_rating(5, 9) == (3.8, 1.3, 2.5)
    assert extractive_rating(0, 0) == (0.0, 0.0, 0.0)
    assert extractive_rating(10**6, 10**4) == (10.0, 5.0, 5.0)


def test_extractive_report_content() -> None:
    result = extractive_report(extractive_context())
    assert result.generated_by == "extractive"
    # The title names the records' subject: the description of highest degree.
    assert result.title == "War Department records"
    assert result.summary == (
        "War Department records: 5 records (2 series, 1 item, 1 record group and 1 person), "
        "dated 1940\u20131945, created by Henry L. Stimson. "
        "Its key series and collections also include Maps of the Pacific and Letters; the people "
        "and organizations its records name most are War Department and Henry L. Stimson."
    )
    assert result.rating == 3.8
    # The statistics stay in the rating explanation.
    assert result.rating_explanation.startswith(
        "Extractive rating 3.8 = size 1.3 (5 records, 3 relationships)"
    )
    assert "highest degree 9" in result.rating_explanation
    assert result.findings[0] == Finding(
        "War Department records", "w10x0 w10x1 w10x2 Source: https://catalog.archives.gov/id/10"
    )
    # A person is named as running text names them; a record without text says what it is.
    assert result.findings[2].summary == "Henry L. Stimson"
    assert result.findings[3] == Finding(
        "Letters",
        "A series in War Department records, dated ca. 1940. "
        "Source: https://catalog.archives.gov/id/13",
    )
    assert result.findings[4].summary == "Record 14"
    assert result.findings[5] == Finding("m10 and m11", "m10 includes m11.")
    assert len(result.findings) == 8


def test_extractive_report_reads_as_prose_without_statistics() -> None:
    result = extractive_report(extractive_context())
    texts = [result.title, result.summary]
    for finding in result.findings:
        texts += [finding.summary, finding.explanation]
    for text in texts:
        assert not STATISTICS.search(text), text


def test_the_profile_covers_the_whole_community_whatever_fits_the_budget() -> None:
    members = [member(i, 10 - i, excerpt_words=5) for i in range(1, 8)]
    members[0] = replace(members[0], dates="1901", title="First")
    members[6] = replace(members[6], dates="1999", node_type="fileUnit")
    context = build_context("0-9", 0, members, [], [], token_budget=30, count_tokens=count_words)
    assert context.truncated and len(context.members) < 7
    result = extractive_report(context)
    assert result.summary.startswith(
        "First: 7 records (6 series and 1 file unit), dated 1901\u20131999."
    )


@pytest.mark.parametrize("seed", range(8))
def test_a_context_profiles_its_ranked_members_as_the_profile_of_the_raw_rows(seed: int) -> None:
    """build_context profiles the members it has ranked, without ranking them again: the same
    profile as one made from the rows in any order, repeated rows and all."""
    import random

    from nara_kg.generation.community_profile import (
        AGGREGATE_LEVELS,
        DESCRIPTION_LEVELS,
        KEY_RECORDS,
        profile_of,
    )

    rng = random.Random(seed)
    kinds = ["series", "fileUnit", "collection", "recordGroup", "person", "organization"]
    members = [
        replace(
            member(i, rng.randint(0, 5), title=rng.choice(["A", "B", f"m{i}", ""])),
            node_type=rng.choice(kinds),
            dates=rng.choice([None, "1942", "1933-04-27 to 1945"]),
            part_of=rng.choice([None, "A", "P", "Q"]),
        )
        for i in range(1, 40)
    ]
    rels = [
        rel(rng.randint(1, 39), rng.randint(1, 39), 1, rng.choice(["CREATOR", "Includes"]))
        for _ in range(60)
    ]
    rows = members + rng.sample(members, 10)
    rng.shuffle(rows)
    context = build_context("c", 1, rows, rels, [], token_budget=40, count_tokens=count_words)
    profile = context.profile
    assert profile is not None and profile == profile_of(list(reversed(rows)), rels)
    # The key records, found here without the profile's code: descriptions by degree, then naId.
    ranked = sorted(
        (m for m in members if m.node_type in DESCRIPTION_LEVELS and m.title),
        key=lambda m: (-m.degree, m.na_id),
    )
    assert profile.representative is not None
    assert profile.representative.na_id == ranked[0].na_id
    aggregates = [m.na_id for m in ranked[1:] if m.node_type in AGGREGATE_LEVELS]
    assert [k.na_id for k in profile.key_records] == aggregates[:KEY_RECORDS]


def test_extractive_report_is_deterministic() -> None:
    first = extractive_report(extractive_context())
    second = extractive_report(extractive_context())
    assert first == second
    assert first.to_json() == second.to_json()


def test_extractive_report_of_a_substituted_context_names_sub_reports() -> None:
    context = build_context(
        "1-0", 1, SUB_MEMBERS, SUB_RELS, [SMALL, LARGE], token_budget=40, count_tokens=count_words
    )
    result = extractive_report(context)
    assert result.title == "m1"  # the whole community's highest degree, not the context's
    assert result.summary.startswith("m1: 6 records (6 series).")
    assert result.findings[0] == Finding("T", "s")


# --- generation -------------------------------------------------------------------------------


class ScriptedLLM:
    def __init__(self, replies: list[str]) -> None:
        self.name = "fake"
        self.model = "m1"
        self.params: dict[str, Any] = {"temperature": 0.0}
        self.replies = replies
        self.prompts: list[str] = []

    def complete(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.replies[min(len(self.prompts), len(self.replies)) - 1]


def test_generate_extractive_report_is_cached(tmp_path: Path) -> None:
    context = extractive_context()
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        first, first_cached = generate_report(context, ExtractiveLLM(), cache)
        second, second_cached = generate_report(context, ExtractiveLLM(), cache)
    assert (first_cached, second_cached) == (False, True)
    assert first == second == extractive_report(context)


def test_a_new_extractive_version_rebuilds_cached_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import nara_kg.generation.extractive as extractive_module

    context = extractive_context()
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        generate_report(context, ExtractiveLLM(), cache)
        monkeypatch.setattr(
            extractive_module,
            "EXTRACTIVE_REPORT_VERSION",
            extractive_module.EXTRACTIVE_REPORT_VERSION + 1,
        )
        _, cached = generate_report(context, ExtractiveLLM(), cache)
    assert cached is False


def test_the_extractive_summary_describes_content_not_the_community_id() -> None:
    context = extractive_context()
    summary = extractive_report(context).summary
    assert context.community_id not in summary and f"level {context.level}" not in summary


def test_generate_retries_malformed_output_and_overwrites_the_cache(tmp_path: Path) -> None:
    context = extractive_context()
    llm = ScriptedLLM(["not json at all", "```json\n" + json.dumps(VALID) + "\n```"])
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        result, cached = generate_report(context, llm, cache)
        assert len(llm.prompts) == 2
        assert llm.prompts[0] == llm.prompts[1] == format_report_prompt(context)
        assert not cached
        assert result.title == "Harbor records"
        assert result.generated_by == "fake:m1"
        assert (result.community_id, result.level) == ("0-3", 0)
        # The valid output replaced the malformed one: the next run is a pure cache hit.
        again, again_cached = generate_report(context, llm, cache)
        assert again == result
        assert again_cached
        assert len(llm.prompts) == 2


def test_generate_regenerates_a_malformed_cached_entry(tmp_path: Path) -> None:
    context = extractive_context()
    llm = ScriptedLLM([json.dumps(VALID)])
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        cache.put(llm_cache_key(llm, format_report_prompt(context)), '{"title": "broken"}')
        result, cached = generate_report(context, llm, cache)
    assert not cached
    assert result.title == "Harbor records"
    assert len(llm.prompts) == 1


def test_generate_falls_back_to_the_extractive_report_after_retries() -> None:
    llm = ScriptedLLM(['{"title": "T"}'])
    repairs = ReportRepairs()
    report, cached = generate_report(extractive_context(), llm, None, retries=2, repairs=repairs)
    assert len(llm.prompts) == 3
    assert report == extractive_report(extractive_context()) and not cached
    assert (repairs.repaired, repairs.replaced) == (0, 1)


def test_a_deterministic_model_is_not_asked_again_for_the_same_reply() -> None:
    llm = ScriptedLLM(["no report here"])
    llm.deterministic = True  # type: ignore[attr-defined]
    repairs = ReportRepairs()
    report, _ = generate_report(extractive_context(), llm, None, retries=2, repairs=repairs)
    assert len(llm.prompts) == 1
    assert report == extractive_report(extractive_context()) and repairs.replaced == 1


def _report_server_reply(content: str) -> tuple[CommunityReport, bool, ReportRepairs, int]:
    with openai_test_server() as server:
        server.replies.extend(Reply(content=content) for _ in range(3))
        llm = OpenAICompatibleLLM(server.url, "scripted", None, timeout_s=10.0)
        repairs = ReportRepairs()
        report, cached = generate_report(extractive_context(), llm, None, repairs=repairs)
        return report, cached, repairs, server.calls


def test_a_malformed_report_from_a_model_is_repaired() -> None:
    # Single quotes, a trailing comma and the closing brackets lost to a reply cut short.
    broken = (
        "Here is the report:\n```json\n{'title': 'Harbor records', 'summary': 'Survey records.',"
        " 'rating': 6.5, 'rating_explanation': 'Useful.', 'findings': [{'summary': 'S1', "
        "'explanation': 'E1'},"
    )
    report, _, repairs, calls = _report_server_reply(broken)
    assert (repairs.repaired, repairs.replaced) == (1, 0)
    assert calls == 1
    assert report.title == "Harbor records" and report.rating == 6.5
    assert report.findings == (Finding(summary="S1", explanation="E1"),)
    assert report.generated_by == "openai:scripted"


def test_an_irreparable_report_from_a_model_is_replaced_by_the_extractive_one() -> None:
    report, _, repairs, calls = _report_server_reply("I am sorry, I cannot summarise these.")
    assert (repairs.repaired, repairs.replaced) == (0, 1)
    assert calls == 3  # the first reply and two regenerations
    assert report == extractive_report(extractive_context())
    assert report.generated_by == GENERATED_BY_EXTRACTIVE


def test_repair_adds_no_content() -> None:
    with pytest.raises(ReportFormatError, match="missing"):
        repair_report("{'title': 'T', 'summary': 'S'", "0-1", 0, "x")


def test_rows_counted_in_one_batch_give_the_same_context() -> None:
    members = [member(i, 100 - i, excerpt_words=5) for i in range(1, 60)]
    rels = [rel(i, i + 1, 5, "A") for i in range(1, 40)]
    batches: list[list[str]] = []
    singles: list[str] = []

    def many(texts: list[str]) -> list[int]:
        batches.append(list(texts))
        return [count_words(text) for text in texts]

    def one(text: str) -> int:
        singles.append(text)
        return count_words(text)

    batched = build_context(
        "1-0", 1, members, rels, [], token_budget=60, count_tokens=one, count_tokens_many=many
    )
    assert batched == build_context(
        "1-0", 1, members, rels, [], token_budget=60, count_tokens=count_words
    )
    # Over twice the budget by the rows' floors: only the rows the greedy fill tried were
    # counted, in batches, none on its own.
    counted = [row for batch in batches for row in batch]
    assert batches and len(counted) < len(members) + len(rels)
    assert not set(singles) & set(counted)

    # Within the floors, every row is counted in the one batch.
    batches.clear()
    build_context(
        "1-0",
        1,
        members[:9],
        rels[:8],
        [],
        token_budget=60,
        count_tokens=one,
        count_tokens_many=many,
    )
    assert len(batches[0]) == 9 + 8


def test_a_community_whose_counted_rows_cost_over_twice_the_budget_is_never_rendered_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from nara_kg.generation import report_context

    members = [member(i, 100 - i, excerpt_words=5) for i in range(1, 60)]
    rendered: list[int] = []
    render = report_context._render_selection

    def recording(ranked: Any, selection: Any) -> str:
        rendered.append(len(selection.member_ids))
        return render(ranked, selection)

    def count_many(texts: list[str]) -> list[int]:
        return [count_words(text) for text in texts]

    budget = 40
    baseline = build_context(
        "1-0", 1, members, [], [], token_budget=budget, count_tokens=count_words
    )
    monkeypatch.setattr(report_context, "_render_selection", recording)
    context = build_context(
        "1-0",
        1,
        members,
        [],
        [],
        token_budget=budget,
        count_tokens=count_words,
        count_tokens_many=count_many,
    )
    assert context == baseline
    assert rendered and len(members) not in rendered  # the rows were priced, not rendered
    # Without a batch count, the rows' floors (their words) keep the whole from being rendered;
    # with floors of nothing, rows not counted yet price at nothing and the whole is rendered.
    rendered.clear()
    build_context("1-0", 1, members, [], [], token_budget=budget, count_tokens=count_words)
    assert rendered and len(members) not in rendered
    monkeypatch.setattr(report_context._Budget, "least_row_cost", lambda self: 0)
    build_context("1-0", 1, members, [], [], token_budget=budget, count_tokens=count_words)
    assert len(members) in rendered


def test_the_extractive_cache_key_follows_the_profile_and_the_report_code(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A report is never served from the cache after what it is written from, or the code that
    writes it, changed: dates outside the context text change the profile, and so the key."""
    import nara_kg.generation.extractive as extractive_module

    context = extractive_context()
    key = extractive_cache_key(context)
    assert context.profile is not None
    later = replace(context, profile=replace(context.profile, last_year=1950))
    assert later.text == context.text and extractive_cache_key(later) != key
    monkeypatch.setattr(extractive_module, "report_code_digest", lambda: "edited")
    assert extractive_cache_key(context) != key


def test_a_relationship_finding_is_one_sentence_after_an_abbreviation() -> None:
    members = [
        member(1, 2, title="Papers", node_type="collection"),
        member(2, 1, title="Diaries of Henry Morgenthau, Jr."),
    ]
    context = build_context(
        "0-4", 0, members, [rel(1, 2, 3)], [], token_budget=500, count_tokens=count_words
    )
    context = replace(
        context,
        relationships=tuple(
            replace(r, source_title="Papers", target_title=members[1].title)
            for r in context.relationships
        ),
    )
    finding = extractive_report(context).findings[-1]
    assert finding.explanation == "Papers includes Diaries of Henry Morgenthau, Jr."

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from nara_kg.generation.community_report import CommunityReport, Finding
from nara_kg.generation.llm import ExtractiveLLM, GenerationCache
from nara_kg.retrieval.answer import AnswerContext, answer_question
from nara_kg.retrieval.classify import classify_request
from nara_kg.retrieval.global_search import Point, global_search, parse_points
from nara_kg.retrieval.prompts import ANSWER_PROMPT, CLASSIFICATION_PROMPT, REFUSAL
from nara_kg.retrieval.report_batches import pack_batches
from nara_kg.retrieval.terms import content_terms


def count_words(text: str) -> int:
    return len(text.split()) + 2


class FakeLLM:
    def __init__(self, reply: str | Callable[[str], str]) -> None:
        self.name = "fake"
        self.model = "m1"
        self.params: dict[str, Any] = {}
        self.reply = reply
        self.prompts: list[str] = []

    def complete(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.reply(prompt) if callable(self.reply) else self.reply


# --- prompts ----------------------------------------------------------------------------------


def test_seed_prompts_are_kept() -> None:
    assert REFUSAL == "I cannot respond to your request based on the available archival materials."
    assert CLASSIFICATION_PROMPT.startswith(
        "\nClassify the type of user request. Reply with only one word:\n"
    )
    assert "Request: Give me all related documents.\nOutput: show_records\n" in (
        CLASSIFICATION_PROMPT
    )
    assert ANSWER_PROMPT.startswith("\nAnswer the question based ONLY on the provided context.\n")
    assert "Question: What views did Senator Z express about tax reforms?\n" in ANSWER_PROMPT
    assert ANSWER_PROMPT.endswith(
        "Answer: I cannot respond to your request based on the available archival\nmaterials.\n"
    )


# --- classification ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_text", "expected"),
    [
        # The seed prompt's own examples.
        ("Why is the sky blue?", "question"),
        ("Show me documents about politics.", "show_records"),
        ("List the sources.", "show_records"),
        ("Give me all related documents.", "show_records"),
        ("Who was president in 1952?", "question"),
        # More display requests.
        ("Please display the records of the War Department", "show_records"),
        ("Can you show me letters from Truman?", "show_records"),
        ("What records do you have on the Navy?", "show_records"),
        ("Which documents mention Lincoln?", "show_records"),
        ("Find photographs of Alaska", "show_records"),
        ("I would like to see the census schedules", "show_records"),
        # More questions.
        ("Find out why the war started", "question"),
        ("Tell me about the Marshall Plan", "question"),
        ("What was the budget of the Navy in 1950?", "question"),
        ("How many ships were lost?", "question"),
    ],
)
def test_rule_based_classification(request_text: str, expected: str) -> None:
    assert classify_request(request_text, ExtractiveLLM(), None) == (expected, "rule-based")


def test_llm_classification_uses_the_seed_prompt() -> None:
    llm = FakeLLM("show_records")
    assert classify_request("Show me maps", llm, None) == ("show_records", "llm (fake:m1)")
    assert llm.prompts == [CLASSIFICATION_PROMPT + "\nRequest: Show me maps\nOutput:"]


@pytest.mark.parametrize(
    ("reply", "expected", "method"),
    [
        ("Question.", "question", "llm (fake:m1)"),
        ('"show_records"', "show_records", "llm (fake:m1)"),
        ("I think the user wants show_records", "question", "unrecognised reply"),
        ("", "question", "unrecognised reply"),
    ],
)
def test_llm_classification_defaults_to_question(reply: str, expected: str, method: str) -> None:
    kind, how = classify_request("anything", FakeLLM(reply), None)
    assert kind == expected
    assert method in how


def test_llm_classification_is_cached(tmp_path: Path) -> None:
    llm = FakeLLM("question")
    with GenerationCache(tmp_path / "c.sqlite") as cache:
        classify_request("Why?", llm, cache)
        classify_request("Why?", llm, cache)
    assert len(llm.prompts) == 1


# --- answers ----------------------------------------------------------------------------------

SENATOR = AnswerContext(
    na_id=501,
    title="Meeting with Senator Z",
    text=(
        "Senator Z discussed the procedural hurdles in forming a bipartisan committee, noting "
        "that scheduling conflicts among senior members have caused significant delays. He "
        "expressed hope that the committee would be operational by the next fiscal quarter."
    ),
    source="https://catalog.archives.gov/id/501",
)
BUDGET = AnswerContext(
    na_id=502,
    title="Navy budget memorandum",
    text="The memorandum sets the Navy budget for 1950. Shipbuilding was cut by a third.",
    source=None,
)


def test_content_terms_drop_stopwords_and_fold_plurals() -> None:
    assert content_terms("What views did Senator Z express about tax reforms?") == {
        "view",
        "senator",
        "express",
        "tax",
        "reform",
    }
    assert content_terms("Show me the records of the agencies in 1950") == {"agency", "1950"}


def test_extractive_answer_picks_the_best_sentence() -> None:
    answer = answer_question(
        "What caused delays in forming the bipartisan committee?",
        [BUDGET, SENATOR],
        ExtractiveLLM(),
        None,
    )
    assert answer == answer.__class__(
        text=(
            "Senator Z discussed the procedural hurdles in forming a bipartisan committee, "
            "noting that scheduling conflicts among senior members have caused significant "
            "delays. [1]"
        ),
        method="extractive (rule-based)",
        refused=False,
        used_na_ids=(501,),
        citations=answer.citations,
    )
    assert [(c.marker, c.na_id) for c in answer.citations] == [(1, 501)]


def test_extractive_answer_adds_a_second_sentence_with_new_question_words() -> None:
    memo = AnswerContext(
        na_id=503,
        title="Memorandum",
        text="The Navy budget for 1950 was cut. In 1950 Navy shipbuilding was cut.",
        source=None,
    )
    answer = answer_question(
        "What was the Navy budget in 1950 and was shipbuilding cut?",
        [SENATOR, memo],
        ExtractiveLLM(),
        None,
    )
    # Both cover 6 of the question's 7 weighted words; the second adds "shipbuilding".
    assert (
        answer.text
        == "The Navy budget for 1950 was cut. [1] In 1950 Navy shipbuilding was cut. [1]"
    )
    assert answer.used_na_ids == (503,)
    assert not answer.refused


def test_extractive_answer_leaves_out_a_second_sentence_below_the_threshold() -> None:
    answer = answer_question(
        "What was the Navy budget in 1950 and was shipbuilding cut?",
        [SENATOR, BUDGET],
        ExtractiveLLM(),
        None,
    )
    # "Shipbuilding was cut by a third." shares only 2 of 5 content words (< 0.5).
    assert answer.text == "The memorandum sets the Navy budget for 1950. [1]"
    assert answer.used_na_ids == (502,)


def test_extractive_answer_refuses_when_the_context_lacks_the_answer() -> None:
    # Seed 000's own refusal example: only "Senator" is shared (1 of 5 content words).
    answer = answer_question(
        "What views did Senator Z express about tax reforms?", [SENATOR], ExtractiveLLM(), None
    )
    # The refusal names the record that came closest.
    assert answer.text == f"{REFUSAL} The closest records: Meeting with Senator Z (naId 501)."
    assert answer.refused
    assert answer.used_na_ids == ()
    assert answer.method == "extractive (rule-based)"


def test_extractive_answer_refuses_without_contexts_or_content_words() -> None:
    assert answer_question("Why are budgets cut?", [], ExtractiveLLM(), None).refused
    assert answer_question("What is it?", [BUDGET], ExtractiveLLM(), None).refused


def test_extractive_answer_can_use_a_title() -> None:
    title_only = AnswerContext(
        na_id=7, title="Photographs of Alaska glaciers", text="", source=None
    )
    answer = answer_question("Alaska glaciers photographs?", [title_only], ExtractiveLLM(), None)
    # A title-only record whose title is what was asked for: the answer says what it is.
    assert answer.text == "naId 7 is Photographs of Alaska glaciers, a record. [1]"
    assert answer.used_na_ids == (7,)


def test_llm_answer_uses_the_seed_prompt() -> None:
    llm = FakeLLM("  The Navy budget was set for 1950.  ")
    answer = answer_question("What budget?", [BUDGET, SENATOR], llm, None)
    assert answer.text == "The Navy budget was set for 1950. [1]"
    assert [(c.marker, c.na_id) for c in answer.citations] == [(1, 502)]
    assert not answer.refused
    assert answer.used_na_ids == (502, 501)
    assert answer.method == "llm (fake:m1)"
    prompt = llm.prompts[0]
    assert prompt.startswith(ANSWER_PROMPT)
    assert (
        "\nContext: Title: Navy budget memorandum Text: The memorandum sets the Navy budget for "
        "1950. Shipbuilding was cut by a third.\n\nContext: Title: Meeting with Senator Z Text: "
    ) in prompt
    assert prompt.endswith("\nQuestion: What budget?\nAnswer:")


def test_llm_refusal_is_normalised_to_the_exact_sentence() -> None:
    llm = FakeLLM("I cannot\nrespond to your request based on the available archival\nmaterials.")
    answer = answer_question("Tax reform?", [SENATOR], llm, None)
    assert answer.text == REFUSAL
    assert answer.refused
    assert answer.used_na_ids == ()


def test_llm_is_not_called_without_contexts() -> None:
    llm = FakeLLM("anything")
    assert answer_question("Tax reform?", [], llm, None).refused
    assert llm.prompts == []


# --- global search ----------------------------------------------------------------------------


def make_report(community_id: str, title: str, summary: str, *findings: Finding) -> CommunityReport:
    return CommunityReport(
        community_id=community_id,
        level=0,
        title=title,
        summary=summary,
        rating=5.0,
        rating_explanation="r",
        findings=findings,
        generated_by="extractive",
    )


LOGBOOKS = make_report(
    "0-1",
    "Navy ship logbooks",
    "Logbooks of Navy ships in the Pacific.",
    Finding("Pacific fleet logbooks", "Daily logbooks of the Pacific fleet, 1942-1945."),
)
CENSUS = make_report(
    "0-2",
    "Census schedules",
    "Population schedules of the 1950 census.",
    Finding("Enumeration districts", "Maps of enumeration districts."),
)
ISLANDS = make_report("0-3", "Pacific island maps", "Maps of islands in the Pacific.")
REPORTS = [LOGBOOKS, CENSUS, ISLANDS]


def test_extractive_global_search_drops_zero_scores_and_sorts_best_first() -> None:
    result = global_search(
        "Which logbooks describe the Pacific fleet?",
        REPORTS,
        ExtractiveLLM(),
        None,
        batch_token_budget=60,
        count_tokens=count_words,
        reduce_token_budget=500,
    )
    assert result.points_used == (
        Point(
            "Pacific fleet logbooks: Daily logbooks of the Pacific fleet, 1942-1945.", 100, "0-1"
        ),
        Point("Navy ship logbooks: Logbooks of Navy ships in the Pacific.", 67, "0-1"),
        Point("Pacific island maps: Maps of islands in the Pacific.", 33, "0-3"),
    )
    assert result.communities == ("0-1", "0-3")
    assert not result.refused
    assert result.method == "extractive (rule-based)"
    # One line per community, in the order of its best point, its sentences each with the
    # marker of the record it cites (none here: no members were given).
    assert result.text.splitlines() == [
        "Pacific fleet logbooks: Daily logbooks of the Pacific fleet, 1942-1945. "
        "Navy ship logbooks: Logbooks of Navy ships in the Pacific.",
        "Pacific island maps: Maps of islands in the Pacific.",
    ]


def test_global_search_reduce_respects_its_budget() -> None:
    result = global_search(
        "Which logbooks describe the Pacific fleet?",
        REPORTS,
        ExtractiveLLM(),
        None,
        batch_token_budget=60,
        count_tokens=count_words,
        reduce_token_budget=17,
    )
    # "----Analyst 1---- / Importance Score: 100 / <10 words>" is 15 words + 2.
    assert [p.score for p in result.points_used] == [100]
    assert result.communities == ("0-1",)


def test_global_search_refuses_when_no_point_scores() -> None:
    result = global_search(
        "What about tax reform?",
        REPORTS,
        ExtractiveLLM(),
        None,
        batch_token_budget=60,
        count_tokens=count_words,
        reduce_token_budget=500,
    )
    assert result.text == REFUSAL
    assert result.refused
    assert result.points_used == ()
    assert result.communities == ()


def many_reports(n: int) -> list[CommunityReport]:
    return [make_report(f"0-{i}", f"Title {i}", f"Summary number {i}.") for i in range(n)]


def batch_ids(reports: list[CommunityReport], seed: int, budget: int = 13) -> list[list[str]]:
    batches = pack_batches(reports, batch_token_budget=budget, count_tokens=count_words, seed=seed)
    return [[block.report.community_id for block in batch] for batch in batches]


def test_shuffle_is_deterministic_and_independent_of_input_order() -> None:
    reports = many_reports(8)
    first = batch_ids(reports, seed=0)
    assert first == batch_ids(list(reversed(reports)), seed=0)
    assert first == batch_ids(reports, seed=0)
    assert first != batch_ids(reports, seed=1)
    flattened = [cid for batch in first for cid in batch]
    assert sorted(flattened) == sorted(r.community_id for r in reports)
    assert flattened != [r.community_id for r in reports]  # it did shuffle


def test_batches_fit_the_budget() -> None:
    reports = many_reports(8)
    # One block, "-----Report 0-i----- / Title: Title i / Summary: Summary number i. / Rating: 5",
    # is 11 words; two blocks are 22 + 2 specials.
    batches = pack_batches(reports, batch_token_budget=24, count_tokens=count_words, seed=3)
    assert [len(batch) for batch in batches] == [2, 2, 2, 2]
    for batch in batches:
        assert count_words("\n\n".join(block.text for block in batch)) <= 24
    one_each = pack_batches(reports, batch_token_budget=23, count_tokens=count_words, seed=3)
    assert [len(batch) for batch in one_each] == [1] * 8


def test_an_oversized_report_loses_findings_to_fit() -> None:
    big = make_report(
        "0-9",
        "Big",
        "Short summary.",
        *(Finding(f"Finding {i}", "one two three four five six seven eight") for i in range(5)),
    )
    (batch,) = pack_batches([big], batch_token_budget=40, count_tokens=count_words)
    (block,) = batch
    # Head (10 words incl. "Findings:") + 2 findings of 11 words = 32 + 2 <= 40; 3 would be 45.
    assert len(block.findings) == 2
    assert count_words(block.text) <= 40


def map_reply(points: list[dict[str, Any]]) -> str:
    return "Here you go:\n```json\n" + json.dumps({"points": points}) + "\n```"


def test_llm_global_search_map_and_reduce() -> None:
    def reply(prompt: str) -> str:
        if "---Community reports---" in prompt:
            return map_reply(
                [
                    {"description": "Low", "score": 40, "community_id": "0-2"},
                    {"description": "Zero", "score": 0, "community_id": "0-1"},
                    {"description": "High", "score": "90", "community_id": "0-1"},
                    {"description": "Uncited", "score": 10},
                    {"description": "", "score": 70},
                    {"description": "No score"},
                ]
            )
        return "The logbooks of the Pacific fleet date from 1942."

    llm = FakeLLM(reply)
    result = global_search(
        "Where are the logbooks?",
        REPORTS,
        llm,
        None,
        batch_token_budget=1000,
        count_tokens=count_words,
        reduce_token_budget=1000,
    )
    assert len(llm.prompts) == 2  # one batch, one reduce
    assert [(p.description, p.score) for p in result.points_used] == [
        ("High", 90),
        ("Low", 40),
        ("Uncited", 10),
    ]
    assert result.points_used[0].community_id == "0-1"
    # An uncited point is attributed to every report of its batch.
    assert sorted(result.points_used[2].community_id.split(",")) == ["0-1", "0-2", "0-3"]
    assert result.communities[:2] == ("0-1", "0-2")
    assert set(result.communities) == {"0-1", "0-2", "0-3"}
    assert result.text == "The logbooks of the Pacific fleet date from 1942."
    assert not result.refused
    assert result.method == "llm (fake:m1)"
    reduce_prompt = llm.prompts[1]
    assert "Where are the logbooks?" in reduce_prompt
    assert reduce_prompt.index("Importance Score: 90\nHigh") < reduce_prompt.index(
        "Importance Score: 40\nLow"
    )
    assert "Zero" not in reduce_prompt


def test_llm_global_search_reduce_refusal() -> None:
    def reply(prompt: str) -> str:
        if "---Community reports---" in prompt:
            return map_reply([{"description": "Something", "score": 20, "community_id": "0-3"}])
        return "I cannot respond to your request based on the available\narchival materials."

    result = global_search(
        "Anything?",
        REPORTS,
        FakeLLM(reply),
        None,
        batch_token_budget=1000,
        count_tokens=count_words,
        reduce_token_budget=1000,
    )
    assert result.refused
    assert result.text == REFUSAL


def test_llm_global_search_skips_reduce_when_every_point_is_zero() -> None:
    llm = FakeLLM(map_reply([{"description": "I don't know", "score": 0}]))
    result = global_search(
        "Anything?",
        REPORTS,
        llm,
        None,
        batch_token_budget=30,
        count_tokens=count_words,
        reduce_token_budget=1000,
        max_workers=3,
    )
    assert result.refused
    assert result.text == REFUSAL
    # Every prompt was a map prompt (one per batch); none was a reduce prompt.
    assert len(llm.prompts) == 3
    assert all("---Community reports---" in prompt for prompt in llm.prompts)


def test_parse_points_accepts_lists_and_seed_html() -> None:
    assert parse_points('[{"description": "A", "score": 55.4}]', ["0-1", "0-2"]) == [
        Point("A", 55, "0-1,0-2")
    ]
    html = (
        '<point><description>"Seed style"</description><score>75</score></point>\n'
        "<point><description>No score</description></point>"
    )
    assert parse_points(html, ["0-4"]) == [Point("Seed style", 75, "0-4")]
    assert parse_points('{"points": [{"description": "B", "score": 250}]}', ["0-1"]) == [
        Point("B", 100, "0-1")
    ]
    assert parse_points("no points here", ["0-1"]) == []


def test_an_oversized_summary_is_halved_to_fit() -> None:
    big = make_report("0-8", "Big", " ".join(f"w{i}" for i in range(40)))
    (batch,) = pack_batches([big], batch_token_budget=20, count_tokens=count_words)
    (block,) = batch
    # Head: 7 words + "…" + 2 specials = 10 tokens; summary halved 40 -> 20 -> 10 words fits.
    assert block.summary == " ".join(f"w{i}" for i in range(10)) + " …"
    assert count_words(block.text) <= 20


def test_initials_and_titles_do_not_end_a_sentence() -> None:
    from nara_kg.retrieval.extractive import SENTENCE_BREAK as _SENTENCE_BREAK

    text = "Letters of Harold D. Whitcombe to Mr. Smith. Henry Morgenthau, Jr. replied! Done?"
    assert _SENTENCE_BREAK.split(text) == [
        "Letters of Harold D. Whitcombe to Mr. Smith.",
        "Henry Morgenthau, Jr. replied!",
        "Done?",
    ]


def test_packing_counts_each_report_once_and_matches_counting_the_joined_text() -> None:
    calls = 0

    def counting(text: str) -> int:
        nonlocal calls
        calls += 1
        return count_words(text)

    reports = many_reports(60)
    batches = pack_batches(reports, batch_token_budget=50, count_tokens=counting, seed=1)
    assert calls <= len(reports) + 1  # one count per report, one for the specials
    for batch in batches:
        assert count_words("\n\n".join(block.text for block in batch)) <= 50
    # Greedy: no batch could have taken the next batch's first block.
    for batch, following in itertools.pairwise(batches):
        joined = "\n\n".join(block.text for block in [*batch, following[0]])
        assert count_words(joined) > 50
    repeat = pack_batches(reports, batch_token_budget=50, count_tokens=counting, seed=1)
    assert repeat == batches


def test_packing_with_a_batch_counter_counts_new_reports_in_one_call_and_packs_the_same() -> None:
    single_calls = 0
    batch_calls: list[int] = []

    def counting(text: str) -> int:
        nonlocal single_calls
        single_calls += 1
        return count_words(text)

    def counting_many(texts: list[str]) -> list[int]:
        batch_calls.append(len(texts))
        return [count_words(text) for text in texts]

    reports = many_reports(40)
    expected = pack_batches(reports, batch_token_budget=50, count_tokens=count_words, seed=2)
    batches = pack_batches(
        reports,
        batch_token_budget=50,
        count_tokens=counting,
        count_tokens_many=counting_many,
        seed=2,
    )
    assert batches == expected
    assert batch_calls == [len(reports)]
    assert single_calls <= 1  # the specials only: every block fitted from the batch count
    pack_batches(
        reports, batch_token_budget=50, count_tokens=counting, count_tokens_many=counting_many
    )
    assert batch_calls == [len(reports)]  # known reports are not counted again


def test_fitted_blocks_keep_no_embedder_alive_and_are_shared_by_its_model() -> None:
    """The fitted-block cache knows an embedder's counter by its model key: a build's embedder
    (and its model, some 160 MB) is freed after the build, and another embedder of the same
    model finds the blocks already counted."""
    import gc
    import weakref

    class Counter:
        def __init__(self, key: str) -> None:
            self.key, self.calls = key, 0

        def count_tokens(self, text: str) -> int:
            self.calls += 1
            return len(text.split())

    report = make_report("0-9", "Harbor surveys", "Surveys of the harbor, 1950.")
    first = Counter("model-a:onnx:1")
    pack_batches([report], batch_token_budget=500, count_tokens=first.count_tokens, seed=5)
    counted = first.calls
    assert counted > 0
    gone = weakref.ref(first)
    del first
    gc.collect()
    assert gone() is None
    again = Counter("model-a:onnx:1")
    pack_batches([report], batch_token_budget=500, count_tokens=again.count_tokens, seed=5)
    assert again.calls < counted  # the block itself was not counted again
    other = Counter("model-b:onnx:2")
    pack_batches([report], batch_token_budget=500, count_tokens=other.count_tokens, seed=5)
    assert other.calls == counted

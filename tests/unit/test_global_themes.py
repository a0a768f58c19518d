"""Overview answers in plain prose: which communities are themes (the size rule), sentences
that cite a record of their community, and no graph statistics in the answer text."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pytest

from nara_kg.generation.community_profile import KeyRecord, display_name
from nara_kg.generation.community_report import CommunityReport, Finding
from nara_kg.generation.extractive import extractive_report
from nara_kg.generation.llm import ExtractiveLLM
from nara_kg.generation.report_context import MemberInfo, RelationshipInfo, build_context
from nara_kg.retrieval.global_search import (
    GlobalAnswer,
    global_search,
    main_themes,
    min_theme_size,
    representative,
    split_sentences,
)

#: Words and figures of graph statistics that never appear in an answer.
STATISTICS = re.compile(
    r"\bdegree|\brelationships?\b|context budget|\bcommunit(y|ies)\b|\blevel \d|-\[|"
    r"\bmentions?\b|Extractive summary|No text excerpt",
    re.IGNORECASE,
)
MARKED_SENTENCE = re.compile(r"[.!?\u2026] \[\d+\]$")


def count_words(text: str) -> int:
    return len(text.split())


def report(community_id: str, summary: str, rating: float = 5.0) -> CommunityReport:
    return CommunityReport(
        community_id=community_id,
        level=2,
        title=summary.split(":")[0],
        summary=summary,
        rating=rating,
        rating_explanation="Extractive rating 5 = size 2.5 (883 records, 882 relationships)",
        findings=(Finding("Volume 1", "A file unit."),),
        generated_by="extractive",
    )


@pytest.mark.parametrize(
    ("total", "floor"), [(0, 3), (50, 3), (300, 3), (301, 4), (1016, 11), (20_000, 200)]
)
def test_a_theme_holds_one_percent_of_the_records_and_at_least_three(
    total: int, floor: int
) -> None:
    assert min_theme_size(total) == floor


def test_two_record_communities_are_no_themes_of_a_thousand_records() -> None:
    sizes = {"2-6": 883, "2-0": 123, "2-7": 4, "2-3": 2, "2-4": 2, "2-5": 2}
    reports = [report(c, f"Theme {c}: records.") for c in sizes]
    assert [r.community_id for r in main_themes(reports, sizes)] == ["2-6", "2-0"]


def test_a_graph_of_small_communities_still_has_its_largest_as_a_theme() -> None:
    sizes = {"0-1": 2, "0-2": 1}
    reports = [report(c, f"Theme {c}: records.") for c in sizes]
    assert [r.community_id for r in main_themes(reports, sizes)] == ["0-1"]


MEMBERS = {
    "2-6": [
        KeyRecord(589213, "Diaries of Henry Morgenthau, Jr.", "series"),
        KeyRecord(1, "Morgenthau, Henry, 1891-1967", "person"),
    ],
    # The organization has the highest degree, but a theme cites a description.
    "2-0": [
        KeyRecord(2, "Department of the Interior. War Relocation Authority", "organization"),
        KeyRecord(537, "Records of the War Relocation Authority", "recordGroup"),
    ],
    "2-7": [KeyRecord(3, "Antony Blinken's Files", "series")],
}
SIZES = {"2-6": 883, "2-0": 123, "2-7": 4}
REPORTS = [
    report(
        "2-6",
        "Diaries of Henry Morgenthau, Jr.: 883 records (879 file units), dated 1933\u20131945, "
        "created by Henry Morgenthau. The people and organizations its records name most are "
        "Henry Morgenthau and War Refugee Board.",
    ),
    report(
        "2-0",
        "Records of the War Relocation Authority: 123 records (103 series), dated 1942\u20131946. "
        "Its key series and collections also include Master Index of Evacuees.",
    ),
    report("2-7", "Antony Blinken's Files: 4 records (1 series)."),
]


def ask_global(
    question: str,
    reports: Sequence[CommunityReport] = REPORTS,
    llm: Any = None,
    sizes: dict[str, int] = SIZES,
    members: dict[str, list[KeyRecord]] = MEMBERS,
) -> GlobalAnswer:
    """`global_search` with these tests' budgets (words as tokens), extractive by default."""
    return global_search(
        question,
        reports,
        llm or ExtractiveLLM(),
        None,
        batch_token_budget=500,
        count_tokens=count_words,
        reduce_token_budget=2000,
        sizes=sizes,
        members=members,
    )


def themes(question: str = "What are the main themes of these records?") -> GlobalAnswer:
    return ask_global(question)


def test_each_theme_is_a_line_of_cited_sentences() -> None:
    answer = themes()
    assert answer.communities == ("2-6", "2-0")
    lines = answer.text.splitlines()
    assert lines == [
        "Diaries of Henry Morgenthau, Jr.: 883 records (879 file units), dated 1933\u20131945, "
        "created by Henry Morgenthau. [1] The people and organizations its records name most "
        "are Henry Morgenthau and War Refugee Board. [1]",
        "Records of the War Relocation Authority: 123 records (103 series), dated "
        "1942\u20131946. [2] Its key series and collections also include Master Index of "
        "Evacuees. [2]",
    ]
    assert [(c.marker, c.na_id, c.title) for c in answer.citations] == [
        (1, 589213, "Diaries of Henry Morgenthau, Jr."),
        (1, 589213, "Diaries of Henry Morgenthau, Jr."),
        (2, 537, "Records of the War Relocation Authority"),
        (2, 537, "Records of the War Relocation Authority"),
    ]
    assert answer.citations[0].sentence.startswith("Diaries of Henry Morgenthau, Jr.: 883")


def test_overview_and_topic_answers_carry_no_statistics() -> None:
    for question in (
        "What are the main themes of these records?",
        "What are the main themes of the Morgenthau diaries?",
    ):
        answer = themes(question)
        assert not answer.refused
        assert not STATISTICS.search(answer.text), answer.text
        for sentence in split_sentences(re.sub(r"\s*\[\d+\]", "", answer.text)):
            assert not STATISTICS.search(sentence)
        for line in answer.text.splitlines():
            assert MARKED_SENTENCE.search(line), line


def test_a_topic_answer_cites_the_finding_record_or_the_representative() -> None:
    answer = themes("What are the main themes of the Morgenthau diaries?")
    assert answer.communities == ("2-6",)
    assert {c.na_id for c in answer.citations} == {589213}


def test_sentences_split_at_stops_but_not_at_name_abbreviations() -> None:
    text = (
        "Diaries of Henry Morgenthau, Jr.: many. Photos by Harold D. Whitcombe [Data: Reports (1)]."
    )
    assert split_sentences(text) == [
        "Diaries of Henry Morgenthau, Jr.: many.",
        "Photos by Harold D. Whitcombe.",
    ]
    clipped = "One whole sentence. Source: https://catalog.archives.gov/id/1 Then a clipped"
    assert split_sentences(clipped) == ["One whole sentence."]
    assert split_sentences("Only a clipped") == ["Only a clipped\u2026"]


def test_the_representative_is_the_first_description() -> None:
    assert representative(MEMBERS["2-0"]) == MEMBERS["2-0"][1]
    only_authorities = [KeyRecord(9, "Pacific Ocean", "geographicPlaceName")]
    assert representative(only_authorities) == only_authorities[0]
    assert representative([]) is None


@pytest.mark.parametrize(
    ("heading", "kind", "name"),
    [
        ("Morgenthau, Henry, 1891-1967", "person", "Henry Morgenthau"),
        ("Morgenthau, Henry, Jr., 1891-1967", "person", "Henry Morgenthau, Jr."),
        (
            "Department of the Interior. War Relocation Authority. 2/16/1944-6/30/1946",
            "organization",
            "War Relocation Authority",
        ),
        ("Manzanar (Calif.)", "geographicPlaceName", "Manzanar (Calif.)"),
    ],
)
def test_authorities_are_named_as_running_text_names_them(
    heading: str, kind: str, name: str
) -> None:
    assert display_name(heading, kind) == name


def test_an_extractive_report_answers_a_main_themes_question_in_prose() -> None:
    """From members to the answer: the report the build writes is what the overview says."""
    members = [
        MemberInfo(10, "Diaries", "series", 3, None, None, "1933\u20131945", "Papers"),
        MemberInfo(11, "Volume 1", "fileUnit", 1, None, None, None, "Diaries"),
        MemberInfo(12, "Volume 2", "fileUnit", 1, None, None, None, "Diaries"),
        MemberInfo(13, "Morgenthau, Henry, 1891-1967", "person", 1, None, None),
    ]
    rels = [
        RelationshipInfo(10, 11, "Includes", "Diaries", "Volume 1", 4),
        RelationshipInfo(10, 12, "Includes", "Diaries", "Volume 2", 4),
        RelationshipInfo(13, 10, "creator", "Morgenthau", "Diaries", 4),
    ]
    context = build_context("0-1", 0, members, rels, [], token_budget=500, count_tokens=count_words)
    built = extractive_report(context)
    answer = ask_global(
        "Give an overview of the collection.",
        [built],
        sizes={"0-1": 4},
        members={"0-1": [KeyRecord(10, "Diaries", "series")]},
    )
    assert answer.text == (
        "Diaries: 4 records (2 file units, 1 series and 1 person), dated 1933\u20131945, "
        "created by Henry Morgenthau. [1]"
    )
    assert not STATISTICS.search(built.summary)


def test_a_topic_line_skips_a_finding_that_only_names_a_record_kind() -> None:
    relocation = CommunityReport(
        community_id="0-1",
        level=0,
        title="Records of the War Relocation Authority",
        summary="Records of the War Relocation Authority: 78 records (72 series), dated "
        "1942\u20131946. The people and organizations its records name most are Manzanar "
        "Relocation Center and War Relocation Authority.",
        rating=5.0,
        rating_explanation="r",
        findings=(Finding("Records of the War Relocation Authority", "A record group."),),
        generated_by="extractive",
    )
    answer = ask_global(
        "What are the main topics of the War Relocation Authority records?",
        [relocation],
        sizes={"0-1": 78},
        members={"0-1": [KeyRecord(537, "Records of the War Relocation Authority", "recordGroup")]},
    )
    assert "A record group" not in answer.text
    assert answer.text.endswith("Relocation Center and War Relocation Authority. [1]")


class ScriptedModel:
    """A model whose map step scores every report and whose reduce step writes two sentences
    with GraphRAG's data references."""

    name = "fake"
    model = "m1"
    params: dict[str, object] = {}

    def complete(self, prompt: str) -> str:
        if "Importance Score" in prompt or "----Analyst" in prompt:
            return (
                "The Morgenthau diaries name the War Refugee Board [Data: Reports (2-6)]. "
                "Relocation records document evacuees and the War Relocation Authority."
            )
        return '{"points": [{"description": "Diaries and relocation records", "score": 80}]}'


def test_a_model_answer_cites_the_theme_each_sentence_shares_most_words_with() -> None:
    answer = ask_global(
        "What are the main themes of the Morgenthau diaries and the relocation records?",
        llm=ScriptedModel(),
    )
    assert answer.text == (
        "The Morgenthau diaries name the War Refugee Board. [1] Relocation records document "
        "evacuees and the War Relocation Authority. [2]"
    )
    assert [c.na_id for c in answer.citations] == [589213, 537]


class InventingModel(ScriptedModel):
    """The reduce step adds a sentence whose name and year no report states."""

    def complete(self, prompt: str) -> str:
        reply = super().complete(prompt)
        if "Importance Score" in prompt or "----Analyst" in prompt:
            return reply + " Eleanor Roosevelt visited the camps in 1951."
        return reply


def test_a_model_answer_loses_a_sentence_no_report_supports() -> None:
    answer = ask_global(
        "What are the main themes of the Morgenthau diaries and the relocation records?",
        llm=InventingModel(),
    )
    assert "Eleanor" not in answer.text and "1951" not in answer.text
    assert answer.text.startswith("The Morgenthau diaries name the War Refugee Board. [1]")
    assert answer.guard is not None
    assert (answer.guard.kept, answer.guard.dropped) == (2, 1)


class OnlyInventingModel(ScriptedModel):
    def complete(self, prompt: str) -> str:
        if "Importance Score" in prompt or "----Analyst" in prompt:
            return "Eleanor Roosevelt visited the camps in 1951."
        return super().complete(prompt)


def test_a_model_answer_with_nothing_supported_gives_the_extractive_answer() -> None:
    answer = ask_global(
        "What are the main themes of the Morgenthau diaries and the relocation records?",
        llm=OnlyInventingModel(),
    )
    assert "Eleanor" not in answer.text and not answer.refused
    assert answer.method == "extractive" or answer.method.startswith("extractive")
    assert answer.guard is not None and answer.guard.kept == 0

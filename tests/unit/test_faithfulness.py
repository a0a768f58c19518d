"""The faithfulness guard: pure checks of what a fact is, and a scripted model whose answer
holds a sentence the records do not support."""

from __future__ import annotations

from nara_kg.generation.llm import OpenAICompatibleLLM
from nara_kg.retrieval.answer import AnswerContext, answer_question
from nara_kg.retrieval.faithfulness import guard_answer, sentence_facts, split_sentences
from nara_kg.retrieval.terms import METHOD_EXTRACTIVE
from tests.openai_server import Reply, openai_test_server

ROHWER = AnswerContext(
    na_id=101,
    title="Rohwer Relocation Center, McGehee, Arkansas",
    text="Evacuees arrive at the center. The photographer was Fred Yamaguchi. "
    "Taken on June 6, 1944; 1,500 prints were made.",
    source="description",
)
DIARIES = AnswerContext(
    na_id=202,
    title="Diaries of Henry Morgenthau, Jr.",
    text="The series holds over 850 diary volumes.",
    source="scopeAndContentNote",
)


def test_facts_are_names_numbers_and_dates_not_sentence_openers() -> None:
    assert sentence_facts("The photographer was Fred Yamaguchi.") == {"fred", "yamaguchi"}
    assert sentence_facts("It was taken on June 6, 1944 [1].") == {"june", "6", "1944"}
    assert sentence_facts("Morgenthau kept 1,500 volumes.") == {"1500"}  # opener alone
    assert sentence_facts("Henry Morgenthau kept them.") == {"henry", "morgenthau"}
    assert sentence_facts("These are photographs of evacuees.") == set()


def test_sentences_split_after_full_stops_but_not_after_initials() -> None:
    assert split_sentences("Harold D. Whitcombe wrote it. Then he left.\nAnd more") == [
        "Harold D. Whitcombe wrote it.",
        "Then he left.",
        "And more",
    ]


def test_a_sentence_with_an_unsupported_name_or_number_is_dropped() -> None:
    sources = [f"{ROHWER.title}\n{ROHWER.text}", f"{DIARIES.title}\n{DIARIES.text}"]
    result = guard_answer(
        "The photographer was Fred Yamaguchi [1]. He took 2,000 photographs in 1943. "
        "Morgenthau kept over 850 diary volumes [2]. Dorothea Lange also worked there.",
        sources,
    )
    assert result.text == (
        "The photographer was Fred Yamaguchi [1]. Morgenthau kept over 850 diary volumes [2]."
    )
    assert (result.kept, result.dropped) == (2, 2)
    assert dict(result.dropped_sentences) == {
        "He took 2,000 photographs in 1943.": ("1943", "2000"),
        "Dorothea Lange also worked there.": ("dorothea", "lange"),
    }


def test_a_sentence_is_checked_against_the_records_it_cites() -> None:
    sources = [f"{ROHWER.title}\n{ROHWER.text}", f"{DIARIES.title}\n{DIARIES.text}"]
    # Yamaguchi is in record 1, not in record 2 which the sentence cites.
    result = guard_answer("The photographer was Fred Yamaguchi [2].", sources)
    assert (result.kept, result.dropped) == (0, 1)
    assert guard_answer("Fred Yamaguchi took them [1].", sources).kept == 1


def test_a_scripted_model_answer_loses_its_unsupported_sentence() -> None:
    reply = (
        "The photographer was Fred Yamaguchi. "
        "He was born in Tokyo in 1901 and later moved to Seattle."
    )
    with openai_test_server() as server:
        server.replies.append(Reply(content=reply))
        llm = OpenAICompatibleLLM(server.url, "scripted", None, timeout_s=10.0)
        answer = answer_question(
            "Who photographed the Rohwer Relocation Center?", [ROHWER, DIARIES], llm, None
        )
    assert answer.text == "The photographer was Fred Yamaguchi. [1]"
    assert [c.na_id for c in answer.citations] == [ROHWER.na_id]
    assert answer.guard is not None and answer.guard.to_dict() == {
        "sentences_kept": 1,
        "sentences_dropped": 1,
    }
    assert not answer.refused and "openai" in answer.method


def test_with_nothing_supported_the_extractive_answer_stands_in() -> None:
    with openai_test_server() as server:
        server.replies.append(Reply(content="Ansel Adams photographed it in 1943."))
        llm = OpenAICompatibleLLM(server.url, "scripted", None, timeout_s=10.0)
        answer = answer_question(
            "Who was the photographer of the Rohwer Relocation Center?", [ROHWER], llm, None
        )
    assert answer.method == METHOD_EXTRACTIVE
    assert "Ansel" not in answer.text and not answer.refused
    assert answer.guard is not None and (answer.guard.kept, answer.guard.dropped) == (0, 1)

"""The citation contract: a marker after every answer sentence, markers numbered by distinct
record in order of first citation, one citation per sentence."""

from __future__ import annotations

from nara_kg.retrieval.citations import (
    AnswerCitation,
    CitedSentence,
    Source,
    attribute,
    cite,
    strip_markers,
)


def test_markers_number_distinct_records_in_order_of_first_citation() -> None:
    text, citations = cite(
        [
            CitedSentence("The levees were built in 1937.", 20, "Levees"),
            CitedSentence("The photographer was Fred Yamaguchi.", 10, "Rohwer"),
            CitedSentence("  The levees  held.", 20, "Levees"),
            CitedSentence("Untitled.", 30, None),
        ]
    )
    assert text == (
        "The levees were built in 1937. [1] The photographer was Fred Yamaguchi. [2] "
        "The levees held. [1] Untitled. [3]"
    )
    assert citations == (
        AnswerCitation(1, 20, "Levees", "The levees were built in 1937."),
        AnswerCitation(2, 10, "Rohwer", "The photographer was Fred Yamaguchi."),
        AnswerCitation(1, 20, "Levees", "The levees held."),
        AnswerCitation(3, 30, "", "Untitled."),
    )
    assert citations[0].to_dict() == {
        "marker": 1,
        "na_id": 20,
        "title": "Levees",
        "sentence": "The levees were built in 1937.",
    }
    assert strip_markers(text) == (
        "The levees were built in 1937. The photographer was Fred Yamaguchi. "
        "The levees held. Untitled."
    )


def test_a_model_sentence_is_attributed_to_the_record_sharing_most_of_its_words() -> None:
    sources = [
        Source(1, "Navy budget memorandum", "The memorandum sets the Navy budget for 1950."),
        Source(2, "Rohwer Relocation Center", "The photographer was Fred Yamaguchi."),
    ]
    cited = attribute(["Fred Yamaguchi was the photographer.", "It was 1950."], sources)
    assert [c.na_id for c in cited] == [2, 1]
    # No shared word: the first record given (the best retrieved) is cited.
    assert attribute(["Nothing in common."], sources)[0].na_id == 1
    assert attribute(["Anything."], []) == []

"""Pure parts of issue 37's cards, follow-ups and first contact: the card facts and excerpt, scores
in rank order, the follow-up resolver, the example questions, and the quick `ask` settings."""

from __future__ import annotations

import pytest

from nara_kg.api.examples import OVERVIEW_QUESTION, compose
from nara_kg.cli.quick import quick_path
from nara_kg.embedding.factory import embedding_settings, make_embedder
from nara_kg.model.schema import HEADER_BODY_SEPARATOR, Prop
from nara_kg.retrieval.cards import MAX_EXCERPT_CHARS, body_text, card_facts, excerpt, file_format
from nara_kg.retrieval.filters import NO_FILTERS, SearchFilters
from nara_kg.retrieval.followup import Turn, resolve_follow_up
from nara_kg.retrieval.search import in_rank_order

# --- cards ---------------------------------------------------------------------------------


def test_card_facts_from_the_record_properties() -> None:
    card = card_facts(
        {
            Prop.DIGITAL_OBJECT_URLS: [
                "https://example.org/a/md0001.pdf",
                "https://example.org/a/md0002.PDF",
                "https://example.org/a/img_001.jpg",
                "javascript:alert(1)",
            ],
            Prop.ACCESS_RESTRICTION: "Restricted - Partly",
            Prop.USE_RESTRICTION: "Restricted - Possibly",
            Prop.SPECIFIC_USE_RESTRICTIONS: ["Copyright", "Copyright"],
            Prop.REFERENCE_UNITS: ["Franklin D. Roosevelt Library"],
        }
    )
    assert card.online_count == 3  # the script URL is no link
    assert card.online_formats == {"PDF": 2, "JPEG": 1}
    assert [obj.format for obj in card.online] == ["PDF", "PDF", "JPEG"]
    assert card.access_restriction == "Restricted - Partly"
    assert card.use_restriction == "Restricted - Possibly"
    assert card.use_restrictions == ("Copyright",)
    assert card.holding_archive == "Franklin D. Roosevelt Library"


def test_a_record_without_facts_has_an_empty_card() -> None:
    card = card_facts({})
    assert (card.online_count, card.access_restriction, card.holding_archive) == (0, None, None)
    assert card_facts(None) == card


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://x.org/a/b.jpeg", "JPEG"),
        ("https://x.org/a/b.tif?x=1", "TIFF"),
        ("https://x.org/a/b", "file"),
        ("https://x.org/a/b.docx", "DOCX"),
    ],
)
def test_file_format_from_the_extension(url: str, expected: str) -> None:
    assert file_format(url) == expected


def test_body_text_leaves_out_the_search_headers() -> None:
    chunks = [
        f"Title: Rohwer{HEADER_BODY_SEPARATOR}Photographs of activities.",
        "Title: Rohwer (header only)",
        f"Title: Rohwer{HEADER_BODY_SEPARATOR}The photographer was Fred Yamaguchi.",
    ]
    assert body_text(chunks) == "Photographs of activities.\nThe photographer was Fred Yamaguchi."


def test_excerpt_is_the_matching_sentence_else_the_start() -> None:
    body = (
        "Photographs of recreational activities. The photographer was Fred Yamaguchi. "
        "There are prints for about 50 negatives."
    )
    assert excerpt("Who was the photographer?", body) == "The photographer was Fred Yamaguchi."
    assert excerpt("zeppelin moorings", body) == body  # nothing matches: the start
    assert excerpt("anything", "") is None
    # Initials do not end a sentence; a window that starts inside one says so.
    named = "The files of Harold D. Whitcombe concern civil defense. Other matters."
    assert excerpt("civil defense files", named) == named.split(" Other")[0]
    assert excerpt("civil defense", "dollars for civil defense. Other.") == (
        "…dollars for civil defense."
    )
    long = excerpt("anything", "word " * 200)
    assert long is not None and len(long) <= MAX_EXCERPT_CHARS and long.endswith("…")


def test_scores_are_in_rank_order() -> None:
    # The exact match moved "b" to the top with a lower fused score.
    ranked = in_rank_order([("b", 0.05), ("a", 0.09), ("c", 0.08), ("d", 0.01)])
    assert [key for key, _ in ranked] == ["b", "a", "c", "d"]
    scores = [score for _, score in ranked]
    assert scores == sorted(scores, reverse=True)
    assert scores == [0.09, 0.09, 0.08, 0.01]


# --- follow-ups ----------------------------------------------------------------------------

FIRST = Turn(
    question="Who created the correspondence concerning flood control?",
    answer="The Bureau of Reclamation.",
    na_ids=(101, 102),
    filters=SearchFilters(levels=("series",)),
)


def test_without_history_the_question_is_asked_as_it_is() -> None:
    resolved = resolve_follow_up("and in 1942?", NO_FILTERS, [])
    assert (resolved.question, resolved.follow_up) == ("and in 1942?", False)


@pytest.mark.parametrize(
    ("question", "start", "end"),
    [
        ("and in 1942?", "1942", "1942"),
        ("What about 1943-1945?", "1943", "1945"),
        ("1944", "1944", "1944"),
    ],
)
def test_years_alone_ask_the_last_question_for_those_years(
    question: str, start: str, end: str
) -> None:
    resolved = resolve_follow_up(question, NO_FILTERS, [FIRST])
    assert resolved.follow_up and resolved.resolved_by == "dates"
    assert resolved.question.startswith("Who created the correspondence concerning flood control")
    assert (resolved.filters.date_from, resolved.filters.date_to) == (start, end)
    # The last turn's other filters still apply.
    assert resolved.filters.levels == ("series",)
    assert resolved.focus == (101, 102)


def test_a_pronoun_is_read_as_the_record_the_last_answer_was_about() -> None:
    resolved = resolve_follow_up(
        "who created it?", NO_FILTERS, [FIRST], titles={101: "Flood Control Correspondence"}
    )
    assert resolved.follow_up and resolved.resolved_by == "record"
    assert resolved.question == "who created Flood Control Correspondence?"
    assert resolved.filters == FIRST.filters
    possessive = resolve_follow_up(
        "What are its dates?", NO_FILTERS, [FIRST], titles={102: "Volume 696"}
    )
    assert possessive.question == "What are Volume 696's dates?"


def test_without_titles_a_pronoun_is_read_as_the_last_questions_subject() -> None:
    resolved = resolve_follow_up("When was it written?", NO_FILTERS, [FIRST])
    assert resolved.resolved_by == "question"
    assert resolved.question == "When was the correspondence concerning flood control written?"


def test_a_question_that_names_its_own_subject_is_not_a_follow_up() -> None:
    question = "Who photographed the Rohwer Relocation Center in Arkansas?"
    assert resolve_follow_up(question, NO_FILTERS, [FIRST]).follow_up is False
    # A pronoun in a question that names plenty of its own stays as asked too.
    named = "Was it signed by the Secretary of the Treasury in Washington?"
    assert resolve_follow_up(named, NO_FILTERS, [FIRST]).question == named


def test_the_requests_own_filters_win_over_the_last_turns() -> None:
    own = SearchFilters(levels=("item",))
    resolved = resolve_follow_up("and in 1942?", own, [FIRST])
    assert resolved.filters.levels == ("item",) and resolved.filters.date_from == "1942"


# --- first contact -------------------------------------------------------------------------


def test_example_questions_come_from_the_graphs_records() -> None:
    containers = [
        {
            "naId": 1,
            "title": "Diaries of Henry Morgenthau, Jr.",
            "level": "series",
            "hasCreator": True,
        },
        {
            "naId": 2,
            "title": "Photographs of Relocation Centers",
            "level": "series",
            "hasCreator": False,
        },
    ]
    authorities = [{"naId": 3, "heading": "Morgenthau, Henry, Jr., 1891-1967"}]
    assert compose(containers, authorities, communities=True) == [
        "Who created the Diaries of Henry Morgenthau, Jr.?",
        "Show me records about Morgenthau, Henry, Jr., 1891-1967",
        "What is the series Photographs of Relocation Centers about?",
        OVERVIEW_QUESTION,
    ]
    assert compose([], [], communities=False) == []


def test_quick_ask_reads_the_resources_settings() -> None:
    resources = pytest.importorskip("resources")
    assert make_embedder(**embedding_settings({})) == resources.EmbeddingModel().get_embedder()
    env = {"NARA_KG_EMBEDDING_THREADS": "2", "NARA_KG_EMBEDDING_BACKEND": "torch"}
    assert embedding_settings(env) == {"threads": 2, "backend": "torch"}
    assert make_embedder(**embedding_settings(env)) == (
        resources.EmbeddingModel(threads=2, backend="torch").get_embedder()
    )
    assert quick_path({})
    assert not quick_path({"NARA_KG_LLM_BACKEND": "openai"})
    assert quick_path({"NARA_KG_LLM_BACKEND": "extractive"})
    assert not quick_path({"NARA_KG_EMBEDDING_BACKEND": "standin"})


def test_the_ask_path_imports_no_dagster_text_splitter_or_dataframes() -> None:
    """What made `nara-kg ask` take seconds before it answered: Dagster (the resources), the
    text splitter (through type names) and pandas (through the Neo4j driver). pyarrow still
    comes in through graph.mentions (the entity path), about 0.1 s."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from nara_kg.cli.quick import import_driver_without_dataframes\n"
        "import_driver_without_dataframes()\n"
        "import nara_kg.cli.main, nara_kg.cli.quick, nara_kg.retrieval.ask\n"
        "heavy = ('dagster', 'langchain_text_splitters', 'pandas', 'graphdatascience')\n"
        "print(' '.join(m for m in heavy if m in sys.modules))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == ""

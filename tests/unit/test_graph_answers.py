"""Model-free answers from records as the graph holds them: graph facts, identifier lookups,
typed extractive sentences (never a title or a search header), refusals, citations."""

from __future__ import annotations

from nara_kg.generation.llm import ExtractiveLLM
from nara_kg.retrieval.answer import AnswerContext, answer_question, extractive_answer
from nara_kg.retrieval.ask import asked_na_id
from nara_kg.retrieval.extractive import acronyms, question_kind
from nara_kg.retrieval.fact_answers import identity
from nara_kg.retrieval.graph_record import Ancestor, GraphRecord, spoken_span
from nara_kg.retrieval.prompts import REFUSAL

DIARIES = Ancestor(589213, "Diaries of Henry Morgenthau, Jr.", "series", "1933-04-27", "1945-07-21")
PAPERS = Ancestor(589184, "Henry Morgenthau, Jr. Papers", "collection", None, None)
RG = Ancestor(537, "Records of the War Relocation Authority", "recordGroup", None, None, (), 210)

SERIES = GraphRecord(
    na_id=589213,
    title="Diaries of Henry Morgenthau, Jr.",
    level="series",
    properties={
        "heading_creators": ["Morgenthau, Henry, 1891-1967"],
        "logicalDate_inclusiveStartDate": "1933-04-27",
        "logicalDate_inclusiveEndDate": "1945-07-21",
    },
    bodies=(
        "These diaries follow the working life of Henry Morgenthau, Jr. in office.",
        "Each of the over 850 diary volumes opens with a cover sheet.",
        "The diaries touch on the New Deal, the Great Depression, the War Refugee Board, the "
        "Morgenthau Plan and Bretton Woods.",
    ),
    ancestors=(PAPERS,),
    children={"fileUnit": 879},
)
VOLUME = GraphRecord(
    na_id=28277406,
    title="Volume 696, January 22 \u2013 January 26, 1944",
    level="fileUnit",
    properties={
        "status_accessRestriction": "Unrestricted",
        "objectType_digitalObjects": ["Portable Document File (PDF)"] * 2,
    },
    ancestors=(DIARIES, PAPERS),
)
ROHWER = GraphRecord(
    na_id=535997,
    title="Rohwer Relocation Center",
    level="series",
    properties={},
    bodies=(
        "Pictures of school games and classes.  Every picture was taken by the photographer "
        "Fred Yamaguchi.",
    ),
    ancestors=(RG,),
)


def answer(question: str, *records: GraphRecord) -> str:
    return extractive_answer(question, records).text


def test_title_echo_the_sentence_that_answers_not_the_title() -> None:
    result = extractive_answer("Who photographed the Rohwer Relocation Center?", [ROHWER])
    assert result.text == "Every picture was taken by the photographer Fred Yamaguchi. [1]"
    assert [(c.marker, c.na_id) for c in result.citations] == [(1, 535997)]


def test_key_words_keep_one_record_from_answering_for_another() -> None:
    result = extractive_answer("Who photographed the Jerome Relocation Center?", [ROHWER])
    assert result.refused
    assert result.text == f"{REFUSAL} The closest records: Rohwer Relocation Center (naId 535997)."
    assert result.citations == ()


def test_header_leak_a_chunk_header_is_never_a_candidate() -> None:
    header = "Title: Diaries of Henry Morgenthau, Jr.\nType: series\nPart of: Papers"
    context = AnswerContext(
        589213, SERIES.title, f"{header}\n\nThe diaries cover the New Deal and Bretton Woods.", None
    )
    result = answer_question(
        "What do the Morgenthau diaries cover?", [context], ExtractiveLLM(), None
    )
    assert result.text == "The diaries cover the New Deal and Bretton Woods. [1]"
    only_header = AnswerContext(589213, SERIES.title, header, None)
    refused = answer_question("What is Part of the Papers?", [only_header], ExtractiveLLM(), None)
    assert "Part of:" not in refused.text


def test_a_number_in_another_chunk_of_the_record() -> None:
    assert answer("How many diary volumes did Morgenthau keep?", SERIES) == (
        "Each of the over 850 diary volumes opens with a cover sheet. [1]"
    )


def test_a_topics_question_gets_the_sentence_naming_the_most_topics() -> None:
    assert answer("What topics do the Morgenthau diaries cover?", SERIES) == (
        "The diaries touch on the New Deal, the Great Depression, the War Refugee Board, the "
        "Morgenthau Plan and Bretton Woods. [1]"
    )


def test_graph_facts() -> None:
    assert answer("Who is the creator of the Diaries of Henry Morgenthau, Jr.?", SERIES) == (
        "The creator of Diaries of Henry Morgenthau, Jr. is Morgenthau, Henry, 1891-1967. [1]"
    )
    assert answer("How many file units are in the Diaries of Henry Morgenthau, Jr.?", SERIES) == (
        "Diaries of Henry Morgenthau, Jr. includes 879 file units. [1]"
    )
    assert answer("Which series does Volume 696 belong to?", VOLUME) == (
        "Volume 696, January 22 \u2013 January 26, 1944 is in the series Diaries of Henry "
        "Morgenthau, Jr. [1]"
    )
    assert "Record Group 210" in answer("Which record group holds the Rohwer photographs?", ROHWER)
    assert "Henry Morgenthau, Jr. Papers" in answer("Which collection is Volume 696 in?", VOLUME)
    assert answer("Are scans of Volume 696 online?", VOLUME).endswith(
        "is online: 2 Portable Document File (PDF) in the catalog. [1]"
    )
    assert "Unrestricted" in answer("Is access to Volume 696 restricted?", VOLUME)


def test_inherited_dates_are_said_to_be_inherited() -> None:
    assert answer("What are the dates of Volume 696?", VOLUME) == (
        "Volume 696, January 22 \u2013 January 26, 1944 carries no dates of its own; it has those "
        "of its series: April 27, 1933 \u2013 July 21, 1945 (dates of its series, Diaries of "
        "Henry Morgenthau, Jr.). [1]"
    )
    assert answer("What are the dates of the Diaries of Henry Morgenthau, Jr.?", SERIES) == (
        "The dates of Diaries of Henry Morgenthau, Jr. are April 27, 1933 \u2013 July 21, 1945. [1]"
    )
    assert spoken_span("1943-01-01", "1944-12-31") == "1943 \u2013 1944"
    titled = GraphRecord(
        na_id=28277496,
        title="Volume 740, June 6 \u2013 June 7, 1944",
        level="fileUnit",
        properties={
            "logicalDate_titleStartDate": "1944-06-06",
            "logicalDate_titleEndDate": "1944-06-07",
        },
        ancestors=(DIARIES,),
    )
    # The title holds the dates: the record is named by what comes before them, not twice.
    assert answer("What are the dates of Volume 740?", titled) == (
        "Volume 740 is dated June 6, 1944 \u2013 June 7, 1944, as its title states. [1]"
    )
    # The title's own period closes the sentence (not "Jr.."); an ellipsis is left as written.
    assert identity(titled).sentence.endswith("a file unit in Diaries of Henry Morgenthau, Jr.")
    assert not identity(titled).sentence.endswith("..")
    trailing = Ancestor(589213, "Letters, 1933...", "series", None, None)
    unit = GraphRecord(na_id=1, title="A", level="fileUnit", properties={}, ancestors=(trailing,))
    assert identity(unit).sentence.endswith("Letters, 1933....")


def test_the_fact_comes_from_the_record_the_question_names() -> None:
    # The volume ranks first, but the question names the series.
    assert answer("Who created the Diaries of Henry Morgenthau, Jr.?", VOLUME, SERIES).startswith(
        "The creator of Diaries of Henry Morgenthau, Jr."
    )


def test_identifier_lookups() -> None:
    assert identity(VOLUME).sentence == (
        "naId 28277406 is Volume 696, January 22 \u2013 January 26, 1944, a file unit in Diaries "
        "of Henry Morgenthau, Jr."
    )
    result = extractive_answer("28277406", [SERIES], identified=VOLUME)
    assert result.citations[0].na_id == 28277406 and result.text.startswith("naId 28277406 is")
    assert asked_na_id("28277406") == 28277406
    assert asked_na_id("What is naId 28276972?") == 28276972
    assert asked_na_id(" naid: 123456 ") == 123456
    assert asked_na_id("What happened in 1944?") is None


def test_citations_point_to_the_record_each_sentence_came_from() -> None:
    result = extractive_answer("Who photographed the Rohwer Relocation Center?", [SERIES, ROHWER])
    assert [c.na_id for c in result.citations] == [535997]
    assert result.citations[0].sentence == (
        "Every picture was taken by the photographer Fred Yamaguchi."
    )
    assert result.used_na_ids == (535997,)


def test_question_kinds_and_acronyms() -> None:
    assert question_kind("Who took the photographs?") == "who"
    assert question_kind("Which well-known photographer did the WRA commission?") == "who"
    assert question_kind("When was it issued?") == "when"
    assert question_kind("How many prints are there?") == "how_many"
    assert question_kind("What topics do the Morgenthau diaries cover?") == "topics"
    assert question_kind("In which cities did the WRA have offices?") == "where"
    assert acronyms("Records of the War Relocation Authority") == {"wra"}


def test_a_chunk_that_starts_mid_sentence_continues_it() -> None:
    split = GraphRecord(
        1, "Storage lists", "series", {}, ("Goods held at Acme Storage Co.", ", Reno.")
    )
    assert split.body == "Goods held at Acme Storage Co., Reno."
    assert GraphRecord(1, None, None, {}, ("One.", "Two.")).body == "One.\nTwo."


def test_a_who_question_wants_a_person_not_a_place() -> None:
    place = GraphRecord(
        2, "Camp photographs", "series", {}, ("Photographs of the Tule Lake Segregation Center.",)
    )
    person = GraphRecord(
        3, "Tule Lake photographs", "series", {}, ("The photographers were Jack Iwata and others.",)
    )
    assert answer("Who were the photographers at Tule Lake?", place, person) == (
        "The photographers were Jack Iwata and others. [1]"
    )


def test_counted_archival_words_and_havens_are_content_words() -> None:
    havens = GraphRecord(
        4,
        "Files on Temporary Havens",
        "series",
        {},
        ("The havens are described here.", "This series contains 11 files of letters."),
    )
    assert answer("How many files are in the files on temporary havens?", havens) == (
        "This series contains 11 files of letters. [1]"
    )

"""LLM entity extraction: prompt, parsing, gleaning, cache and resolution against authorities,
with a scripted fake LLM and with a local OpenAI-compatible test server."""

from __future__ import annotations

import numpy as np

from nara_kg.generation.entity_extraction import (
    COMPLETION_DELIMITER,
    CONTINUE_PROMPT,
    LOOP_PROMPT,
    ExtractedEntity,
    ExtractedRelation,
    extract_chunk,
    extraction_prompt,
    parse_output,
)
from nara_kg.generation.llm import GenerationCache, OpenAICompatibleLLM
from nara_kg.linking.authorities import Authority
from nara_kg.linking.resolve import EntityResolver, Step, resolve_entities
from tests.openai_server import FakeServer, Reply
from tests.unit.test_llm import server  # noqa: F401  (the fixture)

FIRST = (
    '("entity"<|>FRANKLIN D. ROOSEVELT<|>person<|>President of the United States)\n##\n'
    '("entity"<|>Tennessee Valley Authority<|>organization<|>Federal agency)\n##\n'
    '("relationship"<|>Franklin D. Roosevelt<|>Tennessee Valley Authority<|>Signed the act '
    "creating it<|>8)\n" + COMPLETION_DELIMITER
)
GLEANED = (
    '("entity"<|>Norris Dam<|>geo<|>Dam on the Clinch River)##'
    '("entity"<|>franklin d roosevelt<|>person<|>Visited the dam)##'
    "this line is not a record##"
    '("entity"<|>Nobody<|>spaceship<|>unknown type)##'
    '("relationship"<|>Tennessee Valley Authority<|>Norris Dam<|>Built it<|>high)##'
    '("relationship"<|>Tennessee Valley Authority<|>Norris Dam<|>Built the dam<|>9)'
    + COMPLETION_DELIMITER
)


class ScriptedLLM:
    name = "openai"
    model = "scripted"

    def __init__(self, answers: list[str]) -> None:
        self.params: dict[str, object] = {}
        self.answers = list(answers)
        self.prompts: list[str] = []

    def complete(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.answers.pop(0)


def test_prompt_names_types_delimiters_and_text() -> None:
    prompt = extraction_prompt("Records of the TVA.")
    assert "person, organization, geo, event, topic" in prompt
    assert "<|>" in prompt and "**##**" in prompt and COMPLETION_DELIMITER in prompt
    assert prompt.rstrip().endswith("Output:")
    assert "Text: Records of the TVA." in prompt


def test_parse_output_types_records_and_counts_malformed_lines() -> None:
    parsed = parse_output(GLEANED)
    assert parsed.entities == [
        ExtractedEntity("Norris Dam", "geo", "Dam on the Clinch River"),
        ExtractedEntity("franklin d roosevelt", "person", "Visited the dam"),
    ]
    assert parsed.relations == [
        ExtractedRelation("Tennessee Valley Authority", "Norris Dam", "Built the dam", 9.0)
    ]
    # the prose line, the unknown type, the non-numeric strength
    assert parsed.malformed == 3


def test_parse_output_defaults_weight_and_ignores_after_completion() -> None:
    parsed = parse_output(
        '("relationship"<|>A Corp<|>B Town<|>located in)##'
        + COMPLETION_DELIMITER
        + '("entity"<|>Late<|>person<|>after the end)'
    )
    assert parsed.relations == [ExtractedRelation("A Corp", "B Town", "located in", 1.0)]
    assert parsed.entities == [] and parsed.malformed == 0


def test_gleaning_merges_rounds_and_stops_at_max() -> None:
    llm = ScriptedLLM([FIRST, GLEANED])
    result = extract_chunk(llm, "1-0", "Roosevelt and the TVA.", None, max_gleanings=1)
    assert len(llm.prompts) == 2
    assert llm.prompts[1].endswith(CONTINUE_PROMPT)
    assert FIRST in llm.prompts[1]
    by_name = {(e.name, e.type): e for e in result.entities}
    # Roosevelt's two spellings are one entity: first spelling, both descriptions.
    assert by_name[("FRANKLIN D. ROOSEVELT", "person")].description == (
        "President of the United States\nVisited the dam"
    )
    assert ("Norris Dam", "geo") in by_name and len(result.entities) == 3
    assert len(result.relations) == 2
    assert result.malformed == 3 and result.calls == 2 and result.cached == 0


def test_gleaning_asks_loop_question_between_rounds() -> None:
    llm = ScriptedLLM([FIRST, GLEANED, "N"])
    result = extract_chunk(llm, "1-0", "text", None, max_gleanings=3)
    assert len(llm.prompts) == 3 and llm.prompts[2].endswith(LOOP_PROMPT)
    assert result.calls == 3
    no_gleaning = extract_chunk(ScriptedLLM([FIRST]), "1-0", "text", None, max_gleanings=0)
    assert no_gleaning.calls == 1 and len(no_gleaning.entities) == 2


def test_second_run_is_served_from_the_cache() -> None:
    cache = GenerationCache(":memory:")
    first = extract_chunk(ScriptedLLM([FIRST, GLEANED]), "1-0", "text", cache)
    llm = ScriptedLLM([])
    again = extract_chunk(llm, "1-0", "text", cache)
    assert llm.prompts == [] and again.cached == again.calls == 2
    assert again.entities == first.entities and again.relations == first.relations


AUTHORITIES = [
    Authority(10, "person", "Roosevelt, Franklin D. (Franklin Delano), 1882-1945", ("FDR",)),
    Authority(20, "organization", "Tennessee Valley Authority", ("TVA",)),
    Authority(30, "geographicPlaceName", "Norris Dam (Tenn.)"),
    Authority(40, "topicalSubject", "Hydroelectric power plants"),
]


def fake_encode(texts: list[str]) -> np.ndarray:
    """A vector per text by its lowest words: 'hydro power plants' ~ 'Hydroelectric ...'."""
    vocabulary = ["hydro", "power", "plants", "dam", "roosevelt"]
    rows = []
    for text in texts:
        lowered = text.lower()
        row = np.array([float(word in lowered) for word in vocabulary]) + 1e-6
        rows.append(row / np.linalg.norm(row))
    return np.vstack(rows)


def test_resolution_exact_normalized_embedding_then_new() -> None:
    calls: list[list[str]] = []

    def encode(texts: list[str]) -> np.ndarray:
        calls.append(texts)
        return fake_encode(texts)

    resolver = EntityResolver(AUTHORITIES, encode, threshold=0.9)
    found = resolver.resolve(
        [
            ("TVA", "organization"),
            ("franklin d. roosevelt", "person"),
            ("Hydro power plants", "topic"),
            ("Hydro power plants", "person"),  # no person authority is close enough
            ("Lewis Hine", "person"),
        ]
    )
    assert [(r.step, r.authority_na_id) for r in found] == [
        (Step.EXACT, 20),
        (Step.NORMALIZED, 10),
        (Step.EMBEDDING, 40),
        (Step.NEW, None),
        (Step.NEW, None),
    ]
    assert found[4].entity_id == "person:lewis hine"
    resolver.resolve([("Someone else", "person")])
    # headings embedded once per resolver, then one batch of pending names per call
    assert sum(len(batch) == len(AUTHORITIES) for batch in calls) == 1


def test_resolution_type_must_be_compatible_and_encoder_optional() -> None:
    found = resolve_entities([("TVA", "geo"), ("Norris Dam", "geo")], AUTHORITIES)
    assert [(r.step, r.authority_na_id) for r in found] == [(Step.NEW, None), (Step.NORMALIZED, 30)]


def test_extraction_through_openai_compatible_server(server: FakeServer) -> None:  # noqa: F811
    server.replies.extend(
        [
            Reply(content=FIRST),
            Reply(content=GLEANED),
            Reply(content='("entity"<|>Lewis Hine<|>person<|>Photographer)' + COMPLETION_DELIMITER),
            Reply(content=COMPLETION_DELIMITER),
        ]
    )
    llm = OpenAICompatibleLLM(server.url, "test-model", None, timeout_s=5, max_retries=0)
    cache = GenerationCache(":memory:")
    chunks = {"1-0": "Roosevelt and the TVA.", "2-0": "Hine photographed the dam."}
    results = [extract_chunk(llm, cid, text, cache) for cid, text in chunks.items()]
    assert server.calls == 4
    assert server.requests[1]["json"]["messages"][0]["content"].endswith(CONTINUE_PROMPT)
    assert [len(r.entities) for r in results] == [3, 1]
    again = [extract_chunk(llm, cid, text, cache) for cid, text in chunks.items()]
    assert server.calls == 4  # nothing asked: every completion came from the cache
    assert [r.entities for r in again] == [r.entities for r in results]
    names = [(e.name, e.type) for r in results for e in r.entities]
    steps = {r.name: r.step for r in resolve_entities(names, AUTHORITIES, fake_encode)}
    assert steps == {
        "FRANKLIN D. ROOSEVELT": Step.NORMALIZED,
        "Tennessee Valley Authority": Step.EXACT,
        "Norris Dam": Step.NORMALIZED,
        "Lewis Hine": Step.NEW,
    }

"""LLM entity and relation extraction from chunk text (GraphRAG's element instances), with
gleaning. Pure: an :class:`~nara_kg.generation.llm.LLM` and a cache in, typed records out.

The prompt is GraphRAG's entity extraction prompt adapted to archival descriptions: the model
lists entities as `("entity"<|>NAME<|>TYPE<|>DESCRIPTION)` and relations as
`("relationship"<|>SOURCE<|>TARGET<|>DESCRIPTION<|>STRENGTH)`, records separated by `##`, the
list ended by `<|COMPLETE|>`. Gleaning (GraphRAG): after the first answer the model is told that
MANY entities were missed (:data:`CONTINUE_PROMPT`) and answers again; between rounds it is asked
whether any are still missing (:data:`LOOP_PROMPT`, Y or N). Our LLM protocol takes one prompt,
so a round's prompt is the conversation so far written out; each call goes through
:func:`~nara_kg.generation.llm.cached_complete`, so a re-run over the same chunk text and model
asks nothing.

A line that is not a well-formed record (wrong arity, unknown kind or type, empty name, a
strength that is not a number) is skipped and counted, never fatal: models drift from formats.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from nara_kg.generation.llm import LLM, GenerationCache, cached_complete
from nara_kg.linking.normalize import normalize_form

TUPLE_DELIMITER: Final = "<|>"
RECORD_DELIMITER: Final = "##"
COMPLETION_DELIMITER: Final = "<|COMPLETE|>"
#: The entity types the model may use (GraphRAG's defaults, with topic for subject headings).
ENTITY_TYPES: Final[tuple[str, ...]] = ("person", "organization", "geo", "event", "topic")
#: Gleaning rounds after the first answer (GraphRAG's default).
DEFAULT_MAX_GLEANINGS: Final = 1
#: Relationship strength when the model gives none.
DEFAULT_WEIGHT: Final = 1.0

EXTRACTION_PROMPT: Final = """-Goal-
Given a text from an archival catalog description (a record of the U.S. National Archives) and \
a list of entity types, identify all entities of those types from the text and all \
relationships among the identified entities.

-Steps-
1. Identify all entities. For each identified entity, extract the following information:
- entity_name: Name of the entity, capitalized
- entity_type: One of the following types: [{entity_types}]
- entity_description: Comprehensive description of the entity's attributes and activities, \
as the text states them
Format each entity as ("entity"{tuple_delimiter}<entity_name>{tuple_delimiter}<entity_type>\
{tuple_delimiter}<entity_description>)

2. From the entities identified in step 1, identify all pairs of (source_entity, \
target_entity) that are *clearly related* to each other.
For each pair of related entities, extract the following information:
- source_entity: name of the source entity, as identified in step 1
- target_entity: name of the target entity, as identified in step 1
- relationship_description: explanation as to why you think the source entity and the target \
entity are related to each other
- relationship_strength: a numeric score indicating strength of the relationship between the \
source entity and target entity
Format each relationship as ("relationship"{tuple_delimiter}<source_entity>{tuple_delimiter}\
<target_entity>{tuple_delimiter}<relationship_description>{tuple_delimiter}\
<relationship_strength>)

3. Return output in English as a single list of all the entities and relationships identified \
in steps 1 and 2. Use **{record_delimiter}** as the list delimiter.

4. When finished, output {completion_delimiter}

-Example-
Entity_types: person, organization, geo, event, topic
Text: Photographs of the Tennessee Valley Authority's construction of Norris Dam, taken by \
Lewis Hine in 1933.
Output:
("entity"{tuple_delimiter}TENNESSEE VALLEY AUTHORITY{tuple_delimiter}organization\
{tuple_delimiter}Federal agency that built Norris Dam)
{record_delimiter}
("entity"{tuple_delimiter}NORRIS DAM{tuple_delimiter}geo{tuple_delimiter}Dam built by the \
Tennessee Valley Authority, photographed in 1933)
{record_delimiter}
("entity"{tuple_delimiter}LEWIS HINE{tuple_delimiter}person{tuple_delimiter}Photographer who \
took the photographs in 1933)
{record_delimiter}
("relationship"{tuple_delimiter}TENNESSEE VALLEY AUTHORITY{tuple_delimiter}NORRIS DAM\
{tuple_delimiter}The Tennessee Valley Authority built Norris Dam{tuple_delimiter}9)
{record_delimiter}
("relationship"{tuple_delimiter}LEWIS HINE{tuple_delimiter}NORRIS DAM{tuple_delimiter}Lewis \
Hine photographed the construction of Norris Dam{tuple_delimiter}7)
{completion_delimiter}

-Real Data-
######################
Entity_types: {entity_types}
Text: {input_text}
######################
Output:"""

CONTINUE_PROMPT: Final = (
    "MANY entities and relationships were missed in the last extraction. Remember to ONLY emit "
    "entities that match any of the previously extracted types. Add them below using the same "
    "format:\n"
)
LOOP_PROMPT: Final = (
    "It appears some entities and relationships may have still been missed. Answer Y if there "
    "are still entities or relationships that need to be added, or N if there are none. Please "
    "answer with a single letter Y or N.\n"
)

_RECORD: Final = re.compile(r"\((.*)\)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class ExtractedEntity:
    name: str
    type: str
    description: str


@dataclass(frozen=True, slots=True)
class ExtractedRelation:
    source: str
    target: str
    description: str
    weight: float


@dataclass
class ParsedOutput:
    entities: list[ExtractedEntity] = field(default_factory=list)
    relations: list[ExtractedRelation] = field(default_factory=list)
    malformed: int = 0


@dataclass
class ChunkExtraction:
    """One chunk's entities and relations, merged over the gleaning rounds."""

    chunk_id: str
    entities: list[ExtractedEntity] = field(default_factory=list)
    relations: list[ExtractedRelation] = field(default_factory=list)
    malformed: int = 0
    #: Completions asked for (extraction, gleanings and loop questions) and how many were cached.
    calls: int = 0
    cached: int = 0


def extraction_prompt(text: str, entity_types: tuple[str, ...] = ENTITY_TYPES) -> str:
    return EXTRACTION_PROMPT.format(
        entity_types=", ".join(entity_types),
        tuple_delimiter=TUPLE_DELIMITER,
        record_delimiter=RECORD_DELIMITER,
        completion_delimiter=COMPLETION_DELIMITER,
        input_text=text,
    )


def _clean(value: str) -> str:
    return value.strip().strip('"').strip("'").strip()


def parse_output(text: str, entity_types: tuple[str, ...] = ENTITY_TYPES) -> ParsedOutput:
    """The records of one answer; malformed records are counted in `malformed`."""
    parsed = ParsedOutput()
    allowed = set(entity_types)
    body = text.split(COMPLETION_DELIMITER, 1)[0]
    for raw in re.split(re.escape(RECORD_DELIMITER) + r"|\n", body):
        record = raw.strip()
        if not record:
            continue
        match = _RECORD.search(record)
        if match is None:
            parsed.malformed += 1
            continue
        fields = [_clean(part) for part in match.group(1).split(TUPLE_DELIMITER)]
        kind = fields[0].lower()
        if kind == "entity" and len(fields) == 4:
            name, entity_type, description = fields[1], fields[2].lower(), fields[3]
            if name and entity_type in allowed:
                parsed.entities.append(ExtractedEntity(name, entity_type, description))
                continue
        elif kind == "relationship" and len(fields) in (4, 5):
            source, target, description = fields[1], fields[2], fields[3]
            weight = DEFAULT_WEIGHT
            try:
                if len(fields) == 5:
                    weight = float(fields[4])
            except ValueError:
                parsed.malformed += 1
                continue
            if source and target and normalize_form(source) != normalize_form(target):
                parsed.relations.append(ExtractedRelation(source, target, description, weight))
                continue
        parsed.malformed += 1
    return parsed


def entity_key(name: str, entity_type: str) -> tuple[str, str]:
    """What makes two extracted entities one: their normalized name and their type."""
    return normalize_form(name), entity_type


def merge_entities(entities: list[ExtractedEntity]) -> list[ExtractedEntity]:
    """One entity per (normalized name, type): the first spelling, the distinct descriptions
    joined (GraphRAG keeps every description; summarizing them is a later step)."""
    merged: dict[tuple[str, str], tuple[str, list[str]]] = {}
    for entity in entities:
        key = entity_key(entity.name, entity.type)
        _name, descriptions = merged.setdefault(key, (entity.name, []))
        if entity.description and entity.description not in descriptions:
            descriptions.append(entity.description)
    return [
        ExtractedEntity(name, key[1], "\n".join(descriptions))
        for key, (name, descriptions) in merged.items()
    ]


def merge_relations(relations: list[ExtractedRelation]) -> list[ExtractedRelation]:
    """One relation per (normalized source, normalized target): weights summed (GraphRAG),
    distinct descriptions joined."""
    merged: dict[tuple[str, str], tuple[str, str, list[str], float]] = {}
    for relation in relations:
        key = (normalize_form(relation.source), normalize_form(relation.target))
        source, target, descriptions, weight = merged.get(
            key, (relation.source, relation.target, [], 0.0)
        )
        if relation.description and relation.description not in descriptions:
            descriptions.append(relation.description)
        merged[key] = (source, target, descriptions, weight + relation.weight)
    return [
        ExtractedRelation(source, target, "\n".join(descriptions), weight)
        for source, target, descriptions, weight in merged.values()
    ]


def _ask(llm: LLM, prompt: str, cache: GenerationCache | None, result: ChunkExtraction) -> str:
    text, was_cached = cached_complete(llm, prompt, cache)
    result.calls += 1
    result.cached += was_cached
    return text


def extract_chunk(
    llm: LLM,
    chunk_id: str,
    text: str,
    cache: GenerationCache | None,
    *,
    max_gleanings: int = DEFAULT_MAX_GLEANINGS,
    entity_types: tuple[str, ...] = ENTITY_TYPES,
) -> ChunkExtraction:
    """Extract, glean up to `max_gleanings` times (asking between rounds whether anything is
    still missing, as GraphRAG does), parse every answer and merge them."""
    result = ChunkExtraction(chunk_id)
    conversation = extraction_prompt(text, entity_types)
    answers = [_ask(llm, conversation, cache, result)]
    for round_ in range(max_gleanings):
        conversation = f"{conversation}\n{answers[-1]}\n\n{CONTINUE_PROMPT}"
        answers.append(_ask(llm, conversation, cache, result))
        if round_ >= max_gleanings - 1:
            break
        conversation = f"{conversation}\n{answers[-1]}"
        verdict = _ask(llm, f"{conversation}\n\n{LOOP_PROMPT}", cache, result)
        if verdict.strip().upper()[:1] != "Y":
            break
    entities: list[ExtractedEntity] = []
    relations: list[ExtractedRelation] = []
    for answer in answers:
        parsed = parse_output(answer, entity_types)
        entities.extend(parsed.entities)
        relations.extend(parsed.relations)
        result.malformed += parsed.malformed
    result.entities = merge_entities(entities)
    result.relations = merge_relations(relations)
    return result

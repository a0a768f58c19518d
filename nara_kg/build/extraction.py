"""entity_extraction: entities and relations an LLM extracts from description chunks, resolved
against the authority file, written by difference. Off by default: with the extractive backend
nothing is asked and nothing is written (the extractive default does not invent entities).

Only description records' chunks are sent (an authority record describes itself). Every
completion is cached (:class:`~nara_kg.generation.llm.GenerationCache`), so a re-run over
unchanged chunks asks nothing.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from neo4j import Driver

from nara_kg.build.mentions import build_linker
from nara_kg.build.projection_changes import mark_every_record
from nara_kg.generation.entity_extraction import (
    DEFAULT_MAX_GLEANINGS,
    ChunkExtraction,
    extract_chunk,
)
from nara_kg.generation.llm import DEFAULT_MAX_CONCURRENCY, LLM, GenerationCache, is_extractive
from nara_kg.graph.extraction import (
    DesiredEntities,
    DesiredExtractedMentions,
    DesiredRelated,
    Endpoint,
    ExtractionSync,
    sync_extraction,
)
from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.stages.chunks import iter_chunks
from nara_kg.ingest.stages.record_selection import read_aliases
from nara_kg.linking.normalize import normalize_form
from nara_kg.linking.resolve import EMBEDDING_THRESHOLD, EntityResolver
from nara_kg.model.progress import Log, quiet
from nara_kg.model.schema import AUTHORITY_TYPES, chunk_id
from nara_kg.model.tables import Col

SKIPPED_NO_LLM = "skipped: no LLM configured"
#: Seconds between progress lines.
PROGRESS_EVERY_S = 30.0


@dataclass
class ExtractionResult:
    skipped: str | None = None
    chunks_sent: int = 0
    completions: int = 0
    cached: int = 0
    malformed: int = 0
    entities_by_type: Counter[str] = field(default_factory=Counter)
    resolved_by_step: Counter[str] = field(default_factory=Counter)
    #: Extracted (chunk, entity) occurrences no authority stands for.
    new_entities: int = 0
    relations: int = 0
    sync: ExtractionSync | None = None


def extract_entities(
    driver: Driver,
    database: str,
    layout: WorkLayout,
    llm: LLM,
    cache: GenerationCache | None,
    encode: Callable[[list[str]], np.ndarray] | None,
    *,
    max_gleanings: int = DEFAULT_MAX_GLEANINGS,
    threshold: float = EMBEDDING_THRESHOLD,
    workers: int = DEFAULT_MAX_CONCURRENCY,
    log: Log = quiet,
) -> ExtractionResult:
    """Extract every description chunk, resolve, and make the graph's extracted entities equal
    the result. With the extractive backend: nothing read, asked or written.

    Chunks are asked `workers` at a time; results are taken in chunk order, so the graph written
    does not depend on which answer came first."""
    if is_extractive(llm):
        return ExtractionResult(skipped=SKIPPED_NO_LLM)
    rows = list(
        iter_chunks(
            layout, [Col.CHUNK_ID, Col.NA_ID, Col.CHUNK_SEQ_ID, Col.NODE_TYPE, Col.TEXT, Col.PROPS]
        )
    )
    firsts = [row for row in rows if row[Col.CHUNK_SEQ_ID] == 0]
    _linker, authorities = build_linker(
        firsts, read_aliases(layout) if layout.aliases.exists() else {}
    )
    resolver = EntityResolver(authorities, encode, threshold=threshold)
    result = ExtractionResult()
    entities: DesiredEntities = {}
    related: DesiredRelated = {}
    mentions: DesiredExtractedMentions = {}
    described = [row for row in rows if row[Col.NODE_TYPE] not in AUTHORITY_TYPES]

    def extract(row: dict[str, Any]) -> ChunkExtraction:
        return extract_chunk(
            llm, row[Col.CHUNK_ID], row[Col.TEXT], cache, max_gleanings=max_gleanings
        )

    last_report = time.monotonic()
    with ThreadPoolExecutor(max(1, workers), thread_name_prefix="extract") as pool:
        for row, extraction in zip(described, pool.map(extract, described), strict=True):
            if time.monotonic() - last_report >= PROGRESS_EVERY_S:
                last_report = time.monotonic()
                log(f"entity extraction: {result.chunks_sent}/{len(described)} chunks")
            _gather(row, extraction, resolver, result, entities, related, mentions)
    # Which records its MENTIONED_IN reach is not worked out here: graph_communities reads
    # the whole projection again after any change.
    mark_every_record(layout)
    result.sync = sync_extraction(driver, database, entities, related, mentions)
    return result


def _gather(
    row: dict[str, Any],
    extraction: ChunkExtraction,
    resolver: EntityResolver,
    result: ExtractionResult,
    entities: DesiredEntities,
    related: DesiredRelated,
    mentions: DesiredExtractedMentions,
) -> None:
    """Resolve one chunk's extraction and add it to the desired graph."""
    result.chunks_sent += 1
    result.completions += extraction.calls
    result.cached += extraction.cached
    result.malformed += extraction.malformed
    resolutions = resolver.resolve([(e.name, e.type) for e in extraction.entities])
    by_name: dict[str, Endpoint] = {}
    for entity, resolution in zip(extraction.entities, resolutions, strict=True):
        result.entities_by_type[entity.type] += 1
        if resolution.authority_na_id is not None:
            result.resolved_by_step[resolution.step] += 1
            endpoint: Endpoint = ("chunk", chunk_id(resolution.authority_na_id, 0))
        else:
            result.new_entities += 1
            endpoint = ("entity", resolution.entity_id)
            name, kind, description = entities.get(
                resolution.entity_id, (entity.name, entity.type, "")
            )
            if entity.description and entity.description not in description.split("\n"):
                description = "\n".join(filter(None, [description, entity.description]))
            entities[resolution.entity_id] = (name, kind, description)
        by_name.setdefault(normalize_form(entity.name), endpoint)
        mentions[(endpoint, row[Col.CHUNK_ID])] = (1, entity.name)
    for relation in extraction.relations:
        source = by_name.get(normalize_form(relation.source))
        target = by_name.get(normalize_form(relation.target))
        if source is None or target is None or source == target:
            continue
        result.relations += 1
        description, weight = related.get((source, target), ("", 0.0))
        if relation.description and relation.description not in description.split("\n"):
            description = "\n".join(filter(None, [description, relation.description]))
        related[(source, target)] = (description, weight + relation.weight)

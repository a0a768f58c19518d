"""`ask`: classify a request, answer it from the graph (local or global), and return the
answer with the provenance subgraph of what it used (seed 004), as an
:class:`~nara_kg.retrieval.response.AskResponse`."""

from __future__ import annotations

import itertools
import json
import logging
import re
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Final, Literal

from neo4j import Driver

from nara_kg.embedding.encoder import Embedder
from nara_kg.errors import UserError
from nara_kg.generation.community_profile import KeyRecord
from nara_kg.generation.llm import (
    EXTRACTIVE_BACKEND,
    LLM,
    ExtractiveLLM,
    GenerationCache,
    LLMUnreachable,
    describe,
    is_extractive,
)
from nara_kg.generation.report_parse import parse_report
from nara_kg.graph import reports as report_cypher
from nara_kg.model.schema import Rel
from nara_kg.retrieval.answer import Answer, AnswerContext, answer_question, extractive_answer
from nara_kg.retrieval.citations import AnswerCitation
from nara_kg.retrieval.classify import classify_request
from nara_kg.retrieval.entity_path import EntityPath
from nara_kg.retrieval.faithfulness import GuardResult
from nara_kg.retrieval.filters import NO_FILTERS, SearchFilters, filter_parameters
from nara_kg.retrieval.followup import Turn, follow_up
from nara_kg.retrieval.global_search import GlobalAnswer, global_search, is_overview_question
from nara_kg.retrieval.graph_record import load_records
from nara_kg.retrieval.response import (
    AskResponse,
    CommunityCard,
    CommunityNode,
    Fallback,
    GlobalSources,
    Provenance,
    RecordNode,
    community_key,
    record_key,
)
from nara_kg.retrieval.search import SearchHit, local_search, require_query

Mode = Literal["local", "global", "auto"]

#: Questions about the collection as a whole go to global search in `auto` mode: they ask for
#: themes across many records, which no handful of retrieved chunks can answer.
_GLOBAL_CUES = re.compile(
    r"\b(main|major|overall|common|recurring|key)\s+(themes?|topics?|subjects?|issues?)\b|"
    r"\b(overview|summari[sz]e|in general|across the (collection|records|archive))\b|"
    r"\bwhat (kinds?|sorts?|types?) of\b",
    re.IGNORECASE,
)
GLOBAL_BATCH_TOKENS = 2_000
GLOBAL_REDUCE_TOKENS = 2_000
#: Most central members shown per supporting community (a community can hold thousands).
PROVENANCE_MEMBERS = 5

_LOG = logging.getLogger(__name__)
#: What a response says when the configured model failed and the extractive method answered.
FALLBACK_REASON: Final = "the configured language model did not answer (details in the server log)"


#: Global search reads the finest level whose reports stay within this many: fine levels say
#: the most (coarse extractive reports keep only the most central records), but every report
#: is read per question.
MAX_GLOBAL_REPORTS = 200
#: A question about the whole collection reads the coarsest level with at least this many
#: reports: its communities are the collection's broadest themes, and an answer citing fewer
#: than three is hardly an overview.
MIN_OVERVIEW_REPORTS = 3


class NoReports(UserError):
    """Global search on a graph without community reports."""


def default_global_level(driver: Driver, database: str, *, overview: bool = False) -> int:
    """The community level global search reads when none is given (see the two constants)."""
    counts = report_cypher.reports_per_level(driver, database)
    if not counts:
        raise NoReports(
            "the graph has no community reports yet: build it with `nara-kg build` "
            "(the community_reports asset)"
        )
    if overview:
        broad = [level for level, count in counts.items() if count >= MIN_OVERVIEW_REPORTS]
        return max(broad) if broad else min(counts)
    for level in sorted(counts):
        if counts[level] <= MAX_GLOBAL_REPORTS:
            return level
    return max(counts)


#: "What kind of records are the Drawings of Relocation Centers?" asks about one record.
_ONE_RECORD_KIND = re.compile(
    r"\bwhat (kinds?|sorts?|types?) of (records|materials) (is|are) the\b", re.IGNORECASE
)


def choose_mode(question: str, mode: Mode) -> Literal["local", "global"]:
    if mode != "auto":
        return mode
    if _ONE_RECORD_KIND.search(question):
        return "local"
    return "global" if _GLOBAL_CUES.search(question) else "local"


def local_provenance(
    hits: list[SearchHit], used: set[int], path: EntityPath | None = None
) -> Provenance:
    """The hit records, their hierarchy (Includes) and authorities, as seed 004's subgraph; with
    `path`, also the authorities the question named and the edges that led to hit records."""
    provenance = Provenance()
    # Hits first: a hit can also sit in another hit's hierarchy, and its role must win.
    for hit in hits:
        provenance.add(
            RecordNode(
                record_key(hit.naId),
                naId=hit.naId,
                title=hit.title,
                type=hit.type,
                source=hit.source,
                role="answer" if hit.naId in used else "retrieved",
                score=hit.score,
            )
        )
    for hit in hits:
        for node in hit.hierarchy:
            provenance.add(
                RecordNode(
                    record_key(node["naId"]),
                    naId=node["naId"],
                    title=node.get("title"),
                    type=node.get("levelOfDescription") or node.get("recordType"),
                    source=node.get("source"),
                    role="hierarchy",
                )
            )
        for parent, child in itertools.pairwise(hit.hierarchy):
            provenance.link(record_key(parent["naId"]), Rel.INCLUDES, record_key(child["naId"]))
        for authority in hit.authorities:
            provenance.add(
                RecordNode(
                    record_key(authority["naId"]),
                    naId=authority["naId"],
                    title=authority.get("heading"),
                    type=authority.get("authorityType"),
                    source=authority.get("source"),
                    role="authority",
                )
            )
            provenance.link(
                record_key(authority["naId"]), authority["relationship"], record_key(hit.naId)
            )
    if path is not None:
        _entity_provenance(provenance, {h.naId for h in hits}, path)
    return provenance


def _entity_provenance(provenance: Provenance, hit_ids: set[int], path: EntityPath) -> None:
    """Each anchor that led to a hit record, and its edge (MENTIONED_IN, creator, ...) to it."""
    for edge in path.edges:
        anchor = path.anchor(edge.anchor)
        if edge.na_id not in hit_ids or anchor is None:
            continue
        provenance.add(
            RecordNode(
                record_key(anchor.na_id),
                naId=anchor.na_id,
                title=anchor.heading,
                type=anchor.authority_type,
                source=None,
                role="authority",
            )
        )
        provenance.link(record_key(anchor.na_id), edge.rel, record_key(edge.na_id))


def _answer_global(
    driver: Driver,
    database: str,
    embedder: Embedder,
    llm: LLM,
    cache: GenerationCache | None,
    question: str,
    level: int | None,
    filters: SearchFilters,
) -> tuple[GlobalAnswer, GlobalSources, Provenance]:
    overview = is_overview_question(question)
    use_level = (
        level if level is not None else default_global_level(driver, database, overview=overview)
    )
    if filters.active:
        params = filter_parameters(driver, database, filters)
        rows = report_cypher.reports_matching(driver, database, use_level, params)
    else:
        rows = report_cypher.reports(driver, database, use_level)
    reports = [
        parse_report(row["report"], row["id"], int(row["level"]), row["generatedBy"] or "")
        for row in rows
    ]
    sizes = {str(row["id"]): int(row["size"] or 0) for row in rows}
    # The report keeps its community's members of highest degree; a graph whose reports
    # predate that is asked for them.
    members_by_community = {
        str(row["id"]): json.loads(row["topMembers"]) for row in rows if row.get("topMembers")
    }
    missing = [str(row["id"]) for row in rows if str(row["id"]) not in members_by_community]
    if missing:
        members_by_community.update(
            report_cypher.top_members_of_many(driver, database, missing, PROVENANCE_MEMBERS)
        )
    ranked_members = {
        community_id: sorted(members, key=lambda m: (-int(m["degree"]), int(m["naId"])))
        for community_id, members in members_by_community.items()
    }
    result = global_search(
        question,
        reports,
        llm,
        cache,
        batch_token_budget=GLOBAL_BATCH_TOKENS,
        count_tokens=embedder.count_tokens,
        count_tokens_many=embedder.count_tokens_many,
        reduce_token_budget=GLOBAL_REDUCE_TOKENS,
        sizes=sizes,
        members={
            community_id: [
                KeyRecord(int(m["naId"]), m["title"] or "", m["nodeType"] or "") for m in members
            ]
            for community_id, members in ranked_members.items()
        },
    )
    provenance = Provenance()
    by_id = {report.community_id: report for report in reports}
    cited = [c for c in result.communities if c in by_id]
    for community_id in cited:
        report = by_id[community_id]
        community = community_key(community_id)
        provenance.add(
            CommunityNode(
                community,
                communityId=community_id,
                level=report.level,
                title=report.title,
                summary=report.summary,
                size=sizes.get(community_id),
            )
        )
        for member in ranked_members.get(community_id, [])[:PROVENANCE_MEMBERS]:
            provenance.add(
                RecordNode(
                    record_key(member["naId"]),
                    naId=member["naId"],
                    title=member["title"],
                    type=member["nodeType"],
                    source=member["source"],
                    role="community member",
                )
            )
            provenance.link(record_key(member["naId"]), Rel.IN_COMMUNITY, community)
    sources = GlobalSources(
        level=use_level,
        overview=overview,
        communities=result.communities,
        community_reports=tuple(CommunityCard(by_id[c], sizes.get(c)) for c in cited),
        points=result.points_used,
    )
    return result, sources, provenance


#: A question that is a pasted naId, or asks what one is ("What is naId 28277406?").
_NA_ID_QUESTION = re.compile(
    r"^\s*(?:what|which|who)?\s*(?:is|are)?\s*(?:the\s+)?(?:record\s+)?(?:naid\s*:?\s*)?"
    r"(\d{4,12})\s*\??\s*$|\bnaid\s*:?\s*(\d{4,12})\b",
    re.IGNORECASE,
)


def asked_na_id(question: str) -> int | None:
    """The naId a question is, or names after the word "naId"."""
    match = _NA_ID_QUESTION.search(question)
    if match is None:
        return None
    return int(match.group(1) or match.group(2))


def _same_title(question: str, title: str | None) -> bool:
    def norm(text: str) -> str:
        return " ".join(re.sub(r"[^\w]+", " ", text.lower()).split())

    return bool(title) and norm(question) == norm(title or "")


def _extractive(driver: Driver, database: str, question: str, hits: list[SearchHit]) -> Answer:
    """The model-free answer from the graph's records behind the hits (and the naId the
    question names, found or not)."""
    na_id = asked_na_id(question)
    wanted = [h.naId for h in hits]
    if na_id is not None and na_id not in wanted:
        wanted.insert(0, na_id)
    records = load_records(driver, database, wanted)
    identified = None
    if na_id is not None:
        identified = next((r for r in records if r.na_id == na_id), None)
        records = [r for r in records if r.na_id != na_id or na_id in {h.naId for h in hits}]
    elif records and hits and _same_title(question, hits[0].title):
        identified = records[0]
    return extractive_answer(question, records, identified=identified)


def ask(
    driver: Driver,
    database: str,
    embedder: Embedder,
    llm: LLM,
    cache: GenerationCache | None,
    question: str,
    *,
    mode: Mode = "auto",
    k: int = 5,
    level: int | None = None,
    filters: SearchFilters = NO_FILTERS,
) -> AskResponse:
    """Classify the request and answer it: records (`show_records`), a grounded answer from
    the records local search finds, or global search over the community reports. `filters`
    restrict the records searched, and in global mode the communities read (those holding at
    least one record that passes them)."""
    require_query(question)
    started = time.perf_counter()
    kind, classification_method = classify_request(question, llm, cache)
    chosen = "local" if kind == "show_records" else choose_mode(question, mode)
    hits: list[SearchHit] = []
    sources: GlobalSources | None = None
    citations: tuple[AnswerCitation, ...] = ()
    faithfulness: GuardResult | None = None
    if chosen == "local":
        searched = local_search(driver, database, embedder.encode, question, k=k, filters=filters)
        hits, path = searched.hits, searched.entity_path
        if kind == "show_records":
            text, refused, method = None, not hits, "show_records"
            provenance = local_provenance(hits, {h.naId for h in hits}, path)
        else:
            if is_extractive(llm):
                answer = _extractive(driver, database, question, hits)
            else:
                contexts = [
                    AnswerContext(na_id=h.naId, title=h.title, text=h.text, source=h.source)
                    for h in hits
                ]
                answer = answer_question(question, contexts, llm, cache)
            text, refused, method = answer.text, answer.refused, answer.method
            citations = answer.citations
            faithfulness = answer.guard
            provenance = local_provenance(hits, set(answer.used_na_ids), path)
    else:
        result, sources, provenance = _answer_global(
            driver, database, embedder, llm, cache, question, level, filters
        )
        text, refused, method = result.text, result.refused, result.method
        citations = result.citations
        faithfulness = result.guard
    return AskResponse(
        question=question,
        request_type=kind,
        classification_method=classification_method,
        filters=filters,
        answer=text,
        refused=refused,
        method=method,
        provenance=provenance,
        latency_ms=round((time.perf_counter() - started) * 1000.0, 1),
        records=tuple(hits),
        global_sources=sources,
        answer_citations=citations,
        faithfulness=faithfulness,
    )


def ask_with_fallback(
    driver: Driver,
    database: str,
    embedder: Embedder,
    llm: LLM,
    cache: GenerationCache | None,
    question: str,
    *,
    strict: bool = False,
    mode: Mode = "auto",
    k: int = 5,
    level: int | None = None,
    filters: SearchFilters = NO_FILTERS,
    history: Sequence[Turn] = (),
) -> AskResponse:
    """`ask`; when the configured LLM does not answer (LLMUnreachable), the extractive method
    answers instead (rule-based classification, extractive answer) and the response says so
    under `fallback`. With `strict`, the failure is raised instead. With `history` (earlier
    turns, last one last), a follow-up is answered as the standalone question it stands for
    (:mod:`~nara_kg.retrieval.followup`), and the response says so under `follow_up`."""
    if history:
        resolution = follow_up(driver, database, question, filters, history)
        if resolution.follow_up:
            response = ask_with_fallback(
                driver,
                database,
                embedder,
                llm,
                cache,
                resolution.question,
                strict=strict,
                mode=mode,
                k=k,
                level=level,
                filters=resolution.filters,
            )
            return replace(response, question=question, follow_up=resolution)
    try:
        return ask(
            driver,
            database,
            embedder,
            llm,
            cache,
            question,
            mode=mode,
            k=k,
            level=level,
            filters=filters,
        )
    except LLMUnreachable as error:
        if strict:
            raise
        response = ask(
            driver,
            database,
            embedder,
            ExtractiveLLM(),
            cache,
            question,
            mode=mode,
            k=k,
            level=level,
            filters=filters,
        )
        # The error names the endpoint and may quote its reply: the log has it, the reader
        # is told what happened.
        _LOG.warning("the model did not answer, the extractive method did: %s", error)
        fallback = Fallback(from_=describe(llm), to=EXTRACTIVE_BACKEND, reason=FALLBACK_REASON)
        return replace(response, fallback=fallback)

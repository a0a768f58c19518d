"""What :func:`~nara_kg.retrieval.ask.ask` returns: :class:`AskResponse` and its parts (the
provenance subgraph, the sources of a global answer, the fallback note), and their JSON form.

``AskResponse.to_dict()`` is the one serialization: ``nara-kg ask --json`` prints it, and the
API's response model is built from it (:func:`nara_kg.api.records.ask_response`, which adds
catalog links). Keys that belong to one mode appear only in that mode: ``records`` in local
mode; ``level``, ``overview``, ``communities``, ``community_reports`` and ``points`` in global
mode; ``fallback`` only when the extractive method answered for an unreachable model;
``follow_up`` only when the question was read against an earlier turn.
``answer_citations`` is always there (empty for a refusal or a list of records): one entry per
answer sentence, as :mod:`nara_kg.retrieval.citations` describes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

from nara_kg.generation.community_report import CommunityReport
from nara_kg.retrieval.citations import AnswerCitation
from nara_kg.retrieval.classify import RequestKind
from nara_kg.retrieval.faithfulness import GuardResult
from nara_kg.retrieval.filters import SearchFilters
from nara_kg.retrieval.followup import Resolution
from nara_kg.retrieval.global_search import Point
from nara_kg.retrieval.search import SearchHit

#: Why a record is in the subgraph: the answer used it, search found it (but the answer did
#: not use it), it sits above a hit in the hierarchy, it is a hit's authority, or it is one of
#: the most central members of a cited community.
RecordRole = Literal["answer", "retrieved", "hierarchy", "authority", "community member"]

JsonObject = dict[str, object]


def record_key(na_id: object) -> str:
    """The id of a record's node in the subgraph."""
    return f"record:{na_id}"


def community_key(community_id: str) -> str:
    """The id of a community's node in the subgraph."""
    return f"community:{community_id}"


@dataclass(frozen=True, slots=True)
class RecordNode:
    """A record in the provenance subgraph (`record:<naId>`)."""

    id: str
    naId: int
    title: str | None
    type: str | None
    source: str | None
    role: RecordRole
    #: The search score, on the records search found (only there).
    score: float | None = None

    def to_dict(self) -> JsonObject:
        data: JsonObject = {
            "id": self.id,
            "naId": self.naId,
            "title": self.title,
            "type": self.type,
            "source": self.source,
            "role": self.role,
        }
        if self.score is not None:
            data["score"] = self.score
        return data


@dataclass(frozen=True, slots=True)
class CommunityNode:
    """A community a global answer cites (`community:<id>`)."""

    id: str
    communityId: str
    level: int
    title: str
    summary: str
    #: Members of the community (None when the graph does not say).
    size: int | None
    role: Literal["answer"] = "answer"

    def to_dict(self) -> JsonObject:
        return {
            "id": self.id,
            "communityId": self.communityId,
            "level": self.level,
            "title": self.title,
            "summary": self.summary,
            "size": self.size,
            "role": self.role,
        }


ProvenanceNode = RecordNode | CommunityNode


@dataclass(frozen=True, slots=True)
class ProvenanceLink:
    """A relationship of the subgraph, between two node ids."""

    source: str
    type: str
    target: str

    def to_dict(self) -> JsonObject:
        return {"source": self.source, "type": self.type, "target": self.target}


@dataclass
class Provenance:
    """Seed 004's provenance subgraph of an answer; nodes and links are kept once each, in
    the order they were first added."""

    nodes: list[ProvenanceNode] = field(default_factory=list)
    relationships: list[ProvenanceLink] = field(default_factory=list)
    _seen: set[str] = field(default_factory=set, repr=False)

    def add(self, node: ProvenanceNode) -> None:
        if node.id not in self._seen:
            self._seen.add(node.id)
            self.nodes.append(node)

    def link(self, source: str, rel: str, target: str) -> None:
        edge = ProvenanceLink(source, rel, target)
        if edge not in self.relationships:
            self.relationships.append(edge)

    def to_dict(self) -> JsonObject:
        return {
            "nodes": [node.to_dict() for node in self.nodes],
            "relationships": [edge.to_dict() for edge in self.relationships],
        }


@dataclass(frozen=True, slots=True)
class CommunityCard:
    """A community an answer cites, as a reader judges it: its report's title, summary,
    rating and findings."""

    report: CommunityReport
    size: int | None

    def to_dict(self) -> JsonObject:
        return {
            "id": self.report.community_id,
            "level": self.report.level,
            "size": self.size,
            **self.report.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class GlobalSources:
    """What a global answer read and cited."""

    #: The community level whose reports were read.
    level: int
    #: The question asks about the whole collection (answered from the largest communities).
    overview: bool
    #: Communities behind the points used, in order of first use.
    communities: tuple[str, ...]
    community_reports: tuple[CommunityCard, ...]
    #: Points that went into the reduce step, best first.
    points: tuple[Point, ...]

    def to_dict(self) -> JsonObject:
        return {
            "level": self.level,
            "overview": self.overview,
            "communities": list(self.communities),
            "community_reports": [card.to_dict() for card in self.community_reports],
            "points": [asdict(point) for point in self.points],
        }


@dataclass(frozen=True, slots=True)
class Fallback:
    """The configured model did not answer, and the extractive method did instead."""

    from_: str
    to: str
    reason: str

    def to_dict(self) -> JsonObject:
        return {"from": self.from_, "to": self.to, "reason": self.reason}


def _record(hit: SearchHit) -> JsonObject:
    """A record the answer was drawn from, without its retrieved text."""
    record: JsonObject = dict(hit.to_dict())
    record.pop("text", None)
    return record


@dataclass(frozen=True, slots=True)
class AskResponse:
    """A classified request and its answer (or the records it asked for), with provenance."""

    question: str
    request_type: RequestKind
    classification_method: str
    filters: SearchFilters
    #: The answer, or seed 000's refusal sentence; None when records were asked for.
    answer: str | None
    refused: bool
    method: str
    provenance: Provenance
    latency_ms: float
    #: Local mode: the records search found, best first (none in global mode).
    records: tuple[SearchHit, ...] = ()
    #: Global mode: the reports read and cited; None in local mode.
    global_sources: GlobalSources | None = None
    fallback: Fallback | None = None
    #: A follow-up question, and the standalone question and filters it was read as.
    follow_up: Resolution | None = None
    #: One per answer sentence, in answer order (see :mod:`nara_kg.retrieval.citations`).
    answer_citations: tuple[AnswerCitation, ...] = ()
    #: A model's local answer: sentences the faithfulness guard kept and dropped.
    faithfulness: GuardResult | None = None

    @property
    def mode(self) -> Literal["local", "global"]:
        return "local" if self.global_sources is None else "global"

    def to_dict(self) -> JsonObject:
        """The response as JSON (see the module docstring for which keys appear when)."""
        data: JsonObject = {
            "question": self.question,
            "request_type": self.request_type,
            "classification_method": self.classification_method,
            "mode": self.mode,
            "filters": self.filters.describe(),
            "answer": self.answer,
            "refused": self.refused,
            "method": self.method,
            "answer_citations": [citation.to_dict() for citation in self.answer_citations],
        }
        if self.global_sources is None:
            data["records"] = [_record(hit) for hit in self.records]
        else:
            data.update(self.global_sources.to_dict())
        data["provenance"] = self.provenance.to_dict()
        data["latency_ms"] = self.latency_ms
        if self.fallback is not None:
            data["fallback"] = self.fallback.to_dict()
        if self.follow_up is not None and self.follow_up.follow_up:
            data["follow_up"] = {
                "question": self.follow_up.question,
                "resolved_by": self.follow_up.resolved_by,
                "focus": list(self.follow_up.focus),
            }
        if self.faithfulness is not None:
            data["faithfulness"] = self.faithfulness.to_dict()
        return data

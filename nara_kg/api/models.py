"""Request and response models of the HTTP API: its OpenAPI schema and its input validation.

Record text is catalog data, untrusted: the API returns it as JSON strings, and the chat page
puts it into the page as text, never as markup. Catalog links are built from naIds only.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from nara_kg.model.limits import MAX_K, MAX_LEVEL, MAX_NA_ID, is_utf8
from nara_kg.model.schema import source_url
from nara_kg.retrieval.filters import SearchFilters
from nara_kg.retrieval.followup import (
    MAX_TURN_ANSWER_CHARS,
    MAX_TURN_QUESTION_CHARS,
    MAX_TURN_RECORDS,
    MAX_TURNS,
    Turn,
)

#: Longest query or question accepted (characters). A pasted 100 KB text is answered: the
#: embedding model reads its first 256 tokens and the full-text query its 64 most informative
#: words; beyond this a request is refused with 422 before any work is done.
MAX_QUERY_CHARS = 200_000

Level = Literal["item", "fileUnit", "series", "recordGroup", "collection"]
AuthorityTypeName = Literal[
    "person", "organization", "geographicPlaceName", "specificRecordsType", "topicalSubject"
]
RecordKindName = Literal["description", "authority"]
#: ASCII digits only: `\d` also matches fullwidth and Arabic-Indic digits, which then compare
#: wrongly with the graph's ISO dates as text.
_DATE_PATTERN = r"^[0-9]{4}(-[0-9]{2}(-[0-9]{2})?)?$"


class _Strict(BaseModel):
    """Unknown fields are refused, so a misspelt filter never silently does nothing; text that
    is not valid UTF-8 (a lone surrogate such as JSON's `"\\ud800"`) is refused with 422."""

    model_config = ConfigDict(extra="forbid")

    @field_validator("*", mode="after")
    @classmethod
    def _utf8_text(cls, value: Any) -> Any:
        texts = value if isinstance(value, list) else [value]
        if any(isinstance(text, str) and not is_utf8(text) for text in texts):
            raise ValueError("text is not valid UTF-8 (it holds a lone surrogate)")
        return value


class Filters(_Strict):
    """Restrict the records searched. Values within a list are alternatives; the fields combine
    with AND, except `levels` and `authority_types`, which together list the record types
    wanted. In global mode the communities read are those holding a record that passes."""

    levels: list[Level] = Field(
        default_factory=list, max_length=5, description="Levels of description."
    )
    record_type: RecordKindName | None = Field(
        default=None, description="`description` or `authority` records only."
    )
    authority_types: list[AuthorityTypeName] = Field(default_factory=list, max_length=5)
    materials: list[str] = Field(
        default_factory=list,
        max_length=20,
        description='Types of archival materials (generalRecordsTypes), e.g. "Textual Records".',
    )
    date_from: str | None = Field(
        default=None,
        pattern=_DATE_PATTERN,
        examples=["1942"],
        description="YYYY, YYYY-MM or YYYY-MM-DD: records whose inclusive (else coverage, else "
        "production) dates reach this date or later; a record without dates has those of its "
        "nearest dated ancestor.",
    )
    date_to: str | None = Field(default=None, pattern=_DATE_PATTERN, examples=["1945-06"])
    within: int | None = Field(
        default=None,
        gt=0,
        le=MAX_NA_ID,
        description="naId of a record group, series, file unit or collection: only the records "
        "under it (Includes, any depth).",
    )

    def to_search(self) -> SearchFilters:
        return SearchFilters(
            levels=tuple(self.levels),
            record_type=self.record_type,
            authority_types=tuple(self.authority_types),
            materials=tuple(m for m in self.materials if m.strip()),
            date_from=self.date_from,
            date_to=self.date_to,
            within=self.within,
        )


class SearchRequest(_Strict):
    # The schema's examples are what /docs "Try it out" sends: each must be answered (200).
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"query": "correspondence of the Secretary of the Treasury", "k": 5},
                {
                    "query": "photographs of relocation centers",
                    "k": 5,
                    "filters": {"levels": ["item"], "date_from": "1942", "date_to": "1945"},
                },
            ]
        }
    )

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    k: int = Field(default=5, ge=1, le=MAX_K, description="Records to return.")
    filters: Filters = Field(default_factory=Filters)


class PreviousTurn(_Strict):
    """An earlier turn of the conversation, as the client keeps it."""

    question: str = Field(min_length=1, max_length=MAX_TURN_QUESTION_CHARS)
    answer: str | None = Field(default=None, max_length=MAX_TURN_ANSWER_CHARS)
    na_ids: list[int] = Field(
        default_factory=list,
        max_length=MAX_TURN_RECORDS,
        description="The records the answer cited, then those it found first (best first).",
    )
    filters: Filters = Field(default_factory=Filters)

    def to_turn(self) -> Turn:
        return Turn(
            question=self.question,
            answer=self.answer,
            na_ids=tuple(n for n in self.na_ids if n > 0),
            filters=self.filters.to_search(),
        )


class AskRequest(_Strict):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"question": "Who created the diaries of Henry Morgenthau, Jr.?"},
                {
                    "question": "and in 1942?",
                    "history": [
                        {
                            "question": "What did the Secretary of the Treasury discuss?",
                            "na_ids": [],
                        }
                    ],
                },
                {"question": "What are the main themes of these records?", "mode": "global"},
            ]
        }
    )

    question: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    mode: Literal["local", "global", "auto"] = Field(
        default="auto",
        description="local: records found by hybrid search; global: community reports; "
        "auto: global for questions about themes across the collection, else local.",
    )
    k: int = Field(default=5, ge=1, le=MAX_K, description="Records retrieved for local answers.")
    level: int | None = Field(
        default=None,
        ge=0,
        le=MAX_LEVEL,
        description="Community level for global search (default: chosen from the question).",
    )
    filters: Filters = Field(default_factory=Filters)
    strict_llm: bool = Field(
        default=False,
        description="Fail (503) when the configured LLM does not answer, instead of answering "
        "extractively.",
    )
    history: list[PreviousTurn] = Field(
        default_factory=list,
        max_length=MAX_TURNS,
        description='Earlier turns of the conversation, oldest first: a follow-up ("and in '
        '1942?", "who created it?") is read against the last one.',
    )


class HierarchyEntry(BaseModel):
    naId: int
    title: str | None = None
    recordType: str | None = None
    levelOfDescription: str | None = None
    logicalDate_inclusiveStartDate: str | None = None
    logicalDate_inclusiveEndDate: str | None = None
    logicalDate_coverageStartDate: str | None = None
    logicalDate_coverageEndDate: str | None = None
    catalog_url: str


class AuthorityLink(BaseModel):
    relationship: str
    naId: int
    heading: str | None = None
    authorityType: str | None = None
    catalog_url: str


class OnlineObject(BaseModel):
    url: str = Field(description="An http(s) link to the digital object (scan, PDF).")
    format: str = Field(description='"PDF", "JPEG", ... from the file\'s extension.')


class RecordCard(BaseModel):
    """What a result card shows beside the title: the scans online, the access and use
    restriction status, and the archive holding the records."""

    online: list[OnlineObject] = Field(
        default_factory=list, description="The first digital objects, in catalog order."
    )
    online_count: int = Field(default=0, description="How many digital objects the record has.")
    online_formats: dict[str, int] = Field(
        default_factory=dict, description='Digital objects per format: {"PDF": 3, "JPEG": 1}.'
    )
    access_restriction: str | None = Field(
        default=None, description='"Unrestricted", "Restricted - Partly", ...'
    )
    use_restriction: str | None = None
    use_restrictions: list[str] = Field(
        default_factory=list, description='Kinds of use restriction ("Copyright", ...).'
    )
    holding_archive: str | None = Field(
        default=None, description="The reference unit holding the records."
    )


class RecordHit(BaseModel):
    """A record found by search, as seed 000 shows it: type, dates, the hierarchy above it
    (root first, the record itself last) and its related authority records."""

    naId: int
    title: str | None
    type: str
    record_type: str | None = None
    date_start: str | None = None
    date_end: str | None = None
    dates_inherited: bool = Field(
        default=False,
        description="The record has no dates: these are its nearest dated ancestor's.",
    )
    materials: list[str] = Field(default_factory=list)
    score: float
    catalog_url: str
    is_stub: bool
    hierarchy: list[HierarchyEntry]
    authorities: list[AuthorityLink]
    chunk_id: str
    vector_rank: int | None = None
    fulltext_rank: int | None = None
    text: str | None = Field(
        default=None, description="The retrieved text (the hit chunk and its neighbours)."
    )
    excerpt: str | None = Field(
        default=None,
        description="The sentence of the retrieved text that matched, else the text's start.",
    )
    card: RecordCard = Field(default_factory=RecordCard)


class SearchResponse(BaseModel):
    query: str
    k: int
    filters: dict[str, Any]
    latency_ms: float
    hits: list[RecordHit]


class ProvenanceNode(BaseModel):
    """A node of the answer's subgraph: `record:<naId>` or `community:<id>`."""

    model_config = ConfigDict(extra="allow")

    id: str
    role: str
    title: str | None = None
    type: str | None = None
    naId: int | None = None
    communityId: str | None = None
    catalog_url: str | None = None


class ProvenanceRelationship(BaseModel):
    source: str
    type: str
    target: str


class Provenance(BaseModel):
    nodes: list[ProvenanceNode]
    relationships: list[ProvenanceRelationship]


class Finding(BaseModel):
    summary: str
    explanation: str


class CommunityCard(BaseModel):
    """A community an answer cites, with its report's title, summary, rating and findings."""

    id: str
    level: int
    size: int | None = None
    title: str
    summary: str
    rating: float
    rating_explanation: str
    findings: list[Finding]


class GlobalPoint(BaseModel):
    description: str
    score: int
    community_id: str


class Fallback(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    from_: str = Field(alias="from")
    to: str
    reason: str


class FollowUp(BaseModel):
    question: str = Field(description="The standalone question the follow-up was read as.")
    resolved_by: str | None = Field(
        default=None,
        description="dates: the last question with other years; record: a pronoun read as the "
        "record the last answer was about; question: as the last question's subject.",
    )
    focus: list[int] = Field(default_factory=list, description="The last turn's records.")


class AnswerCitation(BaseModel):
    """An answer sentence and the record it came from; the sentence ends with `[marker]` in
    the answer. Markers number the cited records 1, 2, ... in order of first citation."""

    marker: int = Field(ge=1)
    na_id: int
    title: str
    sentence: str


class AskResponse(BaseModel):
    question: str
    request_type: Literal["question", "show_records"]
    classification_method: str
    mode: Literal["local", "global"]
    method: str
    answer: str | None = Field(description="The grounded answer; null for show_records.")
    refused: bool
    answer_citations: list[AnswerCitation] = Field(
        default_factory=list,
        description="One per answer sentence, in answer order; the sentence ends with "
        "`[marker]` in `answer`.",
    )
    filters: dict[str, Any]
    records: list[RecordHit] = Field(default_factory=list)
    level: int | None = None
    overview: bool | None = Field(
        default=None, description="Global mode: the question asks about the whole collection."
    )
    communities: list[str] = Field(default_factory=list)
    community_reports: list[CommunityCard] = Field(default_factory=list)
    points: list[GlobalPoint] = Field(default_factory=list)
    provenance: Provenance
    latency_ms: float
    fallback: Fallback | None = None
    follow_up: FollowUp | None = None
    faithfulness: dict[str, int] | None = Field(
        default=None,
        description="A model's answer: sentences the faithfulness guard kept and dropped.",
    )


class RecordRef(BaseModel):
    naId: int
    title: str | None = None
    type: str | None = None
    relationship: str | None = None
    date_start: str | None = None
    date_end: str | None = None
    catalog_url: str


class RecordDetail(BaseModel):
    naId: int
    title: str | None
    type: str | None
    record_type: str | None
    date_start: str | None = None
    date_end: str | None = None
    dates_inherited: bool = False
    materials: list[str] = Field(default_factory=list)
    catalog_url: str
    is_stub: bool
    text: str = Field(description="The body text (without the search header of its chunks).")
    card: RecordCard = Field(default_factory=RecordCard)
    properties: dict[str, Any] = Field(description="The record's node properties.")
    hierarchy: list[HierarchyEntry]
    children: list[RecordRef]
    child_count: int
    authorities: list[AuthorityLink]
    described_records: list[RecordRef] = Field(
        description="For an authority record: the records it is related to."
    )
    described_count: int


class GraphCounts(BaseModel):
    records: int
    chunks: int
    communities: int
    reports_per_level: dict[str, int]


class Examples(BaseModel):
    """Questions the loaded graph can answer, made from its own records."""

    questions: list[str]


class Health(BaseModel):
    status: Literal["ok", "unavailable"]
    neo4j: str
    graph: GraphCounts | None = None
    llm: str
    version: str


class ErrorBody(BaseModel):
    error: str = Field(description="One line: what went wrong and what to do.")
    detail: list[dict[str, Any]] | None = None


def catalog_url(na_id: Any) -> str:
    """The catalog page of a record, from its naId alone (never from a stored URL)."""
    return source_url(int(na_id))

"""Request classification, grounded answers, and global search over community reports.

Pure functions: retrieval (vector search, the provenance subgraph) happens elsewhere and hands
over plain :class:`AnswerContext` records or
:class:`~nara_kg.generation.reports.CommunityReport` objects.

Every function has two paths. With a model (:class:`~nara_kg.generation.llm.OpenAICompatibleLLM` or
:class:`~nara_kg.generation.llm.TransformersLLM`) it uses seed 000's prompts (classification,
answer) and GraphRAG's map/reduce prompts (seed 001's ``GLOBAL_MAP_POINTS``/``GLOBAL_QUERY``,
with the procedure of seeds 002/003). With the offline default
(:class:`~nara_kg.generation.llm.ExtractiveLLM`) it is rule-based and says so in ``method``:

* classification: display verbs (show, list, display, give me, find, ...) at the start of the
  request, or "what/which records|documents|files|...", mean ``show_records``; anything else is a
  ``question``;
* answers: the one or two sentences of the contexts (titles count as sentences) that share the
  largest fraction of the question's content words; below :data:`MIN_ANSWER_OVERLAP` the answer is
  the seed's refusal sentence;
* global search map: each report summary and finding scores
  ``round(100 * shared content words / question content words)``.

Content words: lower-cased ``[a-z0-9]`` runs, a possessive ``'s`` dropped, a plural ``-s``/``-ies``
folded (records -> record, bodies -> body), minus English stopwords, question words and a few
words every archival text shares (record, document, file, archive, ...); single letters are
dropped, digits kept (years matter).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Final, Literal

from nara_kg.generation.llm import LLM, GenerationCache, cached_complete, describe, is_extractive
from nara_kg.generation.reports import CommunityReport, Finding, extract_json_object
from nara_kg.ingest.chunking import TokenCounter

RequestKind = Literal["question", "show_records"]

#: Seed 000's refusal sentence, returned verbatim whenever the context lacks the answer.
REFUSAL: Final = "I cannot respond to your request based on the available archival materials."

#: Seed 000's classification prompt, verbatim.
CLASSIFICATION_PROMPT: Final = """
Classify the type of user request. Reply with only one word:
- "question": if this is a question that needs an answer;
- "show_records": if the user is directly asking to display, list, show, etc.
archival materials/documents/full texts/records/sources.

If the request does NOT explicitly ask to display, list, show, etc., classify as
"question".

Examples:

Request: Why is the sky blue?
Output: question

Request: Show me documents about politics.
Output: show_records

Request: List the sources.
Output: show_records

Request: Give me all related documents.
Output: show_records

Request: Who was president in 1952?
Output: question
"""

#: Seed 000's answer prompt, verbatim (less one trailing space after "constituencies.").
ANSWER_PROMPT: Final = """
Answer the question based ONLY on the provided context.
Use ONLY information and wording from the context.
Do NOT add information that is not explicitly stated in the context,
even if it seems logical or obvious.
Do NOT include extra information that is present in the context but is not
directly relevant to the question.
If the context doesn't contain an answer to the question, say "I cannot
respond to your request based on the available archival materials."
Answer in one or maximum two sentences.

Examples:

Context: Title: Discussion with Congressman Y Text: Congressman Y talked
about his role in a particular panel, highlighting that the working groups
operate with significant autonomy. He mentioned that the responsibilities are
extremely intensive, hindering participants from adequately participating in
additional congressional tasks and attending to their constituencies.
Question: What did Congressman Y say about the panel's workload?
Answer: Congressman Y said the responsibilities are extremely intensive,
hindering participants from adequately participating in additional
congressional tasks and attending to their constituencies.

Context: Title: Interview with Legislator B Text: The speaker indicated
a preference for a collaborative dynamic with federal bureaus, involving
mutual idea-sharing. Conversely, he portrayed a fellow lawmaker, Mr. Q, who
often employs aggressive rhetoric and harbors suspicion toward these entities.
Question: How does the Legislator B's method with bureaus contrast with Mr. Q's?
Answer: Legislator B favors collaboration and mutual idea-sharing, whereas Mr.
Q employs aggressive rhetoric and shows suspicion.

Context: Title: Dialogue with Lawmaker C Text: Lawmaker C pointed out that
an individual with intense personal stakes in a specific issue domain ought not
to be placed on the task force overseeing it, since they might lack
impartiality.
Question: According to Lawmaker C, what kind of individual should avoid
placement on a task force?
Answer: An individual with intense personal stakes in a specific issue domain
should not be placed on the task force overseeing it, as they might lack
impartiality.

Context: Title: Study Notes on a Task Force Text: The document describes
assignment to a particular task force as a secondary role due to its divisive
nature. It emphasizes that participants should secure an additional, more
favorable position as well.
Question: Why is assignment to this task force viewed as a secondary role?
Answer: It is viewed as a secondary role due to its divisive nature, and the
document emphasizes that participants should secure an additional, more
favorable position.

Context: Title: Meeting with Senator Z Text: Senator Z discussed the
procedural hurdles in forming a bipartisan committee, noting that scheduling
conflicts among senior members have caused significant delays. He expressed
hope that the committee would be operational by the next fiscal quarter.
Question: What views did Senator Z express about tax reforms?
Answer: I cannot respond to your request based on the available archival
materials.
"""

#: Seed 001's GLOBAL_MAP_POINTS (GraphRAG's map prompt), for archival community reports, with
#: JSON output and the supporting report's id on each point. `{context_data}`, `{query}`.
MAP_PROMPT: Final = """
You are a helpful assistant responding to questions about records of the U.S. National Archives,
summarised in the community reports provided.


---Goal---

Generate a response consisting of a list of key points that responds to the user's question,
summarizing all relevant information in the input community reports.

You should use the data provided in the community reports below as the primary context for
generating the response.
If you don't know the answer or if the input reports do not contain sufficient information to
provide an answer, just say so. Do not make anything up.

Each key point in the response should have the following elements:
- description: A comprehensive description of the point.
- score: An integer score between 0-100 that indicates how important the point is in answering
the user's question. An 'I don't know' type of response should have a score of 0.
- community_id: the id of the community report that supports the point.

The response should be JSON formatted as follows:
{{
"points": [
{{"description": "Description of point 1...", "score": score_value, "community_id": "id"}},
{{"description": "Description of point 2...", "score": score_value, "community_id": "id"}}
]
}}

The response shall preserve the original meaning and use of modal verbs such as "shall", "may"
or "will".
Do not include information where the supporting evidence for it is not provided.


---Community reports---

{context_data}

---User query---

{query}

---Goal---

Generate a response consisting of a list of key points that responds to the user's question,
summarizing all relevant information in the input community reports.

You should use the data provided in the community reports below as the primary context for
generating the response.
If you don't know the answer or if the input reports do not contain sufficient information to
provide an answer, just say so. Do not make anything up.

Each key point in the response should have the following elements:
- description: A comprehensive description of the point.
- score: An integer score between 0-100 that indicates how important the point is in answering
the user's question. An 'I don't know' type of response should have a score of 0.
- community_id: the id of the community report that supports the point.

The response shall preserve the original meaning and use of modal verbs such as "shall", "may"
or "will".
Do not include information where the supporting evidence for it is not provided.

The response should be JSON formatted as follows:
{{
"points": [
{{"description": "Description of point 1...", "score": score_value, "community_id": "id"}},
{{"description": "Description of point 2...", "score": score_value, "community_id": "id"}}
]
}}
"""

#: Seed 001's GLOBAL_QUERY, with GraphRAG's reduce instructions (analysts' points, best first)
#: and seed 000's refusal sentence. `{report_data}`, `{query}`.
REDUCE_PROMPT: Final = (
    """
## Role
You are a helpful assistant responding to questions about records of the U.S. National Archives
by synthesizing the key points of multiple analysts who each read some community reports.

## User Query
{query}

## Context
The analysts' key points, in descending order of importance:

{report_data}

## Task
Based ONLY on the given context, please provide a response to the user query. Use the
analysts' points in order of importance; ignore points that do not help answer the query.
Do not mention the analysts or their scores. Do not make anything up.
If the context does not contain an answer to the query, reply exactly:
"""
    + f'"{REFUSAL}"'
    + """

## Your Response
"""
)

METHOD_RULE_BASED: Final = "rule-based"
METHOD_EXTRACTIVE: Final = "extractive (rule-based)"

#: Extractive answers need at least this fraction of the question's content words in one
#: sentence; with less, the context does not answer the question and the refusal is returned.
MIN_ANSWER_OVERLAP: Final = 0.5
MAX_ANSWER_SENTENCES: Final = 2
#: Points a reduce step may use even when the budget would allow more (keeps answers readable).
MAX_REDUCE_POINTS: Final = 20

_STOPWORD_LINES: Final = (
    "a about above after again against all also am an and any are aren as at be because been",
    "before being below between both but by can cannot could couldn did didn do does doesn doing",
    "don down during each else ever every few for from further get got had hadn has hasn have",
    "haven having he her here hers herself him himself his how i if in into is isn it its itself",
    "just let ll me more most much must my myself no nor not now of off on once only or other",
    "ought our ours ourselves out over own please re same say said says shall she should",
    "shouldn so some such tell than that the their theirs them themselves then there these they",
    "this those through to too under until up upon us very via was wasn we were weren what when",
    "where which while who whom whose why will with within without won would wouldn ye yes yet",
    "you your yours yourself yourselves",
    # Request verbs: they say what to do, not what about.
    "give show list display find know like want need describe explain",
    # Words every archival text shares (extractive reports say "related records" everywhere).
    "record document file archive archival material information related item",
)
_STOPWORDS: Final = frozenset(word for line in _STOPWORD_LINES for word in line.split())

_WORD: Final = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
#: A sentence ends at . ! or ? followed by space, but not after an initial ("Harold D.
#: Whitcombe") or a title abbreviation, which archival names are full of.
_SENTENCE_BREAK: Final = re.compile(
    r"(?<=[.!?])(?<!\b[A-Z]\.)(?<!\bMr\.)(?<!\bDr\.)(?<!\bJr\.)(?<!\bSr\.)(?<!\bSt\.)"
    r"(?<!\bMrs\.)(?<!\bGen\.)(?<!\bCol\.)(?<!\bLt\.)\s+|\n+"
)


def _fold(word: str) -> str:
    if word.endswith("'s"):
        word = word[:-2]
    word = word.replace("'", "")
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def content_terms(text: str) -> frozenset[str]:
    """The content words of a text, folded as described in the module docstring."""
    terms: set[str] = set()
    for raw in _WORD.findall(text.lower()):
        word = _fold(raw)
        if not word or raw in _STOPWORDS or word in _STOPWORDS:
            continue
        if len(word) < 2 and not word.isdigit():
            continue
        terms.add(word)
    return frozenset(terms)


def _overlap(question_terms: frozenset[str], text: str) -> tuple[float, frozenset[str]]:
    if not question_terms:
        return 0.0, frozenset()
    shared = question_terms & content_terms(text)
    return len(shared) / len(question_terms), shared


def _llm_method(llm: LLM) -> str:
    return f"llm ({describe(llm)})"


def _is_refusal(text: str) -> bool:
    normalized = " ".join(text.split()).lower()
    return " ".join(REFUSAL.split()).lower().rstrip(".") in normalized


# --- classification ---------------------------------------------------------------------------

_COURTESY: Final = re.compile(
    r"^(?:(?:please|kindly|hi|hello|hey|ok|okay|now|so)\b[\s,!]*)*"
    r"(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?"
    r"|i\s+(?:want|would\s+like|'d\s+like|d\s+like|need|wish)\s+(?:you\s+)?to\s+"
    r"|i'd\s+like\s+(?:you\s+)?to\s+"
    r"|let\s+me\s+)?"
)
_DISPLAY_VERB: Final = re.compile(
    r"^(?:show|list|display|give\s+me|get\s+me|find(?!\s+out)|fetch|retrieve|pull\s+up"
    r"|bring\s+up|enumerate|print|see|view|browse|provide|look\s+up|search\s+for)\b"
)
_WHICH_RECORDS: Final = re.compile(
    r"\b(?:what|which)\s+(?:\w+\s+){0,2}?(?:records|documents|files|materials|sources|items"
    r"|series|collections|photographs|photos|papers|texts|folders)\b"
)


def classify_rule_based(request: str) -> RequestKind:
    """`show_records` when the request asks to display records (module docstring), else
    `question`."""
    text = " ".join(request.lower().split())
    text = _COURTESY.sub("", text, count=1)
    if _DISPLAY_VERB.match(text) or _WHICH_RECORDS.search(text):
        return "show_records"
    return "question"


def classify_request(
    question: str, llm: LLM, cache: GenerationCache | None
) -> tuple[RequestKind, str]:
    """(`question` | `show_records`, method). The model's reply counts only when its first word
    is one of the two labels; anything else is treated as a question, as the seed prompt says."""
    if is_extractive(llm):
        return classify_rule_based(question), METHOD_RULE_BASED
    prompt = f"{CLASSIFICATION_PROMPT}\nRequest: {question}\nOutput:"
    reply, _ = cached_complete(llm, prompt, cache)
    words = re.findall(r"[a-z_]+", reply.lower())
    if words[:1] == ["show_records"]:
        return "show_records", _llm_method(llm)
    if words[:1] == ["question"]:
        return "question", _llm_method(llm)
    return "question", f"{_llm_method(llm)}; unrecognised reply, defaulted to question"


# --- grounded answers -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AnswerContext:
    na_id: int
    title: str | None
    text: str
    source: str | None


@dataclass(frozen=True, slots=True)
class Answer:
    text: str
    method: str
    refused: bool
    #: Records whose text the answer was built from (all contexts the model read, for a model).
    used_na_ids: tuple[int, ...]


def format_answer_prompt(question: str, contexts: Sequence[AnswerContext]) -> str:
    blocks = "\n\n".join(
        f"Context: Title: {' '.join((ctx.title or '').split())} Text: {' '.join(ctx.text.split())}"
        for ctx in contexts
    )
    return f"{ANSWER_PROMPT}\n{blocks}\nQuestion: {question}\nAnswer:"


def _sentences(context: AnswerContext) -> list[str]:
    units: list[str] = []
    if context.title and context.title.strip():
        units.append(" ".join(context.title.split()))
    for piece in _SENTENCE_BREAK.split(context.text):
        piece = " ".join(piece.split())
        if piece:
            units.append(piece)
    return units


def _extractive_answer(question: str, contexts: Sequence[AnswerContext]) -> Answer:
    question_terms = content_terms(question)
    refusal = Answer(text=REFUSAL, method=METHOD_EXTRACTIVE, refused=True, used_na_ids=())
    if not question_terms:
        return refusal
    # (score, shared terms, context index, position, sentence), best first; ties keep the
    # retrieval order of the contexts and the reading order inside one.
    candidates: list[tuple[float, frozenset[str], int, int, str]] = []
    for index, context in enumerate(contexts):
        for position, sentence in enumerate(_sentences(context)):
            score, shared = _overlap(question_terms, sentence)
            if score >= MIN_ANSWER_OVERLAP:
                candidates.append((score, shared, index, position, sentence))
    if not candidates:
        return refusal
    candidates.sort(key=lambda c: (-c[0], c[2], c[3]))
    chosen = [candidates[0]]
    covered = set(candidates[0][1])
    for candidate in candidates[1:]:
        if len(chosen) >= MAX_ANSWER_SENTENCES:
            break
        # A second sentence only when it brings question words the first lacks.
        if candidate[1] - covered and candidate[4] != chosen[0][4]:
            chosen.append(candidate)
            covered |= candidate[1]
    used: list[int] = []
    for candidate in chosen:
        na_id = contexts[candidate[2]].na_id
        if na_id not in used:
            used.append(na_id)
    return Answer(
        text=" ".join(candidate[4] for candidate in chosen),
        method=METHOD_EXTRACTIVE,
        refused=False,
        used_na_ids=tuple(used),
    )


def answer_question(
    question: str,
    contexts: Sequence[AnswerContext],
    llm: LLM,
    cache: GenerationCache | None,
) -> Answer:
    """A grounded answer from the contexts only, or the seed's refusal sentence."""
    if is_extractive(llm):
        return _extractive_answer(question, contexts)
    method = _llm_method(llm)
    if not contexts:
        return Answer(text=REFUSAL, method=method, refused=True, used_na_ids=())
    reply, _ = cached_complete(llm, format_answer_prompt(question, contexts), cache)
    reply = reply.strip()
    if not reply or _is_refusal(reply):
        return Answer(text=REFUSAL, method=method, refused=True, used_na_ids=())
    used = tuple(dict.fromkeys(ctx.na_id for ctx in contexts))
    return Answer(text=reply, method=method, refused=False, used_na_ids=used)


# --- global search ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Point:
    description: str
    #: 0-100: how much the point helps answer the question.
    score: int
    #: The report the point comes from; for a model's point that cites no report of its batch,
    #: the comma-joined ids of every report in the batch.
    community_id: str


@dataclass(frozen=True, slots=True)
class GlobalAnswer:
    text: str
    #: Points that went into the reduce step, best first.
    points_used: tuple[Point, ...]
    #: Communities behind those points, in order of first use.
    communities: tuple[str, ...]
    refused: bool
    method: str


@dataclass(frozen=True, slots=True)
class ReportBlock:
    """One report as it went into a batch (findings may have been dropped to fit)."""

    report: CommunityReport
    summary: str
    findings: tuple[Finding, ...]
    text: str


def _block_text(report: CommunityReport, summary: str, findings: Sequence[Finding]) -> str:
    lines = [
        f"-----Report {report.community_id}-----",
        f"Title: {report.title}",
        f"Summary: {summary}",
        f"Rating: {report.rating:g}",
    ]
    if findings:
        lines.append("Findings:")
        for finding in findings:
            if finding.explanation:
                lines.append(f"- {finding.summary}: {finding.explanation}")
            else:
                lines.append(f"- {finding.summary}")
    return "\n".join(lines)


def _join_blocks(blocks: Sequence[ReportBlock]) -> str:
    return "\n\n".join(block.text for block in blocks)


def _fit_block(report: CommunityReport, budget: int, count_tokens: TokenCounter) -> ReportBlock:
    """The report, dropping findings from the end and then halving the summary until it fits."""
    findings = report.findings
    for keep in range(len(findings), -1, -1):
        text = _block_text(report, report.summary, findings[:keep])
        if count_tokens(text) <= budget:
            return ReportBlock(report, report.summary, findings[:keep], text)
    words = report.summary.split()
    while words:
        words = words[: len(words) // 2]
        summary = " ".join(words) + " …"
        text = _block_text(report, summary, ())
        if count_tokens(text) <= budget:
            return ReportBlock(report, summary, (), text)
    raise ValueError(
        f"batch token budget {budget} cannot hold even the title of report {report.community_id}"
    )


def pack_batches(
    reports: Sequence[CommunityReport],
    *,
    batch_token_budget: int,
    count_tokens: TokenCounter,
    seed: int = 0,
) -> list[list[ReportBlock]]:
    """Shuffle the reports with `random.Random(seed)` and pack them, in that order, into batches
    whose text fits `batch_token_budget` (a report too big for a batch of its own is shortened).

    The reports are put in id order before shuffling, so the batches depend only on the set of
    reports and the seed, not on the order the caller fetched them in.
    """
    ordered = sorted(reports, key=lambda r: (r.level, r.community_id))
    random.Random(seed).shuffle(ordered)
    batches: list[list[ReportBlock]] = []
    current: list[ReportBlock] = []
    for report in ordered:
        block = _fit_block(report, batch_token_budget, count_tokens)
        if current and count_tokens(_join_blocks([*current, block])) > batch_token_budget:
            batches.append(current)
            current = []
        current.append(block)
    if current:
        batches.append(current)
    return batches


def _score(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if not isinstance(value, int | float) or value != value:  # NaN
        return None
    return round(min(max(float(value), 0.0), 100.0))


_HTML_POINT: Final = re.compile(r"<point>(.*?)</point>", re.DOTALL)
_HTML_DESCRIPTION: Final = re.compile(r"<description>(.*?)</description>", re.DOTALL)
_HTML_SCORE: Final = re.compile(r"<score>(.*?)</score>", re.DOTALL)


def parse_points(text: str, batch_ids: Sequence[str]) -> list[Point]:
    """Points from a map reply: JSON ``{"points": [...]}`` (fenced or in prose), a bare JSON list
    of points, or seed 001's ``<point><description/><score/></point>`` tags. Points without a
    description or a numeric score are skipped; scores are clamped to 0-100."""
    fallback_id = ",".join(batch_ids)
    known = set(batch_ids)
    items: list[Any] = []
    data = extract_json_object(text)
    if data is not None and isinstance(data.get("points"), list):
        items = data["points"]
    else:
        start = text.find("[")
        if start != -1:
            try:
                value, _ = json.JSONDecoder().raw_decode(text, start)
            except ValueError:
                value = None
            if isinstance(value, list):
                items = value
    if not items:
        for match in _HTML_POINT.finditer(text):
            found_description = _HTML_DESCRIPTION.search(match.group(1))
            found_score = _HTML_SCORE.search(match.group(1))
            if found_description and found_score:
                items.append(
                    {"description": found_description.group(1), "score": found_score.group(1)}
                )
    points: list[Point] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        description = item.get("description")
        score = _score(item.get("score"))
        if not isinstance(description, str) or not description.strip() or score is None:
            continue
        cited = item.get("community_id", item.get("report_id"))
        community_id = str(cited) if cited is not None and str(cited) in known else fallback_id
        points.append(Point(" ".join(description.strip().strip('"').split()), score, community_id))
    return points


#: Words that ask about the collection as a whole rather than name a topic ("What are the main
#: themes of these records?"): the extractive map scores reports by the question's *topic*
#: words, and a question left with none is answered from the largest communities instead.
_OVERVIEW_LINES: Final = (
    "main major overall common recurring key primary principal central prominent important",
    "theme topic subject issue area overview summary summarize summarise general generally",
    "kind sort type category whole entire across collection holding hold held contain",
    "cover covered documented mostly often frequent frequently notable largest big biggest",
    "thing anything everything content contents",
)
OVERVIEW_TERMS: Final = frozenset(_fold(word) for line in _OVERVIEW_LINES for word in line.split())
#: Findings quoted per report in an extractive overview answer.
OVERVIEW_FINDINGS: Final = 3


def topic_terms(question: str) -> frozenset[str]:
    """The question's content words that name what it is about (not how to summarise it)."""
    return content_terms(question) - OVERVIEW_TERMS


def is_overview_question(question: str) -> bool:
    """True for a question about the whole collection: it has content words, and every one of
    them asks for themes, topics, an overview and the like."""
    return bool(content_terms(question)) and not topic_terms(question)


def _overview_points(
    reports: Sequence[CommunityReport], sizes: Mapping[str, int], limit: int
) -> list[Point]:
    """The `limit` highest-ranked reports, as GraphRAG ranks community reports: largest
    community first, then highest rating (ties by id). Each point is the report's title and
    summary with its first findings; its score is the community's size relative to the
    largest (at least 1, as a 0 would mean "does not help")."""
    ranked = sorted(
        reports, key=lambda r: (-sizes.get(r.community_id, 0), -r.rating, r.community_id)
    )[:limit]
    largest = max((sizes.get(r.community_id, 0) for r in ranked), default=0)
    points = []
    for report in ranked:
        description = f"{report.title}: {report.summary}"
        findings = [f.summary for f in report.findings[:OVERVIEW_FINDINGS] if f.summary]
        if findings:
            description += " Key records: " + "; ".join(findings) + "."
        size = sizes.get(report.community_id, 0)
        score = max(1, round(100 * size / largest)) if largest else 1
        points.append(Point(" ".join(description.split()), score, report.community_id))
    return points


def _extractive_points(question_terms: frozenset[str], batch: Sequence[ReportBlock]) -> list[Point]:
    points: list[Point] = []
    for block in batch:
        report = block.report
        candidates = [(f"{report.title}: {block.summary}", f"{report.title} {block.summary}")]
        for finding in block.findings:
            description = (
                f"{finding.summary}: {finding.explanation}"
                if finding.explanation
                else finding.summary
            )
            candidates.append((description, description))
        for description, scored_text in candidates:
            fraction, _ = _overlap(question_terms, scored_text)
            points.append(Point(description, round(100 * fraction), report.community_id))
    return points


def _point_text(rank: int, point: Point) -> str:
    return f"----Analyst {rank}----\nImportance Score: {point.score}\n{point.description}"


def _reduce_selection(
    points: Sequence[Point], budget: int, count_tokens: TokenCounter
) -> tuple[list[Point], str]:
    """Best-first points while their text fits the budget (the first one shortened if needed)."""
    used: list[Point] = []
    parts: list[str] = []
    for point in points[:MAX_REDUCE_POINTS]:
        part = _point_text(len(used) + 1, point)
        if count_tokens("\n\n".join([*parts, part])) > budget:
            if used:
                break
            words = point.description.split()
            while words and count_tokens(part) > budget:
                words = words[: len(words) // 2]
                point = Point(" ".join(words) + " …", point.score, point.community_id)
                part = _point_text(1, point)
            if count_tokens(part) > budget:
                raise ValueError(f"reduce token budget {budget} cannot hold a single point")
        used.append(point)
        parts.append(part)
    return used, "\n\n".join(parts)


def _plural_reports(count: int) -> str:
    return "community report" if count == 1 else f"{count} community reports"


def _communities(points: Sequence[Point]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for point in points:
        for community_id in point.community_id.split(","):
            if community_id:
                seen.setdefault(community_id, None)
    return tuple(seen)


def global_search(
    question: str,
    reports: Sequence[CommunityReport],
    llm: LLM,
    cache: GenerationCache | None,
    *,
    batch_token_budget: int,
    count_tokens: TokenCounter,
    seed: int = 0,
    reduce_token_budget: int,
    max_workers: int = 1,
    sizes: Mapping[str, int] | None = None,
) -> GlobalAnswer:
    """GraphRAG global search over the reports of one level.

    Shuffle (seeded) and batch the reports (:func:`pack_batches`), map every batch to scored
    points, drop the points scored 0, sort the rest best first (ties keep batch order), and
    reduce as many as fit `reduce_token_budget` into the answer. No surviving point -> the
    refusal. `max_workers` > 1 maps batches concurrently (a model backend caps its own requests).

    The extractive map scores a report by the question's topic words (:func:`topic_terms`); a
    question about the collection as a whole (:func:`is_overview_question`) has none, and is
    answered from the highest-ranked reports by community size (`sizes`, id -> members) and
    rating, with their findings. It is refused only when there is no report at all.
    """
    extractive = is_extractive(llm)
    method = METHOD_EXTRACTIVE if extractive else _llm_method(llm)

    def refusal() -> GlobalAnswer:
        return GlobalAnswer(REFUSAL, (), (), True, method)

    if extractive and is_overview_question(question):
        overview = _overview_points(reports, sizes or {}, MAX_REDUCE_POINTS)
        if not overview:
            return refusal()
        used, _ = _reduce_selection(overview, reduce_token_budget, count_tokens)
        level = reports[0].level
        heading = (
            f"The main themes of the collection, from the {_plural_reports(len(used))} "
            f"ranked highest by community size and rating (community level {level}):"
        )
        text = "\n".join([heading, *(f"- {point.description}" for point in used)])
        return GlobalAnswer(text, tuple(used), _communities(used), False, method)

    batches = pack_batches(
        reports, batch_token_budget=batch_token_budget, count_tokens=count_tokens, seed=seed
    )
    question_terms = topic_terms(question)

    def map_batch(batch: list[ReportBlock]) -> list[Point]:
        if extractive:
            return _extractive_points(question_terms, batch)
        prompt = MAP_PROMPT.format(context_data=_join_blocks(batch), query=question)
        reply, _ = cached_complete(llm, prompt, cache)
        return parse_points(reply, [block.report.community_id for block in batch])

    if max_workers > 1 and len(batches) > 1:
        with ThreadPoolExecutor(max_workers=max_workers) as pool:
            mapped = list(pool.map(map_batch, batches))
    else:
        mapped = [map_batch(batch) for batch in batches]

    # Stable sort: equal scores keep the (seeded) batch order.
    points = sorted(
        (point for batch_points in mapped for point in batch_points if point.score > 0),
        key=lambda point: -point.score,
    )
    if not points:
        return refusal()
    used, report_data = _reduce_selection(points, reduce_token_budget, count_tokens)
    if extractive:
        text = "\n".join(f"- {point.description}" for point in used)
    else:
        prompt = REDUCE_PROMPT.format(report_data=report_data, query=question)
        reply, _ = cached_complete(llm, prompt, cache)
        text = reply.strip()
        if not text or _is_refusal(text):
            return GlobalAnswer(REFUSAL, tuple(used), _communities(used), True, method)
    return GlobalAnswer(text, tuple(used), _communities(used), False, method)

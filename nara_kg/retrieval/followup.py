"""Follow-up questions: "and in 1942?" or "who created it?" after an answer, read against the
conversation's earlier turns.

The API is stateless: a client sends the earlier turns (question, answer, the records the answer
cited or found first, the filters) with each question. :func:`resolve_follow_up` is pure: it
turns a follow-up into the standalone question and filters that search answers, or leaves a
self-contained question alone. :func:`follow_up` adds the one graph read it needs, the titles of
the records the previous answer was about.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final

from neo4j import Driver

from nara_kg.retrieval.filters import NO_FILTERS, SearchFilters
from nara_kg.retrieval.terms import content_terms

#: Earlier turns a client may send, and what each may carry (the API refuses more).
MAX_TURNS: Final = 6
MAX_TURN_QUESTION_CHARS: Final = 2_000
MAX_TURN_ANSWER_CHARS: Final = 4_000
MAX_TURN_RECORDS: Final = 20

#: "and in 1942?", "what about 1943-1944?", "1945?": the previous question, other years.
_YEARS_ONLY: Final = re.compile(
    r"^\s*(?:and|but|what about|how about|now)?\s*(?:in|during|for|from|of)?\s*"
    r"(?P<start>\d{4})(?:\s*(?:-|\u2013|to|until|through|and)\s*(?P<end>\d{4}))?\s*[?.!]*\s*$",
    re.IGNORECASE,
)
#: Words that point back at what the previous answer was about.
_REFERRING: Final = re.compile(
    r"\b(?P<word>it|its|they|them|their|this|that|these|those|he|she|him|his|her)\b",
    re.IGNORECASE,
)
_POSSESSIVE: Final = frozenset({"its", "their", "his", "her"})
#: A question with more content words than this names its own subject: "it" in "Was it signed
#: by the Secretary of the Treasury in Washington?" still refers back, but such a question
#: searches well as asked.
_MAX_OWN_TERMS: Final = 2
#: What a question asks before its subject ("Who created", "When was ... published").
_QUESTION_LEAD: Final = re.compile(
    r"^\s*(?:who|what|when|where|which|how many|how much|how|why)\b(?:\s+(?:is|are|was|were|"
    r"did|does|do|has|have|had|created|wrote|made|kept|took|photographed))*\s+",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Turn:
    """An earlier turn of the conversation, as the client remembers it."""

    question: str
    answer: str | None = None
    #: The records the answer cited, then those it found first (best first).
    na_ids: tuple[int, ...] = ()
    filters: SearchFilters = NO_FILTERS


@dataclass(frozen=True, slots=True)
class Resolution:
    """What to search for: the question as asked, or the follow-up made standalone."""

    question: str
    filters: SearchFilters
    #: The question depends on an earlier turn (and `question` is its standalone reading).
    follow_up: bool = False
    #: What the follow-up was read against: "dates", "record" or "question".
    resolved_by: str | None = None
    #: The records of the previous turn the follow-up refers to.
    focus: tuple[int, ...] = ()


def _subject(question: str) -> str:
    """The previous question's subject: the question without its lead words and mark."""
    subject = _QUESTION_LEAD.sub("", question.strip(), count=1).strip().rstrip("?.! ")
    return subject or question.strip().rstrip("?.! ")


def _with_years(filters: SearchFilters, start: str, end: str) -> SearchFilters:
    return replace(filters, date_from=start, date_to=end)


def resolve_follow_up(
    question: str,
    filters: SearchFilters,
    history: Sequence[Turn],
    titles: Mapping[int, str] | None = None,
) -> Resolution:
    """The question to search with. Without history, or for a question that stands on its own,
    it is the question and filters as given. A follow-up is read against the last turn:

    * years alone ("and in 1942?"): the last question again, its filters with those years;
    * a pronoun in a question that names little else ("who created it?"): the pronoun becomes
      the title of the record the last answer was about (`titles`, by naId), else the last
      question's subject; the last turn's filters apply unless the request sets its own.
    """
    as_asked = Resolution(question=question, filters=filters)
    if not history:
        return as_asked
    last = history[-1]
    inherited = filters if filters.active else last.filters
    years = _YEARS_ONLY.match(question)
    if years:
        start = years.group("start")
        end = years.group("end") or start
        if start > end:
            start, end = end, start
        base = last.question.strip().rstrip("?.! ")
        label = start if start == end else f"{start}-{end}"
        return Resolution(
            question=f"{base} in {label}?",
            filters=_with_years(inherited, start, end),
            follow_up=True,
            resolved_by="dates",
            focus=last.na_ids,
        )
    pronoun = _REFERRING.search(question)
    if pronoun is None:
        return as_asked
    own_terms = content_terms(_REFERRING.sub(" ", question))
    if len(own_terms) > _MAX_OWN_TERMS:
        return as_asked
    title = next((titles[na_id] for na_id in last.na_ids if titles and titles.get(na_id)), None)
    referent = title.strip() if title else _subject(last.question)
    if not referent:
        return as_asked
    word = pronoun.group("word").lower()
    replacement = f"{referent}'s" if word in _POSSESSIVE else referent
    resolved = question[: pronoun.start()] + replacement + question[pronoun.end() :]
    return Resolution(
        question=resolved,
        filters=inherited,
        follow_up=True,
        resolved_by="record" if title else "question",
        focus=last.na_ids,
    )


def follow_up(
    driver: Driver,
    database: str,
    question: str,
    filters: SearchFilters,
    history: Sequence[Turn],
) -> Resolution:
    """:func:`resolve_follow_up` with the titles of the last turn's records read from the
    graph (only when the question refers back with a pronoun)."""
    if not history or _YEARS_ONLY.match(question) or not _REFERRING.search(question):
        return resolve_follow_up(question, filters, history)
    from nara_kg.graph import search as cypher

    focus = list(history[-1].na_ids[:MAX_TURN_RECORDS])
    titles = {
        int(row["naId"]): str(row["title"])
        for row in (cypher.candidate_facts(driver, database, focus) if focus else [])
        if row.get("title")
    }
    return resolve_follow_up(question, filters, history, titles)

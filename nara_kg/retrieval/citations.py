"""Citations of an answer: every answer sentence ends with an inline marker ``[n]`` naming the
record it came from, and the response lists each cited sentence as an :class:`AnswerCitation`.

The contract the page and global answers build on: markers are numbered 1, 2, ... by distinct
record in the order records are first cited, so two sentences from one record carry the same
marker; ``answer_citations`` holds one entry per answer sentence, in answer order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from nara_kg.retrieval.terms import content_terms

#: An inline marker as it appears in answer text.
MARKER: Final = re.compile(r"\s*\[(\d+)\]")


@dataclass(frozen=True, slots=True)
class AnswerCitation:
    """One answer sentence and the record it came from."""

    marker: int
    na_id: int
    title: str
    #: The sentence as the answer states it, without its marker.
    sentence: str

    def to_dict(self) -> dict[str, object]:
        return {
            "marker": self.marker,
            "na_id": self.na_id,
            "title": self.title,
            "sentence": self.sentence,
        }


@dataclass(frozen=True, slots=True)
class CitedSentence:
    """An answer sentence before numbering: the sentence and its source record."""

    sentence: str
    na_id: int
    title: str | None


def cite(sentences: Sequence[CitedSentence]) -> tuple[str, tuple[AnswerCitation, ...]]:
    """The answer text, each sentence followed by its record's marker, and the citations."""
    markers: dict[int, int] = {}
    parts: list[str] = []
    citations: list[AnswerCitation] = []
    for item in sentences:
        sentence = " ".join(item.sentence.split())
        if not sentence:
            continue
        marker = markers.setdefault(item.na_id, len(markers) + 1)
        parts.append(f"{sentence} [{marker}]")
        citations.append(AnswerCitation(marker, item.na_id, item.title or "", sentence))
    return " ".join(parts), tuple(citations)


def strip_markers(text: str) -> str:
    """The answer text without its inline markers."""
    return MARKER.sub("", text)


@dataclass(frozen=True, slots=True)
class Source:
    """A record a model was given, as :func:`attribute` matches sentences against it."""

    na_id: int
    title: str | None
    text: str


def attribute(sentences: Sequence[str], sources: Sequence[Source]) -> list[CitedSentence]:
    """Each sentence of a model's answer with the given record whose title and text share the
    most of its content words (the first given record on a tie, or when none shares any)."""
    if not sources:
        return []
    source_terms = [content_terms(f"{s.title or ''} {s.text}") for s in sources]
    cited: list[CitedSentence] = []
    for sentence in sentences:
        terms = content_terms(sentence)
        best = max(range(len(sources)), key=lambda i: (len(terms & source_terms[i]), -i))
        cited.append(CitedSentence(sentence, sources[best].na_id, sources[best].title))
    return cited

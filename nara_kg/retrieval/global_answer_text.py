"""The text of an extractive global answer: points cut into sentences, one line per
community, each sentence followed by the marker of the record it is cited to."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final

from nara_kg.generation.community_profile import DESCRIPTION_LEVELS, KeyRecord
from nara_kg.retrieval.citations import AnswerCitation, CitedSentence, cite
from nara_kg.retrieval.global_points import Point

#: Sentences an answer takes from one report summary or point.
MAX_POINT_SENTENCES: Final = 2
#: A sentence ends at . ! or ? followed by space, but not after an initial ("Harold D.") or an
#: abbreviation that archival names and titles are full of ("Henry Morgenthau, Jr. (…").
_SENTENCE_BREAK: Final = re.compile(
    r"(?<=[.!?])(?<!\b[A-Z]\.)(?<!\bMr\.)(?<!\bDr\.)(?<!\bJr\.)(?<!\bSr\.)(?<!\bSt\.)"
    r"(?<!\bMrs\.)(?<!\bGen\.)(?<!\bCol\.)(?<!\bLt\.)(?<!\bNo\.)(?<!\bCo\.)(?<!\bInc\.)"
    r"(?<!\bVol\.)\s+|\n+"
)
#: GraphRAG's references inside a model's report or answer ("[Data: Reports (2, 7)]",
#: "[Records: 7001, 7002]"): the citation markers say where a sentence comes from instead.
_REFERENCE: Final = re.compile(r"\s*\[(?:Data|Records|Reports)\s*:[^\]]*\]", re.IGNORECASE)
#: The catalog link an extractive finding ends with: the citation names the record instead.
_SOURCE_LINK: Final = re.compile(r"\s*Source: https?://\S+")


def split_sentences(text: str) -> list[str]:
    """The sentences of `text`, references and catalog links removed, each ending in . ! or ?
    (an unfinished last one dropped when others precede it, else ended with an ellipsis)."""
    sentences = []
    text = _SOURCE_LINK.sub("", _REFERENCE.sub("", text)).strip()
    # An excerpt clipped mid-sentence loses its unfinished end when a whole sentence precedes.
    pieces = [p for p in _SENTENCE_BREAK.split(text) if p.strip()]
    if len(pieces) > 1 and not pieces[-1].rstrip().endswith((".", "!", "?")):
        pieces.pop()
    for piece in pieces:
        piece = " ".join(piece.split()).lstrip("-• ").strip()
        if piece:
            sentences.append(
                piece if piece.endswith((".", "!", "?", "\u2026")) else f"{piece}\u2026"
            )
    return sentences


def representative(members: Sequence[KeyRecord]) -> KeyRecord | None:
    """The record that stands for a community among its top members (ranked by degree): the
    first description (series, file unit, ...), else the first member."""
    return next((m for m in members if m.node_type in DESCRIPTION_LEVELS), None) or next(
        iter(members), None
    )


def _cited_by(point: Point, members: Mapping[str, Sequence[KeyRecord]]) -> KeyRecord | None:
    """The record a point cites: a top member its text starts with (a finding about that
    record), else its community's representative."""
    community_members = members.get(point.community_id.split(",")[0], ())
    for member in community_members:
        if member.title and point.description.startswith(member.title):
            return member
    return representative(community_members)


#: A sentence saying less than this many words after its title ("Records of the War Relocation
#: Authority: A record group.") only names a record's kind: an answer line skips it.
MIN_CONTENT_WORDS: Final = 4


def _says_something(sentence: str) -> bool:
    return len(sentence.split(": ", 1)[-1].split()) >= MIN_CONTENT_WORDS


def per_community(points: Sequence[Point]) -> list[Point]:
    """One point per community, in the order of each community's best point: the first
    sentence of its best point, then of its next ones that say something else, then the best
    point's next sentence, up to :data:`MAX_POINT_SENTENCES` (a report's summary and findings
    repeat one another; a finding that only names a record's kind says nothing)."""
    grouped: dict[str, list[Point]] = {}
    for point in points:
        grouped.setdefault(point.community_id, []).append(point)
    merged = []
    for community_id, community_points in grouped.items():
        split = [split_sentences(point.description) for point in community_points]
        candidates = [sentences[0] for sentences in split if sentences]
        candidates += split[0][1:]
        sentences: list[str] = []
        for index, sentence in enumerate(candidates):
            if sentence in sentences or (index and not _says_something(sentence)):
                continue
            sentences.append(sentence)
            if len(sentences) >= MAX_POINT_SENTENCES:
                break
        merged.append(Point(" ".join(sentences), community_points[0].score, community_id))
    return merged


def cited_answer(
    points: Sequence[Point], members: Mapping[str, Sequence[KeyRecord]]
) -> tuple[str, tuple[AnswerCitation, ...]]:
    """One line per point, its first sentences each followed by the marker of the record it
    cites (:mod:`nara_kg.retrieval.citations`). A point whose community has no known member
    (only a caller that passes none) keeps its sentences without a marker."""
    lines: list[tuple[list[str], KeyRecord | None]] = []
    for point in points:
        sentences = split_sentences(point.description)[:MAX_POINT_SENTENCES]
        if sentences:
            lines.append((sentences, _cited_by(point, members)))
    _, citations = cite(
        [
            CitedSentence(sentence, record.na_id, record.title)
            for sentences, record in lines
            if record is not None
            for sentence in sentences
        ]
    )
    text, at = [], 0
    for sentences, record in lines:
        if record is None:
            text.append(" ".join(sentences))
            continue
        line = citations[at : at + len(sentences)]
        text.append(" ".join(f"{c.sentence} [{c.marker}]" for c in line))
        at += len(sentences)
    return "\n".join(text), citations

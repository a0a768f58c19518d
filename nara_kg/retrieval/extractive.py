"""Extractive answers: the sentence of the top records' text that answers the question.

Candidates are the sentences of every chunk of the top records (search headers and titles are
never candidates). Question and sentence are compared by their stemmed content words
(:func:`~nara_kg.retrieval.terms.stems`); a sentence also counts the words of its record's
title and ancestors' titles, because "The photographer was Fred Yamaguchi." answers "Who
photographed the Rohwer Relocation Center?" only as a sentence of the record titled "Rohwer
Relocation Center". A sentence qualifies when

* the question's words it and its titles cover weigh at least :data:`MIN_COVERAGE` of the
  question's, where the question's key words (capitalised names, numbers) weigh double;
* every key word is covered, by the sentence, its titles or their acronyms (so a sentence
  about Rohwer never answers a question about Jerome); and
* it holds what a who / when / where / how-many question asks for, or else the sentence
  itself holds one of the question's other words, or its titles hold them all (a sentence
  of the record titled "The Wrong Ancestors" says what that filmstrip is), and at least
  a third of those other words are covered ("What views did Senator Z express about tax
  reforms?" is not answered by "He expressed hope ...").

For who / when / where / how-many questions a sentence holding what was asked for (a name, a
date, a place, a number that the question does not already state) ranks first.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from nara_kg.retrieval.graph_record import GraphRecord
from nara_kg.retrieval.terms import fold, stem, stems

MIN_COVERAGE: Final = 0.5
#: Share of the question's other (not key) words a sentence without a typed answer must cover.
MIN_FOCUS: Final = 1 / 3
MAX_SENTENCES: Final = 2
#: Longest sentence offered as an answer (characters); longer ones (OCR runs, lists) are cut.
MAX_SENTENCE_CHARS: Final = 600

QuestionKind = Literal["who", "when", "where", "how_many", "topics", "other"]

#: Question words that say what form the answer takes, not what it is about.
_FILLER: Final = frozenset(
    {"name", "call", "kind", "type", "sort", "well", "known", "mani", "much"}
)
#: Sentences longer than this are cut at semicolons (lists of places, titles, names).
LONG_SENTENCE_CHARS: Final = 300

#: A sentence ends at . ! or ? followed by space, but not after an initial ("Harold D.
#: Whitcombe") or a title abbreviation, which archival names are full of.
SENTENCE_BREAK: Final = re.compile(
    r"(?<=[.!?])(?<!\b[A-Z]\.)(?<!\bMr\.)(?<!\bDr\.)(?<!\bJr\.)(?<!\bSr\.)(?<!\bSt\.)"
    r"(?<!\bMrs\.)(?<!\bGen\.)(?<!\bCol\.)(?<!\bLt\.)(?<!\bCo\.)(?<!\bNo\.)\s+|\n+"
)

_KINDS: Final = (
    ("how_many", re.compile(r"^\s*how (many|much)\b", re.IGNORECASE)),
    (
        "who",
        re.compile(
            r"^\s*(who|whom|whose)\b|\bwhich ([\w-]+ )?(photographer|person|people|"
            r"agency|organization|official|author)\b",
            re.IGNORECASE,
        ),
    ),
    ("when", re.compile(r"^\s*(when|what year|what date)\b|\bin what year\b", re.IGNORECASE)),
    ("topics", re.compile(r"\b(topics?|subjects?|themes?|issues?)\b", re.IGNORECASE)),
    (
        "where",
        re.compile(
            r"^\s*where\b|\b(which|what) (cities|city|states?|places?|towns?|"
            r"countr(y|ies))\b",
            re.IGNORECASE,
        ),
    ),
)

_CAPITALISED: Final = re.compile(r"\b[A-Z][A-Za-z'\u2019.-]*[A-Za-z]|\b\d[\d,]*\b")
_NAME: Final = re.compile(
    r"\b(?:[A-Z]\.\s*){1,3}[A-Z][a-z'\u2019]+"
    r"|\b[A-Z][a-z]+(?:\s+(?:[A-Z]\.\s*)+|\s+)(?:(?:van|de|von|der)\s+)?[A-Z][a-z'\u2019]+"
)
_MONTH: Final = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|"
    r"December|Jan\.|Feb\.|Aug\.|Sept?\.|Oct\.|Nov\.|Dec\.)"
)
_DATE: Final = re.compile(rf"\b{_MONTH}\s+(\d{{1,2}},?\s+)?\d{{4}}\b|\b(1[6-9]|20)\d\d\b")
_NUMBER: Final = re.compile(
    r"\b\d[\d,]*\b|\b(two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
    r"fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|hundred|"
    r"thousand)\b",
    re.IGNORECASE,
)
_PLACE: Final = re.compile(r"\b[A-Z][a-z]+(?:[ ,]+[A-Z][a-z]+)*\b")


def question_kind(question: str) -> QuestionKind:
    for kind, pattern in _KINDS:
        if pattern.search(question):
            return kind  # type: ignore[return-value]
    return "other"


def key_terms(question: str) -> frozenset[str]:
    """Stems of the question's capitalised words (after its first word) and numbers."""
    words = _CAPITALISED.findall(question)
    first = question.strip().split(" ", 1)[0] if question.strip() else ""
    if words and words[0] == first.rstrip("?,.") and not first[:1].isdigit():
        words = words[1:]
    return stems(" ".join(words))


_TOKEN: Final = re.compile(r"[A-Za-z]+")
#: Words of a capitalised name that make it a place or a body, not a person who did something.
_NOT_PERSON: Final = frozenset(
    [
        "Center",
        "Centers",
        "Camp",
        "Lake",
        "River",
        "Mountain",
        "Valley",
        "County",
        "City",
        "States",
        "Authority",
        "Office",
        "Division",
        "Department",
        "Board",
        "Administration",
        "Library",
        "Relocation",
        "Segregation",
        "War",
    ]
)
#: Words a how-many question counts that are no content words elsewhere (terms.py drops them).
_COUNTED: Final = frozenset({"file", "record", "item", "document"})
#: A person's name with initials ("R.A. Bankson", "Robert M. Cullum"): surely a person.
_INITIALLED: Final = re.compile(
    r"\b(?:[A-Z]\.\s*){1,3}[A-Z][a-z]+|\b[A-Z][a-z]+\s+[A-Z]\.\s+[A-Z][a-z]+"
)
#: Distinct names a sentence must hold to answer a question about topics (more count more).
TOPIC_NAMES: Final = 5


def _typed(kind: QuestionKind, sentence: str, question: str) -> float:
    """How well the sentence holds what a who/when/where/how-many/topics question asks for,
    beyond the question's own words: 0 (not at all), 1, 1.25 for a name with initials, or
    1.5 for a number right before one of the question's words ("850 diary volumes" for "how
    many diary volumes")."""
    question_stems = stems(question)

    def new(match_text: str) -> bool:
        found = stems(match_text)
        return bool(found - question_stems) or (not found and bool(match_text.strip()))

    if kind == "who":
        if any(new(m.group(0)) for m in _INITIALLED.finditer(sentence)):
            return 1.25
        return float(
            any(
                new(m.group(0)) and not _NOT_PERSON & set(m.group(0).split())
                for m in _NAME.finditer(sentence)
            )
        )
    if kind == "when":
        return float(any(new(m.group(0)) for m in _DATE.finditer(sentence)))
    if kind == "how_many":
        asked = question_stems | {
            stem(fold(w.lower())) for w in _TOKEN.findall(question) if fold(w.lower()) in _COUNTED
        }
        best = 0.0
        for m in _NUMBER.finditer(sentence):
            if not new(m.group(0)):
                continue
            following = _TOKEN.findall(sentence[m.end() : m.end() + 40])[:2]
            near = any(stem(fold(w.lower())) in asked for w in following)
            best = max(best, 1.5 if near else 1.0)
        return best
    if kind == "where":
        # Not the sentence's first word, which is capitalised anyway.
        return float(any(new(m.group(0)) for m in _PLACE.finditer(sentence) if m.start() > 0))
    if kind == "topics":
        names = {m.group(0) for m in _PLACE.finditer(sentence) if m.start() > 0 and new(m.group(0))}
        return min(1.5, len(names) / TOPIC_NAMES) if len(names) >= TOPIC_NAMES else 0.0
    return 0.0


def acronyms(text: str) -> frozenset[str]:
    """Initials of the runs of capitalised words in a text ("War Relocation Authority" ->
    "wra"), which records and questions use for the names their titles spell out."""
    found: set[str] = set()
    for run in re.finditer(r"(?:\b[A-Z][a-z]+\b\s*){2,}", text):
        initials = "".join(w[0] for w in run.group(0).split() if w[:1].isupper()).lower()
        if len(initials) >= 2:
            found.add(initials)
    return frozenset(found)


def sentences(text: str) -> list[str]:
    return [p for p in (" ".join(piece.split()) for piece in SENTENCE_BREAK.split(text)) if p]


def _clipped(unit: str) -> str:
    """A unit longer than MAX_SENTENCE_CHARS cut after its last comma (or word) within it."""
    if len(unit) <= MAX_SENTENCE_CHARS:
        return unit
    head = unit[:MAX_SENTENCE_CHARS]
    cut = head.rfind(", ")
    if cut < MAX_SENTENCE_CHARS // 2:
        cut = head.rfind(" ")
    return head[:cut].rstrip(" ,;") + " \N{HORIZONTAL ELLIPSIS}"


def answer_units(text: str) -> list[str]:
    """Sentences, a long one cut at its semicolons into its clauses, and any still too long
    clipped (OCR runs and long lists)."""
    units: list[str] = []
    for sentence in sentences(text):
        if len(sentence) > LONG_SENTENCE_CHARS and ";" in sentence:
            units.extend(p.strip() for p in sentence.split(";") if p.strip())
        else:
            units.append(sentence)
    return [_clipped(unit) for unit in units]


@dataclass(frozen=True, slots=True)
class Candidate:
    score: float
    typed: float
    rank: int
    position: int
    sentence: str
    record: GraphRecord
    #: Question stems the sentence itself holds.
    own: frozenset[str]


def _titles(record: GraphRecord) -> frozenset[str]:
    """What a sentence of the record is about besides its own words: the words and acronyms of
    its and its ancestors' titles, and the years of its dates."""
    titles = " ".join([record.title or "", *(a.title or "" for a in record.ancestors)])
    start, end = record.own_dates
    years: set[str] = set()
    if start and end and start[:4].isdigit() and end[:4].isdigit():
        years = {str(y) for y in range(int(start[:4]), min(int(end[:4]), int(start[:4]) + 20) + 1)}
    return stems(titles) | acronyms(titles) | years


#: A question word the records lack is read as the records' word closest to it at least this
#: similar (difflib's ratio): "Rowher" as "rohwer", "photograhped" as "photograph".
RESPELL_CUTOFF: Final = 0.8
#: Shorter words are too easily mistaken for one another to respell.
RESPELL_MIN_CHARS: Final = 5


def respelled(terms: frozenset[str], vocabulary: set[str]) -> dict[str, str]:
    """Question stems missing from the vocabulary -> the closest vocabulary stem, if close."""
    spelling: dict[str, str] = {}
    for term in terms:
        if term in vocabulary or len(term) < RESPELL_MIN_CHARS or term.isdigit():
            continue
        close = difflib.get_close_matches(term, vocabulary, n=1, cutoff=RESPELL_CUTOFF)
        if close:
            spelling[term] = close[0]
    return spelling


def candidates(
    question: str, records: Sequence[GraphRecord]
) -> tuple[QuestionKind, list[Candidate]]:
    """The qualifying sentences of the records (see the module docstring), best first."""
    kind = question_kind(question)
    split = [(record, answer_units(record.body)) for record in records]
    vocabulary: set[str] = set()
    for record, units in split:
        vocabulary |= _titles(record)
        for unit in units:
            vocabulary |= stems(unit)
    spelling = respelled(stems(question) - _FILLER, vocabulary)
    question_stems = frozenset(spelling.get(t, t) for t in stems(question) - _FILLER)
    if not question_stems:
        return kind, []
    keys = frozenset(spelling.get(t, t) for t in key_terms(question)) & question_stems
    weights = {term: 2.0 if term in keys else 1.0 for term in question_stems}
    total = sum(weights.values())
    focus = question_stems - keys
    found: list[Candidate] = []
    for rank, (record, units) in enumerate(split):
        context = _titles(record) & question_stems
        for position, sentence in enumerate(units):
            own = (stems(sentence) | acronyms(sentence)) & question_stems
            covered = own | context
            if not own or keys - covered:
                continue
            coverage = sum(weights[t] for t in covered) / total
            if coverage < MIN_COVERAGE:
                continue
            typed = _typed(kind, sentence, question)
            answers_kind = bool(typed) and kind != "other"
            if not answers_kind:
                if not (own & focus) and not focus <= context:
                    continue
                if focus and len(focus & covered) / len(focus) < MIN_FOCUS:
                    continue
            score = (
                coverage + 0.3 * sum(weights[t] for t in own) / total + 0.4 * typed - 0.03 * rank
            )
            found.append(Candidate(score, typed, rank, position, sentence, record, own))
    found.sort(key=lambda c: (-c.score, c.rank, c.position))
    return kind, found


def choose(kind: QuestionKind, found: Sequence[Candidate]) -> list[Candidate]:
    """The answer's sentences: the best candidate (a typed one for who/when/where/how-many
    when there is one), and a second only when it brings question words the first lacks."""
    if not found:
        return []
    pool = list(found)
    if kind != "other" and any(c.typed for c in pool):
        pool = [c for c in pool if c.typed]
    chosen = [pool[0]]
    covered = set(pool[0].own)
    for candidate in pool[1:]:
        if len(chosen) >= MAX_SENTENCES:
            break
        if candidate.own - covered and candidate.sentence != chosen[0].sentence:
            chosen.append(candidate)
            covered |= candidate.own
    return chosen

"""The faithfulness guard for generated answers: a sentence stays only when every name, number
and date it states appears in the records it cites.

A model (a small local one especially) may answer fluently with a name or a year that no
retrieved record holds. The guard checks each sentence of a generated answer against the text
of the records it cites (its inline markers `[n]`, which number the records as the prompt gave
them; all of them when it has none) and drops the sentences that state a fact those records do
not hold. A sentence that states no checkable fact is kept: there is nothing in it to invent.

What counts as a fact is deliberately literal, so that the check needs no model:

* a number (commas and decimal points inside it ignored: "1,500" is "1500"), which covers years
  and the day of a date;
* a name: a capitalised word that is not one of the common words that begin sentences ("The",
  "This", "In", ...), month names included. The first word of a sentence counts only when the
  next word is capitalised too ("Fred Yamaguchi took ..."), since any word is capitalised there.

A fact is supported when it appears as a whole word (case-folded) in the cited text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

#: `[1]`, `[2, 3]`: the inline citation markers of an answer, numbered from 1 in prompt order.
_MARKER: Final = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
#: A sentence ends at . ! or ? followed by space, but not after an initial ("Harold D.") or a
#: title abbreviation.
_SENTENCE_BREAK: Final = re.compile(
    r"(?<=[.!?])(?<!\b[A-Z]\.)(?<!\bMr\.)(?<!\bDr\.)(?<!\bJr\.)(?<!\bSr\.)(?<!\bSt\.)"
    r"(?<!\bMrs\.)(?<!\bGen\.)(?<!\bCol\.)(?<!\bLt\.)(?<!\bNo\.)\s+|\n+"
)
_NUMBER: Final = re.compile(r"\d+(?:[.,]\d+)*")
_WORD: Final = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)*")
#: Capitalised words that are not names: sentence openers, pronouns, articles, common
#: connectives (a model starts and joins sentences with them).
_NOT_NAMES: Final = frozenset(
    """
    a an the this that these those there here it its they them their he she his her we our
    i you your in on at of for from by with to into about after before during as and or but
    if when where who whom whose what which why how yes no not also both each all some any
    one many most more other such than then so yet while because although though however
    according based answer context contexts record records question text title
    """.split()  # noqa: SIM905 (a word list reads better as text)
)


@dataclass(frozen=True, slots=True)
class GuardResult:
    """A generated answer after the guard: the sentences kept, joined, and the counts."""

    text: str
    kept: int
    dropped: int
    #: The dropped sentences, each with the facts its cited records do not hold.
    dropped_sentences: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def to_dict(self) -> dict[str, int]:
        return {"sentences_kept": self.kept, "sentences_dropped": self.dropped}


def split_sentences(text: str) -> list[str]:
    return [s for piece in _SENTENCE_BREAK.split(text) if (s := " ".join(piece.split()))]


def _normalise_number(token: str) -> str:
    return token.replace(",", "").replace(".", "")


def sentence_facts(sentence: str) -> set[str]:
    """The checkable facts of one sentence, case-folded (numbers normalised)."""
    plain = _MARKER.sub(" ", sentence)
    facts = {_normalise_number(n) for n in _NUMBER.findall(plain)}
    words = list(_WORD.finditer(plain))
    for index, match in enumerate(words):
        word = match.group(0)
        if not word[0].isupper() or word.lower() in _NOT_NAMES:
            continue
        if index == 0:
            following = words[1].group(0) if len(words) > 1 else ""
            if not following[:1].isupper():
                continue
        facts.add(word.lower())
    return facts


def source_vocabulary(texts: Sequence[str]) -> set[str]:
    """Every word (case-folded) and number (normalised) of the given texts."""
    vocabulary: set[str] = set()
    for text in texts:
        vocabulary.update(word.lower() for word in _WORD.findall(text))
        vocabulary.update(_normalise_number(n) for n in _NUMBER.findall(text))
        # A possessive or hyphenated name is also found by its parts.
        vocabulary.update(part.lower() for part in re.findall(r"[^\W\d_]+", text))
    return vocabulary


def _cited(sentence: str, count: int) -> list[int]:
    """0-based indexes of the sources a sentence's markers name (valid ones only)."""
    cited: list[int] = []
    for group in _MARKER.findall(sentence):
        for number in group.split(","):
            index = int(number) - 1
            if 0 <= index < count and index not in cited:
                cited.append(index)
    return cited


def guard_answer(answer: str, sources: Sequence[str]) -> GuardResult:
    """The sentences of `answer` whose facts all appear in the sources they cite.

    `sources` are the texts of the records the model read, in the order the prompt numbered
    them; a sentence without valid markers is checked against all of them.
    """
    vocabularies: Mapping[int, set[str]] = {
        i: source_vocabulary([text]) for i, text in enumerate(sources)
    }
    everything = set().union(*vocabularies.values()) if vocabularies else set()
    kept: list[str] = []
    dropped: list[tuple[str, tuple[str, ...]]] = []
    for sentence in split_sentences(answer):
        cited = _cited(sentence, len(sources))
        vocabulary = set().union(*(vocabularies[i] for i in cited)) if cited else everything
        missing = sorted(fact for fact in sentence_facts(sentence) if fact not in vocabulary)
        if missing:
            dropped.append((sentence, tuple(missing)))
        else:
            kept.append(sentence)
    return GuardResult(
        text=" ".join(kept), kept=len(kept), dropped=len(dropped), dropped_sentences=tuple(dropped)
    )

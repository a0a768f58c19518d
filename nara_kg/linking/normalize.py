"""One text normalization for surface forms and record text, with a map back to the original.

Names and chunk text go through the same `normalize()`, so a name matches whatever spelling of it
normalizes to the same words. The result is the text's words, lower-cased and joined by single
spaces (so a multi-word match is always whole words); `NormalizedText.original_span` maps a
normalized span back to the original characters.

What is folded, and why each step is safe:

* Unicode NFKC and case folding: compatibility forms (ligatures "ﬁ", full-width letters,
  superscripts) become their plain letters; "ß" becomes "ss".
* Accents are dropped ("Müller" = "Muller"): OCR and typists often lose them, and two authorities
  that differ only by accents are still caught as ambiguous, never silently merged.
* Punctuation, quotes (straight or curly) and symbols separate words; whitespace runs collapse.
* Soft hyphens and zero-width characters inside a word are removed.
* A word broken at a line end ("Roose-\\nvelt", also with "¬" or U+2010) is joined when the
  continuation starts with a lower-case (ASCII or Latin-1) letter; an upper-case continuation
  ("Smith-\\nJones") is a real hyphenated name and stays two words, as "Smith-Jones" does.
* Initials written with periods fold into one word: "U.S." = "U. S." = "US", "F. D." = "FD".
  Only period-separated single letters fold, so "Franklin D. Roosevelt" keeps its initial.

Not folded, because it is not safe: OCR letter confusions ("rn"/"m", "0"/"O", "1"/"l"), spelling
variants, or word order (inverted names are separate surface forms, see `surface_forms`).

Speed: the words are found by one regular expression and joined in C, with no Python-level step
per word unless a word needs folding beyond lower-casing.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Iterable
from itertools import accumulate
from typing import Final

_MARKS: Final = r"\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
_INVISIBLES: Final = "\u00ad\u200b-\u200d\u2060\ufeff"
#: One character of a word: a letter or digit, a combining mark (a decomposed "é" stays in its
#: word), or an invisible character that may sit inside a word.
_CHAR: Final = rf"(?:[^\W_]|[{_MARKS}{_INVISIBLES}])"
#: Period-separated single letters ("U.S", "F. D").
_INITIALS: Final = r"(?<![^\W_])[^\W\d_](?:\. ?[^\W\d_](?![^\W_]))+"
#: A run of word characters, continued across a hyphen and one line break by a lower-case letter.
_BROKEN_RUN: Final = (
    rf"{_CHAR}+(?:[-\u2010\u2011\u00ac\u00ad][ \t]*\r?\n[ \t]*(?=[a-zß-öø-ÿ]){_CHAR}+)*"
)
_WORD: Final = re.compile(rf"{_INITIALS}|{_BROKEN_RUN}")
_PLAIN: Final = re.compile(r"[a-z0-9 ]*")
_INVISIBLE_SET: Final = frozenset("\u00ad\u200b\u200c\u200d\u2060\ufeff")


class NormalizedText:
    """Normalized words joined by single spaces, and the way back to the original text."""

    __slots__ = ("_folded", "_norm_starts", "_original", "_raw", "_raw_starts", "text")

    def __init__(
        self,
        text: str,
        original: str,
        raw: list[str],
        raw_starts: list[int],
        folded: list[str] | None,
    ) -> None:
        self.text = text
        self._original = original
        self._raw = raw  # the words as found in the original text, and where
        self._raw_starts = raw_starts
        self._folded = folded  # their folded forms, None when each is just lower-cased
        self._norm_starts: list[int] = []

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The original [start, end) that the normalized characters [start, end) came from
        (start and end - 1 inside words)."""
        if not self._norm_starts:
            self._index()
        return self._origin(start)[0], self._origin(end - 1)[1]

    @property
    def original(self) -> str:
        """The text this was normalized from (the one `original_span` indexes)."""
        return self._original

    def _index(self) -> None:
        lengths: Iterable[int] = map(len, self._raw)
        if self._folded is not None:
            keep = [i for i, f in enumerate(self._folded) if f]
            lengths = [len(self._folded[i]) for i in keep]
            self._raw = [self._raw[i] for i in keep]
            self._raw_starts = [self._raw_starts[i] for i in keep]
        self._norm_starts = list(accumulate(map((1).__add__, lengths), initial=0))

    def _origin(self, position: int) -> tuple[int, int]:
        word = bisect_right(self._norm_starts, position) - 1
        offset = position - self._norm_starts[word]
        raw, raw_start = self._raw[word], self._raw_starts[word]
        if raw.isascii() and raw.isalnum():
            return raw_start + offset, raw_start + offset + 1
        _, starts, ends = _fold_word(self._original, raw_start, raw_start + len(raw))
        return starts[offset], ends[offset]


def normalize(text: str) -> NormalizedText:
    """`text` normalized as the module docstring says."""
    # map() over C methods: no Python-level step per word.
    found = list(_WORD.finditer(text))
    words: list[str] = list(map(re.Match.group, found))
    starts: list[int] = list(map(re.Match.start, found))
    lowered = " ".join(words).lower()
    if lowered.isascii() and _PLAIN.fullmatch(lowered):
        return NormalizedText(lowered, text, words, starts, None)
    folded = [
        w.lower() if w.isascii() and w.isalnum() else _fold_word(w, 0, len(w))[0] for w in words
    ]
    return NormalizedText(" ".join(f for f in folded if f), text, words, starts, folded)


def normalize_form(text: str) -> str:
    """Only the normalized text (for surface forms, which need no offsets)."""
    return normalize(text).text


def _fold_word(text: str, start: int, end: int) -> tuple[str, list[int], list[int]]:
    """One word of `text[start:end]` folded, with the original span of each output character:
    separators inside it (initials' periods, a line-break hyphen) and invisibles dropped, each
    base character folded with the combining marks after it (NFKC may compose them)."""
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    index = start
    while index < end:
        cluster_end = index + 1
        while cluster_end < end and unicodedata.combining(text[cluster_end]):
            cluster_end += 1
        folded = _fold_cluster(text[index:cluster_end])
        out.append(folded)
        starts.extend([index] * len(folded))
        ends.extend([cluster_end] * len(folded))
        index = cluster_end
    return "".join(out), starts, ends


def _fold_cluster(cluster: str) -> str:
    if cluster[0] in _INVISIBLE_SET or not (
        cluster[0].isalnum() or unicodedata.combining(cluster[0])
    ):
        return ""
    if cluster.isascii():
        return cluster.lower()
    folded = unicodedata.normalize("NFKC", cluster).casefold()
    decomposed = unicodedata.normalize("NFKD", folded)
    return "".join(c for c in decomposed if c.isalnum() and not unicodedata.combining(c))

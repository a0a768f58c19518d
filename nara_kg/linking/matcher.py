"""Every surface form of every authority found in a text at once (Aho-Corasick, `pyahocorasick`).

One automaton holds all normalized surface forms, each padded with a space on both sides, and
scans the normalized text padded the same way: since normalized text is words joined by single
spaces, a hit always starts and ends at word boundaries, never inside a longer word. Where hits
overlap, the longest wins (then the leftmost); shorter forms inside it are not reported. One form
may belong to several authorities: a `Match` carries all of them as candidates.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import ahocorasick

from nara_kg.linking.normalize import NormalizedText, normalize


@dataclass(frozen=True, slots=True)
class Match:
    """One occurrence of a surface form in the original text."""

    #: Original character offsets [start, end) and the original text there.
    start: int
    end: int
    surface: str
    #: The normalized form that matched, and the naIds of the authorities that have it.
    form: str
    candidates: tuple[int, ...]


class SurfaceMatcher:
    """Finds surface forms in text; built once from {normalized form: authority naIds}."""

    def __init__(self, forms: Mapping[str, Iterable[int]]) -> None:
        self._forms: list[str] = []
        self._candidates: list[tuple[int, ...]] = []
        self._automaton = ahocorasick.Automaton(ahocorasick.STORE_ANY, ahocorasick.KEY_STRING)
        for form, na_ids in sorted(forms.items()):
            candidates = tuple(sorted(set(na_ids)))
            if not form or not candidates:
                continue
            index = len(self._forms)
            self._forms.append(form)
            self._candidates.append(candidates)
            self._automaton.add_word(f" {form} ", (len(form) + 2, index))
        if self._forms:
            self._automaton.make_automaton()

    def __len__(self) -> int:
        return len(self._forms)

    def candidates(self, form: str) -> tuple[int, ...]:
        """The authorities that have this normalized form (empty if none)."""
        found = self._automaton.get(f" {form} ", None) if self._forms else None
        return self._candidates[found[1]] if found is not None else ()

    def fingerprint(self) -> str:
        """A hash of every form and its candidates: changes when the authority file's forms do."""
        digest = hashlib.sha256()
        for form, candidates in zip(self._forms, self._candidates, strict=True):
            digest.update(f"{form}\t{','.join(map(str, candidates))}\n".encode())
        return digest.hexdigest()

    def find(self, text: str, normalized: NormalizedText | None = None) -> list[Match]:
        """The non-overlapping occurrences in `text`, in text order. `normalized` is
        `normalize(text)` where the caller has it already (the mention index needs it too)."""
        if not self._forms or not text:
            return []
        if normalized is None:
            normalized = normalize(text)
        if not normalized.text:
            return []
        hits: list[tuple[int, int, int]] = []  # (start, end, form index) in normalized text
        for last, (length, index) in self._automaton.iter(f" {normalized.text} "):
            # Padded text index `last` is the closing space; its inner words end before it.
            start = last - length + 1
            hits.append((start, last - 1, index))
        matches: list[Match] = []
        for start, end, index in _longest_first(hits):
            original_start, original_end = normalized.original_span(start, end)
            matches.append(
                Match(
                    original_start,
                    original_end,
                    text[original_start:original_end],
                    self._forms[index],
                    self._candidates[index],
                )
            )
        return matches


def _longest_first(hits: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """The hits that survive overlap resolution (longest, then leftmost, wins), in text order."""
    taken: list[tuple[int, int, int]] = []
    for hit in sorted(hits, key=lambda h: (h[0] - h[1], h[0])):
        start, end, _ = hit
        if all(end <= s or start >= e for s, e, _ in taken):
            taken.append(hit)
    return sorted(taken)

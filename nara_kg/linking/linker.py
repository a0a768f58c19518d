"""Link chunk text to the authority file: find the surface forms, settle the shared ones, count.

`EntityLinker.from_authorities` derives every authority's surface forms and builds the matcher
once; `link_chunks` runs it over chunks and returns one `Mention` per (chunk, authority) and one
`AmbiguousSurface` per (chunk, form) that nothing decided. An authority's own chunks (its
biography naming itself) give no mention of it.

Speed: about 3,000 chunks of ~1,000 characters a second (0.2 ms a chunk) on 2 shared CPU cores,
one process; `python -m benchmarks.linking` measures it (its docstring has the figures).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from nara_kg.linking.authorities import Authority
from nara_kg.linking.disambiguate import (
    AmbiguousSurface,
    Context,
    Decision,
    Mention,
    resolve,
)
from nara_kg.linking.matcher import Match, SurfaceMatcher
from nara_kg.linking.normalize import NormalizedText
from nara_kg.linking.surface_forms import surface_forms


@dataclass(frozen=True, slots=True)
class ChunkText:
    """One chunk and what linking may use about its record."""

    chunk_id: str
    text: str
    record_na_id: int
    #: naIds of the authorities the record cites (creators, subjects, ...), aliases allowed.
    record_authorities: frozenset[int] = frozenset()
    #: naIds of the authorities its ancestors cite.
    ancestor_authorities: frozenset[int] = frozenset()
    #: The record's dates in whole years (start, end); None where unknown.
    date_range: tuple[int | None, int | None] | None = None
    #: `normalize(text)`, where the caller has it already; normalized here otherwise.
    normalized: NormalizedText | None = field(default=None, compare=False, repr=False)


@dataclass(slots=True)
class LinkResult:
    """Mentions and unresolved ambiguous forms of a run of chunks."""

    mentions: list[Mention] = field(default_factory=list)
    ambiguous: list[AmbiguousSurface] = field(default_factory=list)
    chunks: int = 0
    chunks_with_mentions: int = 0

    def mentions_by_type(self) -> dict[str, int]:
        """Number of (chunk, authority) mentions per authority type."""
        return dict(Counter(m.authority_type for m in self.mentions))


class EntityLinker:
    """The authority file, its surface forms and the matcher over them (immutable once built)."""

    def __init__(
        self,
        authorities: Mapping[int, Authority],
        matcher: SurfaceMatcher,
        forms: Mapping[int, tuple[str, ...]] | None = None,
    ) -> None:
        self.authorities = authorities
        self.matcher = matcher
        #: Each authority's surface forms (those the matcher holds for it).
        self.forms: Mapping[int, tuple[str, ...]] = (
            forms
            if forms is not None
            else {na_id: tuple(surface_forms(a)) for na_id, a in authorities.items()}
        )
        self._canonical: dict[int, int] = {}
        # By naId, so that an alias two authorities claim goes to the same one whatever order
        # the authorities were read in (a change set's linker and a whole run's agree).
        for na_id in sorted(authorities):
            for alias in authorities[na_id].aliases:
                self._canonical.setdefault(alias, na_id)

    @classmethod
    def from_authorities(cls, authorities: Iterable[Authority]) -> EntityLinker:
        """Derive every authority's surface forms and build the matcher (the costly step)."""
        by_id: dict[int, Authority] = {}
        for authority in authorities:
            by_id.setdefault(authority.na_id, authority)
        forms: dict[str, list[int]] = {}
        by_authority: dict[int, tuple[str, ...]] = {}
        for authority in by_id.values():
            by_authority[authority.na_id] = tuple(surface_forms(authority))
            for form in by_authority[authority.na_id]:
                forms.setdefault(form, []).append(authority.na_id)
        return cls(by_id, SurfaceMatcher(forms), by_authority)

    def entry(self, na_id: int) -> str:
        """A digest of everything linking uses of one authority: its forms, its type (written
        on its mentions), its years (the date stage) and its aliases (the record context)."""
        authority = self.authorities[na_id]
        payload = [
            authority.authority_type,
            authority.start_year,
            authority.end_year,
            sorted(authority.aliases),
            list(self.forms.get(na_id, ())),
        ]
        return hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode()).hexdigest()

    def entries(self) -> Iterator[tuple[int, str]]:
        """(naId, :meth:`entry`) of every authority, by naId."""
        for na_id in sorted(self.authorities):
            yield na_id, self.entry(na_id)

    def canonical_map(self) -> list[tuple[int, int]]:
        """(alias naId, the authority it stands for), by alias."""
        return sorted(self._canonical.items())

    def fingerprint(self) -> str:
        """Changes exactly when what linking follows from does: a surface form gains or loses
        an authority, or an authority's type, years or aliases change."""
        digest = hashlib.sha256(self.matcher.fingerprint().encode())
        for na_id, entry in self.entries():
            digest.update(f"{na_id}:{entry}\n".encode())
        for alias, na_id in self.canonical_map():
            digest.update(f"{alias}>{na_id}\n".encode())
        return digest.hexdigest()

    def canonical(self, na_id: int) -> int:
        """The authority an alias naId (a former organization name's) stands for."""
        return self._canonical.get(na_id, na_id)

    def link(self, chunk: ChunkText) -> tuple[list[Mention], list[AmbiguousSurface]]:
        """The mentions and unresolved ambiguous forms of one chunk."""
        matches = self.matcher.find(chunk.text, chunk.normalized)
        if not matches:
            return [], []
        start, end = chunk.date_range or (None, None)
        context = Context(
            record_authorities=frozenset(
                {self.canonical(a) for a in chunk.record_authorities} | {chunk.record_na_id}
            ),
            ancestor_authorities=frozenset(self.canonical(a) for a in chunk.ancestor_authorities),
            co_mentioned=frozenset(m.candidates[0] for m in matches if len(m.candidates) == 1),
            start_year=start,
            end_year=end,
        )
        linked: dict[int, list[tuple[Match, Decision]]] = {}
        unresolved: dict[str, list[Match]] = {}
        for match in matches:
            decided = resolve(match.candidates, context, self.authorities)
            if decided is None:
                unresolved.setdefault(match.form, []).append(match)
            elif decided[0] != chunk.record_na_id:
                linked.setdefault(decided[0], []).append((match, decided[1]))
        mentions = [
            _mention(chunk.chunk_id, self.authorities[na_id], found)
            for na_id, found in linked.items()
        ]
        ambiguous = [
            AmbiguousSurface(found[0].surface, found[0].candidates, chunk.chunk_id, len(found))
            for found in unresolved.values()
        ]
        return mentions, ambiguous


def link_chunks(chunks: Iterable[ChunkText], linker: EntityLinker) -> LinkResult:
    """Link every chunk; mentions in chunk order, then text order of first occurrence."""
    result = LinkResult()
    for chunk in chunks:
        mentions, ambiguous = linker.link(chunk)
        result.chunks += 1
        result.chunks_with_mentions += bool(mentions)
        result.mentions.extend(mentions)
        result.ambiguous.extend(ambiguous)
    return result


def _mention(chunk_id: str, authority: Authority, found: list[tuple[Match, Decision]]) -> Mention:
    surfaces = Counter(match.surface for match, _ in found)
    # The most used spelling; on a tie, the one met first (Counter keeps insertion order).
    surface = max(surfaces, key=lambda s: surfaces[s])
    return Mention(
        chunk_id=chunk_id,
        authority_na_id=authority.na_id,
        authority_type=authority.authority_type,
        surface=surface,
        count=len(found),
        spans=tuple((match.start, match.end) for match, _ in found),
        decided_by=found[0][1].value,
    )

"""Extracted entities resolved against the authority file, else kept as new entities.

Three steps, the first that finds an authority of a compatible type wins:

1. exact: the name equals an authority's heading or one of its variant names, as written;
2. normalized: the name's normalized form (:func:`nara_kg.linking.normalize.normalize_form`) is
   one of the linker's surface forms (inverted person names, organizations without their
   parentheticals, ...), and that form belongs to exactly one authority of the type;
3. embedding: the cosine similarity of the name's vector to an authority heading's is at least
   `threshold` (default :data:`EMBEDDING_THRESHOLD`), the best heading of a compatible type
   taken. Heading vectors are computed once per :class:`EntityResolver` (once per run).

An entity none of these resolve becomes a new entity keyed by (normalized name, type).
Pure: the embedding is a callable (texts -> L2-normalized vectors), e.g. `Embedder.encode`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

import numpy as np

from nara_kg.linking.authorities import Authority
from nara_kg.linking.normalize import normalize_form
from nara_kg.linking.surface_forms import surface_forms
from nara_kg.model.schema import AuthorityType

#: Least cosine similarity of name and heading for step 3. High on purpose: two different people
#: with one surname are close in a sentence-embedding space; a wrong link is worse than a new
#: entity (which the authority file can still absorb on a later run).
EMBEDDING_THRESHOLD: Final = 0.9

#: Extracted entity type -> the authority types it may resolve to.
COMPATIBLE_TYPES: Final[dict[str, frozenset[str]]] = {
    "person": frozenset({AuthorityType.PERSON.value}),
    "organization": frozenset({AuthorityType.ORGANIZATION.value}),
    "geo": frozenset({AuthorityType.GEOGRAPHIC_PLACE_NAME.value}),
    "event": frozenset({AuthorityType.TOPICAL_SUBJECT.value}),
    "topic": frozenset(
        {AuthorityType.TOPICAL_SUBJECT.value, AuthorityType.SPECIFIC_RECORDS_TYPE.value}
    ),
}

Encode = Callable[[list[str]], np.ndarray]


class Step(StrEnum):
    EXACT = "exact"
    NORMALIZED = "normalized"
    EMBEDDING = "embedding"
    NEW = "new"


@dataclass(frozen=True, slots=True)
class Resolution:
    """Where one extracted (name, type) went: an authority's naId, or a new entity's key."""

    name: str
    type: str
    step: Step
    authority_na_id: int | None = None
    similarity: float | None = None

    @property
    def entity_id(self) -> str:
        """The new entity's key (`type:normalized name`); also set for resolved ones."""
        return f"{self.type}:{normalize_form(self.name)}"


class EntityResolver:
    """The authority file's names, indexed for the three steps."""

    def __init__(
        self,
        authorities: Iterable[Authority],
        encode: Encode | None = None,
        *,
        threshold: float = EMBEDDING_THRESHOLD,
    ) -> None:
        self.authorities = {a.na_id: a for a in authorities}
        self.threshold = threshold
        self._encode = encode
        self._exact: dict[str, set[int]] = {}
        self._normalized: dict[str, set[int]] = {}
        for authority in self.authorities.values():
            for name in (authority.heading, *authority.variants):
                self._exact.setdefault(name.strip(), set()).add(authority.na_id)
            for form in surface_forms(authority):
                self._normalized.setdefault(form, set()).add(authority.na_id)
        self._heading_ids: list[int] = []
        self._heading_vectors: np.ndarray | None = None

    def _unique(self, candidates: set[int] | None, entity_type: str) -> int | None:
        allowed = COMPATIBLE_TYPES.get(entity_type, frozenset())
        found = sorted(
            na_id for na_id in candidates or () if self.authorities[na_id].authority_type in allowed
        )
        return found[0] if len(found) == 1 else None

    def _headings(self) -> tuple[list[int], np.ndarray]:
        if self._heading_vectors is None:
            assert self._encode is not None
            self._heading_ids = sorted(self.authorities)
            headings = [self.authorities[na_id].heading for na_id in self._heading_ids]
            self._heading_vectors = (
                np.asarray(self._encode(headings), dtype=np.float32)
                if headings
                else np.zeros((0, 1), dtype=np.float32)
            )
        return self._heading_ids, self._heading_vectors

    def resolve(self, entities: Sequence[tuple[str, str]]) -> list[Resolution]:
        """Each (name, type), resolved; names left after steps 1-2 are embedded in one batch."""
        resolved: list[Resolution | None] = []
        pending: list[int] = []
        for index, (name, entity_type) in enumerate(entities):
            exact = self._unique(self._exact.get(name.strip()), entity_type)
            if exact is not None:
                resolved.append(Resolution(name, entity_type, Step.EXACT, exact))
                continue
            normalized = self._unique(self._normalized.get(normalize_form(name)), entity_type)
            if normalized is not None:
                resolved.append(Resolution(name, entity_type, Step.NORMALIZED, normalized))
                continue
            resolved.append(None)
            pending.append(index)
        if pending and self._encode is not None and self.authorities:
            ids, headings = self._headings()
            names = np.asarray(self._encode([entities[i][0] for i in pending]), dtype=np.float32)
            scores = names @ headings.T
            for row, index in enumerate(pending):
                name, entity_type = entities[index]
                allowed = COMPATIBLE_TYPES.get(entity_type, frozenset())
                best, best_score = None, self.threshold
                for column in np.argsort(-scores[row]):
                    score = float(scores[row, column])
                    if score < best_score:
                        break
                    if self.authorities[ids[column]].authority_type in allowed:
                        best = ids[column]
                        best_score = score
                        break
                if best is not None:
                    resolved[index] = Resolution(
                        name, entity_type, Step.EMBEDDING, best, round(best_score, 4)
                    )
        return [
            found if found is not None else Resolution(name, entity_type, Step.NEW)
            for found, (name, entity_type) in zip(resolved, entities, strict=True)
        ]


def resolve_entities(
    entities: Sequence[tuple[str, str]],
    authorities: Iterable[Authority],
    encode: Encode | None = None,
    *,
    threshold: float = EMBEDDING_THRESHOLD,
) -> list[Resolution]:
    """One-shot :meth:`EntityResolver.resolve` (a run that resolves in batches keeps one
    resolver, so the headings are embedded once)."""
    return EntityResolver(authorities, encode, threshold=threshold).resolve(entities)

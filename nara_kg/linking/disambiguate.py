"""Which authority a shared surface form means in one chunk, and the typed results of linking.

A form that one authority has links to it. A form several authorities share goes through these
stages in order; each keeps the candidates it supports, and the first to leave exactly one
decides:

1. the record's own authorities (its creators, subjects and other references, and the record
   itself when it is an authority);
2. its ancestors' authorities (a file unit's series' creators, ...);
3. the authorities the same chunk names unambiguously ("Franklin Delano Roosevelt ... Franklin
   Roosevelt");
4. dates: a candidate whose known life or existence years do not overlap the record's date
   range is ruled out (one without known years cannot be ruled out).

A stage that supports none of the candidates leaves them all; one that supports several narrows
to those. If more than one is left at the end, nothing is linked: the form is reported as an
`AmbiguousSurface` with its candidates, never guessed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from nara_kg.linking.authorities import Authority


class Decision(StrEnum):
    """What settled a match's authority."""

    UNIQUE = "unique"
    RECORD = "record"
    ANCESTORS = "ancestors"
    CO_MENTION = "co_mention"
    DATES = "dates"


@dataclass(frozen=True, slots=True)
class Context:
    """What is known about the chunk's record, authority naIds already resolved from aliases."""

    record_authorities: frozenset[int] = frozenset()
    ancestor_authorities: frozenset[int] = frozenset()
    co_mentioned: frozenset[int] = frozenset()
    #: The record's date range in whole years (None: unknown or open).
    start_year: int | None = None
    end_year: int | None = None


@dataclass(frozen=True, slots=True)
class Mention:
    """An authority named in a chunk: how often, and the surface text used most."""

    chunk_id: str
    authority_na_id: int
    authority_type: str
    surface: str
    count: int
    #: Original character offsets [start, end) of each occurrence, in text order.
    spans: tuple[tuple[int, int], ...] = ()
    #: How the first occurrence was settled (`Decision` value).
    decided_by: str = Decision.UNIQUE.value


@dataclass(frozen=True, slots=True)
class AmbiguousSurface:
    """A surface form left unlinked in a chunk because nothing decided between its candidates."""

    surface: str
    candidates: tuple[int, ...]
    chunk_id: str
    count: int = 1


def resolve(
    candidates: tuple[int, ...], context: Context, authorities: Mapping[int, Authority]
) -> tuple[int, Decision] | None:
    """The one authority these candidates mean in this context and what decided it, or None."""
    if len(candidates) == 1:
        return candidates[0], Decision.UNIQUE
    remaining = candidates
    stages: tuple[tuple[Decision, Callable[[int], bool]], ...] = (
        (Decision.RECORD, context.record_authorities.__contains__),
        (Decision.ANCESTORS, context.ancestor_authorities.__contains__),
        (Decision.CO_MENTION, context.co_mentioned.__contains__),
        (Decision.DATES, lambda na_id: _date_fits(authorities.get(na_id), context)),
    )
    for decision, supports in stages:
        kept = tuple(c for c in remaining if supports(c))
        if len(kept) == 1:
            return kept[0], decision
        if kept:
            remaining = kept
    return None


def _date_fits(authority: Authority | None, context: Context) -> bool:
    if context.start_year is None and context.end_year is None:
        return True  # the record's dates are unknown: no candidate is ruled out
    if authority is None or not authority.has_dates:
        return True
    return authority.fits(context.start_year, context.end_year)

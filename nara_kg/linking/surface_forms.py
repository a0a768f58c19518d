"""The surface forms of an authority: the ways running text may name it, normalized.

From the heading and each variant name, by type:

* person: the name as written, inverted and direct ("Roosevelt, Franklin D." and "Franklin D.
  Roosevelt"), with the fuller form of the name ("Roosevelt, Franklin D. (Franklin Delano),
  1882-1945" also gives "Franklin Delano Roosevelt"), without middle initials ("Franklin
  Roosevelt"), with and without a suffix ("Jr."); dates are dropped. A surname alone is never a
  form (it names too many people).
* organization: dates and parenthetical qualifiers dropped, the whole hierarchy ("Department of
  the Interior. War Relocation Authority") and its last unit ("War Relocation Authority"); the
  variants include the organization's name history.
* geographic place: also without its parenthetical qualifier ("Springfield (Ill.)" ->
  "Springfield"); two places that share the bare name are then ambiguous, which the
  disambiguation settles or reports.
* topical subject, specific records type: heading and useFor as written; a parenthetical is a
  sense qualifier ("Mercury (Planet)") and is kept.

A form is linked only if it is specific enough (`is_specific`): at least `MIN_CHARS` letters or
digits; not only numbers; a one-word form not a common word (`common_words.COMMON_WORDS`); a
longer form not made only of generic words and numbers (`common_words.GENERIC_PHRASE_WORDS`:
"Office of the Secretary").
"""

from __future__ import annotations

import re
from typing import Final

from nara_kg.linking.authorities import (
    GEOGRAPHIC_PLACE,
    ORGANIZATION,
    ORGANIZATION_DATES,
    PERSON,
    PERSON_DATES,
    Authority,
)
from nara_kg.linking.common_words import COMMON_WORDS, GENERIC_PHRASE_WORDS
from nara_kg.linking.normalize import normalize_form

#: The fewest letters and digits a linked form has (spaces not counted): "Ohio" yes, "FBI" no.
MIN_CHARS: Final = 4

_PARENTHETICAL: Final = re.compile(r"\s*\(([^()]*)\)")
_SUFFIX: Final = re.compile(r"^(?:jr|sr|ii|iii|iv|v|esq)\.?$", re.IGNORECASE)
#: Where an organization heading's hierarchy splits: a period after a word that ends in a
#: lower-case letter, before a capital ("Interior. War", "War. Office"), but not after an
#: initial ("U.S. Army").
_UNIT_BREAK: Final = re.compile(r"(?<=[A-Za-z][a-z])\.\s+(?=[A-Z])")
_INITIAL: Final = re.compile(r"^\w\.?$")
_PROPER_WORDS: Final = re.compile(r"^[A-Z][\w'.-]*(?:\s+[A-Z][\w'.-]*)*$")


def surface_forms(authority: Authority) -> list[str]:
    """The authority's normalized, specific surface forms, unique, heading's first."""
    forms: dict[str, None] = {}
    for name in (authority.heading, *authority.variants):
        for form in name_forms(name, authority.authority_type):
            normalized = normalize_form(form)
            if is_specific(normalized):
                forms.setdefault(normalized)
    return list(forms)


def name_forms(name: str, authority_type: str) -> list[str]:
    """The spellings one name of an authority of this type may take in text (not normalized,
    not filtered)."""
    if authority_type == PERSON:
        return person_forms(name)
    if authority_type == ORGANIZATION:
        return organization_forms(name)
    if authority_type == GEOGRAPHIC_PLACE:
        return _unique([name, _drop_parentheticals(name)])
    return [name]


def is_specific(normalized: str) -> bool:
    """Whether a normalized form names something specific enough to link (module docstring)."""
    words = normalized.split()
    if sum(len(w) for w in words) < MIN_CHARS or all(w.isdigit() for w in words):
        return False
    if len(words) == 1:
        return words[0] not in COMMON_WORDS
    return not all(w.isdigit() or w in GENERIC_PHRASE_WORDS for w in words)


def person_forms(name: str) -> list[str]:
    """ "Roosevelt, Franklin D. (Franklin Delano), 1882-1945" -> the name as written, "Roosevelt,
    Franklin D.", "Franklin D. Roosevelt", "Franklin Delano Roosevelt", "Franklin Roosevelt"."""
    undated = PERSON_DATES.sub("", name).strip()
    fuller: str | None = None
    for match in _PARENTHETICAL.finditer(undated):
        inner = match.group(1).strip()
        if fuller is None and _PROPER_WORDS.match(inner):
            fuller = inner
    plain = _drop_parentheticals(undated)
    forms = [name, undated, plain]
    parts = [p.strip() for p in plain.split(",")]
    if len(parts) < 2 or not parts[0] or not parts[1]:
        return _unique(forms)
    surname, given = parts[0], parts[1]
    suffixes = [p for p in parts[2:] if _SUFFIX.match(p)]
    suffix = f" {suffixes[0]}" if suffixes else ""
    forms.append(f"{surname}, {given}")
    givens = [given]
    if fuller is not None:
        givens.append(fuller)
    without_initials = " ".join(w for w in given.split() if not _INITIAL.match(w))
    if without_initials:
        givens.append(without_initials)
    for first in givens:
        forms.append(f"{first} {surname}")
        if suffix:
            forms.append(f"{first} {surname}{suffix}")
    return _unique(forms)


def organization_forms(name: str) -> list[str]:
    """ "Department of the Interior. War Relocation Authority. 2/16/1944-6/30/1946" -> the name as
    written, "Department of the Interior. War Relocation Authority", "War Relocation
    Authority"."""
    undated = ORGANIZATION_DATES.sub("", name).strip()
    plain = _drop_parentheticals(undated).rstrip(". ")
    forms = [name, undated, plain]
    units = [u.strip() for u in _UNIT_BREAK.split(plain) if u.strip()]
    if len(units) > 1:
        forms.append(units[-1])
    return _unique(forms)


def _drop_parentheticals(name: str) -> str:
    return re.sub(r"\s+", " ", _PARENTHETICAL.sub("", name)).strip(" ,")


def _unique(forms: list[str]) -> list[str]:
    return list(dict.fromkeys(f for f in forms if f))

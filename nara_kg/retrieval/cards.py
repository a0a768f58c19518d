"""What a result card shows beside a record's title, so a reader can judge a record without
opening it: a short excerpt (the sentence that matched the question, else the start of the
description), the scans that are online, the access and use restriction status, and the
archive that holds the records (reference unit).

Pure functions over what the retrieval query already reads (`card` in graph/search.py's record
fields): search hits, ask's records and the record endpoint all shape their card here.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit

from nara_kg.model.schema import HEADER_BODY_SEPARATOR, Prop
from nara_kg.retrieval.terms import content_terms, overlap

#: Longest excerpt shown on a card (characters); longer sentences are cut at a word.
MAX_EXCERPT_CHARS: Final = 240
#: Links to digital objects listed per card (the count gives the total).
MAX_ONLINE_LINKS: Final = 12

#: File formats named by a reader's word for them, from the file's extension.
_FORMATS: Final = {
    "pdf": "PDF",
    "jpg": "JPEG",
    "jpeg": "JPEG",
    "tif": "TIFF",
    "tiff": "TIFF",
    "png": "PNG",
    "gif": "GIF",
    "mp3": "audio",
    "wav": "audio",
    "mp4": "video",
    "mov": "video",
    "txt": "text",
    "xml": "XML",
}
#: A sentence ends at . ! or ? before a space and a capital, digit or quote, but not after an
#: initial or a title ("Harold D. Whitcombe", "Henry Morgenthau, Jr. Papers"), or at a line break.
_SENTENCE_END: Final = re.compile(
    r"(?<=[.!?])(?<!\b[A-Z]\.)(?<!\bMr\.)(?<!\bDr\.)(?<!\bJr\.)(?<!\bSr\.)(?<!\bSt\.)"
    r"(?<!\bMrs\.)(?<!\bGen\.)(?<!\bCol\.)(?<!\bLt\.)\s+(?=[A-Z0-9\"'(])|\n+"
)


@dataclass(frozen=True, slots=True)
class OnlineObject:
    """A digital object of the record (a scan, a PDF) as a link."""

    url: str
    #: "PDF", "JPEG", ... from the file's extension ("file" when it has none).
    format: str


@dataclass(frozen=True, slots=True)
class CardFacts:
    """The catalog facts a card shows; absent facts are None (or empty)."""

    #: The first MAX_ONLINE_LINKS digital objects, in catalog order.
    online: tuple[OnlineObject, ...] = ()
    #: How many digital objects the record has.
    online_count: int = 0
    #: Objects per format, most first: {"PDF": 3, "JPEG": 1}.
    online_formats: dict[str, int] = field(default_factory=dict)
    #: "Unrestricted", "Restricted - Partly", ...
    access_restriction: str | None = None
    use_restriction: str | None = None
    #: The kinds of use restriction ("Copyright", ...).
    use_restrictions: tuple[str, ...] = ()
    #: The reference unit(s) holding the records ("Franklin D. Roosevelt Library").
    holding_archive: str | None = None


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    values = value if isinstance(value, list | tuple) else [value]
    return [str(v).strip() for v in values if isinstance(v, str) and v.strip()]


def _first(value: Any) -> str | None:
    strings = _strings(value)
    return strings[0] if strings else None


def file_format(url: str) -> str:
    """A reader's name for the file's format, from the extension of the URL's path."""
    path = urlsplit(url).path
    name = path.rsplit("/", 1)[-1]
    if "." not in name:
        return "file"
    extension = name.rsplit(".", 1)[1].lower()
    return _FORMATS.get(extension, extension.upper() or "file")


def _web_url(url: str) -> bool:
    """Only http(s) links reach a card (catalog data is untrusted: no `javascript:`)."""
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def card_facts(properties: Mapping[str, Any] | None) -> CardFacts:
    """The card's facts from the record's node properties (those the retrieval query reads)."""
    if not properties:
        return CardFacts()
    urls = [url for url in _strings(properties.get(Prop.DIGITAL_OBJECT_URLS)) if _web_url(url)]
    objects = [OnlineObject(url=url, format=file_format(url)) for url in urls]
    formats = Counter(obj.format for obj in objects)
    archives = list(dict.fromkeys(_strings(properties.get(Prop.REFERENCE_UNITS))))
    return CardFacts(
        online=tuple(objects[:MAX_ONLINE_LINKS]),
        online_count=len(objects),
        online_formats=dict(formats.most_common()),
        access_restriction=_first(properties.get(Prop.ACCESS_RESTRICTION)),
        use_restriction=_first(properties.get(Prop.USE_RESTRICTION)),
        use_restrictions=tuple(
            dict.fromkeys(_strings(properties.get(Prop.SPECIFIC_USE_RESTRICTIONS)))
        ),
        holding_archive="; ".join(archives) or None,
    )


def body_text(chunk_texts: Iterable[str | None]) -> str:
    """A record's body from its chunks in order, without the search header each carries (a
    chunk without a body, the header alone, gives nothing)."""
    pieces = []
    for text in chunk_texts:
        if text and HEADER_BODY_SEPARATOR in text:
            pieces.append(text.split(HEADER_BODY_SEPARATOR, 1)[1].strip())
    return "\n".join(piece for piece in pieces if piece)


def sentences(text: str) -> list[str]:
    """The text's sentences, whitespace collapsed."""
    out = []
    for piece in _SENTENCE_END.split(text):
        piece = " ".join(piece.split())
        if piece:
            out.append(piece)
    return out


def _shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:") + "…"


def excerpt(query: str, body: str, *, limit: int = MAX_EXCERPT_CHARS) -> str | None:
    """The body's sentence sharing the most of the query's content words (the first such in
    reading order), else the body's start; None when the record has no body text."""
    units = sentences(body)
    if not units:
        return None
    terms = content_terms(query)
    best, best_score = None, 0.0
    for sentence in units:
        score, _ = overlap(terms, sentence)
        if score > best_score:
            best, best_score = sentence, score
    chosen = best if best is not None else " ".join(units)
    # A retrieved window can start inside a sentence: say so rather than pass it off as whole.
    if chosen[0].islower():
        chosen = "…" + chosen
    return _shorten(chosen, limit)

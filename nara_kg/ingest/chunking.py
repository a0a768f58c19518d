"""Body text -> chunks that each fit the embedding model, with a search header on every chunk.

The seed split text with LangChain's recursive character splitter (500 characters, no overlap,
separators ``\\n\\n``, ``\\n``, ``.``, ``?``, ``!``, space). We keep that exact splitter for
fidelity, and add what the seed lacked:

* a short header (title, type, parent title, dates) in front of every chunk, so the many
  title-only records are searchable at all;
* a token-aware second pass: a chunk whose header + text would exceed the model's maximum
  sequence length is split again by tokens, because the model would otherwise silently drop the
  tail (OCR text can have far more tokens per character than prose).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from langchain_text_splitters import RecursiveCharacterTextSplitter

from nara_kg.model.schema import HEADER_BODY_SEPARATOR, chunk_id

SEED_CHUNK_SIZE = 500
SEED_CHUNK_OVERLAP = 0
#: The seed's separators, plus "" as a last resort so a run of text with no separator at all
#: (a long URL, OCR noise) can still be cut instead of yielding an oversized chunk.
SEED_SEPARATORS: tuple[str, ...] = ("\n\n", "\n", ".", "?", "!", " ", "")

HEADER_TITLE_MAX_CHARS = 200
HEADER_PARENT_MAX_CHARS = 120
#: The share of the model's window a header may take: a title of punctuation or OCR noise can
#: tokenize to more than the whole window at 200 characters, so the header is clipped by tokens
#: too, and every chunk keeps at least half its window for text.
HEADER_MAX_SHARE = 0.5

#: Counts the tokens of a text as the model sees it, special tokens included.
TokenCounter = Callable[[str], int]
#: Token counts of many texts in one call, in their order.
TokensCounter = Callable[[list[str]], list[int]]


@dataclass(frozen=True, slots=True)
class HeaderFields:
    title: str | None
    node_type: str
    parent_title: str | None = None
    date_range: str | None = None


@dataclass(frozen=True, slots=True)
class Chunk:
    na_id: int
    seq: int
    chunk_id: str
    #: Exactly the text that is embedded and stored on the node: header + body piece.
    text: str
    text_hash: str
    #: `count_tokens(text)`, counted once while fitting the text to the model.
    tokens: int


def _clip(value: str, limit: int) -> str:
    value = " ".join(value.split())
    return value if len(value) <= limit else value[: limit - 1].rstrip() + "…"


def build_header(
    fields: HeaderFields,
    *,
    title_chars: int = HEADER_TITLE_MAX_CHARS,
    parent_chars: int = HEADER_PARENT_MAX_CHARS,
) -> str:
    """A few short lines that name the record: what a searcher would type to find it."""
    lines = []
    if fields.title and title_chars > 0:
        lines.append(f"Title: {_clip(fields.title, title_chars)}")
    lines.append(f"Type: {fields.node_type}")
    if fields.parent_title and parent_chars > 0:
        lines.append(f"Part of: {_clip(fields.parent_title, parent_chars)}")
    if fields.date_range:
        lines.append(f"Dates: {fields.date_range}")
    return "\n".join(lines)


def header_token_budget(max_tokens: int) -> int:
    return int(max_tokens * HEADER_MAX_SHARE)


def fit_header(fields: HeaderFields, budget: int, count: TokenCounter, suffix: str = "") -> str:
    """The header clipped until ``count(header + suffix) <= budget``: the title and parent
    title are cut to the longest character length that fits (found by bisection, so a
    header is clipped the same way every time), the parent title going first. Only called
    for the rare header already over budget."""

    def fits(title_chars: int, parent_chars: int) -> bool:
        head = build_header(fields, title_chars=title_chars, parent_chars=parent_chars)
        return count(head + suffix) <= budget

    def longest(fitting: Callable[[int], bool], most: int) -> int:
        low, high = 0, most  # fitting(0) is known to hold
        while low < high:
            middle = (low + high + 1) // 2
            if fitting(middle):
                low = middle
            else:
                high = middle - 1
        return low

    parent = HEADER_PARENT_MAX_CHARS
    if not fits(HEADER_TITLE_MAX_CHARS, 0):
        parent = 0
    elif not fits(HEADER_TITLE_MAX_CHARS, parent):
        parent = longest(lambda n: fits(HEADER_TITLE_MAX_CHARS, n), parent)
    title = HEADER_TITLE_MAX_CHARS
    if not fits(title, parent):
        title = longest(lambda n: fits(n, parent), title)
    return build_header(fields, title_chars=title, parent_chars=parent)


@lru_cache(maxsize=4)
def _seed_splitter(chunk_size: int, chunk_overlap: int) -> RecursiveCharacterTextSplitter:
    return RecursiveCharacterTextSplitter(
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
        separators=list(SEED_SEPARATORS),
        keep_separator="end",
        strip_whitespace=True,
    )


def split_body(
    body: str, *, chunk_size: int = SEED_CHUNK_SIZE, chunk_overlap: int = SEED_CHUNK_OVERLAP
) -> list[str]:
    """The seed's character split: pieces of at most `chunk_size` characters."""
    return [piece for piece in _seed_splitter(chunk_size, chunk_overlap).split_text(body) if piece]


def _split_to_token_budget(piece: str, budget: int, count: TokenCounter) -> list[str]:
    """Split `piece` so that each part has at most `budget` tokens (specials excluded)."""
    specials = count("")

    def content_tokens(text: str) -> int:
        return count(text) - specials

    splitter = RecursiveCharacterTextSplitter(
        chunk_size=budget,
        chunk_overlap=0,
        separators=list(SEED_SEPARATORS),
        keep_separator="end",
        length_function=content_tokens,
    )
    parts = [part for part in splitter.split_text(piece) if part]
    # The recursive splitter can still leave a part over budget when one token spans several
    # characters it cannot cut between; halve such parts until they fit.
    fitted: list[str] = []
    stack = list(reversed(parts))
    while stack:
        part = stack.pop()
        if content_tokens(part) <= budget or len(part) <= 1:
            fitted.append(part)
        else:
            middle = len(part) // 2
            stack.extend([part[middle:], part[:middle]])
    return fitted


def _fit(
    head: str, piece: str, budget: int, max_tokens: int, count: TokenCounter
) -> list[tuple[str, int]]:
    """`head` + piece, split as often as needed so that every text fits `max_tokens`; each
    text comes with its token count."""
    candidate = head + HEADER_BODY_SEPARATOR + piece
    tokens = count(candidate)
    if tokens <= max_tokens:
        return [(candidate, tokens)]
    texts: list[tuple[str, int]] = []
    stack = list(reversed(_split_to_token_budget(piece, budget, count)))
    while stack:
        part = stack.pop()
        candidate = head + HEADER_BODY_SEPARATOR + part
        tokens = count(candidate)
        if tokens <= max_tokens or len(part) <= 1:
            texts.append((candidate, tokens))
        else:
            # Tokens are not additive across the join; halve the rare part that tips over.
            middle = len(part) // 2
            stack.extend([part[middle:], part[:middle]])
    return texts


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _head_and_pieces(
    body: str | None, header: HeaderFields, chunk_size: int
) -> tuple[str, Sequence[str]]:
    return build_header(header), split_body(body, chunk_size=chunk_size) if body else []


def texts_counted_first(
    body: str | None, header: HeaderFields, *, chunk_size: int = SEED_CHUNK_SIZE
) -> list[str]:
    """The texts whose tokens `chunk_record` counts before it splits anything (the header, or
    the header before the body and before each piece), so that a caller can count a whole
    file's in one batch and hand them in as a lookup."""
    head, pieces = _head_and_pieces(body, header, chunk_size)
    if not pieces:
        return [head]
    return [head + HEADER_BODY_SEPARATOR, *(head + HEADER_BODY_SEPARATOR + p for p in pieces)]


def chunk_record(
    na_id: int,
    body: str | None,
    header: HeaderFields,
    *,
    count_tokens: TokenCounter,
    max_tokens: int,
    chunk_size: int = SEED_CHUNK_SIZE,
) -> list[Chunk]:
    """All chunks of one record; a record without body text still yields one (header-only) chunk.
    A header over half the window is clipped by tokens (`fit_header`).

    Every returned chunk satisfies ``count_tokens(chunk.text) <= max_tokens``.
    """
    head, pieces = _head_and_pieces(body, header, chunk_size)
    texts: list[tuple[str, int]]
    limit = header_token_budget(max_tokens)
    suffix = HEADER_BODY_SEPARATOR if pieces else ""
    head_tokens = count_tokens(head + suffix)
    if head_tokens > limit:
        head = fit_header(header, limit, count_tokens, suffix)
        head_tokens = count_tokens(head + suffix)
    if not pieces:
        texts = [(head, head_tokens)]
    else:
        budget = max_tokens - head_tokens
        if budget < 16:  # only with a max_tokens too small for even a clipped header
            raise ValueError(
                f"header of record {na_id} leaves {budget} tokens of {max_tokens} for text"
            )
        texts = []
        for piece in pieces:
            texts.extend(_fit(head, piece, budget, max_tokens, count_tokens))
    return [
        Chunk(
            na_id=na_id,
            seq=seq,
            chunk_id=chunk_id(na_id, seq),
            text=text,
            text_hash=text_hash(text),
            tokens=tokens,
        )
        for seq, (text, tokens) in enumerate(texts)
    ]

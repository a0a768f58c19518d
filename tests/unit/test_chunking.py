from __future__ import annotations

import pytest

from nara_kg.ingest.chunking import (
    SEED_CHUNK_SIZE,
    HeaderFields,
    build_header,
    chunk_record,
    split_body,
)


def count_words(text: str) -> int:
    """A stand-in tokenizer: one token per whitespace word, plus two special tokens."""
    return len(text.split()) + 2


def count_chars(text: str) -> int:
    """A hostile tokenizer: one token per character (OCR noise behaves like this)."""
    return len(text) + 2


HEADER = HeaderFields(
    title="Diaries of a Treasury Secretary",
    node_type="series",
    parent_title="Papers of a Secretary",
    date_range="1933-1945",
)


def test_header_names_title_type_parent_and_dates() -> None:
    assert build_header(HEADER) == (
        "Title: Diaries of a Treasury Secretary\nType: series\n"
        "Part of: Papers of a Secretary\nDates: 1933-1945"
    )


def test_header_skips_missing_fields_and_clips_long_titles() -> None:
    header = build_header(HeaderFields(title="x" * 500, node_type="fileUnit"))
    title_line, type_line = header.split("\n")
    assert len(title_line) == len("Title: ") + 200
    assert title_line.endswith("…")
    assert type_line == "Type: fileUnit"


def test_title_only_record_gets_exactly_one_header_chunk() -> None:
    chunks = chunk_record(42, None, HEADER, count_tokens=count_words, max_tokens=256)
    assert [c.chunk_id for c in chunks] == ["42-0"]
    assert chunks[0].text == build_header(HEADER)
    assert chunks[0].tokens == count_words(chunks[0].text)
    assert chunks[0].seq == 0


def test_seed_split_respects_500_characters_and_separators() -> None:
    paragraphs = [f"Sentence number {i} is here." for i in range(60)]
    body = "\n\n".join(paragraphs)
    pieces = split_body(body)
    assert len(pieces) > 1
    assert all(len(p) <= SEED_CHUNK_SIZE for p in pieces)
    # Paragraph separators are preferred: no sentence is cut in the middle.
    assert all(p.endswith("here.") for p in pieces)


def test_chunks_carry_header_and_have_stable_ids_and_hashes() -> None:
    body = " ".join(f"word{i}" for i in range(400))
    first = chunk_record(7, body, HEADER, count_tokens=count_words, max_tokens=256)
    again = chunk_record(7, body, HEADER, count_tokens=count_words, max_tokens=256)
    assert [c.chunk_id for c in first] == [f"7-{i}" for i in range(len(first))]
    assert [c.text_hash for c in first] == [c.text_hash for c in again]
    assert all(c.text.startswith(build_header(HEADER) + "\n\n") for c in first)


def test_no_chunk_exceeds_the_token_limit_even_for_token_dense_text() -> None:
    body = "".join(chr(0x4E00 + (i % 500)) for i in range(3000))  # no separators at all
    max_tokens = 128
    chunks = chunk_record(9, body, HEADER, count_tokens=count_chars, max_tokens=max_tokens)
    assert len(chunks) > 1
    assert all(count_chars(c.text) <= max_tokens for c in chunks)
    # The count carried by each chunk is the count of its final text, not of a candidate.
    assert [c.tokens for c in chunks] == [count_chars(c.text) for c in chunks]
    # Nothing is lost: the bodies put together give the original text back. (The header, over
    # half of this small window in this tokenizer's counts, is clipped.)
    header = chunks[0].text.split("\n\n")[0] + "\n\n"
    assert count_chars(header) <= max_tokens // 2
    assert all(c.text.startswith(header) for c in chunks)
    assert "".join(c.text[len(header) :] for c in chunks) == body


def test_header_too_long_for_the_model_is_an_error() -> None:
    with pytest.raises(ValueError, match="leaves"):
        chunk_record(1, "some body", HEADER, count_tokens=count_chars, max_tokens=40)


def test_real_tokenizer_limit_holds(embedder) -> None:  # type: ignore[no-untyped-def]
    noisy = " ".join("Xq7#" + str(i) for i in range(2000))
    chunks = chunk_record(
        5, noisy, HEADER, count_tokens=embedder.count_tokens, max_tokens=embedder.max_tokens
    )
    assert embedder.max_tokens == 256
    assert max(embedder.count_tokens(c.text) for c in chunks) <= 256
    assert [c.tokens for c in chunks] == [embedder.count_tokens(c.text) for c in chunks]


def test_token_counts_match_the_models_tokenizer_untruncated(embedder) -> None:  # type: ignore[no-untyped-def]
    tokenizer = embedder._load().tokenizer
    texts = [
        "",
        "Letter from Douglas MacArthur, March 18, 1942",
        "Volume 544 A, 1861-1865; naId 710002885 é ü ß — 日本",
        " ".join(f"word{i}" for i in range(600)),  # far past the model's 256-token limit
    ]
    expected = [
        len(tokenizer(t, add_special_tokens=True, truncation=False)["input_ids"]) for t in texts
    ]
    assert [embedder.count_tokens(t) for t in texts] == expected
    assert embedder.count_tokens_many(texts) == expected
    assert embedder.max_tokens == embedder._load().max_seq_length
    assert expected[-1] > 256
    # Counting never changes how the model's own tokenizer truncates when it encodes.
    assert len(tokenizer(texts[-1], truncation=True, max_length=256)["input_ids"]) == 256


def test_counting_and_the_token_limit_need_no_model_loaded() -> None:
    from nara_kg.embedding.encoder import Embedder

    fresh = Embedder()
    assert fresh.count_tokens("Volume 544 A, 1861-1865") > 2
    assert fresh.max_tokens == 256
    assert fresh._model is None

"""Digital objects with their OCR page text, and volunteers' transcriptions of letters."""

from __future__ import annotations

import random
from typing import Any

from nara_kg.demo.text import human_date, paragraph, wrap
from nara_kg.demo.world import Person, World


def digital_objects(
    world: World, na_id: int, count: int, ocr: tuple[str, str, str, dict[str, Any]] | None
) -> list[dict[str, Any]]:
    """PDF or JPG objects of a description; `ocr` gives the last one OCR text."""
    rng = world.rng
    objects = []
    pdf = rng.random() < 0.6
    for index in range(count):
        filename = f"md{index + 1:04d}.pdf" if pdf else f"img_{na_id}_{index + 1:03d}.jpg"
        obj: dict[str, Any] = {
            "objectFileSize": rng.randint(40_000, 24_000_000),
            "objectFilename": filename,
            "objectId": str(na_id + 1 + index),
            "objectType": "Portable Document File (PDF)" if pdf else "Image (JPG)",
            "objectUrl": f"https://example.org/nara-demo/media/{na_id}/{filename}",
        }
        if rng.random() < 0.04:
            del obj["objectType"]  # missing on some real entries
        if not pdf and rng.random() < 0.2:
            obj["objectDesignator"] = f"page {index + 1}"
            obj["objectDescription"] = "access scan"
        objects.append(obj)
    if ocr is not None and objects:
        # OCR sits on one object of the set, usually the last (as in the bulk export).
        objects[-1]["extractedText"] = ocr_text(rng, *ocr)
    return objects


def ocr_text(rng: random.Random, office: str, topic: str, place: str, date: dict[str, Any]) -> str:
    """OCR-like page text: letterhead, memo lines, hard-wrapped body, scanning noise."""
    pages = rng.choice((1, 1, 1, 2, 2, 3, 5, 8))
    out: list[str] = []
    for page in range(1, pages + 1):
        lines = [
            office.upper(),
            f"{place.upper()}",
            human_date(date),
            "",
            rng.choice(("MEMORANDUM FOR THE DIRECTOR", "MEMORANDUM", "TO ALL DISTRICT OFFICES")),
            f"SUBJECT: {topic} - {place}",
            "",
        ]
        for _ in range(rng.randint(2, 5)):
            lines.append(wrap(paragraph(rng, office, topic, place, rng.randint(2, 6)), 68))
            lines.append("")
        lines.append(f"Page {page} of {pages}")
        page_text = "\n".join(lines)
        out.append(noise(rng, page_text))
    return "\n\n".join(out)


def noise(rng: random.Random, text: str) -> str:
    """Characters a scanner gets wrong, applied sparsely."""
    chars = list(text)
    for _ in range(len(chars) // 120):
        position = rng.randrange(len(chars))
        current = chars[position]
        replacement = {"l": "1", "O": "0", "e": "c", "m": "rn", "i": "!", ",": "."}.get(current)
        if replacement is not None:
            chars[position] = replacement
        elif current == " ":
            chars[position] = rng.choice((" ", "  ", " | ", " ~ "))
    return "".join(chars)


def transcription_text(
    rng: random.Random,
    sender: Person,
    receiver: Person,
    topic: str,
    town: str,
    used: set[str] | None = None,
) -> str:
    """A volunteer's transcription of a letter (the export's `record_transcription`); `used`:
    see `text.sentence`."""
    salutation = "Madam" if receiver.female else "Sir"
    body = paragraph(rng, f"{town} office", topic, town, rng.randint(2, 5), used)
    return f"Dear {salutation}:\n\n{body}\n\nRespectfully yours,\n{sender.full}"

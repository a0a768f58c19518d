"""Example questions made from the loaded graph, for the chat page's first screen: a reader
starts from what the graph holds, not from topics it may not have."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any, Final

from neo4j import Driver

#: Questions offered, and how long one graph's are kept before they are read again.
MAX_EXAMPLES: Final = 4
CACHE_SECONDS: Final = 300.0
#: Longest title or heading put into a question (a longer one is cut at a word).
MAX_SUBJECT_CHARS: Final = 90
OVERVIEW_QUESTION: Final = "What are the main themes of these records?"
_LEVEL_NAMES: Final = {
    "recordGroup": "record group",
    "series": "series",
    "collection": "collection",
}

_cache: dict[tuple[int, str], tuple[float, list[str]]] = {}
_lock = threading.Lock()


def _subject(text: Any) -> str | None:
    value = " ".join(str(text or "").split())
    if not value:
        return None
    if len(value) > MAX_SUBJECT_CHARS:
        value = value[:MAX_SUBJECT_CHARS].rsplit(" ", 1)[0].rstrip(",;:")
    return value


def compose(
    containers: Sequence[Mapping[str, Any]],
    authorities: Sequence[Mapping[str, Any]],
    *,
    communities: bool,
) -> list[str]:
    """Questions from the largest containers (who created one, what another is about), the
    most linked authority (its records) and, with communities, the collection's themes."""
    questions: list[str] = []
    with_creator = [c for c in containers if c.get("hasCreator")]
    first = (with_creator or list(containers))[:1]
    for container in first:
        title = _subject(container.get("title"))
        if title:
            questions.append(f"Who created the {title}?")
    for authority in authorities[:1]:
        heading = _subject(authority.get("heading"))
        if heading:
            questions.append(f"Show me records about {heading}")
    for container in containers:
        if container in first:
            continue
        title = _subject(container.get("title"))
        if title:
            level = _LEVEL_NAMES.get(str(container.get("level")), "records")
            questions.append(f"What is the {level} {title} about?")
            break
    if communities:
        questions.append(OVERVIEW_QUESTION)
    return list(dict.fromkeys(questions))[:MAX_EXAMPLES]


def questions(driver: Driver, database: str) -> list[str]:
    """The loaded graph's example questions (read again every CACHE_SECONDS)."""
    from nara_kg.graph import examples as cypher

    key = (id(driver), database)
    now = time.monotonic()
    with _lock:
        cached = _cache.get(key)
        if cached is not None and now - cached[0] < CACHE_SECONDS:
            return list(cached[1])
    made = compose(
        cypher.containers(driver, database, 3),
        cypher.authorities(driver, database, 2),
        communities=cypher.has_communities(driver, database),
    )
    with _lock:
        _cache[key] = (now, made)
    return list(made)

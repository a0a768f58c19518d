"""Known-item questions generated from the export itself, for an evaluation that means
something where nobody has labelled questions (a real export carries none).

For a sample of the export's full records (deterministic by seed), the query is what someone
who knows the record would type into a search box: a handful of the title's words, lower case,
without punctuation or the words that carry no meaning ("the", "of", "records"); a record
whose title gives too few words is asked for by the first words of its description. The
expected answer is that record (and any other record whose title gives the same query, so a
duplicate title does not count as a miss).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from nara_kg.model.tables import Col
from nara_kg.retrieval.evaluation import Question

#: Records sampled when none is said.
DEFAULT_SAMPLE = 50
DEFAULT_SEED = 7
#: Words a query keeps, at most and at least.
MAX_QUERY_WORDS = 8
MIN_QUERY_WORDS = 3
#: The `kind` of every generated question (reported apart by `metrics_by_kind`).
KNOWN_ITEM_KIND = "known_item"
#: Words a person leaves out of a search box, and the catalog's words every title shares.
STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "the",
        "to",
        "with",
        "about",
        "after",
        "before",
        "between",
        "during",
        "over",
        "under",
        "record",
        "records",
        "file",
        "files",
        "folder",
        "folders",
        "item",
        "items",
        "series",
    ]
)
_WORD = re.compile(r"[0-9A-Za-z\u00C0-\u024F][0-9A-Za-z\u00C0-\u024F'-]*")


@dataclass(frozen=True)
class KnownItemRecord:
    """What a known-item question is made from: a full record's id, title and description."""

    na_id: int
    title: str
    description: str = ""


def query_words(text: str) -> list[str]:
    """The words of `text` a user would type, in order, lower case, without repeats."""
    seen: set[str] = set()
    words: list[str] = []
    for match in _WORD.finditer(text or ""):
        word = match.group(0).strip("'-").lower()
        if len(word) < 2 or word in STOP_WORDS or word in seen:
            continue
        seen.add(word)
        words.append(word)
    return words


def known_item_query(record: KnownItemRecord) -> str | None:
    """The query for `record` (None when neither its title nor its description gives one)."""
    for text in (record.title, record.description):
        words = query_words(text)
        if len(words) >= MIN_QUERY_WORDS:
            return " ".join(words[:MAX_QUERY_WORDS])
    return None


def known_item_questions(
    records: Iterable[KnownItemRecord],
    *,
    sample: int = DEFAULT_SAMPLE,
    seed: int = DEFAULT_SEED,
) -> list[Question]:
    """Up to `sample` questions, one per sampled record that gives a query; the same records
    and seed always give the same questions."""
    by_id: dict[int, KnownItemRecord] = {}
    for record in records:
        by_id.setdefault(record.na_id, record)
    queries = {na_id: known_item_query(record) for na_id, record in sorted(by_id.items())}
    askable = [na_id for na_id, query in queries.items() if query]
    same_query: dict[str, list[int]] = {}
    for na_id in askable:
        same_query.setdefault(str(queries[na_id]), []).append(na_id)
    chosen = random.Random(seed).sample(askable, min(sample, len(askable)))
    return [
        Question(
            id=f"known-{na_id}",
            question=str(queries[na_id]),
            expected_naids=tuple(same_query[str(queries[na_id])]),
            mode="local",
            kind=KNOWN_ITEM_KIND,
        )
        for na_id in sorted(chosen)
    ]


def read_known_item_records(parts: Sequence[Path]) -> Iterator[KnownItemRecord]:
    """The full records (stubs left out) of the parsed Parquet parts."""
    import pyarrow.parquet as pq

    columns = [Col.NA_ID, Col.IS_STUB, Col.TITLE, Col.BODY_TEXT]
    for part in parts:
        table = pq.read_table(part, columns=columns)
        for row in table.to_pylist():
            if row[Col.IS_STUB]:
                continue
            yield KnownItemRecord(
                na_id=int(row[Col.NA_ID]),
                title=str(row[Col.TITLE] or ""),
                description=str(row[Col.BODY_TEXT] or "")[:400],
            )

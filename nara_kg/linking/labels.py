"""Linking measured against labels: which authorities a record's text names, as the demo
generator wrote them (`mention_labels.jsonl` beside its questions.jsonl).

One JSON line per labelled record: `{"naId": record, "mentions": [{"authority": naId, "surface":
text}, ...]}`; a record with an empty list is labelled as naming none. Scores are record-level
(record naId, authority naId) pairs, over the labelled records only: a pair found in a record
without a label line is neither right nor wrong.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

LABELS_FILE: Final = "mention_labels.jsonl"
MIN_PRECISION: Final = 0.95
MIN_RECALL: Final = 0.80


@dataclass(frozen=True, slots=True)
class LabelScore:
    records: int
    true_positives: int
    false_positives: int
    false_negatives: int
    #: A few wrong pairs of each kind, (record naId, authority naId), for people to look at.
    false_positive_sample: tuple[tuple[int, int], ...] = ()
    false_negative_sample: tuple[tuple[int, int], ...] = ()

    @property
    def precision(self) -> float:
        found = self.true_positives + self.false_positives
        return self.true_positives / found if found else 1.0

    @property
    def recall(self) -> float:
        wanted = self.true_positives + self.false_negatives
        return self.true_positives / wanted if wanted else 1.0

    @property
    def passed(self) -> bool:
        return self.precision >= MIN_PRECISION and self.recall >= MIN_RECALL

    def to_dict(self) -> dict[str, float | int]:
        return {
            "labelled_records": self.records,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "true_positives": self.true_positives,
            "false_positives": self.false_positives,
            "false_negatives": self.false_negatives,
        }


def iter_labels(path: Path) -> Iterator[tuple[int, list[int]]]:
    """Each label line as (record naId, the authority naIds it names), in file order (a record
    may have more than one line)."""
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                entry = json.loads(line)
                yield int(entry["naId"]), [int(m["authority"]) for m in entry.get("mentions", [])]


def load_labels(path: Path) -> dict[int, set[int]]:
    """Record naId -> the authority naIds its text names."""
    labels: dict[int, set[int]] = {}
    for record, authorities in iter_labels(path):
        labels.setdefault(record, set()).update(authorities)
    return labels


def score_labels(
    found: Iterable[tuple[int, int]], labels: Mapping[int, set[int]], sample: int = 10
) -> LabelScore:
    """Precision and recall of (record, authority) pairs over the labelled records."""
    predicted = {pair for pair in found if pair[0] in labels}
    expected = {(record, authority) for record, names in labels.items() for authority in names}
    false_positives = sorted(predicted - expected)
    false_negatives = sorted(expected - predicted)
    return LabelScore(
        records=len(labels),
        true_positives=len(predicted & expected),
        false_positives=len(false_positives),
        false_negatives=len(false_negatives),
        false_positive_sample=tuple(false_positives[:sample]),
        false_negative_sample=tuple(false_negatives[:sample]),
    )

"""What the last parse rejected: counts, share and a sample, from the parsed index and the
rejects table (see nara_kg.ingest.layout)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import Any

import pyarrow.parquet as pq

from nara_kg.ingest.layout import WorkLayout
from nara_kg.ingest.parsing.results import reject_category
from nara_kg.model.tables import Col
from quality.names import SAMPLE_SIZE

RAW_SHOWN = 120


@dataclass(frozen=True)
class RejectSummary:
    lines: int
    rejected: int
    by_reason: dict[str, int]
    sample: list[dict[str, Any]] = field(default_factory=list)

    @property
    def share(self) -> float:
        """Rejected / lines read. `lines` counts records and rejected lines; a reject of a whole
        file (empty file, line 0) is not a line, so when nothing but such rejects exists the
        share is 1.0, not 0/0."""
        if self.lines:
            return self.rejected / self.lines
        return 1.0 if self.rejected else 0.0


def truncate(text: str | None, limit: int = RAW_SHOWN) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def spread_sample(rows: list[dict[str, Any]], size: int = SAMPLE_SIZE) -> list[dict[str, Any]]:
    """Up to `size` rejects, taking turns between reasons so that a rare reason is shown too."""
    by_reason: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_reason.setdefault(reject_category(row[Col.REASON]), []).append(row)
    picked: list[dict[str, Any]] = []
    for turn in zip_longest(*by_reason.values()):
        picked.extend(row for row in turn if row is not None)
        if len(picked) >= size:
            break
    return [
        {
            "file": row[Col.FILE_NAME],
            "line": row[Col.LINE_NUM],
            "reason": row[Col.REASON],
            "raw": truncate(row[Col.RAW]),
        }
        for row in picked[:size]
    ]


def reject_summary(layout: WorkLayout, sample_size: int = SAMPLE_SIZE) -> RejectSummary:
    if not layout.parsed_index.exists():
        raise FileNotFoundError(f"{layout.parsed_index} is missing: materialize record_selection")
    index = pq.read_table(
        layout.parsed_index, columns=[Col.LINES, Col.REJECTED, Col.REJECT_REASONS]
    )
    by_reason: Counter[str] = Counter()
    for reasons in index[Col.REJECT_REASONS].to_pylist():
        by_reason.update(json.loads(reasons or "{}"))
    sample: list[dict[str, Any]] = []
    if layout.rejects.exists():
        # Bounded: a sample needs only the first rows of each reason.
        rows = []
        parquet = pq.ParquetFile(layout.rejects)
        for batch in parquet.iter_batches(batch_size=2_000):
            rows.extend(batch.to_pylist())
            if len(rows) >= 20_000:
                break
        sample = spread_sample(rows, sample_size)
    return RejectSummary(
        lines=sum(index[Col.LINES].to_pylist()),
        rejected=sum(index[Col.REJECTED].to_pylist()),
        by_reason=dict(sorted(by_reason.items())),
        sample=sample,
    )

"""Whether community_reports has anything to do: a digest of everything the reports are made
from, compared with the one of its last successful run (pure functions)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from nara_kg.generation.report_rows import report_code_digest


def report_sources_digest(
    *,
    projection: str,
    content: str,
    communities: str,
    generator: str,
    counter_key: str,
    token_budget: int,
) -> str:
    """A digest of what every report's context is read from: the projection (the members'
    relationships and the mention counts, which also rank members by degree), the projected
    records' rows (their text, and the authorities' headings the mentions show), the
    communities (ids, members, parents), the generator, the token counter and budget, and the
    code that builds contexts. Equal to the last run's, every report's inputs are as that run
    found them, so no context needs to be built again."""
    parts = [
        projection,
        content,
        communities,
        generator,
        counter_key,
        token_budget,
        report_code_digest(),
    ]
    return hashlib.sha256(json.dumps(parts, separators=(",", ":")).encode()).hexdigest()


def can_skip_reports(known: Mapping[str, Any] | None, digest: str, stale_reports: int) -> bool:
    """Whether the last successful run (`known`, its state file) made the reports from the
    same sources (`digest`) and every community holds a current report and summary vector
    (`stale_reports` 0: none was removed, or written half, since)."""
    return known is not None and known.get("sources") == digest and stale_reports == 0

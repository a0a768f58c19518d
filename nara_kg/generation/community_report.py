"""The community report: GraphRAG's JSON (title, summary, rating, rating explanation, findings)
and who generated it.

Built by :mod:`nara_kg.generation.extractive` or parsed from a model's answer by
:mod:`nara_kg.generation.report_parse`; stored on the Community node and read back by retrieval.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Finding:
    summary: str
    explanation: str


@dataclass(frozen=True, slots=True)
class CommunityReport:
    community_id: str
    level: int
    title: str
    summary: str
    rating: float
    rating_explanation: str
    findings: tuple[Finding, ...]
    #: "extractive" or "<backend>:<model>", e.g. "openai:gpt-4o-mini".
    generated_by: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "summary": self.summary,
            "rating": self.rating,
            "rating_explanation": self.rating_explanation,
            "findings": [
                {"summary": finding.summary, "explanation": finding.explanation}
                for finding in self.findings
            ],
        }

    def to_json(self) -> str:
        """The report in the prompt's output format (what is stored on the Community node)."""
        return json.dumps(self.to_dict(), ensure_ascii=False)

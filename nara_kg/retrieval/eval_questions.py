"""Question files: one question a JSONL line, with the records it should find, the facts its
answer must state, or that the records cannot answer it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

QUESTION_MODES = ("local", "global", "auto")


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    expected_naids: tuple[int, ...]
    mode: str = "local"
    #: The class of question ("identifier", "date", "person_org", "topic", ...), reported apart.
    kind: str = ""
    #: Facts a correct answer states; each is a tuple of accepted spellings (any one will do).
    expected_facts: tuple[tuple[str, ...], ...] = ()
    #: False for a question the records cannot answer: the right answer is the refusal.
    answerable: bool = True

    @property
    def has_answer_label(self) -> bool:
        """The question says what its answer must hold (facts, or that it must be refused)."""
        return bool(self.expected_facts) or not self.answerable


def load_questions(path: Path) -> list[Question]:
    """Read a JSONL question file; a bad line is an error naming file, line and reason."""
    questions = []
    with path.open(encoding="utf-8") as handle:
        for line_num, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
                mode = raw.get("mode", "local")
                if mode not in QUESTION_MODES:
                    raise ValueError(f"mode must be one of {QUESTION_MODES}, got {mode!r}")
                questions.append(
                    Question(
                        id=str(raw["id"]),
                        question=str(raw["question"]),
                        expected_naids=tuple(int(n) for n in raw.get("expected_naids") or []),
                        mode=mode,
                        kind=str(raw.get("kind") or ""),
                        expected_facts=_facts(raw.get("expected_facts") or []),
                        answerable=_boolean(raw.get("answerable", True)),
                    )
                )
            except (ValueError, KeyError, TypeError) as error:
                raise ValueError(f"{path}:{line_num}: bad question line: {error}") from error
    return questions


def _facts(raw: object) -> tuple[tuple[str, ...], ...]:
    """`expected_facts`: a list whose items are a fact or a list of its accepted spellings."""
    if not isinstance(raw, list):
        raise ValueError("expected_facts must be a list")
    facts = []
    for item in raw:
        spellings = item if isinstance(item, list) else [item]
        if not spellings or not all(isinstance(s, str) and s.strip() for s in spellings):
            raise ValueError(
                f"an expected fact must be a non-empty string or list of them: {item!r}"
            )
        facts.append(tuple(spellings))
    return tuple(facts)


def _boolean(raw: object) -> bool:
    if not isinstance(raw, bool):
        raise ValueError(f"answerable must be true or false, got {raw!r}")
    return raw

"""The small protocol every text generator follows (:class:`LLM`), the backend names, and the
offline default :class:`ExtractiveLLM`, which never generates free text: it is the marker that
tells report generation and answering to take their deterministic, rule-based paths.
"""

from __future__ import annotations

from typing import Any, Protocol

#: Backend names, also used in cache keys and in a report's `generated_by`.
EXTRACTIVE_BACKEND = "extractive"
OPENAI_BACKEND = "openai"
TRANSFORMERS_BACKEND = "transformers"
#: The opt-in bundled local model (:mod:`nara_kg.generation.local_model`).
LOCAL_BACKEND = "local"


class LLM(Protocol):
    """What report generation and answering need from a text generator."""

    #: Backend name: "extractive", "openai", "transformers".
    name: str
    model: str
    #: Generation parameters that change the output (part of the cache key).
    params: dict[str, Any]

    def complete(self, prompt: str) -> str: ...


def describe(llm: LLM) -> str:
    """`backend:model`, as recorded in `generated_by` and answer methods."""
    return f"{llm.name}:{llm.model}"


class ExtractiveLLM:
    """The no-model default: selects the extractive/rule-based code paths; never completes."""

    def __init__(self) -> None:
        self.name = EXTRACTIVE_BACKEND
        self.model = EXTRACTIVE_BACKEND
        self.params: dict[str, Any] = {}

    def complete(self, prompt: str) -> str:
        raise NotImplementedError(
            "ExtractiveLLM does not generate free text: callers must use their extractive "
            "(rule-based) path when the backend is 'extractive'; configure an OpenAI-compatible "
            "endpoint or a local transformers model to generate with a model"
        )

    def __repr__(self) -> str:
        return "ExtractiveLLM()"


def is_extractive(llm: LLM) -> bool:
    return isinstance(llm, ExtractiveLLM) or llm.name == EXTRACTIVE_BACKEND

"""Pluggable text generation for community reports and answers, with a persistent cache.

Three backends share one small protocol (:class:`LLM`):

* :class:`ExtractiveLLM` — the offline default. It never generates free text; it is the marker
  that tells report generation and answering to take their deterministic, rule-based paths, so
  a pipeline runs end to end with no model at all.
* :class:`OpenAICompatibleLLM` — any server that speaks the OpenAI chat-completions protocol
  (OpenAI, vLLM, llama.cpp, Ollama, ...), with timeouts, bounded retries and a concurrency cap.
* :class:`TransformersLLM` — a causal LM from a local directory (or a GGUF file in it, such as
  the opt-in bundled SmolLM2 of :mod:`nara_kg.generation.local_model`); never downloads anything.

:class:`GenerationCache` keys every generation by a hash of prompt + model + backend + parameters,
so an unchanged community is never regenerated and a re-run costs nothing.

This module gathers the names its callers import; each backend lives in its own module
(:mod:`~nara_kg.generation.llm_base`, :mod:`~nara_kg.generation.openai_client`,
:mod:`~nara_kg.generation.transformers_llm`, :mod:`~nara_kg.generation.generation_cache`).
"""

from nara_kg.errors import LLMError, LLMUnreachable
from nara_kg.generation.generation_cache import (
    GenerationCache,
    cache_key,
    cached_complete,
    llm_cache_key,
)
from nara_kg.generation.llm_base import (
    EXTRACTIVE_BACKEND,
    LLM,
    LOCAL_BACKEND,
    OPENAI_BACKEND,
    TRANSFORMERS_BACKEND,
    ExtractiveLLM,
    describe,
    is_extractive,
)
from nara_kg.generation.openai_client import (
    DEFAULT_CONNECT_TIMEOUT_S,
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_TOKENS,
    DEFAULT_TIMEOUT_S,
    OpenAICompatibleLLM,
)
from nara_kg.generation.transformers_llm import DEFAULT_MAX_NEW_TOKENS, TransformersLLM

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT_S",
    "DEFAULT_MAX_CONCURRENCY",
    "DEFAULT_MAX_NEW_TOKENS",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_TIMEOUT_S",
    "EXTRACTIVE_BACKEND",
    "LLM",
    "LOCAL_BACKEND",
    "OPENAI_BACKEND",
    "TRANSFORMERS_BACKEND",
    "ExtractiveLLM",
    "GenerationCache",
    "LLMError",
    "LLMUnreachable",
    "OpenAICompatibleLLM",
    "TransformersLLM",
    "cache_key",
    "cached_complete",
    "describe",
    "is_extractive",
    "llm_cache_key",
]

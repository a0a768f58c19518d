"""Request classification: is it a question to answer, or a request to show records?

With a model, seed 000's classification prompt decides. With the offline default
(:class:`~nara_kg.generation.llm.ExtractiveLLM`) it is rule-based and says so in the method:
display verbs (show, list, display, give me, find, ...) at the start of the request, or
"what/which records|documents|files|...", mean ``show_records``; anything else is a
``question``.
"""

from __future__ import annotations

import re
from typing import Final, Literal

from nara_kg.generation.llm import LLM, GenerationCache, cached_complete, is_extractive
from nara_kg.retrieval.prompts import CLASSIFICATION_PROMPT
from nara_kg.retrieval.terms import METHOD_RULE_BASED, llm_method

RequestKind = Literal["question", "show_records"]

_COURTESY: Final = re.compile(
    r"^(?:(?:please|kindly|hi|hello|hey|ok|okay|now|so)\b[\s,!]*)*"
    r"(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?"
    r"|i\s+(?:want|would\s+like|'d\s+like|d\s+like|need|wish)\s+(?:you\s+)?to\s+"
    r"|i'd\s+like\s+(?:you\s+)?to\s+"
    r"|let\s+me\s+)?"
)
_DISPLAY_VERB: Final = re.compile(
    r"^(?:show|list|display|give\s+me|get\s+me|find(?!\s+out)|fetch|retrieve|pull\s+up"
    r"|bring\s+up|enumerate|print|see|view|browse|provide|look\s+up|search\s+for)\b"
)
_WHICH_RECORDS: Final = re.compile(
    r"\b(?:what|which)\s+(?:\w+\s+){0,2}?(?:records|documents|files|materials|sources|items"
    r"|series|collections|photographs|photos|papers|texts|folders)\b"
)


#: Questions about one record that name a kind of record ("Which series does volume 512 belong
#: to?", "What kind of records are the Drawings ...?", "Give me an overview of ..."): they ask
#: for an answer, not a list.
_ABOUT_A_RECORD: Final = re.compile(
    r"\b(?:what|which)\s+(?:series|collection|record group|file unit)\s+(?:does|do|is|are|did)\b"
    r"|\bwhat\s+(?:kinds?|types?|sorts?)\s+of\s+(?:records|materials)\s+(?:is|are)\s+the\b"
    r"|^(?:give|get)\s+me\s+(?:an?\s+)?(?:overview|summary)\b"
)


def classify_rule_based(request: str) -> RequestKind:
    """`show_records` when the request asks to display records (module docstring), else
    `question`."""
    text = " ".join(request.lower().split())
    text = _COURTESY.sub("", text, count=1)
    if _ABOUT_A_RECORD.search(text):
        return "question"
    if _DISPLAY_VERB.match(text) or _WHICH_RECORDS.search(text):
        return "show_records"
    return "question"


def classify_request(
    question: str, llm: LLM, cache: GenerationCache | None
) -> tuple[RequestKind, str]:
    """(`question` | `show_records`, method). The model's reply counts only when its first word
    is one of the two labels; anything else is treated as a question, as the seed prompt says."""
    if is_extractive(llm):
        return classify_rule_based(question), METHOD_RULE_BASED
    prompt = f"{CLASSIFICATION_PROMPT}\nRequest: {question}\nOutput:"
    reply, _ = cached_complete(llm, prompt, cache)
    words = re.findall(r"[a-z_]+", reply.lower())
    if words[:1] == ["show_records"]:
        return "show_records", llm_method(llm)
    if words[:1] == ["question"]:
        return "question", llm_method(llm)
    return "question", f"{llm_method(llm)}; unrecognised reply, defaulted to question"

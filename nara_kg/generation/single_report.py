"""One community's report from its context: the extractive report, or a model's reply parsed,
its JSON repaired, or regenerated, and replaced by the extractive report when none of that
gives a report."""

from __future__ import annotations

from dataclasses import dataclass

from nara_kg.generation.community_report import CommunityReport
from nara_kg.generation.extractive import (
    GENERATED_BY_EXTRACTIVE,
    extractive_cache_key,
    extractive_report,
)
from nara_kg.generation.llm import LLM, GenerationCache, cached_complete, describe, is_extractive
from nara_kg.generation.report_context import ReportContext
from nara_kg.generation.report_parse import ReportFormatError, parse_report, repair_report
from nara_kg.generation.report_prompts import format_report_prompt


@dataclass
class ReportRepairs:
    """How many model reports needed their JSON repaired, and how many were replaced."""

    repaired: int = 0
    replaced: int = 0


def generate_report(
    context: ReportContext,
    llm: LLM,
    cache: GenerationCache | None,
    *,
    retries: int = 2,
    repairs: ReportRepairs | None = None,
) -> tuple[CommunityReport, bool]:
    """The community's report and whether it came from the cache.

    The extractive backend builds :func:`extractive_report` (cached under the context text).
    A model gets :data:`~nara_kg.generation.report_prompts.REPORT_PROMPT`; output that does not
    parse has its JSON repaired (:func:`repair_report`), else is regenerated up to `retries`
    times, bypassing and overwriting its cache entry. A community with no usable report after
    that gets the extractive report, so one bad reply never fails the run; `repairs` counts both.
    """
    if is_extractive(llm):
        key = extractive_cache_key(context)
        if cache is not None:
            stored = cache.get(key)
            if stored is not None:
                try:
                    return (
                        parse_report(
                            stored, context.community_id, context.level, GENERATED_BY_EXTRACTIVE
                        ),
                        True,
                    )
                except ReportFormatError:
                    pass  # a damaged entry: rebuild and overwrite it
        report = extractive_report(context)
        if cache is not None:
            cache.put(key, report.to_json())
        return report, False

    prompt = format_report_prompt(context)
    generated_by = describe(llm)
    # A deterministic model's fresh reply would only come again: it is repaired or replaced.
    deterministic = bool(getattr(llm, "deterministic", False))
    for attempt in range(retries + 1):
        text, cached = cached_complete(llm, prompt, cache, refresh=attempt > 0)
        try:
            return parse_report(text, context.community_id, context.level, generated_by), cached
        except ReportFormatError:
            pass
        try:
            report = repair_report(text, context.community_id, context.level, generated_by)
        except ReportFormatError:
            if deterministic and not cached:
                break
            continue
        if repairs is not None:
            repairs.repaired += 1
        return report, cached
    if repairs is not None:
        repairs.replaced += 1
    return extractive_report(context), False

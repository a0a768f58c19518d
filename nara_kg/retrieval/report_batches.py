"""The report batches of global search: each report of a level as a block of text, shortened
to fit when it is too long for a batch of its own, packed in a seeded order into batches that
fit a token budget. A block depends only on the report, the budget and the counter, so blocks
are remembered (an LRU) and a level's new ones are counted in one batch call."""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from threading import Lock
from typing import TYPE_CHECKING

from nara_kg.generation.community_report import CommunityReport, Finding

if TYPE_CHECKING:  # the text splitter's import is not worth paying to answer a question
    from nara_kg.ingest.chunking import TokenCounter, TokensCounter


@dataclass(frozen=True, slots=True)
class ReportBlock:
    """One report as it went into a batch (findings may have been dropped to fit)."""

    report: CommunityReport
    summary: str
    findings: tuple[Finding, ...]
    text: str


def _block_text(report: CommunityReport, summary: str, findings: Sequence[Finding]) -> str:
    lines = [
        f"-----Report {report.community_id}-----",
        f"Title: {report.title}",
        f"Summary: {summary}",
        f"Rating: {report.rating:g}",
    ]
    if findings:
        lines.append("Findings:")
        for finding in findings:
            if finding.explanation:
                lines.append(f"- {finding.summary}: {finding.explanation}")
            else:
                lines.append(f"- {finding.summary}")
    return "\n".join(lines)


def join_blocks(blocks: Sequence[ReportBlock]) -> str:
    return "\n\n".join(block.text for block in blocks)


#: Fitted blocks of recent reports: a report's block depends only on the report, the budget and
#: the token counter, so repeated global questions over unchanged reports count no tokens.
_FITTED_CACHE_SIZE = 16_384
_FittedKey = tuple[CommunityReport, int, Hashable]
_fitted: OrderedDict[_FittedKey, tuple[ReportBlock, int]] = OrderedDict()
_fitted_lock = Lock()


def _counter_identity(count_tokens: TokenCounter) -> Hashable:
    """What a counter's counts depend on, without holding it: an embedder's bound method is
    known by the embedder's model key (its tokenizer), so that the cache keeps no embedder (and
    its model) alive after the run that made it; any other counter by itself."""
    owner = getattr(count_tokens, "__self__", None)
    model_key = getattr(owner, "key", None)
    if isinstance(model_key, str):
        return (model_key, getattr(count_tokens, "__name__", ""))
    return count_tokens


def _remember_fitted(key: _FittedKey, value: tuple[ReportBlock, int]) -> None:
    with _fitted_lock:
        _fitted[key] = value
        _fitted.move_to_end(key)
        while len(_fitted) > _FITTED_CACHE_SIZE:
            _fitted.popitem(last=False)


def _fitted_block(
    report: CommunityReport, budget: int, count_tokens: TokenCounter
) -> tuple[ReportBlock, int]:
    """The report, dropping findings from the end and then halving the summary until it fits,
    with the block's token count."""
    key = (report, budget, _counter_identity(count_tokens))
    known = _fitted.get(key)
    if known is not None:
        return known
    fitted = _fit_block(report, budget, count_tokens)
    _remember_fitted(key, fitted)
    return fitted


def _fit_block(
    report: CommunityReport, budget: int, count_tokens: TokenCounter
) -> tuple[ReportBlock, int]:
    findings = report.findings
    for keep in range(len(findings), -1, -1):
        text = _block_text(report, report.summary, findings[:keep])
        tokens = count_tokens(text)
        if tokens <= budget:
            return ReportBlock(report, report.summary, findings[:keep], text), tokens
    words = report.summary.split()
    while words:
        words = words[: len(words) // 2]
        summary = " ".join(words) + " …"
        text = _block_text(report, summary, ())
        tokens = count_tokens(text)
        if tokens <= budget:
            return ReportBlock(report, summary, (), text), tokens
    raise ValueError(
        f"batch token budget {budget} cannot hold even the title of report {report.community_id}"
    )


def _prefetch_fitted(
    reports: Sequence[CommunityReport],
    budget: int,
    count_tokens: TokenCounter,
    count_tokens_many: TokensCounter,
) -> None:
    """Count the whole blocks of the reports not fitted yet in one batch call: most fit as they
    are, and a batch call counts a level's reports several times faster than one call each
    (counting them one by one would be most of the first question's time over a level)."""
    counter = _counter_identity(count_tokens)
    missing = [r for r in reports if (r, budget, counter) not in _fitted]
    if not missing:
        return
    texts = [_block_text(r, r.summary, r.findings) for r in missing]
    for report, text, tokens in zip(missing, texts, count_tokens_many(texts), strict=True):
        if tokens <= budget:
            block = ReportBlock(report, report.summary, report.findings, text)
            _remember_fitted((report, budget, counter), (block, tokens))


def pack_batches(
    reports: Sequence[CommunityReport],
    *,
    batch_token_budget: int,
    count_tokens: TokenCounter,
    count_tokens_many: TokensCounter | None = None,
    seed: int = 0,
) -> list[list[ReportBlock]]:
    """Shuffle the reports with `random.Random(seed)` and pack them, in that order, into batches
    whose text fits `batch_token_budget` (a report too big for a batch of its own is shortened).

    The reports are put in id order before shuffling, so the batches depend only on the set of
    reports and the seed, not on the order the caller fetched them in. `count_tokens_many`
    (the same counts, many texts per call) only makes the first packing of new reports faster.
    """
    if count_tokens_many is not None:
        _prefetch_fitted(reports, batch_token_budget, count_tokens, count_tokens_many)
    ordered = sorted(reports, key=lambda r: (r.level, r.community_id))
    random.Random(seed).shuffle(ordered)
    # Token counts add up over text joined by blank lines (WordPiece and whitespace counters
    # never merge tokens across whitespace), less the special tokens each count includes once:
    # counting each block once keeps packing linear in the number of reports.
    specials = count_tokens("")
    batches: list[list[ReportBlock]] = []
    current: list[ReportBlock] = []
    current_tokens = 0
    for report in ordered:
        block, block_tokens = _fitted_block(report, batch_token_budget, count_tokens)
        joined_tokens = current_tokens + block_tokens - specials if current else block_tokens
        if current and joined_tokens > batch_token_budget:
            batches.append(current)
            current, joined_tokens = [], block_tokens
        current.append(block)
        current_tokens = joined_tokens
    if current:
        batches.append(current)
    return batches

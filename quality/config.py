"""Run-time configuration of the checks: the largest acceptable share of rejected lines.

Precedence: the check's run config (`max_reject_share`, settable in the launchpad), then the
environment variable NARA_KG_MAX_REJECT_SHARE read when the check runs (not when the code
location loads, so changing it needs no reload), then the default of 1%. Run config rather than
a resource: every caller that materializes the assets with the project's resources (the CLI,
jobs, tests) can include the checks without extra wiring.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import dagster as dg
from pydantic import Field

from quality.names import DEFAULT_MAX_REJECT_SHARE, MAX_REJECT_SHARE_ENV


def parse_share(text: str) -> float:
    """`"0.01"` or `"1%"` -> 0.01; anything else (or outside 0..1) raises ValueError."""
    cleaned = text.strip()
    percent = cleaned.endswith("%")
    value = float(cleaned.removesuffix("%").strip()) / (100.0 if percent else 1.0)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"a share must be between 0 and 1 (or 0% and 100%), got {text!r}")
    return value


class RejectShareConfig(dg.Config):
    max_reject_share: float | None = Field(
        default=None,
        description=(
            "Largest acceptable share of rejected input lines (0..1). Unset: "
            f"{MAX_REJECT_SHARE_ENV} at run time, else {DEFAULT_MAX_REJECT_SHARE}."
        ),
    )


def reject_share_limit(
    configured: float | None = None, env: Mapping[str, str] | None = None
) -> float:
    if configured is not None:
        if not 0.0 <= configured <= 1.0:
            raise dg.Failure(f"max_reject_share must be between 0 and 1, got {configured}")
        return float(configured)
    source = os.environ if env is None else env
    text = source.get(MAX_REJECT_SHARE_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_REJECT_SHARE
    try:
        return parse_share(text)
    except ValueError as error:
        raise dg.Failure(
            f"{MAX_REJECT_SHARE_ENV}={text!r} is not a share such as 0.01 or 1%: {error}"
        ) from error

"""The Markdown of `nara-kg bench --scale N --incremental`: the tables, and the section
"Incremental builds at scale" of BENCHMARKS.md and SCALING.md that they replace."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.incremental import MODES
from benchmarks.scale import growth_exponent

INCREMENTAL_START = "<!-- bench:incremental:start -->"
INCREMENTAL_END = "<!-- bench:incremental:end -->"
SECTION_TITLE = "## Incremental builds at scale"

_MODE_LABELS = {
    "full": "full (`--full`)",
    "no_change": "nothing changed",
    "one_file_change": "0.1% changed, one file",
    "one_file_relinked": "0.1% relinked, one file",
}


def _cell(value: Any, digits: int = 1) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _table(
    header: Sequence[str], rows: Sequence[Sequence[str]], numeric_from: int = 1
) -> list[str]:
    align = ["---"] * numeric_from + ["---:"] * (len(header) - numeric_from)
    return [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(align) + "|",
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def summary_table(runs: Sequence[dict[str, Any]]) -> list[str]:
    """One row per N and build: wall, steps, orchestration, peak RSS, records touched."""
    rows = []
    for run in runs:
        for mode in MODES:
            build = run["builds"].get(mode)
            if build is None:
                continue
            touched = build.get("records_touched") or {}
            rows.append(
                [
                    _cell(run["records"]),
                    _cell(run["files"]),
                    _MODE_LABELS[mode],
                    _cell(build["wall_seconds"]),
                    _cell(build["steps_covered_seconds"]),
                    _cell(build["orchestration_seconds"]),
                    _cell(build["peak_rss_mb"], 0),
                    _cell(build["peak_tree_rss_mb"], 0),
                    _cell(sum(touched.values())) if touched else "-",
                ]
            )
    return _table(
        [
            "records",
            "files",
            "build",
            "wall s",
            "in steps s",
            "orchestration s",
            "peak RSS MB (largest process)",
            "peak RSS MB (whole tree)",
            "records touched (sum)",
        ],
        rows,
        numeric_from=3,
    )


def steps_table(runs: Sequence[dict[str, Any]], mode: str) -> list[str]:
    """Per step of one kind of build: seconds at each N (records touched in brackets)."""
    steps: dict[str, float] = {}
    for run in runs:
        for step, seconds in (run["builds"].get(mode) or {}).get("steps", {}).items():
            steps[step] = max(steps.get(step, 0.0), seconds)
    if not steps:
        return ["_no step ran: the build launched no run._"]
    header = ["step", *(f"N = {run['records']:,}" for run in runs)]
    rows = []
    for step in sorted(steps, key=lambda s: -steps[s]):
        cells = [step]
        for run in runs:
            build = run["builds"].get(mode) or {}
            seconds = build.get("steps", {}).get(step)
            touched = (build.get("records_touched") or {}).get(step)
            cell = "-" if seconds is None else _cell(seconds, 2)
            if touched is not None:
                cell += f" ({touched:,})"
            cells.append(cell)
        rows.append(cells)
    return _table(header, rows)


def touched_table(runs: Sequence[dict[str, Any]], mode: str) -> list[str]:
    """Per asset that reports it: `records_touched` at each N (assets whose step was not run,
    skipped as unchanged, show "-")."""
    assets = sorted(
        {a for run in runs for a in ((run["builds"].get(mode) or {}).get("records_touched") or {})}
    )
    if not assets:
        return []
    rows = [
        [
            asset,
            *(
                _cell(((run["builds"].get(mode) or {}).get("records_touched") or {}).get(asset))
                for run in runs
            ),
        ]
        for asset in assets
    ]
    return _table(["asset", *(f"N = {run['records']:,}" for run in runs)], rows)


def step_peaks_table(runs: Sequence[dict[str, Any]], mode: str) -> list[str]:
    """Per step that ran in a process of its own: its peak RSS (MB) at each N, largest at the
    largest N first, with the growth exponent between the first and last N."""

    def peaks(run: dict[str, Any]) -> dict[str, float]:
        return dict((run["builds"].get(mode) or {}).get("step_peak_rss_mb") or {})

    last = peaks(runs[-1])
    steps = sorted({s for run in runs for s in peaks(run)}, key=lambda s: -last.get(s, 0.0))
    if not steps:
        return []
    first_n, last_n = runs[0]["records"], runs[-1]["records"]
    rows = []
    for step in steps:
        low, high = peaks(runs[0]).get(step), last.get(step)
        exponent = growth_exponent(first_n, low, last_n, high) if last_n > first_n else None
        rows.append([step, *(_cell(peaks(run).get(step), 0) for run in runs), _cell(exponent, 2)])
    return _table(["step", *(f"N = {run['records']:,}" for run in runs), "exponent"], rows)


def growth_table(growth: Sequence[dict[str, Any]]) -> list[str]:
    """Exponents between consecutive N, per build."""
    rows = []
    for pair in growth:
        span = f"{pair['from_records']:,}→{pair['to_records']:,}"
        for mode in MODES:
            figures = pair["modes"].get(mode)
            if figures is None:
                continue
            worst = sorted(
                ((s, e) for s, e in figures["steps"].items() if e is not None),
                key=lambda se: -se[1],
            )[:3]
            rows.append(
                [
                    span,
                    _MODE_LABELS[mode],
                    _cell(figures["wall_seconds"], 2),
                    _cell(figures["steps_seconds"], 2),
                    _cell(figures["orchestration_seconds"], 2),
                    _cell(figures["peak_rss_mb"], 2),
                    ", ".join(f"{s} {e:.2f}" for s, e in worst) or "-",
                ]
            )
    return _table(
        ["N", "build", "wall", "steps", "orchestration", "peak RSS", "fastest-growing steps"],
        rows,
        numeric_from=2,
    )


def markdown_incremental_report(result: dict[str, Any]) -> str:
    """The generated block of the "Incremental builds at scale" section."""
    runs = result["runs"]
    if not runs:
        return "_no incremental run_"
    lines = [
        f"Model: stand-in `{result['model']}` (hashed vectors, no model); each build is "
        "`nara-kg build` in a process tree of its own. Orchestration = wall time during which "
        "no step ran (wall minus the union of the STEP_START→STEP_SUCCESS windows). Peak RSS: "
        "the largest single process (getrusage of the reaped tree) and the whole tree at once "
        "(sampled). Started "
        f"{result.get('started_at', '?')}, load average before "
        f"{(result.get('environment') or {}).get('load_average_before', '?')}.",
        "",
    ]
    edits = (
        ("change", "the third build follows an edit of", ""),
        (
            "relink",
            "the fourth build follows a subject that other files' records name added to",
            ": Leiden's projection changes",
        ),
    )
    for run in runs:
        for key, lead, tail in edits:
            edit = run.get(key) or {}
            if edit:
                lines.append(
                    f"* N = {run['records']:,}: {lead} {edit['records_changed']:,} records "
                    f"({edit['share']:.3%}) in `{edit['file']}`{tail}."
                )
    lines += ["", *summary_table(runs)]
    communities = communities_table(runs)
    if communities:
        lines += ["", "`graph_communities` in each build", "", *communities]
    for mode in MODES:
        lines += ["", f"Per step, {_MODE_LABELS[mode]}: seconds (records touched)", ""]
        lines += steps_table(runs, mode)
        touched = touched_table(runs, mode)
        if touched:
            lines += ["", f"`records_touched` per asset, {_MODE_LABELS[mode]}", "", *touched]
        peaks = step_peaks_table(runs, mode)
        if peaks:
            lines += [
                "",
                f"Peak RSS (MB) of each step's own process, {_MODE_LABELS[mode]} (steps that "
                "shared their run's process are left out)",
                "",
                *peaks,
            ]
    if result.get("growth"):
        lines += [
            "",
            "Growth exponents log(t2/t1) / log(N2/N1)",
            "",
            *growth_table(result["growth"]),
        ]
    return "\n".join(lines)


def communities_table(runs: Sequence[dict[str, Any]]) -> list[str]:
    """One row per N and build that materialized `graph_communities`: whether Leiden ran, the
    communities it changed and the memberships read back to compare, of all in a community."""
    rows = []
    for run in runs:
        for mode in MODES:
            figures = (run["builds"].get(mode) or {}).get("communities") or {}
            if not figures:
                continue
            skipped = figures.get("leiden_skipped")
            rows.append(
                [
                    _cell(run["records"]),
                    _MODE_LABELS[mode],
                    "-" if skipped is None else ("no" if skipped else "yes"),
                    _cell(figures.get("communities_changed")),
                    _cell(figures.get("memberships_read")),
                    _cell(figures.get("records_in_a_community")),
                ]
            )
    if not rows:
        return []
    header = [
        "records",
        "build",
        "Leiden ran",
        "communities changed",
        "memberships read back",
        "records in a community",
    ]
    return _table(header, rows, numeric_from=3)


def replace_section(text: str, block: str, title: str = SECTION_TITLE) -> str:
    """`text` with its generated incremental block replaced by `block` (markers included),
    or with a new section `title` holding it appended at the end."""
    wrapped = f"{INCREMENTAL_START}\n{block}\n{INCREMENTAL_END}"
    if INCREMENTAL_START in text and INCREMENTAL_END in text:
        head, rest = text.split(INCREMENTAL_START, 1)
        _, tail = rest.split(INCREMENTAL_END, 1)
        return head + wrapped + tail
    return text.rstrip() + f"\n\n{title}\n\n{wrapped}\n"


def update_incremental_section(path: Path, result: dict[str, Any]) -> None:
    """Replace (or add) the section "Incremental builds at scale" of a Markdown file."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    path.write_text(replace_section(text, markdown_incremental_report(result)), encoding="utf-8")

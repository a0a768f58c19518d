"""The README's table of data-quality checks is the checks the code defines: every name, the
asset it is on and whether it blocks, no more, no fewer."""

from __future__ import annotations

import re

from nara_kg.app.definitions import defs
from nara_kg.settings import PROJECT_ROOT

# The one place the check names and their severity are defined; if it moves, fix this import.
from quality.names import ADVISORY, BLOCKING

README = PROJECT_ROOT / "README.md"
SECTION = "## Data quality"
#: | `check` | `asset` | blocking or advisory | ...
ROW = re.compile(
    r"^\|\s*`(?P<check>\w+)`\s*\|\s*`(?P<asset>\w+)`\s*\|\s*(?P<kind>blocking|advisory)\s*\|"
)


def readme_checks(text: str) -> dict[str, tuple[str, str]]:
    """check -> (asset, "blocking" or "advisory"), from the table of the Data quality section."""
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    rows: dict[str, tuple[str, str]] = {}
    for line in text[start : end if end >= 0 else None].splitlines():
        match = ROW.match(line)
        if match:
            assert match["check"] not in rows, f"{match['check']} is listed twice"
            rows[match["check"]] = (match["asset"], match["kind"])
    return rows


def test_the_readme_lists_exactly_the_checks_of_quality_names() -> None:
    listed = readme_checks(README.read_text(encoding="utf-8"))
    by_kind = {
        kind: {name for name, (_, k) in listed.items() if k == kind}
        for kind in ("blocking", "advisory")
    }
    assert by_kind["blocking"] == set(BLOCKING), (
        f"README blocking checks differ from quality.names.BLOCKING: "
        f"missing {sorted(set(BLOCKING) - by_kind['blocking'])}, "
        f"extra {sorted(by_kind['blocking'] - set(BLOCKING))}"
    )
    assert by_kind["advisory"] == set(ADVISORY), (
        f"README advisory checks differ from quality.names.ADVISORY: "
        f"missing {sorted(set(ADVISORY) - by_kind['advisory'])}, "
        f"extra {sorted(by_kind['advisory'] - set(ADVISORY))}"
    )


def test_the_readme_names_each_checks_asset_and_severity_as_the_definitions_do() -> None:
    graph = defs().resolve_asset_graph()
    defined = {
        key.name: (
            key.asset_key.to_user_string(),
            "blocking" if graph.get_check_spec(key).blocking else "advisory",
        )
        for key in graph.asset_check_keys
    }
    assert readme_checks(README.read_text(encoding="utf-8")) == defined


def test_a_check_missing_from_the_table_is_caught() -> None:
    text = (
        "## Data quality\n\n| check | asset | kind |\n|---|---|---|\n"
        "| `chunks_integrity` | `record_selection` | blocking | why |\n\n## Next section\n"
        "| `graph_nodes_match_parquet` | `graph_nodes` | blocking | outside the section |\n"
    )
    assert readme_checks(text) == {"chunks_integrity": ("record_selection", "blocking")}
    assert set(readme_checks(text)) != set(BLOCKING) | set(ADVISORY)

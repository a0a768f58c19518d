"""The code location's Definitions load as Dagster loads them, checked in process through
Dagster's own `Definitions.validate_loadable` (no `dagster definitions validate` subprocess):
unique keys and names, every asset job resolvable, every resource a definition asks for bound,
valid partition mappings."""

from __future__ import annotations

import re

import dagster as dg
import pytest

from nara_kg.app.definitions import defs
from nara_kg.settings import PROJECT_ROOT


def test_the_code_location_definitions_are_loadable() -> None:
    definitions = defs()
    dg.Definitions.validate_loadable(definitions)
    # What `make demo`, the UI and the nightly schedule need is there (names from jobs/).
    repository = definitions.get_repository_def()
    assert {"kg_file_stages", "kg_graph", "kg_incremental", "kg_full_rebuild"} <= {
        job.name for job in repository.get_all_jobs()
    }


def readme_variables() -> set[str]:
    """Every variable the README's configuration table names."""
    text = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("## Configuration (environment variables)")
    section = text[start : text.index("\n## ", start + 1)]
    return set(re.findall(r"`((?:NEO4J|NARA)_[A-Z0-9_]+)`", section))


def test_loadable_with_no_variable_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every setting has a default: a launcher with none of the README's variables set still
    loads the code location."""
    variables = readme_variables()
    assert {"NEO4J_URI", "NARA_DATA_DIR", "NARA_KG_LLM_BACKEND", "NARA_KG_EXECUTOR"} <= variables
    for name in variables:
        monkeypatch.delenv(name, raising=False)
    dg.Definitions.validate_loadable(defs())


def test_a_missing_resource_is_caught() -> None:
    """The check can fail: the code location's assets without its resources do not load."""
    definitions = defs()
    assets = list(definitions.assets or [])
    checks = list(definitions.asset_checks or [])
    with pytest.raises(dg.DagsterInvalidDefinitionError, match="resource"):
        dg.Definitions.validate_loadable(dg.Definitions(assets=assets, asset_checks=checks))

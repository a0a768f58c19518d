"""One road from a setting to its client: each environment variable's name is written in one
module, the resources make their clients with the core's constructors, and they raise the
project's errors, which only the assets turn into a Dagster Failure."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from graph_assets.common import failure_on_project_error
from nara_kg import settings
from nara_kg.errors import ConfigurationError, Neo4jUnreachable
from resources import LLMResource, Neo4jResource

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("nara_kg", "resources", "graph_assets", "quality", "jobs", "schedules")
VARIABLE = re.compile(r"(NEO4J|NARA_KG|NARA|DAGSTER)_[A-Z0-9_]+")


def _variable_literals() -> dict[str, set[str]]:
    """Each string literal that is a whole variable name -> the modules that write it."""
    found: dict[str, set[str]] = defaultdict(set)
    for package in PRODUCT:
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                text = node.value if isinstance(node, ast.Constant) else None
                if isinstance(text, str) and VARIABLE.fullmatch(text):
                    found[text].add(str(path.relative_to(ROOT)))
    return found


def test_each_variable_name_is_written_in_one_module() -> None:
    found = _variable_literals()
    for variables in settings.RESOURCE_VARIABLES.values():
        for variable in variables.values():
            assert found[variable] == {"nara_kg/settings.py"}, variable
    twice = {name: sorted(modules) for name, modules in found.items() if len(modules) > 1}
    assert not twice


def test_the_resource_and_the_environment_resolve_neo4j_alike(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NARA_KG_BOLT_PORT", "17999")
    for name in settings.RESOURCE_VARIABLES["neo4j"].values():
        monkeypatch.delenv(name, raising=False)
    local = Neo4jResource().settings
    assert local == settings.Neo4jSettings.from_env()
    assert local.managed and local.uri == "bolt://127.0.0.1:17999"
    remote = Neo4jResource(uri=" bolt://db.example:7687 ", username="", password="p").settings
    assert not remote.managed and remote.uri == "bolt://db.example:7687"
    assert remote.username == settings.DEFAULT_USERNAME and remote.password == "p"


def test_resources_raise_the_projects_errors() -> None:
    with pytest.raises(ConfigurationError, match="unknown LLM backend"):
        LLMResource(backend="nonsense").get_llm()
    with pytest.raises(ConfigurationError, match="NARA_KG_LLM_BASE_URL"):
        LLMResource(backend="openai").get_llm()
    resource = Neo4jResource(uri="bolt://127.0.0.1:9")  # the discard port: nothing answers
    with pytest.raises(Neo4jUnreachable, match="check NEO4J_URI"):
        resource.get_driver()


def test_an_asset_reports_the_projects_errors_as_a_failure() -> None:
    @failure_on_project_error
    def plain() -> None:
        raise ConfigurationError("a setting that cannot be used")

    @failure_on_project_error
    def generator() -> Iterator[int]:
        yield 1
        raise Neo4jUnreachable("cannot reach Neo4j")

    @failure_on_project_error
    def bug() -> None:
        raise KeyError("a bug keeps its type")

    with pytest.raises(dg.Failure, match="a setting that cannot be used") as raised:
        plain()
    assert isinstance(raised.value.__cause__, ConfigurationError)
    steps = generator()
    assert next(steps) == 1
    with pytest.raises(dg.Failure, match="cannot reach Neo4j"):
        next(steps)
    with pytest.raises(KeyError):
        bug()

"""The README's pipeline diagram is the asset graph: its edges are exactly the dependencies of
the Definitions, no more, no fewer."""

from __future__ import annotations

import itertools
import re

from nara_kg.app.definitions import defs
from nara_kg.settings import PROJECT_ROOT

README = PROJECT_ROOT / "README.md"
#: The first Mermaid block of the README.
MERMAID = re.compile(r"```mermaid\n(.*?)```", re.DOTALL)


def diagram_edges(text: str) -> set[tuple[str, str]]:
    """(upstream, downstream) of every `a --> b --> c` chain in the README's Mermaid block."""
    match = MERMAID.search(text)
    assert match, "the README has no Mermaid diagram"
    edges: set[tuple[str, str]] = set()
    for line in match.group(1).splitlines():
        names = [name.strip() for name in line.split("-->")]
        edges.update(itertools.pairwise(names))
    return {edge for edge in edges if all(edge)}


def definition_edges() -> set[tuple[str, str]]:
    graph = defs().resolve_asset_graph()
    return {
        (parent.to_user_string(), key.to_user_string())
        for key in graph.get_all_asset_keys()
        for parent in graph.get(key).parent_keys
    }


def test_the_readme_diagram_is_the_asset_graph() -> None:
    drawn, real = diagram_edges(README.read_text(encoding="utf-8")), definition_edges()
    assert drawn - real == set(), f"the README draws edges the assets do not have: {drawn - real}"
    assert real - drawn == set(), f"the README misses dependencies: {real - drawn}"


def test_a_wrong_edge_is_caught() -> None:
    text = "```mermaid\nflowchart LR\n  chunk_embeddings --> record_selection\n```\n"
    assert diagram_edges(text) - definition_edges() == {("chunk_embeddings", "record_selection")}

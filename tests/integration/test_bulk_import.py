"""The first load through `neo4j-admin database import` gives the graph the writers give.

The import stops and restarts its server, so it runs on a second local Neo4j of its own (a home
under the test's tmp_path sharing the session server's jars, on a free port), never on the
server the other tests use. The writers' graph is built on the session server as usual.
"""

from __future__ import annotations

import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from graph_assets import ALL_ASSETS, record_selection
from nara_kg.demo import generate_demo_data
from nara_kg.devserver import process
from nara_kg.devserver.assembly import is_assembled
from nara_kg.devserver.bulk_load import first_load, import_dir
from nara_kg.graph.connection import open_driver
from nara_kg.graph.fingerprint import graph_fingerprint
from nara_kg.ingest.layout import WorkLayout
from nara_kg.settings import Neo4jSettings, neo4j_home
from tests.graph_helpers import materialization_metadata, resources_for, scalar

pytestmark = pytest.mark.integration


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def second_neo4j(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, neo4j_settings: Neo4jSettings
) -> Iterator[tuple[Neo4jSettings, Path]]:
    """A local Neo4j of the test's own: its home's jars are the session home's (linked)."""
    source = neo4j_home()
    if not is_assembled(source):
        pytest.skip(f"no assembled Neo4j home at {source} to lend its jars to a second server")
    home = tmp_path / "neo4j"
    home.mkdir()
    for sub in ("lib", "plugins"):
        (home / sub).symlink_to(source / sub, target_is_directory=True)
    for name in (".assembled", "lib.artifacts.txt", "plugins.artifacts.txt"):
        shutil.copy(source / name, home / name)
    # A small server beside the session's: the machine is shared.
    monkeypatch.setenv("NARA_KG_NEO4J_HEAP", "512m")
    monkeypatch.setenv("NARA_KG_NEO4J_PAGECACHE", "64m")
    settings = Neo4jSettings.from_env(
        {"NARA_KG_BOLT_PORT": str(_free_port()), "NEO4J_PASSWORD": neo4j_settings.password}
    )
    process.start(settings, home, timeout=300, log=lambda _: None)
    try:
        yield settings, home
    finally:
        process.stop(home)


def _fingerprint(settings: Neo4jSettings) -> dict[str, Any]:
    with open_driver(settings) as driver:
        return graph_fingerprint(driver, settings.database)


def _build(
    settings: Neo4jSettings, data: Path, work: Path, selection: Any = None
) -> dict[str, dict[str, Any]]:
    # The resources name the second server by its address (an empty uri is the session's).
    address = Neo4jSettings(
        uri=settings.uri,
        username=settings.username,
        password=settings.password,
        database=settings.database,
        managed=False,
    )
    result = dg.materialize(
        ALL_ASSETS,
        resources=resources_for(address, data, work),
        selection=selection,
        raise_on_error=False,
    )
    assert result.success, [event.message for event in result.all_events if event.is_failure]
    return materialization_metadata(result)


def test_bulk_first_load_gives_the_writers_graph(
    graph_builder: Any,
    neo4j_driver: Any,
    second_neo4j: tuple[Neo4jSettings, Path],
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    generate_demo_data(data, records=120, seed=21)
    graph_builder(data, tmp_path / "work-writers", wipe_first=True)
    by_writers = graph_fingerprint(neo4j_driver, "neo4j")

    settings, home = second_neo4j
    work = tmp_path / "work-bulk"
    _build(settings, data, work, dg.AssetSelection.assets(record_selection).upstream())
    layout = WorkLayout(work)
    loaded = first_load(settings, home, layout)
    assert loaded.loaded, loaded.reason
    assert loaded.nodes == scalar(neo4j_driver, "MATCH (c:Chunk) RETURN count(c)")
    assert not import_dir(layout).exists()

    after_load = _build(settings, data, work)
    # The writers that follow find the graph as they would have made it.
    assert after_load["graph_nodes"]["nodes_written"] == 0
    assert after_load["graph_nodes"]["nodes_deleted"] == 0
    for step in ("next_relationships", "includes_relationships", "authority_relationships"):
        assert (after_load[step]["added"], after_load[step]["removed"]) == (0, 0), step
    assert _fingerprint(settings) == by_writers

    # A database that holds a graph is never imported into: the next build is by difference.
    again = first_load(settings, home, layout)
    assert not again.loaded and "nodes" in again.reason
    _build(settings, data, work)
    assert _fingerprint(settings) == by_writers

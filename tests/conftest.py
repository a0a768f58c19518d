"""Shared fixtures. Graph tests run against the server described by the environment: the
project-managed local Neo4j (`nara-kg neo4j start`) unless NEO4J_URI points elsewhere. When it does
not answer those tests FAIL, so that CI never goes green without having run them; set
NARA_KG_ALLOW_SKIP_NEO4J=1 to skip them instead (e.g. on a laptop without Java). The tests empty
the database between builds: they refuse to do so on any server but the project's own unless
NARA_KG_TESTS_MAY_WIPE=1 lends them the one NEO4J_URI names.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from nara_kg.settings import Neo4jSettings


@pytest.fixture(autouse=True)
def _no_dagster_instance_left_open() -> Iterator[None]:
    """A Dagster instance entered and never exited (`dg.instance_for_test()` outside `with`)
    leaves its state storage current for the rest of the process; once the instance is
    collected, the next test that loads the Definitions fails ("undefined DagsterInstance
    weakref"), and which test that is depends on how pytest-xdist shares the tests out. This
    fails the test that left it instead. (A context closed after the instance it was opened
    in, such as a schedule context left open inside `with dg.instance_for_test()`, puts the
    dead instance's storage back only when the garbage collector closes it: that shows here
    in whichever test it happens, with this message.)"""
    from dagster._core.storage.defs_state.base import DefsStateStorage

    before = DefsStateStorage.get()
    yield
    left = DefsStateStorage.get()
    assert left is before, (
        "a Dagster instance was left open (its state storage is still current), by this test "
        "or by an earlier one whose unclosed context was collected now: enter Dagster "
        "contexts and instances with `with`"
    )


@pytest.fixture(scope="session")
def embedder():  # type: ignore[no-untyped-def]
    from nara_kg.embedding.encoder import Embedder

    return Embedder()


ALLOW_SKIP_ENV = "NARA_KG_ALLOW_SKIP_NEO4J"


def _unavailable(message: str) -> None:
    if os.environ.get(ALLOW_SKIP_ENV) == "1":
        pytest.skip(f"{message} ({ALLOW_SKIP_ENV}=1: skipping the Neo4j integration tests)")
    pytest.fail(
        f"{message}. Start the local server with `nara-kg neo4j start` (or set NEO4J_URI, "
        f"NEO4J_USERNAME, NEO4J_PASSWORD), or set {ALLOW_SKIP_ENV}=1 to skip these tests.",
        pytrace=False,
    )


@pytest.fixture(scope="session")
def neo4j_settings() -> Neo4jSettings:
    return Neo4jSettings.from_env()


@pytest.fixture(scope="session")
def neo4j_driver(neo4j_settings: Neo4jSettings) -> Iterator[Any]:
    from nara_kg.graph.connection import open_driver

    driver = open_driver(neo4j_settings)
    try:
        driver.verify_connectivity()
    except Exception as exc:
        driver.close()
        _unavailable(f"Neo4j at {neo4j_settings.uri} is not reachable: {exc}")
    try:
        yield driver
    finally:
        driver.close()


@pytest.fixture(scope="session")
def graph_builder(neo4j_driver: Any, neo4j_settings: Neo4jSettings) -> Any:
    """`build(data_dir, work_dir, wipe=False, questions=None)`: all assets, in process."""
    from tests.graph_helpers import materialize, wipe

    def build(
        data_dir: Any, work_dir: Any, *, wipe_first: bool = False, questions: Any = None
    ) -> Any:
        if wipe_first:
            wipe(neo4j_driver)
        return materialize(neo4j_settings, data_dir, work_dir, questions)

    return build


#: The end-to-end module whose own builds of the real records leave the graph the other real-record
#: modules reuse (they build only when the graph does not hold those records exactly).
_REAL_RECORDS_BUILDER = "tests/e2e/test_real_records.py"


#: Tests that need neither Neo4j nor the shared work directories: with pytest-xdist
#: (`make test` runs `-n 2`) they run on either worker, beside the others.
_PURE_TESTS = "tests/unit/"

#: The one work unit of every other test. They share one database, which they empty between
#: builds, so one worker runs them all, one after another, in collection order.
_GRAPH_TESTS = "graph"


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's scope scheduling, with every graph test in one scope. (`--dist loadgroup` would
    say the same with markers, but pytest 9 ignores the node ids that xdist 3.8 rewrites for
    it.)"""
    from xdist.scheduler import LoadScopeScheduling

    class GraphTestsOnOneWorker(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return worker_scope(nodeid)

    return GraphTestsOnOneWorker(config, log)


def worker_scope(nodeid: str) -> str:
    """The work unit xdist gives one worker: a pure test alone, or all the graph tests."""
    return nodeid if nodeid.startswith(_PURE_TESTS) else _GRAPH_TESTS


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    _order_real_record_builder_first(items)


def _order_real_record_builder_first(items: list[pytest.Item]) -> None:
    """Run the real-record builder before the other end-to-end modules, so that they reuse its
    graph instead of each building the real records again (a build of about a minute)."""
    e2e = [i for i, item in enumerate(items) if item.nodeid.startswith("tests/e2e/")]
    if not e2e:
        return
    block = [items[i] for i in e2e]
    first = [item for item in block if item.nodeid.startswith(_REAL_RECORDS_BUILDER)]
    rest = [item for item in block if not item.nodeid.startswith(_REAL_RECORDS_BUILDER)]
    for index, item in zip(e2e, first + rest, strict=True):
        items[index] = item

"""`make test`'s two xdist workers: every test that uses the shared Neo4j lands on one worker,
in collection order; the pure tests are spread over both."""

from __future__ import annotations

from tests.conftest import worker_scope


def test_graph_tests_share_one_work_unit_and_pure_tests_have_their_own() -> None:
    graph = [
        "tests/integration/test_cli.py::test_build_summary",
        "tests/service/test_backfill.py::test_backfill_of_every_partition_and_the_graph",
        "tests/e2e/test_real_records.py::test_records_per_type",
        "tests/api/test_api.py::test_health_reports_the_graph",
        "tests/browser/test_cards_page.py::test_cards_show_excerpt_scans_restrictions_and_archive",
    ]
    pure = [
        "tests/unit/test_llm.py::test_openai_retries_a_500_then_succeeds",
        "tests/unit/test_answering.py::test_cache_key[a]",
    ]
    assert len({worker_scope(nodeid) for nodeid in graph}) == 1
    assert [worker_scope(nodeid) for nodeid in pure] == pure

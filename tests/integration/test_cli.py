"""The `nara-kg` commands a user types: demo-data, build, search, eval."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from nara_kg.cli.main import main
from tests.graph_helpers import wipe

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def cli_env(neo4j_driver: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("cli")
    return {
        "NARA_KG_WORK_DIR": str(root / "work"),
        "DAGSTER_HOME": str(root / "dagster_home"),
        "NARA_DATA_DIR": str(root / "data"),
        "NARA_KG_QUESTIONS": "",
        # Steps in one process: these tests are about the command, not the executor (the
        # multiprocess executor is exercised by test_dagster_launch and the service tests).
        "NARA_KG_EXECUTOR": "in_process",
    }


@pytest.fixture(scope="module")
def built_by_cli(cli_env: dict[str, str], neo4j_driver: Any) -> dict[str, Any]:
    runner = CliRunner()
    data = Path(cli_env["NARA_DATA_DIR"])
    generated = runner.invoke(main, ["demo-data", str(data), "--records", "120"], env=cli_env)
    assert generated.exit_code == 0, generated.output
    assert "questions:" in generated.output
    wipe(neo4j_driver)
    build = runner.invoke(main, ["build", "--data", str(data), "--json"], env=cli_env)
    assert build.exit_code == 0, build.output
    return {"runner": runner, "build": json.loads(build.stdout)}


def test_build_summary(built_by_cli: dict[str, Any]) -> None:
    summary = built_by_cli["build"]
    assert summary["success"] is True
    assert summary["assets"]["parsed_records"]["records"] == 120
    assert set(summary["assets"]) >= {
        "raw_jsonl",
        "parsed_records",
        "chunks",
        "graph_nodes",
        "text_embeddings",
        "vector_index",
        "next_relationships",
        "includes_relationships",
        "authority_relationships",
        "retrieval_evaluation",
    }


def test_search_json(built_by_cli: dict[str, Any], cli_env: dict[str, str]) -> None:
    questions = Path(cli_env["NARA_DATA_DIR"]) / "questions.jsonl"
    first = json.loads(questions.read_text().splitlines()[0])
    result = built_by_cli["runner"].invoke(
        main, ["search", first["question"], "--k", "5", "--json"], env=cli_env
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    hits = payload["hits"]
    assert 0 < len(hits) <= 5
    assert len({hit["naId"] for hit in hits}) == len(hits)  # one result per record
    for hit in hits:
        assert hit["source"] == f"https://catalog.archives.gov/id/{hit['naId']}"
        assert hit["hierarchy"][-1]["naId"] == hit["naId"]
    assert any(hit["naId"] in first["expected_naids"] for hit in hits)


def test_search_text_output(built_by_cli: dict[str, Any], cli_env: dict[str, str]) -> None:
    result = built_by_cli["runner"].invoke(main, ["search", "correspondence"], env=cli_env)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("1. [")
    assert "https://catalog.archives.gov/id/" in result.output


def test_eval_json(built_by_cli: dict[str, Any], cli_env: dict[str, str]) -> None:
    questions = Path(cli_env["NARA_DATA_DIR"]) / "questions.jsonl"
    result = built_by_cli["runner"].invoke(
        main, ["eval", "--questions", str(questions), "--json"], env=cli_env
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    for key in ("hit_at_1", "hit_at_5", "mrr_at_10", "latency_ms_p50", "latency_ms_p95", "n"):
        assert key in report
    assert report["n"] == len(report["per_question_ranks"]) > 0
    assert report["hit_at_5"] >= 0.6


def test_build_full_and_a_blocking_failure(
    built_by_cli: dict[str, Any], cli_env: dict[str, str], tmp_path: Path
) -> None:
    runner = built_by_cli["runner"]
    data = Path(cli_env["NARA_DATA_DIR"])
    full = runner.invoke(main, ["build", "--data", str(data), "--full", "--json"], env=cli_env)
    assert full.exit_code == 0, full.output
    summary = json.loads(full.stdout)
    files = len(list((data / "descriptions").rglob("*.jsonl"))) + len(
        list((data / "authority-records").rglob("*.jsonl"))
    )
    assert summary["full"] is True
    assert (summary["files_processed"], summary["files_skipped"]) == (files, 0)
    assert summary["records_loaded"] == 120 and summary["checks_failed"] == []

    # A file of garbage pushes the rejected share past 1%: the blocking check stops the build.
    bad = data / "descriptions" / "broken" / "broken-1.jsonl"
    bad.parent.mkdir(parents=True)
    bad.write_text("\n".join(["{not json"] * 5) + "\n")
    failed = runner.invoke(main, ["build", "--data", str(data), "--json"], env=cli_env)
    assert failed.exit_code == 1
    summary = json.loads(failed.stdout)
    assert summary["success"] is False
    assert "parsed_records_reject_share" in summary["checks_failed"]
    assert summary["lines_rejected"] == 5
    assert summary["rejects_path"].endswith("rejects.parquet")
    assert "graph_nodes" not in summary["assets"]
    bad.unlink()


def test_build_of_an_export_without_a_question_file_succeeds(
    built_by_cli: dict[str, Any], cli_env: dict[str, str], tmp_path: Path
) -> None:
    """A real export carries no question file: the graph is built and the run succeeds; the
    evaluation asks known-item questions generated from the export, says so, and its check
    judges the figures it measured."""
    import shutil

    data = tmp_path / "export"
    shutil.copytree(Path(cli_env["NARA_DATA_DIR"]), data)
    (data / "questions.jsonl").unlink()
    env = {**cli_env, "NARA_KG_WORK_DIR": str(tmp_path / "work")}
    result = built_by_cli["runner"].invoke(main, ["build", "--data", str(data), "--json"], env=env)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["success"] is True
    assert summary["assets"]["graph_nodes"]["chunks_desired"] > 0
    evaluation = summary["assets"]["retrieval_evaluation"]
    assert evaluation["n"] > 0
    assert evaluation["question_source"].startswith("generated")
    assert evaluation["questions_file"].endswith("questions.jsonl")
    met = evaluation["hit_at_5"] >= 0.6 and evaluation["mrr_at_10"] >= 0.4
    assert ("retrieval_meets_thresholds" in summary["checks_failed"]) is not met

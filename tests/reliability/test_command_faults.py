"""Faults seen through the commands a person types, against the real Neo4j: each expected
failure ends in one clear line and a non-zero exit, never a traceback; slow or dead endpoints
never stall; concurrent and killed builds never corrupt the graph or the run history."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from click.testing import CliRunner

from nara_kg.app.launch import fail_orphaned_runs
from nara_kg.cli.main import main
from nara_kg.demo import generate_demo_data
from nara_kg.embedding.encoder import Embedder
from nara_kg.generation.llm import LLMUnreachable, OpenAICompatibleLLM
from nara_kg.graph.fingerprint import graph_fingerprint
from nara_kg.retrieval.ask import ask_with_fallback
from nara_kg.settings import PROJECT_ROOT
from tests.graph_helpers import wipe

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("faults")
    generate_demo_data(root / "data", records=60, seed=8)
    return {
        "NARA_DATA_DIR": str(root / "data"),
        "NARA_KG_WORK_DIR": str(root / "work"),
        "DAGSTER_HOME": str(root / "dagster_home"),
        "NARA_KG_EXECUTOR": "in_process",
    }


@pytest.fixture(scope="module")
def built(env: dict[str, str], neo4j_driver: Any) -> dict[str, Any]:
    wipe(neo4j_driver)
    result = CliRunner().invoke(main, ["build", "--json"], env=env)
    assert result.exit_code == 0, result.output
    return {"fingerprint": graph_fingerprint(neo4j_driver, "neo4j")}


def run(env: dict[str, str], *args: str, **extra: str) -> Any:
    return CliRunner().invoke(main, list(args), env={**env, **extra})


def one_line_error(result: Any) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return str(lines[0])


def test_a_100kb_query_is_answered(built: dict[str, Any], env: dict[str, str]) -> None:
    query = " ".join(f"word{i} archives" for i in range(9_000))  # ~100 KB, 18,000 words
    assert len(query) > 100_000
    searched = run(env, "search", query, "--json")
    assert searched.exit_code == 0, searched.output
    assert json.loads(searched.stdout)["hits"]
    asked = run(env, "ask", query, "--mode", "local", "--json")
    assert asked.exit_code == 0, asked.output


def test_an_empty_query_is_refused_with_a_clear_message(
    built: dict[str, Any], env: dict[str, str]
) -> None:
    for command in ("search", "ask"):
        assert "the query is empty" in one_line_error(run(env, command, "   "))


def test_a_wrong_password_is_one_line(built: dict[str, Any], env: dict[str, str]) -> None:
    line = one_line_error(run(env, "search", "flood control", NEO4J_PASSWORD="not-the-password"))
    assert "refused the credentials" in line
    # --debug shows the traceback instead.
    debug = run(env, "--debug", "search", "flood", NEO4J_PASSWORD="not-the-password")
    assert debug.exit_code != 0 and debug.exception is not None


def test_a_server_that_is_down_is_one_line(env: dict[str, str]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    line = one_line_error(run(env, "search", "flood", NEO4J_URI=f"bolt://127.0.0.1:{port}"))
    assert "cannot reach Neo4j" in line


@pytest.fixture
def silent_endpoint() -> Iterator[str]:
    """A server that accepts connections and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"


def test_ask_with_an_llm_that_never_answers_falls_back_within_the_timeout(
    built: dict[str, Any], env: dict[str, str], silent_endpoint: str, neo4j_driver: Any
) -> None:
    embedder = Embedder()
    embedder.encode(["warm-up"])
    llm = OpenAICompatibleLLM(silent_endpoint, "model", None, timeout_s=2.0)
    started = time.monotonic()
    response = ask_with_fallback(
        neo4j_driver, "neo4j", embedder, llm, None, "Who created the flood control records?"
    ).to_dict()
    assert time.monotonic() - started < 2.0 + 1.0
    assert response["fallback"]["to"] == "extractive"
    assert "did not answer" in response["fallback"]["reason"]
    assert silent_endpoint.split("//")[1].split("/")[0] not in json.dumps(response)  # no address
    assert response["classification_method"] == "rule-based"
    with pytest.raises(LLMUnreachable):
        ask_with_fallback(neo4j_driver, "neo4j", embedder, llm, None, "flood", strict=True)

    llm_env = {
        "NARA_KG_LLM_BACKEND": "openai",
        "NARA_KG_LLM_MODEL": "model",
        "NARA_KG_LLM_BASE_URL": silent_endpoint,
        "NARA_KG_LLM_TIMEOUT_S": "1.5",
    }
    answered = run(env, "ask", "What is in the flood control records?", "--json", **llm_env)
    assert answered.exit_code == 0, answered.output
    assert json.loads(answered.stdout)["fallback"]["from"].startswith("openai")
    strict = run(env, "ask", "flood control", "--strict-llm", **llm_env)
    assert "did not answer" in one_line_error(strict)


def _build_process(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(Path(sys.executable).parent / "nara-kg"), "build", "--full", "--json", *args],
        cwd=PROJECT_ROOT,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def test_two_builds_at_once_one_runs_the_other_refuses(
    built: dict[str, Any], env: dict[str, str], neo4j_driver: Any
) -> None:
    first, second = _build_process(env), _build_process(env)
    outputs = [process.communicate(timeout=900) for process in (first, second)]
    codes = sorted(process.returncode for process in (first, second))
    assert codes == [0, 2], outputs
    refusal = next(
        err for (_, err), p in zip(outputs, (first, second), strict=True) if p.returncode == 2
    )
    assert "is using" in refusal and "pid" in refusal and "Traceback" not in refusal
    assert graph_fingerprint(neo4j_driver, "neo4j") == built["fingerprint"]


def test_a_killed_build_is_marked_failed_and_the_next_build_completes(
    built: dict[str, Any], env: dict[str, str], neo4j_driver: Any
) -> None:
    home = Path(env["DAGSTER_HOME"])
    process = _build_process(env)
    started_run = None
    deadline = time.monotonic() + 300
    with dg.DagsterInstance.from_config(str(home)) as instance:
        while started_run is None and time.monotonic() < deadline:
            started = instance.get_runs(
                filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED])
            )
            started_run = started[0] if started else None
            time.sleep(0.5)
        assert started_run is not None, "the build never started a run"
        time.sleep(3)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
        assert fail_orphaned_runs(instance) == [started_run.run_id]
        record = instance.get_run_by_id(started_run.run_id)
        assert record is not None and record.status == dg.DagsterRunStatus.FAILURE
    again = run(env, "build", "--json")
    assert again.exit_code == 0, again.output
    assert graph_fingerprint(neo4j_driver, "neo4j") == built["fingerprint"]

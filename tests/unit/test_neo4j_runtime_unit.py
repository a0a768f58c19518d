"""The local Neo4j runtime without a server: generated configuration, external-server mode."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from nara_kg.devserver import assembly, process
from nara_kg.devserver.config import VECTOR_POPULATION_MERGE_FACTOR, render_conf
from nara_kg.devserver.layout import Neo4jRuntimeError, pid_file
from nara_kg.settings import (
    DEFAULT_NEO4J_HEAP,
    DEFAULT_NEO4J_PAGECACHE,
    LOCAL_DEFAULT_PASSWORD,
    Neo4jSettings,
)


def _conf(text: str) -> dict[str, str]:
    entries: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            entries[key] = value
    return entries


def test_conf_is_local_bolt_only_with_auth(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The memory sizes are read from the process environment when Neo4j starts: the defaults
    # are checked without a developer's own sizes.
    monkeypatch.delenv("NARA_KG_NEO4J_HEAP", raising=False)
    monkeypatch.delenv("NARA_KG_NEO4J_PAGECACHE", raising=False)
    settings = Neo4jSettings.from_env({})
    conf = _conf(render_conf(settings, tmp_path))
    assert conf["server.default_listen_address"] == "127.0.0.1"
    assert conf["server.bolt.enabled"] == "true"
    assert conf["server.bolt.listen_address"] == "127.0.0.1:7687"
    assert conf["server.http.enabled"] == "false"
    assert conf["server.https.enabled"] == "false"
    assert conf["dbms.security.auth_enabled"] == "true"
    assert conf["dbms.usage_report.enabled"] == "false"
    assert conf["dbms.security.procedures.unrestricted"] == "gds.*"
    assert "dbms.security.procedures.allowlist" not in conf
    assert conf["server.directories.data"] == str(tmp_path / "data")
    assert conf["server.directories.plugins"] == str(tmp_path / "plugins")
    assert conf["server.memory.heap.max_size"] == DEFAULT_NEO4J_HEAP
    assert conf["server.memory.pagecache.size"] == DEFAULT_NEO4J_PAGECACHE
    assert LOCAL_DEFAULT_PASSWORD not in render_conf(settings, tmp_path)


def test_conf_merges_a_new_vector_index_as_it_is_populated(tmp_path: Path) -> None:
    # Neo4j's population default (1,000) left hundreds of unmerged HNSW segments whose merges
    # stalled the first write after a full build; the population must merge by the factor the
    # index uses afterwards (Neo4j 5.26's `internal.dbms.index.vector.standard_merge_factor`).
    conf = _conf(render_conf(Neo4jSettings.from_env({}), tmp_path))
    assert int(conf["internal.dbms.index.vector.population_merge_factor"]) == 50
    assert VECTOR_POPULATION_MERGE_FACTOR == 50


def test_conf_follows_the_bolt_port(tmp_path: Path) -> None:
    settings = Neo4jSettings.from_env({"NARA_KG_BOLT_PORT": "17687"})
    conf = _conf(render_conf(settings, tmp_path))
    assert conf["server.bolt.listen_address"] == "127.0.0.1:17687"


def test_external_server_start_launches_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Neo4jSettings.from_env(
        {"NEO4J_URI": "neo4j://graph.example:7687", "NEO4J_PASSWORD": "s3cret-pass"}
    )
    assert settings.managed is False
    checked: list[str] = []

    def fake_check(s: Neo4jSettings, *, timeout: float = 5.0) -> None:
        checked.append(s.uri)

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("no local process may be started for an external server")

    monkeypatch.setattr(process, "check_connectivity", fake_check)
    monkeypatch.setattr(process, "_launch", forbidden)
    monkeypatch.setattr(process, "assemble", forbidden)
    monkeypatch.setattr(subprocess, "Popen", forbidden)
    monkeypatch.setattr(subprocess, "run", forbidden)
    lines: list[str] = []

    assert process.start(settings, tmp_path / "home", log=lines.append) is False
    assert checked == ["neo4j://graph.example:7687"]
    assert not (tmp_path / "home").exists()
    assert any("external" in line for line in lines)
    assert all("s3cret-pass" not in line for line in lines)


def test_external_server_unreachable_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Neo4jSettings.from_env({"NEO4J_URI": "bolt://graph.example:7687"})

    def failing_check(s: Neo4jSettings, *, timeout: float = 5.0) -> None:
        raise OSError("connection refused")

    monkeypatch.setattr(process, "check_connectivity", failing_check)
    with pytest.raises(Neo4jRuntimeError, match=r"graph\.example"):
        process.start(settings, tmp_path, log=lambda _: None)


def test_stop_without_server_returns_false(tmp_path: Path) -> None:
    assert process.stop(tmp_path) is False
    (tmp_path / "run").mkdir()
    pid_file(tmp_path).write_text("999999999\n")  # stale pid file
    assert process.stop(tmp_path) is False
    assert not pid_file(tmp_path).exists()


def test_changed_password_is_reported(tmp_path: Path) -> None:
    original = Neo4jSettings.from_env({"NEO4J_PASSWORD": "first-password"})
    salt = "abc"
    marker = tmp_path / "data" / ".nara-kg-initial-password"
    marker.parent.mkdir(parents=True)
    marker.write_text(f"{salt}:{assembly._password_digest('first-password', salt)}\n")
    assert assembly.password_problem(original, tmp_path) is None
    changed = Neo4jSettings.from_env({"NEO4J_PASSWORD": "second-password"})
    problem = assembly.password_problem(changed, tmp_path)
    assert problem is not None
    assert str(tmp_path / "data") in problem
    assert "second-password" not in problem
    with pytest.raises(Neo4jRuntimeError, match="different password"):
        process.start(changed, tmp_path, log=lambda _: None)
    assert process.status(changed, tmp_path)["error"] == problem


def test_duplicate_artifacts_are_detected(tmp_path: Path) -> None:
    (tmp_path / "lib.artifacts.txt").write_text(
        "\nThe following files have been resolved:\n"
        "   org.neo4j:annotations:jar:5.26.24:compile -- module org.neo4j.annotations\n"
        "   com.github.ben-manes.caffeine:caffeine:jar:3.1.8:compile -- module x\n"
    )
    (tmp_path / "plugins.artifacts.txt").write_text(
        "   org.neo4j.gds:annotations:jar:2.13.9:runtime -- module annotations (auto)\n"
        "   com.github.ben-manes.caffeine:caffeine:jar:3.1.8:runtime\n"
    )
    assert assembly._duplicate_jars(tmp_path) == {"com.github.ben-manes.caffeine:caffeine"}

"""The local Neo4j never sees a secret it has no use for: its initial password is not a process
argument (visible to every user in `ps`), and its processes do not inherit the caller's whole
environment (an LLM key, cloud credentials). Unit level: the processes are faked."""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from nara_kg.devserver import assembly, process
from nara_kg.devserver.layout import server_env
from nara_kg.settings import Neo4jSettings

PASSWORD = 'pa ss"wo\\rd #1 @x'
SECRETS = {
    "NARA_KG_LLM_API_KEY": "sk-not-for-neo4j",
    "OPENAI_API_KEY": "sk-nor-this",
    "AWS_SECRET_ACCESS_KEY": "aws-secret",
    "NEO4J_PASSWORD": PASSWORD,
}


def settings() -> Neo4jSettings:
    return Neo4jSettings(
        uri="bolt://127.0.0.1:7999",
        username="neo4j",
        password=PASSWORD,
        database="neo4j",
        managed=True,
    )


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("LANG", "C.UTF-8")


def assert_no_secret(env: dict[str, str]) -> None:
    assert not set(SECRETS) & set(env), sorted(env)
    assert not any(value in text for value in SECRETS.values() for text in env.values())


def test_the_server_environment_is_an_allow_list(secret_env: None, tmp_path: Path) -> None:
    env = server_env(tmp_path)
    assert_no_secret(env)
    assert env["NEO4J_HOME"] == str(tmp_path)
    assert env["LANG"] == "C.UTF-8"  # Java reads its arguments in the locale's charset
    assert "PATH" in env


def test_the_initial_password_is_never_a_process_argument(
    secret_env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "run").mkdir()
    seen: dict[str, Any] = {}

    def run(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        seen["command"] = command
        seen["env"] = kwargs["env"]
        files = [Path(arg[1:]) for arg in command if arg.startswith("@")]
        seen["files"] = files
        seen["contents"] = [f.read_text(encoding="utf-8") for f in files]
        seen["modes"] = [stat.S_IMODE(f.stat().st_mode) for f in files]
        return subprocess.CompletedProcess(command, 0, "Changed password", "")

    monkeypatch.setattr(assembly.subprocess, "run", run)
    monkeypatch.setattr(assembly, "java", lambda: "java")
    assembly._set_initial_password(settings(), tmp_path, log=lambda _: None)

    assert not any(PASSWORD in arg for arg in seen["command"]), seen["command"]
    assert_no_secret(seen["env"])
    # One argument file, private to this user, holding the password quoted for picocli, and
    # removed once neo4j-admin has read it.
    assert seen["modes"] == [0o600]
    assert seen["contents"] == ['"pa ss\\"wo\\\\rd #1 @x"\n']
    assert not seen["files"][0].exists()
    assert (tmp_path / "data" / ".nara-kg-initial-password").is_file()


def test_the_server_process_gets_the_allow_listed_environment(
    secret_env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, Any] = {}

    class Started:
        pid = 999_999

    def popen(command: list[str], **kwargs: Any) -> Started:
        seen["command"], seen["env"] = command, kwargs["env"]
        return Started()

    monkeypatch.setattr(process.subprocess, "Popen", popen)
    monkeypatch.setattr(process, "java", lambda: "java")
    process._launch(settings(), tmp_path)
    process._CHILDREN.pop(Started.pid, None)
    assert_no_secret(seen["env"])
    assert not any(PASSWORD in arg for arg in seen["command"])

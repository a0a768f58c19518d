"""Settings read from the environment when they are asked for, never at import time."""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path

#: The repository root (where `neo4j/`, `var/` and the Makefile live).
PROJECT_ROOT = Path(__file__).resolve().parent.parent

#: Documented default password of the project-managed local server (never used for a remote one).
LOCAL_DEFAULT_PASSWORD = "nara-kg-local"
LOCAL_BOLT_HOST = "127.0.0.1"
LOCAL_BOLT_PORT = 7687


@dataclass(frozen=True)
class Neo4jSettings:
    uri: str
    username: str
    password: str
    database: str
    #: True when NEO4J_URI is unset and the project runs its own local server.
    managed: bool

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Neo4jSettings:
        env = dict(os.environ if env is None else env)
        uri = env.get("NEO4J_URI", "").strip()
        managed = not uri
        if managed:
            port = int(env.get("NARA_KG_BOLT_PORT", LOCAL_BOLT_PORT))
            uri = f"bolt://{LOCAL_BOLT_HOST}:{port}"
        return cls(
            uri=uri,
            username=env.get("NEO4J_USERNAME", "neo4j"),
            password=env.get("NEO4J_PASSWORD", LOCAL_DEFAULT_PASSWORD),
            database=env.get("NEO4J_DATABASE", "neo4j"),
            managed=managed,
        )


def neo4j_home(env: Mapping[str, str] | None = None) -> Path:
    """Where the project assembles and runs its local Neo4j (NARA_KG_NEO4J_HOME overrides)."""
    source: Mapping[str, str] = os.environ if env is None else env
    return Path(source.get("NARA_KG_NEO4J_HOME", PROJECT_ROOT / "neo4j" / "home")).resolve()


def work_dir(env: Mapping[str, str] | None = None) -> Path:
    """Pipeline working data: Parquet, rejects, caches (NARA_KG_WORK_DIR overrides)."""
    source: Mapping[str, str] = os.environ if env is None else env
    return Path(source.get("NARA_KG_WORK_DIR", PROJECT_ROOT / "var" / "work")).resolve()


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """The input export (NARA_DATA_DIR); defaults to the generated demo data."""
    source: Mapping[str, str] = os.environ if env is None else env
    return Path(source.get("NARA_DATA_DIR", PROJECT_ROOT / "var" / "demo-data")).resolve()


#: Defaults of every environment variable the Dagster resources are bound to. The CLI applies
#: them (without overriding what is set) before it loads the definitions, so a newcomer needs
#: none of them and a user with their own Neo4j sets only the NEO4J_* ones.
def env_defaults() -> dict[str, str]:
    return {
        # Empty means "the project's own local server" (see Neo4jSettings.from_env).
        "NEO4J_URI": "",
        "NEO4J_USERNAME": "neo4j",
        "NEO4J_PASSWORD": LOCAL_DEFAULT_PASSWORD,
        "NEO4J_DATABASE": "neo4j",
        "NARA_DATA_DIR": str(PROJECT_ROOT / "var" / "demo-data"),
        "NARA_KG_WORK_DIR": str(PROJECT_ROOT / "var" / "work"),
        "NARA_KG_EMBEDDING_MODEL": "all-MiniLM-L6-v2",
        "NARA_KG_EMBEDDING_BACKEND": "torch",
        "NARA_KG_QUESTIONS": "",
        # Community reports, answers and global search: "extractive" needs no model;
        # "openai" is any OpenAI-compatible endpoint; "transformers" a local model directory.
        "NARA_KG_LLM_BACKEND": "extractive",
        "NARA_KG_LLM_MODEL": "",
        "NARA_KG_LLM_BASE_URL": "",
        "NARA_KG_LLM_API_KEY": "",
    }


def apply_env_defaults(env: dict[str, str] | None = None) -> None:
    target: MutableMapping[str, str] = os.environ if env is None else env
    for key, value in env_defaults().items():
        target.setdefault(key, value)

"""Settings read from the environment when they are asked for, never at import time."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

#: The repository root (where `neo4j/`, `var/` and the Makefile live).
PROJECT_ROOT = Path(__file__).resolve().parent.parent

#: Documented default password of the project-managed local server (never used for a remote one).
LOCAL_DEFAULT_PASSWORD = "nara-kg-local"
DEFAULT_USERNAME = "neo4j"
DEFAULT_DATABASE = "neo4j"
#: Where the build reads its input and keeps its working data, unless configured.
DEFAULT_DATA_DIR = PROJECT_ROOT / "var" / "demo-data"
DEFAULT_WORK_DIR = PROJECT_ROOT / "var" / "work"
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
            username=env.get("NEO4J_USERNAME") or DEFAULT_USERNAME,
            password=env.get("NEO4J_PASSWORD") or LOCAL_DEFAULT_PASSWORD,
            database=env.get("NEO4J_DATABASE") or DEFAULT_DATABASE,
            managed=managed,
        )


def neo4j_home(env: Mapping[str, str] | None = None) -> Path:
    """Where the project assembles and runs its local Neo4j (NARA_KG_NEO4J_HOME overrides)."""
    source: Mapping[str, str] = os.environ if env is None else env
    return Path(source.get("NARA_KG_NEO4J_HOME", PROJECT_ROOT / "neo4j" / "home")).resolve()


def work_dir(env: Mapping[str, str] | None = None) -> Path:
    """Pipeline working data: Parquet, rejects, caches (NARA_KG_WORK_DIR overrides)."""
    source: Mapping[str, str] = os.environ if env is None else env
    return Path(source.get("NARA_KG_WORK_DIR") or DEFAULT_WORK_DIR).resolve()


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """The input export (NARA_DATA_DIR); defaults to the generated demo data."""
    source: Mapping[str, str] = os.environ if env is None else env
    return Path(source.get("NARA_DATA_DIR") or DEFAULT_DATA_DIR).resolve()

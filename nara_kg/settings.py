"""Settings read from the environment when they are asked for, never at import time.

Each environment variable's name is written once, here: the local server's and the CLI's own
below, and the resources' fields in `RESOURCE_VARIABLES`, which the Dagster resources bind with
`EnvVar` and the Dagster-free paths (`Neo4jSettings.from_env`, `nara-kg ask`) read with
`configured`. The functions read their variable on every call (pass `env` to read another
mapping than `os.environ`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

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
#: Where the local Neo4j is assembled and runs.
DEFAULT_NEO4J_HOME = PROJECT_ROOT / "neo4j" / "home"
#: Sized for a 2-core, 24 GiB machine that also runs the Python pipeline and a torch model.
DEFAULT_NEO4J_HEAP = "2g"
DEFAULT_NEO4J_PAGECACHE = "1g"
#: Exported ONNX models, one folder per model and export recipe.
DEFAULT_MODEL_CACHE = PROJECT_ROOT / "var" / "models"
#: The CLI's persistent Dagster instance.
DEFAULT_DAGSTER_HOME = PROJECT_ROOT / "var" / "dagster_home"


def _source(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


#: resource key -> {field: environment variable}: every variable a resource field is bound to.
RESOURCE_VARIABLES: dict[str, dict[str, str]] = {
    "neo4j": {
        "uri": "NEO4J_URI",
        "username": "NEO4J_USERNAME",
        "password": "NEO4J_PASSWORD",
        "database": "NEO4J_DATABASE",
    },
    "embedding_model": {
        "model": "NARA_KG_EMBEDDING_MODEL",
        "backend": "NARA_KG_EMBEDDING_BACKEND",
        "device": "NARA_KG_EMBEDDING_DEVICE",
        "threads": "NARA_KG_EMBEDDING_THREADS",
    },
    "llm": {
        "backend": "NARA_KG_LLM_BACKEND",
        "model": "NARA_KG_LLM_MODEL",
        "base_url": "NARA_KG_LLM_BASE_URL",
        "api_key": "NARA_KG_LLM_API_KEY",
        "timeout_s": "NARA_KG_LLM_TIMEOUT_S",
        "connect_timeout_s": "NARA_KG_LLM_CONNECT_TIMEOUT_S",
        "max_retries": "NARA_KG_LLM_MAX_RETRIES",
        "max_concurrency": "NARA_KG_LLM_MAX_CONCURRENCY",
        "max_tokens": "NARA_KG_LLM_MAX_TOKENS",
        "strict": "NARA_KG_LLM_STRICT",
    },
    "paths": {
        "data_dir": "NARA_DATA_DIR",
        "work_dir": "NARA_KG_WORK_DIR",
        "questions_file": "NARA_KG_QUESTIONS",
        "follow_external_links": "NARA_KG_FOLLOW_EXTERNAL_LINKS",
        "max_body_chars": "NARA_KG_MAX_BODY_CHARS",
        "leiden_seeded": "NARA_KG_LEIDEN_SEEDED",
    },
}

#: What a switch's text means on (anything else is off).
_TRUE = frozenset({"1", "true", "yes", "on"})


def configured(key: str, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The fields of resource `key` whose variable is set (and not empty), as text."""
    source = _source(env)
    return {
        field: source[variable]
        for field, variable in RESOURCE_VARIABLES[key].items()
        if source.get(variable)
    }


def parse_value(variable: str, text: str, kind: Any) -> Any:
    """`text` of `variable` as a value of `kind` (bool, int, float or str; the name, as in a
    postponed annotation, works too)."""
    if kind in (bool, "bool"):
        return text.strip().lower() in _TRUE
    if kind in (int, "int", float, "float"):
        number = int if kind in (int, "int") else float
        try:
            return number(text)
        except ValueError as error:
            raise ValueError(f"{variable}={text!r} is not a number") from error
    return text


def bolt_port(env: Mapping[str, str] | None = None) -> int:
    """The Bolt port of the project's local server (NARA_KG_BOLT_PORT overrides)."""
    configured_port = _source(env).get("NARA_KG_BOLT_PORT", "").strip()
    return (
        parse_value("NARA_KG_BOLT_PORT", configured_port, int)
        if configured_port
        else (LOCAL_BOLT_PORT)
    )


@dataclass(frozen=True)
class Neo4jSettings:
    uri: str
    username: str
    password: str
    database: str
    #: True when NEO4J_URI is unset and the project runs its own local server.
    managed: bool

    @classmethod
    def resolve(
        cls,
        uri: str = "",
        username: str = DEFAULT_USERNAME,
        password: str = LOCAL_DEFAULT_PASSWORD,
        database: str = DEFAULT_DATABASE,
        *,
        env: Mapping[str, str] | None = None,
    ) -> Neo4jSettings:
        """The connection: an empty `uri` means the project's managed local server (on
        `bolt_port`); an empty field, its default."""
        uri = uri.strip()
        managed = not uri
        if managed:
            uri = f"bolt://{LOCAL_BOLT_HOST}:{bolt_port(env)}"
        return cls(
            uri=uri,
            username=username or DEFAULT_USERNAME,
            password=password or LOCAL_DEFAULT_PASSWORD,
            database=database or DEFAULT_DATABASE,
            managed=managed,
        )

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Neo4jSettings:
        """The connection the Neo4j resource's variables configure."""
        return cls.resolve(**configured("neo4j", env), env=env)


def neo4j_home(env: Mapping[str, str] | None = None) -> Path:
    """Where the project assembles and runs its local Neo4j (NARA_KG_NEO4J_HOME overrides)."""
    return Path(_source(env).get("NARA_KG_NEO4J_HOME", DEFAULT_NEO4J_HOME)).resolve()


#: The local Neo4j's memory: how fast it runs, never what a build writes.
NEO4J_HEAP_VAR: Final = "NARA_KG_NEO4J_HEAP"
NEO4J_PAGECACHE_VAR: Final = "NARA_KG_NEO4J_PAGECACHE"


def neo4j_heap_size(env: Mapping[str, str] | None = None) -> str:
    """JVM heap of the local Neo4j, initial = max (NARA_KG_NEO4J_HEAP overrides)."""
    return _source(env).get(NEO4J_HEAP_VAR, "").strip() or DEFAULT_NEO4J_HEAP


def neo4j_pagecache_size(env: Mapping[str, str] | None = None) -> str:
    """Page cache of the local Neo4j (NARA_KG_NEO4J_PAGECACHE overrides)."""
    return _source(env).get(NEO4J_PAGECACHE_VAR, "").strip() or DEFAULT_NEO4J_PAGECACHE


def java_home(env: Mapping[str, str] | None = None) -> Path | None:
    """JAVA_HOME when it is set (the local Neo4j then runs its `bin/java`, if there is one)."""
    configured = _source(env).get("JAVA_HOME")
    return Path(configured) if configured else None


def model_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where exported ONNX models are kept (NARA_KG_MODEL_CACHE overrides)."""
    configured = _source(env).get("NARA_KG_MODEL_CACHE", "").strip()
    return Path(configured).expanduser() if configured else DEFAULT_MODEL_CACHE


def configured_dagster_home() -> Path | None:
    """DAGSTER_HOME when it is set (a step process opens that instance early), else None."""
    configured_home = os.environ.get("DAGSTER_HOME")
    return Path(configured_home) if configured_home else None


def dagster_home() -> Path:
    """The CLI's Dagster instance folder (DAGSTER_HOME). When unset, the default is exported
    too, because Dagster reads the variable itself."""
    return Path(os.environ.setdefault("DAGSTER_HOME", str(DEFAULT_DAGSTER_HOME)))

"""Settings read from the environment when they are asked for, never at import time.

Each default is written once, here; the functions read their variable on every call (pass
`env` to read another mapping than `os.environ`).
"""

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
#: Where the local Neo4j is assembled and runs.
DEFAULT_NEO4J_HOME = PROJECT_ROOT / "neo4j" / "home"
#: Sized for a 2-core, 24 GiB machine that also runs the Python pipeline and a torch model.
DEFAULT_NEO4J_HEAP = "2g"
DEFAULT_NEO4J_PAGECACHE = "1g"
#: Exported ONNX models, one folder per model and export recipe.
DEFAULT_MODEL_CACHE = PROJECT_ROOT / "var" / "models"
#: The CLI's persistent Dagster instance.
DEFAULT_DAGSTER_HOME = PROJECT_ROOT / "var" / "dagster_home"
#: Where `nara-kg bench` generates its data and builds it.
DEFAULT_BENCH_SCRATCH = PROJECT_ROOT / "var" / "bench"

#: The graph's server runs for months, but a freshly started one compiles its query paths during
#: its first builds: on a just-started Neo4j the timed build's graph steps took 2-3x as long (run
#: 27 against run 26). Measured with the stand-in model on a just-started server, the 5,000-record
#: build's steps after the model took 48.3 s with no warm-up, 31.6 s after a 200-record one, 29.1
#: s after 1,000 records, and 27.0 s on a server that had built the graph once already.
DEFAULT_WARM_UP_RECORDS = 1_000


def _source(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


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
    return Path(_source(env).get("NARA_KG_NEO4J_HOME", DEFAULT_NEO4J_HOME)).resolve()


def neo4j_heap_size(env: Mapping[str, str] | None = None) -> str:
    """JVM heap of the local Neo4j, initial = max (NARA_KG_NEO4J_HEAP overrides)."""
    return _source(env).get("NARA_KG_NEO4J_HEAP", "").strip() or DEFAULT_NEO4J_HEAP


def neo4j_pagecache_size(env: Mapping[str, str] | None = None) -> str:
    """Page cache of the local Neo4j (NARA_KG_NEO4J_PAGECACHE overrides)."""
    return _source(env).get("NARA_KG_NEO4J_PAGECACHE", "").strip() or DEFAULT_NEO4J_PAGECACHE


def java_home(env: Mapping[str, str] | None = None) -> Path | None:
    """JAVA_HOME when it is set (the local Neo4j then runs its `bin/java`, if there is one)."""
    configured = _source(env).get("JAVA_HOME")
    return Path(configured) if configured else None


def model_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where exported ONNX models are kept (NARA_KG_MODEL_CACHE overrides)."""
    configured = _source(env).get("NARA_KG_MODEL_CACHE", "").strip()
    return Path(configured).expanduser() if configured else DEFAULT_MODEL_CACHE


def dagster_home() -> Path:
    """The CLI's Dagster instance folder (DAGSTER_HOME). When unset, the default is exported
    too, because Dagster reads the variable itself."""
    return Path(os.environ.setdefault("DAGSTER_HOME", str(DEFAULT_DAGSTER_HOME)))


def work_dir(env: Mapping[str, str] | None = None) -> Path:
    """Pipeline working data: Parquet, rejects, caches (NARA_KG_WORK_DIR overrides)."""
    return Path(_source(env).get("NARA_KG_WORK_DIR") or DEFAULT_WORK_DIR).resolve()


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """The input export (NARA_DATA_DIR); defaults to the generated demo data."""
    return Path(_source(env).get("NARA_DATA_DIR") or DEFAULT_DATA_DIR).resolve()


def leiden_seeded(env: Mapping[str, str] | None = None) -> bool:
    """NARA_KG_LEIDEN_SEEDED=1: a run whose projection changed starts Leiden from the last run's
    level-0 communities (GDS seedProperty). Off by default: seeded, the communities depend on
    the order of past builds, so an incremental build's differ from a full build's (one
    community more on the 120-record demo after one file's edits), which the project's
    guarantee (incremental == full by graph fingerprint) does not allow; and unseeded Leiden
    (deterministic) with ids named by a member kept more communities as they were (after one
    record deleted from that demo: 14 of the 14 level-0 communities it did not reach, against
    8 seeded)."""
    return _source(env).get("NARA_KG_LEIDEN_SEEDED", "").strip().lower() in {"1", "true", "yes"}

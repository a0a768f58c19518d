"""What every part of the local server shares: versions, the home's layout, Java, the error."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from urllib.parse import urlsplit

from nara_kg.settings import LOCAL_BOLT_PORT, Neo4jSettings, java_home

NEO4J_VERSION = "5.26.24"
GDS_VERSION = "2.13.9"
ENTRY_POINT = "org.neo4j.server.CommunityEntryPoint"
ADMIN_TOOL = "org.neo4j.cli.AdminTool"


class Neo4jRuntimeError(RuntimeError):
    """The local server could not be assembled, started, reached or stopped."""


def conf_file(home: Path) -> Path:
    return home / "conf" / "neo4j.conf"


def log_file(home: Path) -> Path:
    return home / "logs" / "console.log"


def pid_file(home: Path) -> Path:
    return home / "run" / "neo4j.pid"


def bolt_port(settings: Neo4jSettings) -> int:
    return urlsplit(settings.uri).port or LOCAL_BOLT_PORT


def java() -> str:
    configured = java_home()
    if configured and (configured / "bin" / "java").is_file():
        return str(configured / "bin" / "java")
    found = shutil.which("java")
    if found is None:
        raise Neo4jRuntimeError("Java 17+ (`java`) is not on PATH (nor in JAVA_HOME)")
    return found


#: The variables of this process that the Neo4j processes get: where things are, the locale
#: (Java reads arguments and files in its charset) and the time zone. Nothing else: the caller's
#: environment holds secrets the JVM has no use for (an LLM key, cloud credentials).
SERVER_ENV_VARIABLES = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "TMPDIR",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "JAVA_HOME",
)


def server_env(home: Path) -> dict[str, str]:
    """The environment of the Neo4j processes: an allow-listed few of this process's variables
    (`SERVER_ENV_VARIABLES`), with the home and its conf."""
    kept = {name: os.environ[name] for name in SERVER_ENV_VARIABLES if name in os.environ}
    return dict(kept, NEO4J_HOME=str(home), NEO4J_CONF=str(home / "conf"))

"""Making a home ready to start: the jars from Maven Central, neo4j.conf, the initial password.

``neo4j/pom.xml`` copies Neo4j and its dependencies into ``lib/`` and GDS with what lib lacks
into ``plugins/``; a marker records the versions, so the download happens once per version.
The initial password is set once per ``data/`` and remembered as a salted digest beside it.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from nara_kg.devserver.config import write_conf
from nara_kg.devserver.layout import (
    ADMIN_TOOL,
    GDS_VERSION,
    NEO4J_VERSION,
    Neo4jRuntimeError,
    java,
    server_env,
)
from nara_kg.model.progress import Log
from nara_kg.settings import PROJECT_ROOT, Neo4jSettings

POM_FILE = PROJECT_ROOT / "neo4j" / "pom.xml"

_ASSEMBLED_MARKER = ".assembled"
_PASSWORD_MARKER = ".nara-kg-initial-password"


def _assembled_marker(home: Path) -> Path:
    return home / _ASSEMBLED_MARKER


def _password_marker(home: Path) -> Path:
    # Under data/ so that deleting <home>/data resets the password together with the databases.
    return home / "data" / _PASSWORD_MARKER


def is_assembled(home: Path) -> bool:
    marker = _assembled_marker(home)
    if not marker.is_file():
        return False
    return marker.read_text().strip() == f"neo4j={NEO4J_VERSION} gds={GDS_VERSION}"


def _mvn() -> str:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise Neo4jRuntimeError("Maven (`mvn`) is not on PATH: it is needed to assemble Neo4j")
    return mvn


def _copy_dependencies(home: Path, profile: str) -> None:
    cmd = [
        _mvn(),
        "-q",
        "-B",
        "-f",
        str(POM_FILE),
        f"-Dneo4j.home={home}",
        f"-P{profile}",
        "dependency:copy-dependencies",
        "dependency:list",
    ]
    proc = subprocess.run(cmd, cwd=PROJECT_ROOT, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        output = (proc.stdout + proc.stderr).strip().splitlines()
        tail = "\n".join(output[-40:])
        raise Neo4jRuntimeError(f"`{' '.join(cmd[1:])}` failed (exit {proc.returncode}):\n{tail}")


def _assemble_jars(home: Path, log: Log) -> None:
    if is_assembled(home):
        return
    log(
        f"assembling Neo4j {NEO4J_VERSION} + GDS {GDS_VERSION} from Maven Central into {home} "
        "(first use; Maven caches the downloads in ~/.m2)"
    )
    started = time.monotonic()
    for sub in ("lib", "plugins"):
        shutil.rmtree(home / sub, ignore_errors=True)
    log(f"  resolving org.neo4j:neo4j:{NEO4J_VERSION} into {home / 'lib'} ...")
    _copy_dependencies(home, "neo4j-lib")
    log(f"  resolving the open GDS {GDS_VERSION} plugin into {home / 'plugins'} ...")
    _copy_dependencies(home, "gds-plugins")
    duplicates = _duplicate_jars(home)
    if duplicates:
        raise Neo4jRuntimeError(
            "lib/ and plugins/ hold the same libraries (update excludeArtifactIds in "
            f"{POM_FILE}): {', '.join(sorted(duplicates))}"
        )
    n_lib = len(list((home / "lib").glob("*.jar")))
    n_plugins = len(list((home / "plugins").glob("*.jar")))
    _assembled_marker(home).write_text(f"neo4j={NEO4J_VERSION} gds={GDS_VERSION}\n")
    log(
        f"  assembled {n_lib} jars in lib/ and {n_plugins} in plugins/ "
        f"in {time.monotonic() - started:.0f}s"
    )


def _artifacts(home: Path, sub: str) -> set[str]:
    """``groupId:artifactId`` of what Maven copied into ``<home>/<sub>`` (from dependency:list)."""
    listing = home / f"{sub}.artifacts.txt"
    found: set[str] = set()
    for line in listing.read_text().splitlines():
        coords = line.strip().split(" ", 1)[0].split(":")
        if len(coords) >= 4:
            found.add(f"{coords[0]}:{coords[1]}")
    return found


def _duplicate_jars(home: Path) -> set[str]:
    """Artifacts (``groupId:artifactId``) that are in both lib/ and plugins/."""
    return _artifacts(home, "lib") & _artifacts(home, "plugins")


def _password_digest(password: str, salt: str) -> str:
    return hashlib.sha256(f"{salt}:{password}".encode()).hexdigest()


def password_problem(settings: Neo4jSettings, home: Path) -> str | None:
    """Why the configured password cannot work with this home, or None when it can."""
    marker = _password_marker(home)
    if not marker.is_file():
        return None
    salt, _, digest = marker.read_text().strip().partition(":")
    if _password_digest(settings.password, salt) == digest:
        return None
    return (
        f"the local Neo4j in {home} was initialised with a different password than the current "
        "NEO4J_PASSWORD (or the documented local default when it is unset). Either set "
        "NEO4J_PASSWORD back to the original one, or reset the local server (this deletes its "
        f"databases): `nara-kg neo4j stop && rm -rf {home / 'data'}`"
    )


def _argument_file_quote(value: str) -> str:
    """One argument of a picocli argument file: double-quoted, so that spaces, quotes, `#` and
    a leading `@` stay part of it, with backslashes and double quotes escaped."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _set_initial_password(settings: Neo4jSettings, home: Path, log: Log) -> None:
    marker = _password_marker(home)
    if marker.is_file() or (home / "data" / "databases").exists():
        return
    log(f"  setting the initial password of user '{settings.username}'")
    if settings.username != "neo4j":
        raise Neo4jRuntimeError(
            "the local server only has the built-in user 'neo4j' (Community Edition): "
            "unset NEO4J_USERNAME or set it to 'neo4j'"
        )
    # The password goes in an argument file (neo4j-admin's picocli expands `@file`) readable
    # by this user only, never on the command line, where `ps` shows it to every user.
    fd, name = tempfile.mkstemp(prefix="initial-password-", dir=home / "run")
    arguments = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(_argument_file_quote(settings.password) + "\n")
        proc = subprocess.run(
            [
                java(),
                "-Dfile.encoding=UTF-8",
                "-cp",
                str(home / "lib" / "*"),
                ADMIN_TOOL,
                "dbms",
                "set-initial-password",
                f"@{arguments}",
            ],
            cwd=home,
            env=server_env(home),
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        arguments.unlink(missing_ok=True)
    if proc.returncode != 0:
        # The output does not echo the password, but be safe anyway.
        output = (proc.stdout + proc.stderr).replace(settings.password, "***").strip()
        raise Neo4jRuntimeError(
            f"neo4j-admin dbms set-initial-password failed (exit {proc.returncode}): {output}"
        )
    salt = secrets.token_hex(8)
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(f"{salt}:{_password_digest(settings.password, salt)}\n")


def assemble(home: Path, *, settings: Neo4jSettings | None = None, log: Log = print) -> None:
    """Make ``home`` ready to start: jars (when missing), neo4j.conf, initial password (once)."""
    settings = Neo4jSettings.from_env() if settings is None else settings
    home = home.resolve()
    home.mkdir(parents=True, exist_ok=True)
    _assemble_jars(home, log)
    for sub in ("data", "logs", "run", "import", "licenses"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    write_conf(settings, home)
    _set_initial_password(settings, home, log)

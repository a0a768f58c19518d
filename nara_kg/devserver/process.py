"""The local server as a process: start (and wait for Bolt), stop, status.

The server runs in its own session and is found again through ``<home>/run/neo4j.pid``,
checked against ``/proc`` so that a reused pid is not mistaken for it.
With an external server (``NEO4J_URI`` set) nothing is started or stopped here.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

from nara_kg.devserver.assembly import assemble, is_assembled, password_problem
from nara_kg.devserver.config import JVM_OPTIONS
from nara_kg.devserver.layout import (
    ENTRY_POINT,
    GDS_VERSION,
    NEO4J_VERSION,
    Neo4jRuntimeError,
    bolt_port,
    java,
    log_file,
    pid_file,
    server_env,
)
from nara_kg.model.progress import Log
from nara_kg.settings import Neo4jSettings, neo4j_heap_size

#: Processes started by this Python process (so that their exit is reaped, not left as zombies).
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


def _read_pid(home: Path) -> int | None:
    try:
        return int(pid_file(home).read_text().strip())
    except (OSError, ValueError):
        return None


def _pid_alive(pid: int) -> bool:
    child = _CHILDREN.get(pid)
    if child is not None:
        return child.poll() is None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return False
    return True


def _is_our_server(pid: int, home: Path) -> bool:
    """The pid is alive and (where /proc tells) is the Neo4j of this home, not a reused pid."""
    if not _pid_alive(pid):
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return True
    args = [a.decode(errors="replace") for a in cmdline]
    return ENTRY_POINT in args and f"--home-dir={home}" in args


def running_pid(home: Path) -> int | None:
    """The pid of this home's running server, or None (a stale pid file is removed)."""
    home = home.resolve()
    pid = _read_pid(home)
    if pid is None:
        return None
    if _is_our_server(pid, home):
        return pid
    with contextlib.suppress(OSError):
        pid_file(home).unlink()
    return None


def _port_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def _log_tail(home: Path, lines: int = 40) -> str:
    path = log_file(home)
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return f"(no log at {path})"
    return "\n".join(text.splitlines()[-lines:])


def _driver(settings: Neo4jSettings, *, timeout: float = 5.0) -> Any:
    from neo4j import GraphDatabase

    return GraphDatabase.driver(
        settings.uri,
        auth=(settings.username, settings.password),
        connection_timeout=timeout,
        max_connection_lifetime=60,
    )


def check_connectivity(settings: Neo4jSettings, *, timeout: float = 5.0) -> None:
    """Raise unless the server answers Bolt and accepts the credentials."""
    with _driver(settings, timeout=timeout) as driver:
        driver.verify_connectivity()


def _launch(settings: Neo4jSettings, home: Path) -> subprocess.Popen[bytes]:
    heap = neo4j_heap_size()
    cmd = [
        java(),
        f"-Xms{heap}",
        f"-Xmx{heap}",
        *JVM_OPTIONS,
        "-cp",
        f"{home / 'lib'}/*:{home / 'plugins'}/*",
        ENTRY_POINT,
        f"--home-dir={home}",
        f"--config-dir={home / 'conf'}",
        "--console-mode",
    ]
    console = log_file(home)
    console.parent.mkdir(parents=True, exist_ok=True)
    if console.exists():
        console.replace(console.with_name(console.name + ".1"))
    env = server_env(home)
    with console.open("ab") as out:
        proc = subprocess.Popen(
            cmd,
            cwd=home,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    _CHILDREN[proc.pid] = proc
    pid_file(home).parent.mkdir(parents=True, exist_ok=True)
    pid_file(home).write_text(f"{proc.pid}\n")
    return proc


def start(settings: Neo4jSettings, home: Path, *, timeout: float = 180, log: Log = print) -> bool:
    """Start the local server unless it runs; True if this call started it.

    With an external server (``NEO4J_URI`` set) nothing is started: its connectivity is checked
    and False is returned.
    """
    if not settings.managed:
        log(
            f"NEO4J_URI is set: using the external Neo4j at {settings.uri} (nothing local to start)"
        )
        try:
            check_connectivity(settings, timeout=min(timeout, 15))
        except Exception as exc:
            raise Neo4jRuntimeError(
                f"the external Neo4j at {settings.uri} does not answer: {exc}"
            ) from exc
        log(f"Neo4j at {settings.uri} is reachable")
        return False

    home = home.resolve()
    problem = password_problem(settings, home)
    if problem:
        raise Neo4jRuntimeError(problem)
    pid = running_pid(home)
    if pid is not None:
        log(f"Neo4j is already running (pid {pid}) at {settings.uri}")
        return False
    port = bolt_port(settings)
    if _port_open(port):
        raise Neo4jRuntimeError(
            f"port {port} on 127.0.0.1 is already in use by another process (not the Neo4j of "
            f"{home}): stop it, or set NARA_KG_BOLT_PORT to a free port, or point NEO4J_URI at "
            "that server"
        )

    assemble(home, settings=settings, log=log)
    started = time.monotonic()
    proc = _launch(settings, home)
    log(f"starting Neo4j {NEO4J_VERSION} (pid {proc.pid}), log: {log_file(home)}")
    deadline = started + timeout
    last_error: Exception | None = None
    next_note = started + 15
    while True:
        if proc.poll() is not None:
            with contextlib.suppress(OSError):
                pid_file(home).unlink()
            raise Neo4jRuntimeError(
                f"Neo4j exited during startup (exit code {proc.returncode}); last lines of "
                f"{log_file(home)}:\n{_log_tail(home)}"
            )
        if _port_open(port):
            try:
                check_connectivity(settings, timeout=5)
                break
            except Exception as exc:
                last_error = exc
                if _is_auth_error(exc):
                    stop(home)
                    raise Neo4jRuntimeError(
                        f"Neo4j started but rejected the credentials of user "
                        f"'{settings.username}': the server was probably initialised with "
                        "another password. Set NEO4J_PASSWORD to it, or reset the local "
                        f"server (deletes its databases): rm -rf {home / 'data'}"
                    ) from exc
        now = time.monotonic()
        if now > deadline:
            stop(home)
            raise Neo4jRuntimeError(
                f"Neo4j did not answer on {settings.uri} within {timeout:.0f}s "
                f"(last error: {last_error}); it was stopped. Last lines of "
                f"{log_file(home)}:\n{_log_tail(home)}"
            )
        if now >= next_note:
            log(f"  still waiting for Bolt on {settings.uri} ({now - started:.0f}s) ...")
            next_note = now + 15
        time.sleep(1)
    log(f"Neo4j is up at {settings.uri} ({time.monotonic() - started:.0f}s)")
    return True


def _is_auth_error(exc: Exception) -> bool:
    from neo4j.exceptions import AuthError

    return isinstance(exc, AuthError)


def stop(home: Path, *, timeout: float = 60, log: Log | None = None) -> bool:
    """Stop this home's server (SIGTERM, SIGKILL after ``timeout``); True if one was running."""
    home = home.resolve()
    pid = running_pid(home)
    if pid is None:
        return False
    if log:
        log(f"stopping Neo4j (pid {pid}) ...")
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.25)
    if _pid_alive(pid):
        if log:
            log(f"Neo4j did not stop within {timeout:.0f}s: killing it")
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        kill_deadline = time.monotonic() + 10
        while _pid_alive(pid) and time.monotonic() < kill_deadline:
            time.sleep(0.1)
    child = _CHILDREN.pop(pid, None)
    if child is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout=1)
    with contextlib.suppress(OSError):
        pid_file(home).unlink()
    if log:
        log("Neo4j stopped")
    return True


# ----------------------------------------------------------------------------------------------
# Status


def _query_versions(settings: Neo4jSettings) -> tuple[str | None, str | None, str | None]:
    neo4j_version: str | None = None
    edition: str | None = None
    gds_version: str | None = None
    with _driver(settings) as driver:
        records, _, _ = driver.execute_query(
            "CALL dbms.components() YIELD name, versions, edition "
            "RETURN name, versions[0] AS version, edition",
            database_=settings.database,
        )
        for record in records:
            if record["name"] == "Neo4j Kernel":
                neo4j_version = record["version"]
                edition = record["edition"]
        try:
            records, _, _ = driver.execute_query(
                "RETURN gds.version() AS version", database_=settings.database
            )
            gds_version = records[0]["version"]
        except Exception:
            gds_version = None
    return neo4j_version, edition, gds_version


def status(settings: Neo4jSettings, home: Path) -> dict[str, Any]:
    """Where the graph server is and whether it runs (the password is never included)."""
    info: dict[str, Any] = {
        "uri": settings.uri,
        "user": settings.username,
        "database": settings.database,
        "managed": settings.managed,
        "running": False,
        "pid": None,
        "neo4j_version": None,
        "gds_version": None,
        "log_file": None,
        "home": None,
        "error": None,
    }
    if settings.managed:
        home = home.resolve()
        pid = running_pid(home)
        info.update(
            running=pid is not None,
            pid=pid,
            neo4j_version=NEO4J_VERSION,
            gds_version=GDS_VERSION,
            log_file=str(log_file(home)),
            home=str(home),
            assembled=is_assembled(home),
            error=password_problem(settings, home),
        )
        if pid is None or info["error"]:
            return info
    try:
        neo4j_version, edition, gds_version = _query_versions(settings)
    except Exception as exc:
        info["error"] = f"cannot query {settings.uri}: {exc}"
        return info
    info.update(running=True, neo4j_version=neo4j_version, edition=edition, gds_version=gds_version)
    return info

"""A real, throwaway PostgreSQL 15 server for the deployment tests.

Debian's `postgresql` package provides the binaries (`/usr/lib/postgresql/15/bin`, or
NARA_KG_PG_BIN). initdb refuses to run as root, so as root the server runs as the `postgres`
system user (`runuser -u postgres --`) in a temporary directory owned by it; as any other user
it runs directly. It listens on 127.0.0.1 only, on a free port, with password authentication
over TCP, and is stopped and removed after the session.

When the binaries are missing the tests FAIL (CI installs them, see `.ci/run`); set
NARA_KG_ALLOW_SKIP_POSTGRES=1 to skip them instead.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PG_BIN_ENV = "NARA_KG_PG_BIN"
DEFAULT_PG_BIN = "/usr/lib/postgresql/15/bin"
ALLOW_SKIP_ENV = "NARA_KG_ALLOW_SKIP_POSTGRES"
SYSTEM_USER = "postgres"


@dataclass(frozen=True)
class PostgresServer:
    host: str
    port: int
    user: str
    password: str
    dbname: str

    def dagster_env(self) -> dict[str, str]:
        """The variables deploy/postgres/dagster.yaml reads."""
        return {
            "DAGSTER_PG_HOST": self.host,
            "DAGSTER_PG_PORT": str(self.port),
            "DAGSTER_PG_USER": self.user,
            "DAGSTER_PG_PASSWORD": self.password,
            "DAGSTER_PG_DB": self.dbname,
        }

    def connect_kwargs(self) -> dict[str, str | int]:
        """Keyword arguments of `psycopg2.connect`."""
        return {
            "host": self.host,
            "port": self.port,
            "user": self.user,
            "password": self.password,
            "dbname": self.dbname,
        }


def _unavailable(message: str) -> None:
    if os.environ.get(ALLOW_SKIP_ENV) == "1":
        pytest.skip(f"{message} ({ALLOW_SKIP_ENV}=1: skipping the PostgreSQL tests)")
    pytest.fail(
        f"{message}. Install PostgreSQL 15 (`apt-get install -y postgresql`, as `.ci/run` does), "
        f"point {PG_BIN_ENV} at its bin folder, or set {ALLOW_SKIP_ENV}=1 to skip these tests.",
        pytrace=False,
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _Runner:
    """Runs the server's commands as the current user, or as `postgres` when that is root."""

    def __init__(self, bin_dir: Path, cwd: Path) -> None:
        self.bin_dir = bin_dir
        self.cwd = cwd
        self.as_root = os.geteuid() == 0

    def __call__(self, tool: str, *args: str, timeout: float = 120) -> None:
        command = [str(self.bin_dir / tool), *args]
        if self.as_root:
            command = ["runuser", "-u", SYSTEM_USER, "--", *command]
        done = subprocess.run(
            command,
            cwd=self.cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env={**os.environ, "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"},
        )
        if done.returncode != 0:
            log = self.cwd / "server.log"
            tail = log.read_text(errors="replace")[-4000:] if log.exists() else ""
            raise RuntimeError(
                f"{' '.join(command)} exited {done.returncode}:\n{done.stdout}{done.stderr}"
                f"\n--- server.log ---\n{tail}"
            )


def _make_root(as_root: bool) -> Path:
    """A private temporary folder that the server's user owns."""
    root = Path(tempfile.mkdtemp(prefix="nara-kg-postgres-"))
    if as_root:
        try:
            account = pwd.getpwnam(SYSTEM_USER)
        except KeyError:
            shutil.rmtree(root)
            _unavailable(f"running as root but there is no `{SYSTEM_USER}` system user")
        os.chown(root, account.pw_uid, account.pw_gid)
    return root


def _create_database(server: PostgresServer) -> None:
    import psycopg2

    admin = psycopg2.connect(**{**server.connect_kwargs(), "dbname": "postgres"})
    try:
        admin.autocommit = True
        with admin.cursor() as cursor:
            cursor.execute(f'CREATE DATABASE "{server.dbname}"')
    finally:
        admin.close()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A running PostgreSQL 15 with an empty database; stopped and deleted afterwards."""
    bin_dir = Path(os.environ.get(PG_BIN_ENV, DEFAULT_PG_BIN))
    missing = [tool for tool in ("initdb", "pg_ctl") if not (bin_dir / tool).is_file()]
    if missing:
        _unavailable(f"PostgreSQL binaries {', '.join(missing)} not found in {bin_dir}")
    as_root = os.geteuid() == 0
    if as_root and shutil.which("runuser") is None:
        _unavailable("running as root but `runuser` (util-linux) is not on PATH")

    root = _make_root(as_root)
    data = root / "data"
    password = "nara-kg-test"
    password_file = root / "password"
    password_file.write_text(password + "\n", encoding="utf-8")
    if as_root:
        account = pwd.getpwnam(SYSTEM_USER)
        os.chown(password_file, account.pw_uid, account.pw_gid)
    run = _Runner(bin_dir, root)
    server = PostgresServer(
        host="127.0.0.1", port=_free_port(), user="dagster", password=password, dbname="dagster"
    )
    try:
        run(
            "initdb",
            "--pgdata",
            str(data),
            "--username",
            server.user,
            "--pwfile",
            str(password_file),
            "--auth-local",
            "trust",
            "--auth-host",
            "scram-sha-256",
            "--encoding",
            "UTF8",
            "--no-instructions",
        )
        options = (
            f"-c listen_addresses={server.host} -c port={server.port} "
            f"-c unix_socket_directories={root} -c fsync=off -c full_page_writes=off"
        )
        run(
            "pg_ctl",
            "start",
            "--pgdata",
            str(data),
            "--log",
            str(root / "server.log"),
            "--wait",
            "--timeout",
            "60",
            "-o",
            options,
        )
        _create_database(server)
        yield server
    finally:
        _stop(run, data)
        shutil.rmtree(root, ignore_errors=True)


def _stop(run: _Runner, data: Path) -> None:
    if not (data / "postmaster.pid").exists():
        return
    for mode in ("fast", "immediate"):
        try:
            run("pg_ctl", "stop", "--pgdata", str(data), "--mode", mode, "--wait")
            return
        except (RuntimeError, subprocess.TimeoutExpired):
            continue

"""`nara-kg serve` against hostile clients: a new `X-Forwarded-For` on each request does not
escape the rate limit, a Host header naming another site is refused (DNS rebinding), and a
connection whose headers or body never complete is closed. The server runs as `nara-kg serve`
does (the command itself, or `build_server` for the body's short deadline); Neo4j is down,
which none of this needs."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from neo4j import exceptions as neo4j_errors

from nara_kg.api import Services
from nara_kg.api.server import DEFAULT_HEADER_TIMEOUT_S, build_server
from nara_kg.embedding.encoder import Embedder
from nara_kg.generation.llm import ExtractiveLLM
from nara_kg.settings import PROJECT_ROOT


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`nara-kg serve --rate-limit 60` (bursts of 60) on a free port, Neo4j unreachable."""
    port, work = free_port(), tmp_path_factory.mktemp("serve")
    env = {
        **os.environ,
        "NEO4J_URI": f"bolt://127.0.0.1:{free_port()}",
        "NARA_KG_WORK_DIR": str(work),
    }
    env.pop("NARA_KG_ALLOWED_HOSTS", None)
    env.pop("NARA_KG_FORWARDED_ALLOW_IPS", None)
    command = [str(Path(sys.executable).parent / "nara-kg"), "serve", "--port", str(port)]
    server = subprocess.Popen(
        [*command, "--rate-limit", "60"],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                httpx.get(f"{url}/api/health", timeout=2)
                break
            except httpx.TransportError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("nara-kg serve did not start", pytrace=False)
                time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_forwarded_for_does_not_escape_the_rate_limit(served: str) -> None:
    """Bursts of 60, then one a second: 120 requests in a few seconds meet the limit, however
    many addresses they claim to forward."""
    with httpx.Client() as client:
        statuses = [
            client.get(
                f"{served}/api/records/1", headers={"X-Forwarded-For": f"203.0.113.{i % 250}"}
            ).status_code
            for i in range(120)
        ]
    assert 429 in statuses, statuses


def test_a_foreign_host_is_refused(served: str) -> None:
    for host in ("attacker.example", "attacker.example:8000", "127.0.0.1.attacker.example"):
        reply = httpx.get(f"{served}/api/health", headers={"Host": host})
        assert reply.status_code == 400, (host, reply.text)
        assert "does not answer to the host" in reply.json()["error"]
        refused = httpx.post(
            f"{served}/api/ask", json={"question": "flood"}, headers={"Host": host}
        )
        assert refused.status_code == 400
    port = served.rsplit(":", 1)[1]
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "LOCALHOST", f"[::1]:{port}"):
        reply = httpx.get(f"{served}/api/health", headers={"Host": host})
        assert reply.status_code == 503, (host, reply.text)  # allowed; Neo4j is down


def closed_within(sock: socket.socket, seconds: float) -> tuple[bool, bytes]:
    """Whether the server closed the connection within `seconds`, and what it sent."""
    sock.settimeout(seconds)
    received = b""
    try:
        while chunk := sock.recv(4096):
            received += chunk
        return True, received
    except TimeoutError:
        return False, received
    except ConnectionResetError:
        return True, received


def test_headers_that_never_complete_are_cut_off(served: str) -> None:
    host, port = served.removeprefix("http://").split(":")
    slack = DEFAULT_HEADER_TIMEOUT_S + 5
    with socket.create_connection((host, int(port))) as silent:
        assert closed_within(silent, slack)[0], "a connection that sent nothing stayed open"
    with socket.create_connection((host, int(port))) as dripping:
        dripping.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        started = time.monotonic()
        closed, reply = False, b""
        while time.monotonic() - started < slack and not closed:
            try:
                dripping.sendall(b"X-Drip: a\r\n")
            except OSError:
                closed = True
                break
            closed, reply = closed_within(dripping, 1.0)
        assert closed, "a request whose headers never end kept its connection"
        assert reply.startswith(b"HTTP/1.1 408")


@pytest.fixture
def short_body_deadline() -> Iterator[str]:
    """The server `nara-kg serve` runs, in process, with a body deadline of 1 s."""

    def get_driver() -> Any:
        raise neo4j_errors.ServiceUnavailable("down")

    services = Services(
        get_driver=get_driver, database="neo4j", embedder=Embedder(), llm=ExtractiveLLM()
    )
    port = free_port()
    server = build_server("127.0.0.1", port, services=services, body_timeout_s=1.0)
    server.config.log_level = "warning"
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.05)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_a_body_that_never_completes_is_cut_off(short_body_deadline: str) -> None:
    host, port = short_body_deadline.split(":")
    with socket.create_connection((host, int(port))) as stalled:
        stalled.sendall(
            b"POST /api/search HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
            b'{"query": "fl'
        )
        started = time.monotonic()
        closed, reply = closed_within(stalled, 10)
        assert closed and time.monotonic() - started < 5
        assert reply.startswith(b"HTTP/1.1 408"), reply

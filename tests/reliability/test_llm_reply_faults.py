"""An OpenAI-compatible endpoint that drips its reply or sends far too much: the call ends within
its time budget (then the caller falls back to the extractive method), and an oversized reply is
an error that never reaches the cache. The endpoints are raw sockets on the loopback interface,
each with a bounded number of bytes to send."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from nara_kg.generation.llm import (
    GenerationCache,
    LLMError,
    LLMUnreachable,
    OpenAICompatibleLLM,
    cached_complete,
)

#: Seconds between two dripped bytes, and the most bytes dripped (so a server gives up after
#: DRIP_BYTES * DRIP_INTERVAL_S, well past the budget, if the client never does).
DRIP_INTERVAL_S = 0.2
DRIP_BYTES = 100
BUDGET_S = 2.0


def _completion(content: str) -> bytes:
    return json.dumps(
        {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}
    ).encode()


def _read_request(conn: socket.socket) -> None:
    """Reads the request's headers and its Content-Length body."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return
        body += chunk


def _drip(conn: socket.socket, data: bytes) -> None:
    for byte in data[:DRIP_BYTES]:
        conn.sendall(bytes([byte]))
        time.sleep(DRIP_INTERVAL_S)


@contextmanager
def raw_endpoint(respond: Callable[[socket.socket], None]) -> Iterator[str]:
    """Serves each connection on 127.0.0.1 with `respond` (after reading its request) until
    the block ends; a client that hangs up ends that connection's reply."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve(conn: socket.socket) -> None:
        with conn:
            try:
                _read_request(conn)
                respond(conn)
            except OSError:
                pass  # the client hung up

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()


def drip_headers(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\n")
    _drip(conn, b"X-Padding: " + b"a" * 200 + b"\r\n")


def drip_body(conn: socket.socket) -> None:
    body = _completion("a reply sent one byte at a time " * 10)
    conn.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
    )
    _drip(conn, body)


@pytest.mark.parametrize("respond", [drip_headers, drip_body], ids=["headers", "body"])
def test_a_dripping_reply_ends_within_the_time_budget(respond: Callable[..., None]) -> None:
    with raw_endpoint(respond) as url:
        llm = OpenAICompatibleLLM(url, "model", None, timeout_s=BUDGET_S, backoff_s=0.1)
        started = time.monotonic()
        with pytest.raises(LLMUnreachable, match="did not answer"):
            llm.complete("Who photographed the relocation center?")
        elapsed = time.monotonic() - started
    # Retries included: the whole call ends at its budget, not one read timeout after the last byte.
    assert elapsed < BUDGET_S + 1.0, elapsed


def _send_whole(body: bytes, *, chunked: bool) -> Callable[[socket.socket], None]:
    def respond(conn: socket.socket) -> None:
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        if not chunked:
            conn.sendall(head + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
            return
        conn.sendall(head + b"Transfer-Encoding: chunked\r\n\r\n")
        for start in range(0, len(body), 65536):
            part = body[start : start + 65536]
            conn.sendall(f"{len(part):x}\r\n".encode() + part + b"\r\n")
        conn.sendall(b"0\r\n\r\n")

    return respond


@pytest.mark.parametrize(
    ("content_chars", "chunked"),
    [(5_000_000, False), (5_000_000, True), (1_000, False)],
    ids=["huge-declared", "huge-chunked", "over-the-character-cap"],
)
def test_a_reply_longer_than_a_few_times_max_tokens_is_an_error_and_is_not_cached(
    content_chars: int, chunked: bool
) -> None:
    body = _completion("x" * content_chars)
    with raw_endpoint(_send_whole(body, chunked=chunked)) as url:
        llm = OpenAICompatibleLLM(url, "model", None, timeout_s=10.0, max_tokens=100)
        cache = GenerationCache(":memory:")
        with pytest.raises(LLMError, match="reply too long") as raised:
            cached_complete(llm, "Summarise the records.", cache)
        assert not isinstance(raised.value, LLMUnreachable)
        assert len(cache) == 0


def test_a_reply_within_the_cap_is_returned() -> None:
    content = "The photographer was Fred Yamaguchi. " * 20  # 740 characters, cap 800
    with raw_endpoint(_send_whole(_completion(content), chunked=True)) as url:
        llm = OpenAICompatibleLLM(url, "model", None, timeout_s=10.0, max_tokens=100)
        assert llm.complete("Who photographed it?") == content

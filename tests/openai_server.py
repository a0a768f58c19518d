"""A local OpenAI-compatible chat-completions server for tests: it plays scripted replies in
order, or answers each request with a function of its messages."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    content: str | None = "ok"
    body: str | None = None  # raw body; overrides `content`
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


#: A request's JSON payload -> the reply to it.
Answer = Callable[[dict[str, Any]], Reply]


@dataclass
class FakeServer:
    url: str
    replies: list[Reply]
    requests: list[dict[str, Any]]

    @property
    def calls(self) -> int:
        return len(self.requests)


def prompt_of(payload: dict[str, Any]) -> str:
    """The last user message of a chat-completions request."""
    return str(payload["messages"][-1]["content"])


@contextmanager
def openai_test_server(answer: Answer | None = None) -> Iterator[FakeServer]:
    """Serve on 127.0.0.1: `answer(payload)` when given, else the next scripted reply (a 500
    when none is left)."""
    replies: list[Reply] = []
    requests: list[dict[str, Any]] = []
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            payload = json.loads(self.rfile.read(length))
            with lock:
                requests.append(
                    {
                        "path": self.path,
                        "authorization": self.headers.get("Authorization"),
                        "json": payload,
                    }
                )
                if answer is not None:
                    reply = answer(payload)
                else:
                    reply = (
                        replies.pop(0) if replies else Reply(status=500, body="no reply scripted")
                    )
            if reply.delay_s:
                time.sleep(reply.delay_s)
            if reply.body is not None:
                body = reply.body
            else:
                body = json.dumps(
                    {
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": reply.content}}
                        ]
                    }
                )
            data = body.encode("utf-8")
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    httpd.block_on_close = False
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    host, port = httpd.server_address[:2]
    try:
        yield FakeServer(url=f"http://{host!s}:{port}/v1/", replies=replies, requests=requests)
    finally:
        httpd.shutdown()
        httpd.server_close()

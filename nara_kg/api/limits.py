"""Request size, time and rate limits and the Host allow-list, as plain ASGI middleware (they
run before any parsing).

* Host: a request whose Host header names no allowed host is refused with 400 (DNS rebinding:
  a page of another site that resolves its own name to this machine).
* Size: a body over `max_body_bytes` is refused with 413, from its Content-Length when it
  declares one, else as soon as the streamed body passes the limit.
* Time: a body that has not arrived `timeout_s` after the request began is refused with 408
  (the time to send the headers is the server's, `server.header_deadline_protocol`).
* Rate: a token bucket per client address over the API's paths (`/api/`, health excluded):
  `per_minute` requests a minute on average, bursts up to `burst`; past it, 429 with
  Retry-After. In memory, per process: one server process is what `nara-kg serve` runs.
"""

from __future__ import annotations

import asyncio
import json
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: A request body this large holds a 200,000-character query several times over.
DEFAULT_MAX_BODY_BYTES = 1024 * 1024
DEFAULT_RATE_PER_MINUTE = 120
DEFAULT_BURST = 60
#: Clients remembered by the rate limiter (least recently seen forgotten first).
MAX_CLIENTS = 10_000
#: Paths never rate-limited: monitors poll health.
UNLIMITED_PATHS = frozenset({"/api/health"})
#: Seconds a request has to send its body (at most 1 MiB: 35 KB/s is enough).
DEFAULT_BODY_TIMEOUT_S = 30.0


def host_name(header: str) -> str:
    """The host of a Host header, without its port, lower case: `[::1]:8000` -> `[::1]`."""
    value = header.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        return value[: end + 1] if end > 0 else value
    return value.split(":", 1)[0].rstrip(".")


class HostAllowList:
    """Requests whose Host header names none of `allowed` (`*`: any) are refused with 400."""

    def __init__(self, app: ASGIApp, allowed: Iterable[str]) -> None:
        self.app = app
        self.allowed = frozenset(host.lower() for host in allowed)
        self.any = "*" in self.allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self.any:
            header = next((v for k, v in scope.get("headers", ()) if k == b"host"), b"")
            if host_name(header.decode("latin-1")) not in self.allowed:
                await _reply(
                    send,
                    400,
                    "this server does not answer to the host named in the request: its "
                    "administrator can allow it with --allowed-host (NARA_KG_ALLOWED_HOSTS)",
                    {},
                )
                return
        await self.app(scope, receive, send)


class BodyTimeout:
    """A request body not received `timeout_s` after the request began is refused with 408 (the
    application is told the client left, and the connection is closed)."""

    def __init__(self, app: ASGIApp, timeout_s: float = DEFAULT_BODY_TIMEOUT_S) -> None:
        self.app = app
        self.timeout_s = timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        deadline = asyncio.get_running_loop().time() + self.timeout_s
        reply = _Preemptible(send)
        body_done = False

        async def timed_receive() -> Message:
            nonlocal body_done
            if body_done:
                return await receive()
            remaining = deadline - asyncio.get_running_loop().time()
            try:
                message = await asyncio.wait_for(receive(), max(remaining, 0.0))
            except TimeoutError:
                await reply.refuse(
                    408,
                    f"the request body did not arrive within {self.timeout_s:g} s",
                    {"Connection": "close"},
                )
                body_done = True
                return {"type": "http.disconnect"}
            if message["type"] != "http.request" or not message.get("more_body", False):
                body_done = True
            return message

        await self.app(scope, timed_receive, reply.send)


async def _reply(send: Send, status: int, message: str, headers: dict[str, str]) -> None:
    body = json.dumps({"error": message}).encode("utf-8")
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


class _Preemptible:
    """The response of a request that a middleware may refuse while its body arrives: the
    refusal goes out only if the application has not begun its own response, and once it has
    gone out, whatever the application sends (an error about the body it lost) is dropped."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.started = False
        self.replied = False

    async def refuse(self, status: int, message: str, headers: dict[str, str]) -> None:
        if not self.started and not self.replied:
            self.replied = True
            await _reply(self._send, status, message, headers)

    async def send(self, message: Message) -> None:
        if self.replied:
            return
        if message["type"] == "http.response.start":
            self.started = True
        await self._send(message)


class BodySizeLimit:
    def __init__(self, app: ASGIApp, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    def _message(self) -> str:
        return (
            f"request body too large: at most {self.max_body_bytes} bytes "
            f"({self.max_body_bytes // 1024} KiB)"
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    await _reply(send, 400, "invalid Content-Length", {})
                    return
                if declared > self.max_body_bytes:
                    await _reply(send, 413, self._message(), {})
                    return
        received = 0
        reply = _Preemptible(send)

        async def counted_receive() -> Message:
            # Past the limit the app is told the client left: the client gets the 413.
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    await reply.refuse(413, self._message(), {})
                    return {"type": "http.disconnect"}
            return message

        await self.app(scope, counted_receive, reply.send)


@dataclass
class _Bucket:
    tokens: float
    updated: float


class RateLimit:
    def __init__(
        self,
        app: ASGIApp,
        per_minute: int = DEFAULT_RATE_PER_MINUTE,
        burst: int = DEFAULT_BURST,
    ) -> None:
        self.app = app
        self.rate = per_minute / 60.0
        self.burst = max(1, burst)
        self.enabled = per_minute > 0
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()
        self._lock = threading.Lock()

    def _take(self, client: str) -> float:
        """0 when the request may go ahead, else the seconds until it may."""
        now = time.monotonic()
        with self._lock:
            bucket = self._buckets.pop(client, None) or _Bucket(float(self.burst), now)
            bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.updated) * self.rate)
            bucket.updated = now
            self._buckets[client] = bucket
            while len(self._buckets) > MAX_CLIENTS:
                self._buckets.popitem(last=False)
            if bucket.tokens >= 1.0:
                bucket.tokens -= 1.0
                return 0.0
            return (1.0 - bucket.tokens) / self.rate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if (
            scope["type"] != "http"
            or not self.enabled
            or not path.startswith("/api/")
            or path in UNLIMITED_PATHS
        ):
            await self.app(scope, receive, send)
            return
        client = (scope.get("client") or ("unknown", 0))[0]
        wait = self._take(str(client))
        if wait > 0:
            retry = max(1, math.ceil(wait))
            await _reply(
                send,
                429,
                f"too many requests: at most {round(self.rate * 60)} a minute per client "
                f"(bursts of {self.burst}); retry in {retry} s",
                {"Retry-After": str(retry)},
            )
            return
        await self.app(scope, receive, send)

"""`nara-kg serve`: the API and the chat page under uvicorn.

What the server trusts of a connection:

* the Host header: only the names in the allow-list (`allowed_hosts`: localhost, 127.0.0.1,
  [::1], the bound host, and those configured), so a web page on another site that points
  its own name at this machine (DNS rebinding) cannot drive `/api/ask` and spend an LLM key;
* proxy headers (`X-Forwarded-For`): only from the proxies named (`forwarded_allow_ips`,
  none by default). Every client of the default bind comes from 127.0.0.1, and uvicorn would
  otherwise take their word for their address, which is the rate limiter's key;
* time: a connection has `header_timeout_s` to send a request's headers (also the first
  one), and the request `body_timeout_s` to send its body (`limits.BodyTimeout`), so
  connections that never finish do not stay open.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from nara_kg.api.limits import DEFAULT_BODY_TIMEOUT_S, DEFAULT_RATE_PER_MINUTE

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
#: Seconds a connection has to send a request's headers, counted from the connection or from
#: the end of the previous response (what is idle between requests is uvicorn's keep-alive).
DEFAULT_HEADER_TIMEOUT_S = 10.0
#: Host names every server answers to: this machine's.
LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]")
_WILDCARD_BINDS = {"", "0.0.0.0", "::", "[::]"}


def allowed_hosts(bound_host: str, extra: Iterable[str] = ()) -> list[str]:
    """The Host names the server answers to: this machine's, the bound host (unless it binds
    every address) and `extra` (`*`: any)."""
    hosts = set(LOCAL_HOSTS)
    if bound_host not in _WILDCARD_BINDS:
        hosts.add(f"[{bound_host}]" if ":" in bound_host else bound_host)
    hosts.update(host.strip().lower() for host in extra if host.strip())
    return sorted(hosts)


def header_deadline_protocol(timeout_s: float) -> type:
    """uvicorn's HTTP protocol, closing a connection (408) that has not sent a request's
    headers within `timeout_s` of connecting or of its previous response."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    # What uvicorn itself would run (httptools when installed, else h11), with the deadline.
    base: Any = AutoHTTPProtocol

    class HeaderDeadline(base):
        _header_timer: asyncio.TimerHandle | None = None

        def _in_request(self) -> bool:
            return self.cycle is not None and not self.cycle.response_complete

        def _arm(self) -> None:
            if self._header_timer is None and not self._in_request():
                self._header_timer = self.loop.call_later(timeout_s, self._expire)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _expire(self) -> None:
            self._header_timer = None
            if self._in_request() or self.transport.is_closing():
                return
            self.transport.write(
                b"HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"
            )
            self.transport.close()

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            self._arm()
            super().data_received(data)
            if self._in_request():
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return HeaderDeadline


def build_server(
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    *,
    services: Any = None,
    services_factory: Any = None,
    rate_per_minute: int = DEFAULT_RATE_PER_MINUTE,
    extra_hosts: Sequence[str] = (),
    forwarded_allow_ips: Sequence[str] = (),
    header_timeout_s: float = DEFAULT_HEADER_TIMEOUT_S,
    body_timeout_s: float = DEFAULT_BODY_TIMEOUT_S,
) -> Any:
    """The uvicorn server `nara-kg serve` runs (with the `services_factory` of its resources;
    tests pass `services` and run it in a thread).
    One worker process: the embedding model is loaded once, and the endpoints run on its
    thread pool."""
    import uvicorn

    from nara_kg.api.app import create_app

    app = create_app(
        services,
        services_factory=services_factory,
        rate_per_minute=rate_per_minute,
        allowed_hosts=allowed_hosts(host, extra_hosts),
        body_timeout_s=body_timeout_s,
    )
    trusted = [ip.strip() for ip in forwarded_allow_ips if ip.strip()]
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="info",
        access_log=False,
        http=header_deadline_protocol(header_timeout_s),
        proxy_headers=bool(trusted),
        forwarded_allow_ips=trusted or None,
    )
    return uvicorn.Server(config)


def serve(
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    *,
    services_factory: Any,
    rate_per_minute: int = DEFAULT_RATE_PER_MINUTE,
    extra_hosts: Sequence[str] = (),
    forwarded_allow_ips: Sequence[str] = (),
    log: Callable[[str], None] = print,
) -> None:
    """Run until interrupted, with the services `services_factory` opens (the CLI's, from the
    project's resources)."""
    from nara_kg.api.app import STATIC_DIR

    if not (STATIC_DIR / "index.html").is_file():
        log("note: the chat page is not built yet: run `make web` (web/build.sh); the API works")
    server = build_server(
        host,
        port,
        services_factory=services_factory,
        rate_per_minute=rate_per_minute,
        extra_hosts=extra_hosts,
        forwarded_allow_ips=forwarded_allow_ips,
    )
    log(f"chat page on http://{host}:{port}/  API schema: http://{host}:{port}/docs")
    server.run()

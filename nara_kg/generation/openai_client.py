"""The OpenAI-compatible chat-completions client (OpenAI, vLLM, llama.cpp, Ollama, ...): one
time budget per completion, bounded retries (tenacity), a concurrency cap, a deadline watchdog
for servers that drip their reply, and a cap on the reply's size.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from tenacity import (
    RetryCallState,
    RetryError,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
)
from tenacity.stop import stop_base

from nara_kg.errors import LLMError, LLMUnreachable
from nara_kg.generation.llm_base import OPENAI_BACKEND

#: Upper bound on a server's Retry-After, so one misbehaving header cannot stall a run.
MAX_RETRY_AFTER_S = 60.0
#: How much of an error response body goes into an exception message.
ERROR_BODY_CHARS = 300
#: A reply's message may hold at most this many characters per requested token (a token is
#: about 4 characters of English; the margin is for long words and other scripts).
MAX_REPLY_CHARS_PER_TOKEN = 8
#: The raw response may be this many bytes per allowed character (JSON escapes a non-ASCII
#: character as \uXXXX), plus an envelope for the rest of the JSON.
MAX_REPLY_BYTES_PER_CHAR = 6
REPLY_ENVELOPE_BYTES = 16_384


#: Defaults of the OpenAI-compatible client (the LLMResource's fields repeat none of them).
DEFAULT_CONNECT_TIMEOUT_S = 3.0
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_RETRIES = 2
#: Requests in flight at once from one client (entity extraction sends this many chunks).
DEFAULT_MAX_CONCURRENCY = 4
#: Most tokens one completion may write.
DEFAULT_MAX_TOKENS = 1500


class _RetryableError(Exception):
    """An attempt failed in a way another attempt may not (429, 5xx, network, timeout)."""

    def __init__(self, message: str, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


def _retry_after(headers: Any) -> float | None:
    if headers is None:
        return None
    value = headers.get("Retry-After")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None  # an HTTP date: rare enough that our own backoff will do
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_S)


class OpenAICompatibleLLM:
    """POST `{base_url}/chat/completions` with one user message (httpx); return the first
    choice's text.

    Each `complete` has a time budget of `timeout_s` in all, retries included; a connection
    must open within `connect_timeout_s`. Retries (up to `max_retries` times, waiting
    `backoff_s * 2**attempt`, or the server's Retry-After, within the budget) on 429, 5xx,
    timeouts and connection errors; when they run out it raises LLMUnreachable. Any other 4xx
    is a request or credential problem that a retry cannot fix, so it fails at once (LLMError).
    At most `max_concurrency` requests are in flight from this instance across threads.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
        max_retries: int = DEFAULT_MAX_RETRIES,
        backoff_s: float = 1.0,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        temperature: float = 0.0,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        import httpx

        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be >= 1")
        if timeout_s <= 0 or connect_timeout_s <= 0:
            raise ValueError("timeouts must be > 0")
        self.name = OPENAI_BACKEND
        self.model = model
        self.params: dict[str, Any] = {"temperature": temperature, "max_tokens": max_tokens}
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.connect_timeout_s = connect_timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        # Private and left out of __repr__: the key must not reach logs or error messages.
        self._api_key = api_key
        self._semaphore = threading.BoundedSemaphore(max_concurrency)
        self._sleep = sleep
        # No keep-alive: the deadline watchdog needs each request's socket from its connect.
        self._client = httpx.Client(
            trust_env=False, limits=httpx.Limits(max_keepalive_connections=0)
        )

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def __repr__(self) -> str:
        return f"OpenAICompatibleLLM(base_url={self.base_url!r}, model={self.model!r})"

    def _redact(self, text: str) -> str:
        # A server may echo the Authorization header back in an error body.
        if self._api_key:
            text = text.replace(self._api_key, "***")
        return text

    def complete(self, prompt: str) -> str:
        body = json.dumps(
            {
                "model": self.model,
                "messages": [{"role": "user", "content": prompt}],
                "temperature": self.params["temperature"],
                "max_tokens": self.params["max_tokens"],
            }
        ).encode("utf-8")
        deadline = time.monotonic() + self.timeout_s

        def attempt() -> str:
            if not self._semaphore.acquire(timeout=max(deadline - time.monotonic(), 0.0)):
                raise _RetryableError("no request slot free within the time budget")
            try:
                payload = self._post(body, deadline)
            finally:
                self._semaphore.release()
            return self._content(payload)

        def wait(state: RetryCallState) -> float:
            error = state.outcome.exception() if state.outcome is not None else None
            after = error.retry_after_s if isinstance(error, _RetryableError) else None
            return after if after is not None else self.backoff_s * 2 ** (state.attempt_number - 1)

        class OutOfBudget(stop_base):
            def __call__(self, state: RetryCallState) -> bool:
                return time.monotonic() + state.upcoming_sleep >= deadline

        # Sleeps happen outside the semaphore, so a waiting retry blocks no other request.
        retrying = Retrying(
            retry=retry_if_exception_type(_RetryableError),
            stop=stop_after_attempt(self.max_retries + 1) | OutOfBudget(),
            wait=wait,
            sleep=self._sleep,
        )
        try:
            return retrying(attempt)
        except RetryError as gave_up:
            last = gave_up.last_attempt
            raise LLMUnreachable(
                self._redact(
                    f"{self.url}: model {self.model!r} did not answer ({last.attempt_number} "
                    f"attempt(s) within {self.timeout_s:g}s): {last.exception()}"
                )
            ) from None

    @property
    def max_reply_chars(self) -> int:
        """The longest message content accepted (a few times `max_tokens`)."""
        return MAX_REPLY_CHARS_PER_TOKEN * int(self.params["max_tokens"])

    @property
    def max_reply_bytes(self) -> int:
        return MAX_REPLY_BYTES_PER_CHAR * self.max_reply_chars + REPLY_ENVELOPE_BYTES

    def _post(self, body: bytes, deadline: float) -> str:
        import httpx

        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _RetryableError(f"no time left of the {self.timeout_s:g}s budget")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        timeout = httpx.Timeout(remaining, connect=min(self.connect_timeout_s, remaining))
        # httpx's timeouts bound each socket read, so a server that drips its headers or body a
        # byte at a time never trips them: a watchdog shuts the socket down at the deadline.
        watchdog = _DeadlineWatchdog(deadline)
        try:
            with (
                watchdog,
                self._client.stream(
                    "POST",
                    self.url,
                    content=body,
                    headers=headers,
                    timeout=timeout,
                    extensions={"trace": watchdog.trace},
                ) as response,
            ):
                data = self._read_capped(response)
        except httpx.TimeoutException as error:
            raise _RetryableError(f"timed out ({type(error).__name__})") from None
        except httpx.TransportError as error:
            if watchdog.fired:
                raise _RetryableError(
                    f"timed out (no full reply within {self.timeout_s:g}s)"
                ) from None
            raise _RetryableError(
                f"connection error: {type(error).__name__}: {self._redact(str(error))}"
            ) from None
        text = data.decode(response.encoding or "utf-8", errors="replace")
        if response.status_code >= 400:
            detail = self._redact(text[:ERROR_BODY_CHARS])
            message = f"HTTP {response.status_code} {response.reason_phrase}: {detail}"
            if response.status_code == 429 or response.status_code >= 500:
                raise _RetryableError(message, _retry_after(response.headers))
            raise LLMError(f"{self.url}: model {self.model!r}: {message}")
        return text

    def _read_capped(self, response: Any) -> bytes:
        """The response body, or LLMError as soon as it passes :attr:`max_reply_bytes` (a
        reply that long is not an answer to a prompt with this `max_tokens`)."""
        limit = self.max_reply_bytes
        declared = response.headers.get("Content-Length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise LLMError(self._too_long(f"{int(declared)} bytes declared"))
        parts: list[bytes] = []
        size = 0
        for part in response.iter_bytes():
            size += len(part)
            if size > limit:
                raise LLMError(self._too_long(f"over {limit} bytes"))
            parts.append(part)
        return b"".join(parts)

    def _too_long(self, what: str) -> str:
        return (
            f"{self.url}: model {self.model!r}: reply too long ({what}; at most "
            f"{self.max_reply_chars} characters for max_tokens={self.params['max_tokens']})"
        )

    def _content(self, payload: str) -> str:
        try:
            data = json.loads(payload)
            content = data["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise LLMError(
                f"{self.url}: model {self.model!r}: response is not a chat completion: "
                f"{self._redact(payload[:ERROR_BODY_CHARS])!r}"
            ) from None
        if not isinstance(content, str):
            raise LLMError(f"{self.url}: model {self.model!r}: message content is not text")
        if len(content) > self.max_reply_chars:
            raise LLMError(self._too_long(f"{len(content)} characters"))
        return content


class _DeadlineWatchdog:
    """Shuts the request's socket down at `deadline`, which ends any read in progress.

    The socket comes from httpx's `trace` extension when the connection opens (or turns to
    TLS); a pooled connection reused without a new connect is not watched, so the client that
    uses this keeps no connections alive between requests.
    """

    def __init__(self, deadline: float) -> None:
        self._deadline = deadline
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self._timer: threading.Timer | None = None
        self.fired = False

    def trace(self, event: str, info: Mapping[str, Any]) -> None:
        if event not in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if isinstance(sock, socket.socket):
            with self._lock:
                self._socket = sock
                if self.fired:
                    self._shutdown()

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            self._shutdown()

    def _shutdown(self) -> None:
        if self._socket is not None:
            with contextlib.suppress(OSError):  # already closed
                self._socket.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> _DeadlineWatchdog:
        self._timer = threading.Timer(max(self._deadline - time.monotonic(), 0.0), self._fire)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *_: object) -> None:
        if self._timer is not None:
            self._timer.cancel()

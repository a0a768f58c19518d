"""Pluggable text generation for community reports and answers, with a persistent cache.

Three backends share one small protocol (:class:`LLM`):

* :class:`ExtractiveLLM` — the offline default. It never generates free text; it is the marker
  that tells report generation and answering to take their deterministic, rule-based paths, so
  a pipeline runs end to end with no model at all.
* :class:`OpenAICompatibleLLM` — any server that speaks the OpenAI chat-completions protocol
  (OpenAI, vLLM, llama.cpp, Ollama, ...), with timeouts, bounded retries and a concurrency cap.
* :class:`TransformersLLM` — a causal LM from a local directory (or a GGUF file in it, such as
  the opt-in bundled SmolLM2 of :mod:`nara_kg.generation.local_model`); never downloads anything.

:class:`GenerationCache` keys every generation by a hash of prompt + model + backend + parameters,
so an unchanged community is never regenerated and a re-run costs nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

from tenacity import (
    RetryCallState,
    RetryError,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
)
from tenacity.stop import stop_base

from nara_kg.errors import LLMError, LLMUnreachable

#: Backend names, also used in cache keys and in a report's `generated_by`.
EXTRACTIVE_BACKEND = "extractive"
OPENAI_BACKEND = "openai"
TRANSFORMERS_BACKEND = "transformers"
#: The opt-in bundled local model (:mod:`nara_kg.generation.local_model`).
LOCAL_BACKEND = "local"

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
#: Most tokens one completion may write: the OpenAI-compatible client's and a local model's.
DEFAULT_MAX_TOKENS = 1500
DEFAULT_MAX_NEW_TOKENS = 512


class LLM(Protocol):
    """What report generation and answering need from a text generator."""

    #: Backend name: "extractive", "openai", "transformers".
    name: str
    model: str
    #: Generation parameters that change the output (part of the cache key).
    params: dict[str, Any]

    def complete(self, prompt: str) -> str: ...


def describe(llm: LLM) -> str:
    """`backend:model`, as recorded in `generated_by` and answer methods."""
    return f"{llm.name}:{llm.model}"


class ExtractiveLLM:
    """The no-model default: selects the extractive/rule-based code paths; never completes."""

    def __init__(self) -> None:
        self.name = EXTRACTIVE_BACKEND
        self.model = EXTRACTIVE_BACKEND
        self.params: dict[str, Any] = {}

    def complete(self, prompt: str) -> str:
        raise NotImplementedError(
            "ExtractiveLLM does not generate free text: callers must use their extractive "
            "(rule-based) path when the backend is 'extractive'; configure an OpenAI-compatible "
            "endpoint or a local transformers model to generate with a model"
        )

    def __repr__(self) -> str:
        return "ExtractiveLLM()"


def is_extractive(llm: LLM) -> bool:
    return isinstance(llm, ExtractiveLLM) or llm.name == EXTRACTIVE_BACKEND


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


class TransformersLLM:
    """A causal language model from a local directory (`local_files_only=True`).

    Loaded on the first `complete` (so building a resource costs nothing), on CPU unless a device
    is given. With `gguf_file`, the weights and tokenizer are read from that GGUF file in the
    directory (transformers de-quantizes it with the `gguf` package). Greedy decoding when
    temperature is 0, so the output is reproducible and cacheable.
    A tokenizer with a chat template gets the prompt as one user message. A prompt that would not
    fit the model's context window raises instead of being silently truncated.
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
        temperature: float = 0.0,
        device: str = "cpu",
        gguf_file: str | None = None,
        name: str = TRANSFORMERS_BACKEND,
        model_name: str | None = None,
    ) -> None:
        self.name = name
        self.model_path = Path(model_path)
        self.gguf_file = gguf_file
        # The model's name in cache keys and `generated_by`: a path by default.
        self.model = model_name or str(model_path)
        self.params: dict[str, Any] = {
            "max_new_tokens": max_new_tokens,
            "temperature": temperature,
        }
        self.device = device
        #: Greedy decoding writes the same reply to the same prompt: asking again is no retry.
        self.deterministic = temperature <= 0
        self._lock = threading.Lock()
        # One generation at a time: concurrent generate() calls on one model only contend for
        # the same cores (or GPU) and multiply activation memory.
        self._generate_lock = threading.Lock()
        self._tokenizer: Any = None
        self._model: Any = None

    def __repr__(self) -> str:
        return f"TransformersLLM(model_path={self.model!r})"

    def load(self) -> None:
        """Load the model now rather than on the first completion (a server warming up)."""
        self._load()

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._model is None:
                if not self.model_path.is_dir():
                    raise LLMError(f"local model directory {self.model_path} does not exist")
                from transformers import AutoModelForCausalLM, AutoTokenizer

                options: dict[str, Any] = {"local_files_only": True}
                if self.gguf_file is not None:
                    options["gguf_file"] = self.gguf_file
                try:
                    tokenizer: Any = AutoTokenizer.from_pretrained(self.model_path, **options)
                    model: Any = AutoModelForCausalLM.from_pretrained(self.model_path, **options)
                except (OSError, ValueError) as error:
                    raise LLMError(f"cannot load model from {self.model_path}: {error}") from error
                model.to(self.device)
                model.eval()
                self._tokenizer, self._model = tokenizer, model
            return self._tokenizer, self._model

    def complete(self, prompt: str) -> str:
        import torch

        tokenizer, model = self._load()
        if getattr(tokenizer, "chat_template", None):
            encoded = tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}],
                add_generation_prompt=True,
                return_tensors="pt",
                return_dict=True,
            )
        else:
            encoded = tokenizer(prompt, return_tensors="pt")
        input_ids = encoded["input_ids"].to(self.device)
        attention_mask = encoded.get("attention_mask")
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        attention_mask = attention_mask.to(self.device)
        max_new_tokens = int(self.params["max_new_tokens"])
        window = getattr(model.config, "max_position_embeddings", None)
        prompt_tokens = int(input_ids.shape[1])
        if window is not None and prompt_tokens + max_new_tokens > window:
            raise LLMError(
                f"prompt of {prompt_tokens} tokens + {max_new_tokens} new tokens exceeds the "
                f"{window}-token context of {self.model_path}"
            )
        temperature = float(self.params["temperature"])
        pad_token_id = tokenizer.pad_token_id
        if pad_token_id is None:
            pad_token_id = tokenizer.eos_token_id
        generate_kwargs: dict[str, Any] = {
            "max_new_tokens": max_new_tokens,
            "pad_token_id": pad_token_id,
        }
        if temperature > 0:
            generate_kwargs.update(do_sample=True, temperature=temperature)
        else:
            # Greedy; also neutralise sampling defaults a model's generation_config may carry.
            generate_kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        with self._generate_lock, torch.inference_mode():
            output = model.generate(
                input_ids=input_ids, attention_mask=attention_mask, **generate_kwargs
            )
        new_tokens = output[0][prompt_tokens:]
        text: str = tokenizer.decode(new_tokens, skip_special_tokens=True)
        return text.strip()


def cache_key(prompt: str, model_name: str, backend: str, params: Mapping[str, Any]) -> str:
    """sha256 hex of everything that determines a generation."""
    material = json.dumps(
        {"prompt": prompt, "model": model_name, "backend": backend, "params": dict(params)},
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


class GenerationCache:
    """Persistent key -> generated text, in one SQLite table.

    Safe to share between threads (one connection behind a lock) and between processes (SQLite's
    own file locking, with a busy timeout for concurrent writers). `hits`/`misses` count lookups
    through :meth:`get` on this instance.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._connection = sqlite3.connect(str(path), timeout=30.0, check_same_thread=False)
        if str(path) != ":memory:":
            # Every generation is committed on its own, so a crash keeps what was paid for;
            # WAL with synchronous=NORMAL makes that commit a write, not an fsync (at worst a
            # power cut loses the last few entries of a cache, which are generated again).
            self._connection.execute("PRAGMA journal_mode=WAL")
            self._connection.execute("PRAGMA synchronous=NORMAL")
        with self._lock, self._connection:
            self._connection.execute(
                "CREATE TABLE IF NOT EXISTS generations ("
                " key TEXT PRIMARY KEY,"
                " text TEXT NOT NULL,"
                " created_at REAL NOT NULL)"
            )
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> str | None:
        with self._lock:
            row = self._connection.execute(
                "SELECT text FROM generations WHERE key = ?", (key,)
            ).fetchone()
            if row is None:
                self.misses += 1
                return None
            self.hits += 1
            text: str = row[0]
            return text

    def put(self, key: str, text: str) -> None:
        with self._lock, self._connection:
            self._connection.execute(
                "INSERT OR REPLACE INTO generations (key, text, created_at) VALUES (?, ?, ?)",
                (key, text, time.time()),
            )

    def __len__(self) -> int:
        with self._lock:
            (count,) = self._connection.execute("SELECT COUNT(*) FROM generations").fetchone()
            return int(count)

    def close(self) -> None:
        with self._lock:
            self._connection.close()

    def __enter__(self) -> GenerationCache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def llm_cache_key(llm: LLM, prompt: str) -> str:
    return cache_key(prompt, llm.model, llm.name, llm.params)


def cached_complete(
    llm: LLM, prompt: str, cache: GenerationCache | None, *, refresh: bool = False
) -> tuple[str, bool]:
    """`llm.complete(prompt)` through the cache; returns (text, was_cached).

    `refresh=True` skips the lookup and overwrites the entry: a retry of an output that turned
    out to be unusable needs it, or the cache would serve that output forever.
    """
    if cache is None:
        return llm.complete(prompt), False
    key = llm_cache_key(llm, prompt)
    if not refresh:
        cached = cache.get(key)
        if cached is not None:
            return cached, True
    text = llm.complete(prompt)
    cache.put(key, text)
    return text, False

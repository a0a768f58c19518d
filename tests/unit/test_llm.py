from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nara_kg.generation.llm import (
    ExtractiveLLM,
    GenerationCache,
    LLMError,
    LLMUnreachable,
    OpenAICompatibleLLM,
    TransformersLLM,
    cache_key,
    cached_complete,
    is_extractive,
)
from tests.openai_server import FakeServer, Reply, openai_test_server

API_KEY = "sk-test-SECRET-0123456789"


@pytest.fixture
def server() -> Iterator[FakeServer]:
    """An OpenAI-compatible endpoint on 127.0.0.1 that plays scripted replies in order."""
    with openai_test_server() as fake:
        yield fake


def make_client(server: FakeServer, sleeps: list[float], **kwargs: Any) -> OpenAICompatibleLLM:
    options: dict[str, Any] = {"timeout_s": 5, "max_retries": 3, "backoff_s": 0.25}
    options.update(kwargs)
    return OpenAICompatibleLLM(server.url, "test-model", API_KEY, sleep=sleeps.append, **options)


def test_openai_normal_answer_speaks_the_chat_protocol(server: FakeServer) -> None:
    server.replies.append(Reply(content="The answer."))
    sleeps: list[float] = []
    llm = make_client(server, sleeps, temperature=0.0, max_tokens=77)
    assert llm.complete("What is in the box?") == "The answer."
    assert server.calls == 1
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["authorization"] == f"Bearer {API_KEY}"
    assert request["json"] == {
        "model": "test-model",
        "messages": [{"role": "user", "content": "What is in the box?"}],
        "temperature": 0.0,
        "max_tokens": 77,
    }
    assert sleeps == []
    assert llm.name == "openai"
    assert llm.params == {"temperature": 0.0, "max_tokens": 77}
    assert API_KEY not in repr(llm)


def test_openai_retries_a_500_then_succeeds(server: FakeServer) -> None:
    server.replies.extend([Reply(status=500, body="boom"), Reply(content="second time")])
    sleeps: list[float] = []
    assert make_client(server, sleeps).complete("hi") == "second time"
    assert server.calls == 2
    assert sleeps == [0.25]


def test_openai_backs_off_exponentially_on_429(server: FakeServer) -> None:
    server.replies.extend(
        [Reply(status=429, body="slow down"), Reply(status=503, body="busy"), Reply(content="ok")]
    )
    sleeps: list[float] = []
    assert make_client(server, sleeps).complete("hi") == "ok"
    assert server.calls == 3
    assert sleeps == [0.25, 0.5]


def test_openai_honours_retry_after_on_429(server: FakeServer) -> None:
    server.replies.extend(
        [Reply(status=429, body="slow down", headers={"Retry-After": "2"}), Reply(content="ok")]
    )
    sleeps: list[float] = []
    assert make_client(server, sleeps).complete("hi") == "ok"
    assert sleeps == [2.0]


def test_openai_real_backoff_waits(server: FakeServer) -> None:
    server.replies.extend([Reply(status=429, body="slow down"), Reply(content="ok")])
    llm = OpenAICompatibleLLM(server.url, "m", None, backoff_s=0.2, max_retries=1)
    started = time.monotonic()
    assert llm.complete("hi") == "ok"
    assert time.monotonic() - started >= 0.2
    assert server.requests[0]["authorization"] is None


def test_openai_401_fails_fast_and_hides_the_key(server: FakeServer) -> None:
    # The body echoes the key, as some proxies do: it must still not reach the message.
    server.replies.extend(
        [Reply(status=401, body=f"invalid api key {API_KEY}"), Reply(content="never")]
    )
    sleeps: list[float] = []
    with pytest.raises(LLMError) as raised:
        make_client(server, sleeps).complete("hi")
    assert server.calls == 1
    assert sleeps == []
    message = str(raised.value)
    assert "401" in message
    assert API_KEY not in message
    assert "***" in message


def test_openai_gives_up_after_max_retries(server: FakeServer) -> None:
    server.replies.extend([Reply(status=502, body=f"bad gateway {API_KEY}")] * 3)
    sleeps: list[float] = []
    with pytest.raises(LLMError) as raised:
        make_client(server, sleeps, max_retries=2).complete("hi")
    assert server.calls == 3
    assert sleeps == [0.25, 0.5]
    assert "3 attempt(s)" in str(raised.value)
    assert "502" in str(raised.value)
    assert API_KEY not in str(raised.value)


def test_openai_timeout_is_one_budget_for_all_attempts(server: FakeServer) -> None:
    """`timeout_s` bounds the whole call, retries included: a server that does not answer in
    time costs the budget, not (retries + 1) times it."""
    server.replies.extend([Reply(content="late", delay_s=1.5), Reply(content="late", delay_s=1.5)])
    sleeps: list[float] = []
    llm = make_client(server, sleeps, timeout_s=0.4, max_retries=3, backoff_s=0.05)
    started = time.monotonic()
    with pytest.raises(LLMUnreachable, match="timed out"):
        llm.complete("hi")
    assert time.monotonic() - started < 0.4 + 1.0
    assert server.calls >= 1


def test_openai_endpoint_that_accepts_and_never_answers_returns_within_the_timeout() -> None:
    """The probe's 320 s case: the socket accepts, nothing ever comes back."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        llm = OpenAICompatibleLLM(f"http://127.0.0.1:{port}/v1", "m", None, timeout_s=1.0)
        started = time.monotonic()
        with pytest.raises(LLMUnreachable, match="did not answer"):
            llm.complete("hi")
        assert time.monotonic() - started < 1.0 + 1.0


def test_openai_malformed_completion_is_an_error(server: FakeServer) -> None:
    server.replies.append(Reply(body='{"choices": []}'))
    with pytest.raises(LLMError, match="not a chat completion"):
        make_client(server, []).complete("hi")
    assert server.calls == 1


def test_openai_connection_refused_is_retried() -> None:
    # A port that was just free: nothing listens there, so the connection is refused.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sleeps: list[float] = []
    llm = OpenAICompatibleLLM(
        f"http://127.0.0.1:{port}/v1",
        "m",
        API_KEY,
        max_retries=2,
        backoff_s=0.01,
        sleep=sleeps.append,
    )
    with pytest.raises(LLMUnreachable, match="connection error"):
        llm.complete("hi")
    assert sleeps == [0.01, 0.02]


def test_openai_concurrency_is_bounded(server: FakeServer) -> None:
    server.replies.extend([Reply(content=str(i), delay_s=0.15) for i in range(4)])
    llm = OpenAICompatibleLLM(server.url, "m", None, max_concurrency=1)
    results: list[str] = []
    threads = [threading.Thread(target=lambda: results.append(llm.complete("x"))) for _ in range(3)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Serialised by the semaphore: three 0.15 s requests take at least 0.45 s.
    assert time.monotonic() - started >= 0.45
    assert sorted(results) == ["0", "1", "2"]


def test_extractive_llm_refuses_to_complete() -> None:
    llm = ExtractiveLLM()
    assert is_extractive(llm)
    assert llm.name == "extractive"
    with pytest.raises(NotImplementedError, match="extractive"):
        llm.complete("anything")


# --- transformers backend ---------------------------------------------------------------------

SENTENCES = [
    "the national archives hold records of the war department",
    "a letter from the president about the budget of the navy",
    "photographs of soldiers and maps of the pacific islands",
]


def build_tiny_model(directory: Path, *, chat_template: str | None = None) -> Path:
    """A 1-layer GPT-2 with random weights and a word-level tokenizer, built offline."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.decoder = decoders.WordPiece(prefix="##")
    tokenizer.train_from_iterator(
        SENTENCES, trainers.WordLevelTrainer(special_tokens=["[UNK]", "[PAD]", "[EOS]"])
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, unk_token="[UNK]", pad_token="[PAD]", eos_token="[EOS]"
    )
    if chat_template is not None:
        fast.chat_template = chat_template
    fast.save_pretrained(directory)
    config = GPT2Config(
        n_layer=1,
        n_head=2,
        n_embd=16,
        n_positions=64,
        vocab_size=fast.vocab_size,
        bos_token_id=fast.eos_token_id,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
    )
    torch.manual_seed(0)
    GPT2LMHeadModel(config).save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny-gpt2"))


def test_transformers_generates_deterministically(tiny_model: Path) -> None:
    llm = TransformersLLM(tiny_model, max_new_tokens=6)
    assert llm._model is None  # lazy: nothing loaded before the first call
    first = llm.complete("the archives hold records of the")
    second = llm.complete("the archives hold records of the")
    assert isinstance(first, str)
    assert first == second
    # Word-level tokens: at most 6 new words, and only new text (not the prompt) comes back.
    assert 0 < len(first.split()) <= 6
    assert not first.startswith("the archives hold records")
    assert set(first.split()) <= {w for s in SENTENCES for w in s.split()}
    # A fresh instance (fresh load) produces the same text.
    assert (
        TransformersLLM(tiny_model, max_new_tokens=6).complete("the archives hold records of the")
        == first
    )
    assert llm.name == "transformers"
    assert llm.params == {"max_new_tokens": 6, "temperature": 0.0}


def test_transformers_uses_a_chat_template_when_the_tokenizer_has_one(tmp_path: Path) -> None:
    template = (
        "{% for m in messages %}{{ m['content'] }} {% endfor %}"
        "{% if add_generation_prompt %}of the{% endif %}"
    )
    directory = build_tiny_model(tmp_path / "chat", chat_template=template)
    text = TransformersLLM(directory, max_new_tokens=3).complete("maps of the pacific")
    assert isinstance(text, str)
    assert 0 < len(text.split()) <= 3


def test_transformers_refuses_prompts_longer_than_the_context(tiny_model: Path) -> None:
    llm = TransformersLLM(tiny_model, max_new_tokens=10)
    with pytest.raises(LLMError, match="exceeds the 64-token context"):
        llm.complete(" ".join(["records"] * 60))


def test_transformers_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(LLMError, match="does not exist"):
        TransformersLLM(tmp_path / "nowhere").complete("hi")


# --- cache ------------------------------------------------------------------------------------


class CountingLLM:
    def __init__(self, model: str = "m1", temperature: float = 0.0) -> None:
        self.name = "fake"
        self.model = model
        self.params: dict[str, Any] = {"temperature": temperature}
        self.calls: list[str] = []

    def complete(self, prompt: str) -> str:
        self.calls.append(prompt)
        return f"answer #{len(self.calls)} to {prompt}"


def test_cache_key_is_sha256_of_all_inputs() -> None:
    key = cache_key("p", "m", "b", {"t": 0})
    assert len(key) == 64
    assert int(key, 16) >= 0
    assert key == cache_key("p", "m", "b", {"t": 0})
    assert (
        len(
            {
                key,
                cache_key("q", "m", "b", {"t": 0}),
                cache_key("p", "n", "b", {"t": 0}),
                cache_key("p", "m", "c", {"t": 0}),
                cache_key("p", "m", "b", {"t": 1}),
            }
        )
        == 5
    )


def test_second_identical_call_is_a_hit(tmp_path: Path) -> None:
    llm = CountingLLM()
    with GenerationCache(tmp_path / "cache.sqlite") as cache:
        assert cached_complete(llm, "hello", cache) == ("answer #1 to hello", False)
        assert cached_complete(llm, "hello", cache) == ("answer #1 to hello", True)
        assert llm.calls == ["hello"]
        assert (cache.hits, cache.misses) == (1, 1)
        assert len(cache) == 1


def test_cache_misses_when_model_or_params_change(tmp_path: Path) -> None:
    with GenerationCache(tmp_path / "cache.sqlite") as cache:
        base = CountingLLM()
        cached_complete(base, "hello", cache)
        other_model = CountingLLM(model="m2")
        other_params = CountingLLM(temperature=0.7)
        assert cached_complete(other_model, "hello", cache) == ("answer #1 to hello", False)
        assert cached_complete(other_params, "hello", cache) == ("answer #1 to hello", False)
        assert other_model.calls == ["hello"]
        assert other_params.calls == ["hello"]
        assert (cache.hits, cache.misses) == (0, 3)


def test_cache_persists_across_instances_and_refresh_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "cache.sqlite"
    llm = CountingLLM()
    with GenerationCache(path) as cache:
        cached_complete(llm, "hello", cache)
    with GenerationCache(path) as cache:
        assert cached_complete(llm, "hello", cache) == ("answer #1 to hello", True)
        assert cached_complete(llm, "hello", cache, refresh=True) == ("answer #2 to hello", False)
        assert cache.get(cache_key("hello", "m1", "fake", {"temperature": 0.0})) == (
            "answer #2 to hello"
        )
    assert len(llm.calls) == 2


def test_each_generation_is_visible_to_another_process_as_soon_as_it_is_stored(
    tmp_path: Path,
) -> None:
    import subprocess
    import sys

    path = tmp_path / "cache.sqlite"
    with GenerationCache(path) as cache:
        cache.put("k", "paid for")
        # Write-ahead log: a commit is a write, not an fsync (hundreds of reports per run).
        assert cache._connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        seen = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from nara_kg.generation.llm import GenerationCache; "
                "print(GenerationCache(sys.argv[1]).get('k'))",
                str(path),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        assert seen.stdout.strip() == "paid for"


def test_no_cache_always_calls() -> None:
    llm = CountingLLM()
    assert cached_complete(llm, "x", None) == ("answer #1 to x", False)
    assert cached_complete(llm, "x", None) == ("answer #2 to x", False)

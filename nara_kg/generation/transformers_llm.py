"""A causal language model from a local directory, through transformers (never downloads)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from nara_kg.errors import LLMError
from nara_kg.generation.llm_base import TRANSFORMERS_BACKEND

#: Most tokens one completion of a local model may write.
DEFAULT_MAX_NEW_TOKENS = 512


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

"""An OpenAI-compatible chat-completions client over HTTP, with retries that are honest.

Works with OpenAI, OpenRouter, vLLM, Ollama and llama.cpp servers. Retries 429, 5xx,
timeouts, dropped connections and malformed responses with exponential backoff and full
jitter, honouring Retry-After. The API key is only ever put in the Authorization header.
"""

from __future__ import annotations

import email.utils
import json
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import requests

from lib.errors import ChessEvalError

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


class InfraError(ChessEvalError):
    """The request failed for reasons that are not the model's (after every retry)."""


class FatalInfraError(InfraError):
    """A failure every further request would repeat (bad key, unknown model or URL)."""


@dataclass(frozen=True)
class ChatConfig:
    """Where and how to ask."""

    base_url: str  # e.g. https://openrouter.ai/api/v1
    model: str
    api_key: str | None = field(default=None, repr=False)  # never logged or stored
    temperature: float = 0.0
    max_tokens: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # more request fields
    timeout_s: float = 120.0  # per request
    retries: int = 6
    backoff_s: float = 1.0  # base of the exponential backoff
    backoff_cap_s: float = 60.0


@dataclass(frozen=True)
class Reply:
    """A model's answer and what it cost."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost: float | None = None
    latency_s: float = 0.0
    attempts: int = 1


def _retry_after(response: requests.Response) -> float | None:
    value = response.headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value)
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


class ChatClient:
    """Thread-safe: one requests.Session per thread."""

    def __init__(self, config: ChatConfig, seed: int = 0) -> None:
        self.config = config
        self._local = threading.local()
        self._rng = random.Random(seed)
        self._rng_lock = threading.Lock()

    def _session(self) -> requests.Session:
        if not hasattr(self._local, "session"):
            self._local.session = requests.Session()
        return self._local.session

    def _payload(self, prompt: str) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.config.model, "temperature": self.config.temperature,
                                "messages": [{"role": "user", "content": prompt}]}
        if self.config.max_tokens is not None:
            body["max_tokens"] = self.config.max_tokens
        body.update(self.config.extra)
        return body

    def _wait(self, attempt: int, hint: float | None) -> None:
        with self._rng_lock:
            jitter = self._rng.random()
        backoff = min(self.config.backoff_cap_s, self.config.backoff_s * 2 ** attempt) * jitter
        time.sleep(max(backoff, hint or 0.0))

    def ask(self, prompt: str) -> Reply:
        """The model's reply; raises InfraError when every attempt failed."""
        headers = {"Content-Type": "application/json"}
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        url = self.config.base_url.rstrip("/") + "/chat/completions"
        start = time.perf_counter()
        problem = ""
        for attempt in range(self.config.retries + 1):
            hint = None
            try:
                response = self._session().post(url, json=self._payload(prompt), headers=headers,
                                                timeout=self.config.timeout_s)
            except requests.Timeout:
                problem = "timeout"
            except requests.RequestException as exc:
                problem = f"connection error ({type(exc).__name__})"
            else:
                if response.status_code == 200:
                    try:
                        return self._reply(response.json(), start, attempt + 1)
                    except (ValueError, KeyError, IndexError, TypeError):
                        problem = "malformed response"
                elif response.status_code in RETRY_STATUS:
                    problem = f"HTTP {response.status_code}"
                    hint = _retry_after(response)
                elif response.status_code in (401, 403, 404):
                    raise FatalInfraError(
                        f"HTTP {response.status_code} from {url}: {response.text[:200]}")
                else:
                    raise InfraError(f"HTTP {response.status_code}: {response.text[:200]}")
            if attempt < self.config.retries:
                self._wait(attempt, hint)
        raise InfraError(f"{problem} after {self.config.retries + 1} attempts")

    @staticmethod
    def _reply(data: dict[str, Any], start: float, attempts: int) -> Reply:
        message = data["choices"][0]["message"]
        text = message.get("content") or ""
        if not isinstance(text, str):
            raise TypeError("content is not text")
        usage = data.get("usage") or {}
        details = usage.get("completion_tokens_details") or {}
        return Reply(
            text=text, prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            reasoning_tokens=details.get("reasoning_tokens"), cost=usage.get("cost"),
            latency_s=time.perf_counter() - start, attempts=attempts,
        )


def parse_extra(text: str | None) -> dict[str, Any]:
    """--extra: a JSON object of additional request fields."""
    if not text:
        return {}
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError("--extra must be a JSON object")
    return value

"""A third backend in one file: an OpenAI-compatible chat API asked with the standard
library's urllib, in one piece (no streaming). It only asks once and says what happened; the
wrapper (chess_eval/benchmark/model/metered.py) reserves, retries, charges and keeps, as for the
product's own backends. tests/benchmark/test_backend.py runs the money tests through it."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from chess_eval.benchmark.model.http_backend import PREFLIGHT_PROMPT
from chess_eval.benchmark.model.interface import AttemptFailed, ModelConfig, Reply, Request

PREFIX = "urllib:"  # --model urllib:NAME


class UrllibBackend:
    """POST /chat/completions once a call; the reply, or AttemptFailed."""

    def __init__(self, spec: str, config: ModelConfig) -> None:
        self.config = config
        self.url = config.base_url.rstrip("/") + "/chat/completions"
        self.endpoint = "urllib:" + self.url
        self.retries = config.retries

    def body(self, request: Request) -> dict[str, Any]:
        """The JSON a request sends."""
        system = [{"role": "system", "content": self.config.system}] if self.config.system \
            else []
        tools = {"tools": list(request.tools)} if request.tools else {}
        return {"model": self.config.model, "temperature": self.config.temperature,
                "max_tokens": request.max_tokens or self.config.max_tokens,
                "messages": [*system, *request.messages], **tools}

    def size(self, request: Request) -> tuple[int, int]:
        body = self.body(request)
        return len(json.dumps(body)), body["max_tokens"]

    def where(self, request: Request) -> str:
        return self.url

    def preflight_request(self) -> Request:
        return Request(messages=({"role": "user", "content": PREFLIGHT_PROMPT},),
                       max_tokens=16, answer=False)

    def send(self, request: Request) -> Reply:
        sent = json.dumps(self.body(request)).encode()
        asked = urllib.request.Request(self.url, sent, {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(asked, timeout=self.config.timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            busy = exc.code in (429, 500, 502, 503, 504)
            wait = exc.headers.get("Retry-After")
            raise AttemptFailed(f"HTTP {exc.code}", retry=busy, busy=busy, fatal=not busy,
                                retry_after=float(wait) if wait else None) from None
        except TimeoutError:
            raise AttemptFailed("no reply in time", retry=True, aborted=True) from None
        except urllib.error.URLError as exc:
            raise AttemptFailed(f"no connection: {exc.reason}", retry=True) from None
        data: Any = None
        try:
            data = json.loads(raw)
            message = data["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError):
            usage = data.get("usage") if isinstance(data, dict) else None
            raise AttemptFailed("not a chat completion", retry=True,
                                unreadable=usage or {}) from None
        usage = data.get("usage") or {}
        return Reply(text=message.get("content") or "",
                     prompt_tokens=usage.get("prompt_tokens"),
                     completion_tokens=usage.get("completion_tokens"), cost=usage.get("cost"),
                     finish_reason=data["choices"][0].get("finish_reason"))

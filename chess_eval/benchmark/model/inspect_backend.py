"""The model layer's second backend: any model Inspect's model API can ask (`--model
inspect:PROVIDER/MODEL`, and the active model of the chess_eval tasks inside `inspect eval`).

Inspect owns the transport here: the provider's client, its key variables
(`<PROVIDER>_API_KEY`, `<SERVICE>_BASE_URL` for `openai-api/<service>/...`), its retries of
429, 5xx and dropped connections. This file turns our `Request` into Inspect's messages,
tools and generation config, and Inspect's output into our `Reply` (the provider's
`total_cost` where Inspect reports one), or an `AttemptFailed`; the wrapper (metered.Metered)
reserves, charges and keeps, as for every backend. Where an eval's --token-limit or
--cost-limit stops a request after its reply completed, Inspect keeps that reply from its
caller: this backend reads it from the request's own model event and hands it on
(`LimitReached`), so it is charged and cached before the limit goes on unchanged. Inspect's
model API is asynchronous and our modes call from worker threads, so every request runs on
one event loop: the eval's own inside `inspect eval` (so that each request lands in its
sample's transcript), else a private loop on a daemon thread.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import re
import threading
import time
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, cast

from chess_eval.benchmark.model.http_backend import (
    PREFLIGHT_PROMPT,
    RESPONSE_FORMAT,
    Refusal,
    check_base_url,
    refusal_of,
)
from chess_eval.benchmark.model.inspect_internals import (
    active_generate_config,
    model_event_sink,
    record_event,
)
from chess_eval.benchmark.model.interface import (
    AttemptFailed,
    LimitReached,
    ModelConfig,
    Reply,
    Request,
    canonical_endpoint,
)
from chess_eval.errors import ConfigError

PREFIX = "inspect:"  # --model inspect:PROVIDER/MODEL
# Inspect's stop reasons as the OpenAI-compatible finish reasons our parsing reads.
FINISH = {"stop": "stop", "max_tokens": "length", "model_length": "length",
          "tool_calls": "tool_calls", "content_filter": "content_filter"}
FATAL_STATUS = (401, 403, 404)  # a bad key, model or address: every request would repeat it
SLACK_S = 30.0  # beyond Inspect's own timeout, before a request is given up on here
QUIET_LOGGERS = ("httpx", "httpx2", "httpcore")  # the HTTP clients under Inspect's providers


def is_inspect(spec: str) -> bool:
    """Whether --model names a model asked through Inspect (inspect:PROVIDER/MODEL)."""
    return spec.startswith(PREFIX)


@dataclass(frozen=True)
class Active:
    """The model of the `inspect eval` running this code: its requests run on the eval's
    loop, in the asking thread's context (a sample's, so each lands in its transcript)."""

    model: Any  # inspect_ai.model.Model, the eval's --model
    loop: asyncio.AbstractEventLoop  # the eval's event loop
    roles: tuple[Any, ...] = ()  # the models of the task's roles (a match's opponent)


# Set by the chess_eval tasks in each sample (and so in the threads it starts through
# anyio): --model inspect:<the eval's model> then means that model, on that loop.
ACTIVE: contextvars.ContextVar[Active | None] = contextvars.ContextVar("chess_eval_active",
                                                                     default=None)


def backend(spec: str, config: ModelConfig) -> InspectBackend:
    """The backend of --model inspect:PROVIDER/MODEL: the eval's own model inside a chess_eval
    task, else one Inspect makes from the provider's variables."""
    active = ACTIVE.get()
    if active is not None:
        for model in (active.model, *active.roles):
            if spec == PREFIX + str(model):
                return InspectBackend(model, config, active.loop)
    return InspectBackend(load_model(spec, config.base_url or None, config.api_key), config)


def connection(base_url: str | None, key_env: str | None,
               environ: dict[str, str]) -> tuple[str, str | None, str | None]:
    """Where Inspect asks and with which key: its provider's own variables
    (`<PROVIDER>_API_KEY`, `<SERVICE>_BASE_URL`) unless --base-url or --api-key-env say
    otherwise; the key's variable."""
    if base_url:
        check_base_url(base_url)
    if not key_env:
        return base_url or "", None, None
    if not environ.get(key_env):
        raise ConfigError(f"--api-key-env {key_env}: that variable is not set")
    return base_url or "", environ[key_env], key_env


def load_model(spec: str, base_url: str | None, api_key: str | None) -> Any:
    """Inspect's model for `inspect:PROVIDER/MODEL` (its key and base URL from the provider's
    own variables unless given); ConfigError with one line when Inspect cannot make it."""
    name = spec[len(PREFIX):]
    if "/" not in name:
        raise ConfigError(f"--model {spec}: expected inspect:PROVIDER/MODEL, e.g. "
                          "inspect:openai/gpt-4o-mini or inspect:openai-api/SERVICE/MODEL")
    try:
        from inspect_ai.model import get_model
    except ImportError as exc:  # the venv predates inspect-ai in requirements.txt
        raise ConfigError(f"--model {spec}: inspect-ai is not installed (make setup)") from exc
    for noisy in QUIET_LOGGERS:  # a line per request at INFO: the progress bar says enough
        logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        # Not memoized: Inspect keys its memo by the arguments, not by the provider variables
        # (SERVICE_BASE_URL) it reads, so a second model of one name could reach the first's
        # server.
        return get_model(name, base_url=base_url, api_key=api_key, memoize=False)
    # Inspect's providers raise what their SDKs raise for a missing key, package or model
    # (PrerequisiteError, ValueError, the SDK's own errors): each is one line for the user.
    except Exception as exc:  # noqa: BLE001
        raise ConfigError(f"--model {spec}: {_line(exc)}") from None


def endpoint_of(model: Any) -> str:
    """An Inspect model's endpoint: its provider and the address it asks (the same provider
    at two servers is two endpoints)."""
    provider = str(model).split("/")[0]
    base_url = getattr(model.api, "base_url", None)
    return f"inspect:{provider}" + (f"@{canonical_endpoint(base_url)}" if base_url else "")


class _Loop:
    """A private event loop on a daemon thread: where requests run outside `inspect eval`."""

    _lock = threading.Lock()
    _loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def get(cls) -> asyncio.AbstractEventLoop:
        with cls._lock:
            if cls._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, daemon=True,
                                 name="inspect-loop").start()
                cls._loop = loop
            return cls._loop


EVAL_MARGIN_S = 5.0  # beyond an eval's own --timeout, before a request is given up on here


class InspectBackend:
    """A model of Inspect's model API as a `Backend`. Thread-safe: any thread may ask; the
    request runs on `loop` (the eval's, or a private one)."""

    def __init__(self, model: Any, config: ModelConfig,
                 loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.model = model
        self.config = config
        self._loop = loop

    @property
    def endpoint(self) -> str:
        """Whose answers these are: `endpoint_of` the model, or --endpoint-id."""
        if self.config.endpoint_id:
            return f"id:{self.config.endpoint_id}"
        return endpoint_of(self.model)

    @property
    def retries(self) -> int:
        """None on top of Inspect's own: its model retries 429, 5xx and dropped connections."""
        return 0

    def size(self, request: Request) -> tuple[int, int]:
        """All a request sends (the system prompt, the messages or prompt, the tools), as the
        HTTP backend counts its body, and its max_tokens."""
        sent = {"system": self.config.system, "messages": list(request.messages),
                "prompt": request.prompt, "tools": list(request.tools)}
        return len(json.dumps(sent)), request.max_tokens or self.config.max_tokens

    def where(self, request: Request) -> str:
        """The model a request goes to."""
        return str(self.model)

    def preflight_request(self) -> Request:
        """A small chat request."""
        return Request(messages=({"role": "user", "content": PREFLIGHT_PROMPT},),
                       max_tokens=16, answer=False)

    def send(self, request: Request) -> Reply:
        """The model's reply through Inspect (its retries included); AttemptFailed for its
        failures; LimitReached when an eval's limit stopped the request after its reply."""
        from inspect_ai.util import LimitExceededError

        messages = _messages(request, self.config.system)
        max_tokens = request.max_tokens or self.config.max_tokens
        start = time.perf_counter()
        seen = _Seen()
        try:
            output = self._run(messages, _tools(request), self._config(request, max_tokens),
                               seen)
        except LimitExceededError as limit:
            completed = seen.output
            raise LimitReached(None if completed is None else reply_of(
                completed, round(time.perf_counter() - start, 3)), limit) from None
        return reply_of(output, round(time.perf_counter() - start, 3))

    def _config(self, request: Request, max_tokens: int) -> Any:
        from inspect_ai.model import GenerateConfig, ResponseSchema
        from inspect_ai.util import JSONSchema

        schema = None
        if self.config.json_answers and request.answer and not request.tools:
            spec = RESPONSE_FORMAT["json_schema"]
            schema = ResponseSchema(name=spec["name"], strict=spec["strict"],
                                    json_schema=JSONSchema.model_validate(spec["schema"]))
        # Inside an eval its own transport settings (--max-retries, --timeout, ...) apply, as
        # given; from the CLI, ours.
        ours = self._loop is None
        return GenerateConfig(
            temperature=self.config.temperature, max_tokens=max_tokens,
            stop_seqs=list(self.config.stop) or None,
            max_retries=self.config.retries if ours else None,
            attempt_timeout=round(self.config.timeout_s) if ours else None,
            timeout=round(self._bound()) if ours else None,
            reasoning_effort=cast(Any, self.config.reasoning_effort) if request.answer else None,
            response_schema=schema, extra_body=self.config.extra or None)

    def _bound(self) -> float:
        """Seconds one request may take, every retry and backoff included: the eval's own
        --timeout inside an eval that set one (and a moment more), else from our options."""
        if self._loop is not None:
            eval_timeout = active_generate_config().timeout
            if eval_timeout:
                return float(eval_timeout) + EVAL_MARGIN_S
        return (self.config.timeout_s + self.config.backoff_cap_s) * (self.config.retries + 1)

    def _run(self, messages: list[Any], tools: list[Any], config: Any, seen: _Seen) -> Any:
        """Inspect's output for one generation, run on the loop and waited for (bounded)."""
        from inspect_ai.util import LimitExceededError

        loop = self._loop or _Loop.get()
        # The request runs in the asking thread's context (a sample's, inside a task: every
        # thread that asks there inherits its sample's context), so it lands in its transcript.
        future: Future[Any] = asyncio.run_coroutine_threadsafe(
            seen.generate(self.model, messages, tools, config), loop)
        try:
            return future.result(timeout=self._bound() + SLACK_S)
        except FutureTimeout:
            future.cancel()
            raise AttemptFailed(f"{self.model}: no reply within {self._bound() + SLACK_S:g} s "
                                "(given up on: the provider may bill it)", aborted=True,
                                fatal=False) from None
        except (KeyboardInterrupt, SystemExit, LimitExceededError):
            future.cancel()
            raise
        # Inspect raises what the provider's SDK raises once its retries are spent (openai's,
        # anthropic's, google's, tenacity's RetryError...): read by their HTTP status.
        except Exception as exc:  # noqa: BLE001
            raise _error(exc, str(self.model)) from None


class _Seen:
    """The model event of one request, as Inspect completes it: where its output is when a
    limit is raised after the reply (Inspect's model-event sink, forwarding every event to
    the sample's transcript as Inspect would)."""

    def __init__(self) -> None:
        self.output: Any = None  # the completed reply's output, once there is one

    async def generate(self, model: Any, messages: list[Any], tools: list[Any],
                       config: Any) -> Any:
        """`model.generate` with this sink installed for its own events."""
        with model_event_sink(self):
            return await model.generate(messages, tools=tools, config=config)

    def on_pending(self, event: Any) -> None:
        """A request starts: into the transcript, as without a sink."""
        record_event(event)

    def on_complete(self, event: Any) -> None:
        """A request ends: its output kept when it completed, and the transcript updated."""
        if event.error is None and event.output is not None and event.output.choices:
            self.output = event.output
        record_event(event, updated=True)


def _error(exc: BaseException, model: str) -> AttemptFailed:
    """Our error for what Inspect raised: fatal for a bad key, model or address, or a
    parameter the provider refuses; ContextTooLong for a request too long; else InfraError."""
    last = getattr(exc, "last_attempt", None)  # tenacity's RetryError: the last failure
    if last is not None and last.exception() is not None:
        exc = last.exception()
    status = getattr(exc, "status_code", None)
    said = _line(exc)
    if status in FATAL_STATUS:
        return AttemptFailed(f"HTTP {status} from {model}: {said}", fatal=True)
    if status == 400:
        kind = refusal_of(said)
        if kind is Refusal.CONTEXT:
            return AttemptFailed(f"{model}: the request does not fit the context ({said})",
                                 context=True)
        if kind is Refusal.UNSUPPORTED:
            return AttemptFailed(f"HTTP 400 from {model}: a parameter the provider does not "
                                 f"support ({said})", fatal=True)
    return AttemptFailed(f"{model}: {said}", fatal=False)


# Rich's console markup, which some of Inspect's messages carry: not for a plain line.
MARKUP = re.compile(r"\[/?(?:bold|italic|dim|red|green|blue|yellow|cyan|magenta)\]")


def _line(exc: BaseException) -> str:
    """An exception as one short line, without console markup."""
    return " ".join(MARKUP.sub("", f"{type(exc).__name__}: {exc}").split())[:300]


def _messages(request: Request, system: str | None) -> list[Any]:
    """Our request's conversation as Inspect's chat messages."""
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageTool,
        ChatMessageUser,
    )
    from inspect_ai.tool import ToolCall

    out: list[Any] = [ChatMessageSystem(content=system)] if system else []
    if request.prompt is not None:  # text to complete: Inspect asks every model by chat
        return [*out, ChatMessageUser(content=request.prompt)]
    names: dict[str, str] = {}  # tool call id -> the function it called
    for m in request.messages:
        role, content = m["role"], m.get("content") or ""
        if role == "assistant":
            calls = [ToolCall(id=c["id"], function=c["function"]["name"],
                              arguments=_arguments(c["function"]["arguments"]))
                     for c in m.get("tool_calls") or []]
            names.update({c.id: c.function for c in calls})
            out.append(ChatMessageAssistant(content=content, tool_calls=calls or None))
        elif role == "tool":
            out.append(ChatMessageTool(content=content, tool_call_id=m["tool_call_id"],
                                       function=names.get(m["tool_call_id"])))
        elif role == "system":
            out.append(ChatMessageSystem(content=content))
        else:
            out.append(ChatMessageUser(content=content))
    return out


def _arguments(text: str) -> dict[str, Any]:
    """A tool call's arguments as Inspect keeps them (a dict); malformed JSON as its text."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return {"raw": text}
    return value if isinstance(value, dict) else {"value": value}


def _tools(request: Request) -> list[Any]:
    """Our OpenAI-style tool definitions as Inspect's ToolInfo."""
    from inspect_ai.tool import ToolInfo

    return [ToolInfo.model_validate({k: v for k, v in t["function"].items()
                                     if k in ("name", "description", "parameters")})
            for t in request.tools]


# How Inspect quotes the arguments it could not parse (model/_call_tools.py).
PARSE_ERROR_RE = re.compile(r"arguments:\n\n(.*?)\n\n(?:\(arguments middle-truncated.*?\)\n\n)?"
                            r"Error details:", re.S)


def _written_arguments(call: Any) -> str:
    """A tool call's arguments as text: where Inspect could not parse them, the text the model
    wrote (its parse error quotes it), so the protocol judges it as it judges the HTTP
    backend's raw arguments."""
    if call.parse_error:
        found = PARSE_ERROR_RE.search(call.parse_error)
        return found.group(1) if found else str(call.parse_error)
    return json.dumps(call.arguments)


def reply_of(output: Any, latency_s: float) -> Reply:
    """Inspect's output as our Reply; ContextTooLong when the provider said the request does
    not fit (Inspect turns that 400 into an output with stop reason model_length)."""
    if output.stop_reason == "model_length" and output.error:
        raise AttemptFailed(f"{output.model}: {' '.join(str(output.error).split())[:200]}",
                            context=True)
    usage = output.usage
    message = output.message
    calls = [{"id": c.id, "name": c.function, "arguments": _written_arguments(c)}
             for c in (message.tool_calls or [])] if output.choices else []
    reasoning = [part.reasoning for part in message.content
                 if getattr(part, "type", None) == "reasoning"] \
        if output.choices and isinstance(message.content, list) else []
    return Reply(text=output.completion or "",
                 prompt_tokens=usage.input_tokens if usage else None,
                 completion_tokens=usage.output_tokens if usage else None,
                 reasoning_tokens=usage.reasoning_tokens if usage else None,
                 cost=usage.total_cost if usage else None, latency_s=latency_s,
                 finish_reason=FINISH.get(output.stop_reason, output.stop_reason),
                 tool_calls=calls or None, reasoning="\n".join(reasoning) or None)


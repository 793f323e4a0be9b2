"""Which backend asks a --model: the one registered for its prefix (`inspect:PROVIDER/MODEL`),
else the OpenAI-compatible HTTP backend. A new backend is one file with the `Backend` methods
(interface.py) and one line here: the wrapper (metered.Metered) gives it the money rules."""

from __future__ import annotations

from collections.abc import Callable

from chess_eval.benchmark.model import http_backend, inspect_backend
from chess_eval.benchmark.model.http_backend import HttpBackend
from chess_eval.benchmark.model.interface import Backend, ModelConfig

Factory = Callable[[str, ModelConfig], Backend]  # (--model, its settings) -> the backend
# (--base-url, --api-key-env, the environment) -> (base URL, key, the key's variable)
Connection = Callable[[str | None, str | None, dict[str, str]],
                      tuple[str, str | None, str | None]]

# By --model prefix: how each backend is made, and where it asks with which key (its own
# defaults, in its own file).
FACTORIES: dict[str, Factory] = {inspect_backend.PREFIX: inspect_backend.backend}
CONNECTIONS: dict[str, Connection] = {inspect_backend.PREFIX: inspect_backend.connection}


def _prefix(spec: str) -> str:
    return next((p for p in FACTORIES if spec.startswith(p)), "")


def has_prefix(spec: str) -> bool:
    """Whether --model SPEC names a registered backend by its prefix (inspect:...)."""
    return bool(_prefix(spec))


def backend_for(spec: str, config: ModelConfig) -> Backend:
    """The backend that asks --model SPEC."""
    prefix = _prefix(spec)
    return FACTORIES[prefix](spec, config) if prefix else HttpBackend(config)


def connection_for(spec: str, base_url: str | None, key_env: str | None,
                   environ: dict[str, str]) -> tuple[str, str | None, str | None]:
    """Where --model SPEC is asked and with which key, by its backend's own rules."""
    return CONNECTIONS.get(_prefix(spec), http_backend.connection)(base_url, key_env, environ)

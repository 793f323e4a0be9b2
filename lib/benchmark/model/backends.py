"""Which backend asks a --model: the one registered for its prefix (`inspect:PROVIDER/MODEL`),
else the OpenAI-compatible HTTP backend. A new backend is one file with the `Backend` methods
(interface.py) and one line here: the wrapper (metered.Metered) gives it the money rules."""

from __future__ import annotations

from collections.abc import Callable

from lib.benchmark.model.http_backend import HttpBackend
from lib.benchmark.model.inspect_backend import PREFIX as INSPECT
from lib.benchmark.model.inspect_backend import backend as inspect_backend
from lib.benchmark.model.interface import Backend, ModelConfig

Factory = Callable[[str, ModelConfig], Backend]  # (--model, its settings) -> the backend

FACTORIES: dict[str, Factory] = {INSPECT: inspect_backend}  # by --model prefix


def backend_for(spec: str, config: ModelConfig) -> Backend:
    """The backend that asks --model SPEC."""
    for prefix, make in FACTORIES.items():
        if spec.startswith(prefix):
            return make(spec, config)
    return HttpBackend(config)

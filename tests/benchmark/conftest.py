"""Fixtures the benchmark's tests share."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from chess_eval.benchmark.core.server import PlayerServer


@pytest.fixture(scope="module")
def served(stockfish: str) -> Iterator[PlayerServer]:
    """Baseline players behind the OpenAI-compatible API, on 127.0.0.1."""
    server = PlayerServer("127.0.0.1", 0, stockfish, seed=0, slots=2)
    threading.Thread(target=server.serve, daemon=True).start()
    yield server
    server.shutdown()
    server.close()


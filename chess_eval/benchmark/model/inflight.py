"""Requests in flight: counted, so that a run that stops lets them land, and a door that
closes on the stop, so that no new one is sent meanwhile."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext

from chess_eval.benchmark.model.interface import InfraError

# When a run stops (Ctrl-C, the breaker, a failure every request would repeat), requests in
# flight get this long to complete and be stored; those still out are left (the process
# ends), and a provider that bills a request when it completes may bill them.
GRACE_S = 2.0


class Stopping(InfraError):
    """The run is stopping: a request that has not been sent is not sent."""


class InFlight:
    """How many requests of one run are in flight (each counted until its reply is stored),
    and its door. Each run has its own (no state is shared between runs of a process); a
    child, one game's, counts its requests in the run's too and closes on its own (a
    sample's limit stops that game, not the run)."""

    def __init__(self, parent: InFlight | None = None) -> None:
        self._count = 0
        self._closed = False
        self._cond = threading.Condition()
        self._parent = parent

    def child(self) -> InFlight:
        """A gate for part of the run (one game): closed apart, drained with the run."""
        return InFlight(self)

    @property
    def closed(self) -> bool:
        """Whether the door is closed (here or in the run's)."""
        return self._closed or (self._parent is not None and self._parent.closed)

    @contextmanager
    def request(self) -> Iterator[None]:
        """Count a request (and the storing of its reply); Stopping once the door closed."""
        with self._cond:
            if self._closed:
                raise Stopping("the run is stopping: no new request is sent")
            self._count += 1
        try:
            with self._parent.request() if self._parent is not None else nullcontext():
                yield
        finally:
            with self._cond:
                self._count -= 1
                self._cond.notify_all()

    def close(self) -> None:
        """Close the door: no new request is sent (those in flight land)."""
        with self._cond:
            self._closed = True

    def drain(self, seconds: float = GRACE_S) -> None:
        """Close the door and wait until no request is in flight, at most `seconds`."""
        with self._cond:
            self._closed = True
            self._cond.wait_for(lambda: self._count == 0, timeout=seconds)

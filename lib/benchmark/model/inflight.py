"""Requests in flight: counted, so that a run that stops lets them land, and a door that
closes on the stop, so that no new one is sent meanwhile."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from lib.benchmark.model.interface import InfraError

# When a run stops (Ctrl-C, the breaker, a failure every request would repeat), requests in
# flight get this long to complete and be stored; those still out are left (the process
# ends), and a provider that bills a request when it completes may bill them.
GRACE_S = 2.0


class Stopping(InfraError):
    """The run is stopping: a request that has not been sent is not sent."""


class InFlight:
    """How many requests are in flight (each counted until its reply is stored)."""

    def __init__(self) -> None:
        self._count = 0
        self._closed = False
        self._cond = threading.Condition()

    @contextmanager
    def request(self) -> Iterator[None]:
        """Count a request (and the storing of its reply); Stopping once the door closed."""
        with self._cond:
            if self._closed:
                raise Stopping("the run is stopping: no new request is sent")
            self._count += 1
        try:
            yield
        finally:
            with self._cond:
                self._count -= 1
                self._cond.notify_all()

    def drain(self, seconds: float = GRACE_S) -> None:
        """Close the door and wait until no request is in flight, at most `seconds`."""
        with self._cond:
            self._closed = True
            self._cond.wait_for(lambda: self._count == 0, timeout=seconds)

    def reopen(self) -> None:
        """Let requests through again (the next run in this process)."""
        with self._cond:
            self._closed = False

"""Engine work on a Dask cluster: an embedded LocalCluster by default, or an existing one.

The client submits tasks that carry a function, the engine's settings and one item (a FEN, a
candidate, a puzzle); a worker runs the function on its own Stockfish and returns the result,
and only the client writes files and databases. Each worker thread keeps one engine per
settings in `EngineHost`, a WorkerPlugin: the plugin is what closes the engines when the
worker shuts down (a per-process cache would leave that to the process's exit), and the
scheduler hands it to workers that join later. Every result names the engine that computed it
and the client checks it against its own, so no result can depend on which machine ran it.

Work is deterministic whatever the cluster: node limits, one search thread and a hash cleared
per item (see `chess_eval.engine`), and results are collected by item, not by arrival.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import dask
from distributed import Client, Future, LocalCluster, WorkerPlugin, as_completed, get_worker
from distributed.security import Security

from chess_eval import fingerprint
from chess_eval.engine import Engine, EngineSettings
from chess_eval.errors import ChessEvalError, ClusterError, ConfigError

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

CONNECT_TIMEOUT_S = 5  # an external scheduler that does not answer within this fails
WORKERS_TIMEOUT_S = 60  # a cluster with no worker after this long fails
SCHEDULER_ENV = "DASK_SCHEDULER_ADDRESS"
# Dask config key: False runs the embedded cluster's workers as threads of this process
# (the tests' choice; engines are separate processes either way).
PROCESSES_KEY = "chessbench.local-processes"
PLUGIN_NAME = "chessbench-engines"


@dataclass(frozen=True)
class ClusterSettings:
    """Where engine work runs."""

    workers: int  # worker processes of the embedded cluster (one engine thread each)
    scheduler: str | None = None  # tcp://HOST:PORT of an existing cluster; None: embedded
    dashboard: bool = False  # serve the embedded cluster's dashboard on 127.0.0.1:8787


ADDRESS = re.compile(r"(tcp|tls)://(\[[0-9a-fA-F:.]+\]|[^\s:/\[\]]+):\d{1,5}")


def scheduler_address(option: str | None) -> str | None:
    """--scheduler, else DASK_SCHEDULER_ADDRESS, else None (the embedded cluster); an address
    that is not tcp://HOST:PORT or tls://HOST:PORT is a ConfigError naming where it came from."""
    origin, address = ("--scheduler", option) if option else (
        SCHEDULER_ENV, os.environ.get(SCHEDULER_ENV))
    if not address:
        return None
    if not ADDRESS.fullmatch(address):
        raise ConfigError(f"{origin}: {address!r} is not a scheduler address "
                          "(tcp://HOST:PORT, or tls://HOST:PORT with Dask's TLS settings)")
    return address


class EngineHost(WorkerPlugin):
    """Engines per worker thread, settings and slot, started on first use and kept across
    tasks (a process start costs more than many short searches), closed at teardown."""

    name = PLUGIN_NAME

    def setup(self, worker: object) -> None:
        """Start empty on each worker (the plugin travels pickled, so no lock before this)."""
        self._engines: dict[tuple[int, EngineSettings, str], Engine] = {}
        self._lock = threading.Lock()

    def engine(self, settings: EngineSettings, slot: str = "") -> Engine:
        """This thread's engine for `settings` in `slot` (a task that needs two engines of
        the same settings names a second slot); it restarts itself if it died."""
        key = (threading.get_ident(), settings, slot)
        with self._lock:
            engine = self._engines.get(key)
        if engine is None:
            engine = Engine(settings).__enter__()
            with self._lock:
                self._engines[key] = engine
        return engine

    def teardown(self, worker: object) -> None:
        """Close every engine this worker started."""
        with self._lock:
            engines, self._engines = list(self._engines.values()), {}
        for engine in engines:
            engine.close()


def _task(fn: Callable[[Engine, T], R], settings: EngineSettings,
          item: T) -> tuple[str, str, R | ChessEvalError]:
    """Run on a worker: fn on this thread's engine; returns (worker, engine name, result)."""
    worker = get_worker()
    host = worker.plugins[PLUGIN_NAME]
    assert isinstance(host, EngineHost)
    try:
        engine = host.engine(settings)
        return worker.address, engine.name, fn(engine, item)
    except ChessEvalError as exc:
        # An expected failure (an engine that will not start, or keeps dying) is handed back
        # as a value: the client raises it as one line, and Dask logs no task traceback.
        return worker.address, "", exc


def worker_engine(settings: EngineSettings, slot: str) -> Engine:
    """Inside a task: the calling worker thread's engine for `settings` in `slot`, beside the
    one the task was given (games keep the players' engine apart from the judge's)."""
    host = get_worker().plugins[PLUGIN_NAME]
    assert isinstance(host, EngineHost)
    return host.engine(settings, slot)


def _engine_fingerprint(settings: EngineSettings) -> fingerprint.Fingerprint:
    """Run on every worker before any work: how its engine searches (chess_eval/fingerprint.py)."""
    return fingerprint.of_settings(settings)


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored while the embedded cluster starts its worker processes, which keep the
    disposition: Ctrl-C in a terminal reaches the whole process group, and it is the
    client's to handle (it closes the cluster); workers would print tracebacks."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _worker_log_level() -> int:
    """What the embedded cluster's scheduler and workers may log: errors only with -v. A
    worker's own errors (a lost heartbeat as the cluster shuts down, a crash) reach the
    client as failed tasks, which are reported in one line; their tracebacks are noise."""
    verbose = logging.getLogger("distributed").getEffectiveLevel() <= logging.DEBUG
    return logging.ERROR if verbose else logging.CRITICAL


class EngineCluster:
    """A Dask client with engines on its workers, used as a context manager:
    `map` and `as_completed` run fn(engine, item) for many items."""

    def __init__(self, engine: EngineSettings, cluster: ClusterSettings) -> None:
        self.settings = engine
        self.config = cluster
        self.name = ""  # the engine's name and version, the same on every worker
        self._local: LocalCluster | None = None
        self._client: Client | None = None

    def __enter__(self) -> EngineCluster:
        try:
            self._client = self._connect()
            self._client.register_plugin(EngineHost(), name=PLUGIN_NAME)
            self.name = self._check_versions()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _connect(self) -> Client:
        address = self.config.scheduler
        client = self._external(address) if address else self._embedded()
        try:
            client.wait_for_workers(1, timeout=WORKERS_TIMEOUT_S)
        except TimeoutError as exc:
            client.close()
            raise ClusterError(f"the Dask cluster at {address} has no worker after "
                               f"{WORKERS_TIMEOUT_S} s") from exc
        return client

    def _external(self, address: str) -> Client:
        try:
            client = Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise ClusterError(f"could not reach the Dask scheduler at {address} within "
                               f"{CONNECT_TIMEOUT_S} s: {exc}") from exc
        log.info("using the Dask cluster at %s", address)
        return client

    def _embedded(self) -> Client:
        # The statistical profiler samples every thread's stack each 10 ms in every worker:
        # CPU taken from the engines, for a view of tasks we do not need.
        with _sigint_ignored(), dask.config.set({"distributed.worker.profile.enabled": False}):
            self._local = LocalCluster(
                n_workers=self.config.workers, threads_per_worker=1,
                processes=bool(dask.config.get(PROCESSES_KEY, True)),
                # A scheduler runs whatever its clients send: on a shared machine any local
                # user could reach one on 127.0.0.1. Temporary TLS credentials, held by this
                # process and its workers alone, refuse every other client.
                security=Security.temporary(),
                host="127.0.0.1", scheduler_port=0, protocol="tls://",
                dashboard_address="127.0.0.1:8787" if self.config.dashboard else None,
                # Without a dashboard the scheduler still serves /health: on a free port.
                scheduler_kwargs=({} if self.config.dashboard else
                                  {"dashboard": False, "dashboard_address": "127.0.0.1:0"}),
                # Tasks hold a position and a few numbers: Dask's memory monitor (a psutil
                # poll every 100 ms per worker) would only take CPU from the engines.
                memory_limit=0, silence_logs=_worker_log_level())
        client = Client(self._local, security=self._local.security, set_as_default=False)
        if self.config.dashboard:
            log.info("Dask dashboard: %s", client.dashboard_link)
        return client

    def _check_versions(self) -> str:
        """The client's engine name; every worker's engine must search as the client's does
        (the same fingerprint; its name may differ)."""
        assert self._client is not None
        mine = fingerprint.of_settings(self.settings)
        theirs = self._client.run(_engine_fingerprint, self.settings, on_error="return")
        for worker, found in sorted(theirs.items()):
            if isinstance(found, BaseException):
                raise ClusterError(f"worker {worker} could not start its engine "
                                   f"({self.settings.path}): {found}")
            why = mine.difference(found)
            if why is not None:
                raise ClusterError(f"worker {worker} runs {found.engine!r}, which searches "
                                   f"differently from this machine's {mine.engine!r} ({why}): "
                                   "results must not depend on which machine computed them")
        log.info("%d Dask worker(s), each running %s", len(theirs), mine.engine)
        return mine.engine

    @property
    def address(self) -> str:
        """The scheduler's address (tls://127.0.0.1:PORT when embedded)."""
        assert self._client is not None and self._client.scheduler is not None
        return str(self._client.scheduler.address)

    @property
    def workers(self) -> int:
        """How many workers the cluster has now."""
        assert self._client is not None
        return len(self._client.scheduler_info(n_workers=-1)["workers"])

    def close(self) -> None:
        """Close the client and, when embedded, the cluster and its workers' engines."""
        if self._client is not None:
            with contextlib.suppress(Exception):  # closing must not hide the real error
                self._client.close()
            self._client = None
        if self._local is not None:
            with contextlib.suppress(Exception):
                self._local.close()
            self._local = None

    def _result(self, future: Future[Any]) -> Any:
        """A task's result, checked: the engine that computed it is the client's."""
        worker, name, result = future.result()
        if isinstance(result, ChessEvalError):
            raise result
        if name != self.name:
            raise ClusterError(f"worker {worker} computed with {name!r}, not {self.name!r}")
        return result

    def _submit(self, fn: Callable[[Engine, T], R], items: list[T]) -> list[Future[Any]]:
        assert self._client is not None, "use EngineCluster as a context manager"
        return [self._client.submit(_task, fn, self.settings, item, pure=False)
                for item in items]

    def map(self, fn: Callable[[Engine, T], R], items: Iterable[T]) -> Iterator[R]:
        """fn(engine, item) for every item, on the workers; results in the order of items."""
        futures = self._submit(fn, list(items))
        try:
            for future in futures:
                yield self._result(future)
        finally:
            self._cancel(futures)

    def as_completed(self, fn: Callable[[Engine, T], R],
                     items: Iterable[T]) -> Iterator[tuple[T, R]]:
        """(item, fn(engine, item)) pairs in the order they finish, for per-item checkpoints."""
        items = list(items)
        futures = self._submit(fn, items)
        index = {future.key: i for i, future in enumerate(futures)}
        assert self._client is not None
        try:
            for future in as_completed(futures, loop=self._client.loop):
                yield items[index[future.key]], self._result(future)
        finally:
            self._cancel(futures)

    def _cancel(self, futures: list[Future[Any]]) -> None:
        """Drop what is left (an error or Ctrl-C stopped the caller)."""
        if self._client is not None and futures:
            with contextlib.suppress(Exception):
                self._client.cancel(futures)

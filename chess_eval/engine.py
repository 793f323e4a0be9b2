"""The one Stockfish wrapper: discovery, deterministic settings, bounded searches, mate rule."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from concurrent.futures import CancelledError
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import chess
import chess.engine

from chess_eval.errors import EngineCrash, EngineError, EngineNotFoundError
from chess_eval.records import RankedMove

log = logging.getLogger(__name__)


class _Chatter(logging.Filter):
    """Drops python-chess's warnings about what an XBoard engine says outside the protocol:
    Sjeng prints its search statistics after every move (a dozen lines a move) and offers a
    feature python-chess declines, at every start."""

    QUIET = ("Unexpected engine output", "Rejecting feature")

    def filter(self, record: logging.LogRecord) -> bool:
        return not any(text in str(record.msg) for text in self.QUIET)


CHATTER = _Chatter()  # added to python-chess's logger as an engine starts, not at import

T = TypeVar("T")
R = TypeVar("R")

DEBIAN_STOCKFISH = "/usr/games/stockfish"
# The reference scale every published game Elo is on: the ladder of Stockfish 17.1, which
# every OS reproduces bit for bit through the pinned portable build (Debian 13's native 17.1
# searches the same). Runs on Stockfish 15.1's ladder are converted to it by the measured map
# (data/ladders/ladder_map.json); runs on any other ladder stay apart. The benchmark's
# commands prefer a build of it (find_stockfish's `prefer`).
REFERENCE_ENGINE = "Stockfish 17.1"
# Mate rule, used everywhere a score becomes a number: mate in n (moves) for the side to
# move is +(MATE_CP - 100 n) cp, being mated in n is -(MATE_CP - 100 n); n = 0 (already
# mated) gives -MATE_CP. Faster mates score higher and every mate outranks any cp score
# (Stockfish's cp scores stay below 10,000). 30000 is the anchor's (peval's) encoding, so a
# reader written for its file reads ours the same.
MATE_CP = 30_000
MATE_STEP = 100

# What python-chess parses of each `info` line: the score and the PV are all we read, and
# parsing less (no refutations, current lines) spares the client's CPU for the engines.
PARSED = chess.engine.INFO_SCORE | chess.engine.INFO_PV
# Fixed engine settings so that a node- or depth-limited search is reproducible.
THREADS = 1
HASH_MB = 16
# Stall bounds. A search that has not finished after STALL_SLACK_S plus its budget at
# MIN_NPS (Stockfish does about 1M nodes/s per thread, so this is 50x slack) has stalled: the
# process is killed and the work redone on a fresh one. A depth-only limit gets
# DEPTH_BOUND_S at depth 12, growing 1.5x per ply.
MIN_NPS = 20_000
STALL_SLACK_S = 10.0
DEPTH_BOUND_S = 30.0
# An engine that has not answered `uci` (or `xboard`) in this long failed to start. npm's
# WebAssembly build compiles 79 MB of code first: a second or two here, over ten seconds
# (python-chess's default) when several start at once on a busy machine.
START_TIMEOUT_S = 60.0
UNBOUNDED_S = 3600.0  # a limit with neither time, nodes nor depth
# How often one position may kill the engine before the run stops with an error naming it.
MAX_ATTEMPTS = 3


def score_to_cp(score: chess.engine.Score) -> int:
    """Centipawns of a python-chess score by the project's one mate rule."""
    mate = score.mate()
    if mate is None:
        cp = score.score()
        assert cp is not None
        return cp
    if mate > 0:
        return MATE_CP - MATE_STEP * mate
    if mate < 0:
        return -(MATE_CP - MATE_STEP * -mate)
    # Both read mate() == 0: MateGiven is the side that gave mate (a win), Mate(-0) the
    # side that was mated (a loss); python-chess orders them, so compare with MateGiven.
    return MATE_CP if score == chess.engine.MateGiven else -MATE_CP


MATE_SCORES = MATE_CP - MATE_STEP * 150  # cp this large (or more) encode a mate in <= 150


def cp_to_score(cp: int) -> chess.engine.Score:
    """The python-chess score of centipawns written by score_to_cp (its inverse): a mate in
    n for cp = +-(MATE_CP - 100 n), centipawns below that."""
    if abs(cp) < MATE_SCORES:
        return chess.engine.Cp(cp)
    if cp == MATE_CP:
        return chess.engine.MateGiven
    moves = (MATE_CP - abs(cp)) // MATE_STEP
    return chess.engine.Mate(moves if cp > 0 else -moves)


# The portable engine `make engine` installs: npm's WebAssembly build of Stockfish (one thread,
# full network), pinned in package.json, run by the OS's node. The same bits run on every OS.
PROJECT = Path(__file__).resolve().parents[1]
NPM_ENGINE_GLOB = "node_modules/stockfish/src/stockfish-*-single-*.js"
NPM_STOCKFISH = "stockfish@17.1.0"  # package.json's pin (a test keeps the two alike)
# Where a pip user, with no clone and no make, puts the same build: GET_ENGINE's command.
USER_ENGINE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "chess_eval"
# How to get that build, as a clause after "to get one, " (the docs' recipe: getting-started.md,
# "As a package").
GET_ENGINE = (f"run 'make engine' in a clone, or, after a pip install, 'npm install --prefix "
              f"~/.cache/chess_eval {NPM_STOCKFISH}' (needs node)")


def npm_engine(root: Path | None = None) -> str | None:
    """The WebAssembly Stockfish `make engine` installed under `root` (by default the
    project's, then the user's cache, GET_ENGINE's two places), if there is one."""
    for where in [root] if root else [PROJECT, USER_ENGINE]:
        # The full build, not the "lite" one with a smaller network that plays another game.
        found = sorted(p for p in where.glob(NPM_ENGINE_GLOB) if "-lite-" not in p.name)
        if found:
            return str(found[-1])
    return None


class EngineProtocol(StrEnum):
    """How the project talks to an engine: Stockfish and most engines speak UCI, some older
    ones (Sjeng) only the XBoard protocol."""

    UCI = "uci"
    XBOARD = "xboard"


def engine_command(path: str) -> list[str]:
    """The command that starts the engine at `path`: a .js build runs under node (found on
    PATH), anything else is the binary itself. EngineNotFoundError when node is missing."""
    if not path.endswith(".js"):
        return [path]
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        raise EngineNotFoundError(
            f"{path} is a WebAssembly build that node runs, and node is not on PATH (install "
            "Debian's 'nodejs' package, Homebrew's 'node' or the Node.js installer)")
    return [node, path]


def _runnable(path: str) -> bool:
    """A file the lookup can start: an executable, or a .js build for node."""
    return Path(path).is_file() and (path.endswith(".js") or os.access(path, os.X_OK))


def find_stockfish(explicit: str | None = None, root: Path | None = None,
                   prefer: str | None = None) -> str:
    """Path of a Stockfish, in this order: --stockfish, STOCKFISH_PATH, `stockfish` on PATH,
    /usr/games/stockfish (Debian's package), then the WebAssembly build `make engine`
    installs in the project (`root`). With `prefer` (an engine name's start, e.g. 'Stockfish
    17.1') and no explicit choice, the first of the builds found that reports it comes
    before the others; the log says which was taken."""
    candidates: list[tuple[str, str | None]] = [
        ("--stockfish", explicit),
        ("STOCKFISH_PATH", os.environ.get("STOCKFISH_PATH")),
        ("PATH", shutil.which("stockfish")),
        (DEBIAN_STOCKFISH, DEBIAN_STOCKFISH),
        ("make engine", npm_engine(root)),
    ]
    tried = []
    found: list[str] = []
    for origin, path in candidates:
        if not path:
            tried.append({"PATH": "PATH: no 'stockfish'",
                          "make engine": "make engine: not run"}.get(origin, f"{origin}: not set"))
            continue
        if _runnable(path):
            if origin in ("--stockfish", "STOCKFISH_PATH") or prefer is None:
                return path
            found.append(path)
            continue
        tried.append(f"{origin}: {path} is not an executable file")
        if origin in ("--stockfish", "STOCKFISH_PATH"):
            # An explicit choice that does not work is an error, not a reason to guess.
            break
    if found:
        return _preferred(found, prefer or "")
    raise EngineNotFoundError(
        "no Stockfish found; tried " + "; ".join(tried)
        + f". To get Stockfish 17.1, the reference ladder's engine, {GET_ENGINE}; or pass"
        " --stockfish PATH, set STOCKFISH_PATH, or put a stockfish on PATH."
    )


def _preferred(found: list[str], prefer: str) -> str:
    """The first build in `found` that reports `prefer`, else the first; logged."""
    for path in found:
        try:
            name = engine_identity(path)
        except EngineError:
            continue  # one that does not start is no choice
        if name.startswith(prefer):
            log.info("Stockfish: %s (%s), a build the reference ladder serves", path, name)
            return path
    log.warning("Stockfish: %s; no build of %s (the reference ladder's engine) found: to "
                "get one, %s", found[0], prefer, GET_ENGINE)
    return found[0]


def binary_key(path: str) -> tuple[str, int, int]:
    """What identifies an engine binary for a per-process cache: its path, modification time
    and size (a changed file is another key); EngineError when it is not there."""
    try:
        stat = os.stat(path)
    except OSError as exc:
        raise EngineError(f"could not start {path}: {exc.strerror}") from exc
    return path, stat.st_mtime_ns, stat.st_size


def engine_identity(path: str) -> str:
    """The name and version the engine at `path` reports ('Stockfish 15.1'), asked once per
    process for each binary (a changed file is asked again)."""
    return engine_identity_of(EngineSettings(path))


def engine_identity_of(settings: EngineSettings) -> str:
    """The name and version the engine started from `settings` reports (an engine of another
    family, or another protocol), asked once per process for each binary."""
    _, mtime_ns, size = binary_key(settings.path)
    return _identity(settings, mtime_ns, size)


@functools.lru_cache(maxsize=16)
def _identity(settings: EngineSettings, mtime_ns: int, size: int) -> str:
    with Engine(settings) as engine:
        return engine.name


def open_engine(command: list[str], xboard: bool, quiet: bool) -> chess.engine.SimpleEngine:
    """Start an engine: its protocol on an event loop of its own, on a daemon thread, and
    python-chess's SimpleEngine over it. Not SimpleEngine.popen, whose thread runs the engine
    under `asyncio.run`: where nest_asyncio has patched that (Inspect does when `eval-retry`
    recovers the log of an eval that was killed), the engine never sees its process exit and
    `quit` never returns; and its thread, not a daemon, kept a Ctrl-C'd process alive. The
    engine runs in a process group of its own: Ctrl-C in a terminal signals the whole group,
    and an engine it killed mid-game was restarted by the crash path, and in Inspect failed
    its sample while the eval was being cancelled (the log was then left unfinished). The
    command closes its engines itself; an engine whose command was killed reads end of input
    and exits."""
    logging.getLogger("chess.engine").addFilter(CHATTER)  # once: the same filter is kept once
    loop = asyncio.new_event_loop()
    threading.Thread(target=_serve, args=(loop,), name="engine loop", daemon=True).start()
    popen = chess.engine.popen_xboard if xboard else chess.engine.popen_uci
    hello = asyncio.wait_for(popen(command, setpgrp=True,
                                   stderr=subprocess.DEVNULL if quiet else None),
                             START_TIMEOUT_S)
    started = asyncio.run_coroutine_threadsafe(hello, loop)
    try:
        transport, protocol = started.result(timeout=START_TIMEOUT_S + STALL_SLACK_S)
    except BaseException:  # Ctrl-C too: the loop's end cancels popen, which ends its process
        loop.call_soon_threadsafe(loop.stop)
        raise
    engine = chess.engine.SimpleEngine(transport, protocol, timeout=START_TIMEOUT_S)
    asyncio.run_coroutine_threadsafe(_until_exit(engine), loop)
    return engine


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    """Run the engine's loop until it is stopped, then end what still waits on it (each
    caller waiting gets CancelledError, as from python-chess's own thread) and close it."""
    try:
        loop.run_forever()
        waiting = asyncio.all_tasks(loop)
        for task in waiting:
            task.cancel()
        # On the loop, after the callbacks already queued (a finished command's result).
        loop.run_until_complete(_settle(waiting))
    finally:
        loop.close()


async def _settle(tasks: set[asyncio.Task[Any]]) -> None:
    await asyncio.gather(*tasks, return_exceptions=True)


async def _until_exit(engine: chess.engine.SimpleEngine) -> None:
    """Once the engine's process has exited (it quit, died or was killed) the engine takes
    no more commands (EngineTerminatedError) and its loop stops."""
    await engine.protocol.returncode
    engine.close()
    asyncio.get_running_loop().stop()


def stall_bound(limit: chess.engine.Limit) -> float:
    """Seconds after which a search under `limit` that has not finished counts as stalled."""
    bounds = []
    if limit.time is not None:
        bounds.append(2 * limit.time)
    if limit.nodes is not None:
        bounds.append(limit.nodes / MIN_NPS)
    if limit.depth is not None:
        bounds.append(DEPTH_BOUND_S * 1.5 ** max(0, limit.depth - 12))
    return STALL_SLACK_S + (min(bounds) if bounds else UNBOUNDED_S)


class Watchdog:
    """One thread per engine that kills its process when a search outlives its bound: each
    search arms it with a deadline and disarms it when done, so a search costs a lock and an
    assignment, not a thread of its own (the screened judge searches about once a ms)."""

    def __init__(self, on_expire: Callable[[object], None]) -> None:
        self._on_expire = on_expire
        self._cond = threading.Condition()
        self._deadline: float | None = None
        self._target: object = None
        self._closed = False
        self._thread: threading.Thread | None = None

    def arm(self, seconds: float, target: object) -> None:
        """Call on_expire(target) unless disarmed within `seconds`."""
        with self._cond:
            self._deadline = time.monotonic() + seconds
            self._target = target
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, daemon=True,
                                                name="engine-watchdog")
                self._thread.start()
            self._cond.notify()

    def disarm(self) -> None:
        """The search ended in time."""
        with self._cond:
            self._deadline = None
            self._target = None

    def close(self) -> None:
        """Stop the thread."""
        with self._cond:
            self._closed = True
            self._cond.notify()

    def _watch(self) -> None:
        while True:
            with self._cond:
                while not self._closed and (
                        self._deadline is None or time.monotonic() < self._deadline):
                    wait = None if self._deadline is None else self._deadline - time.monotonic()
                    self._cond.wait(wait)
                if self._closed:
                    return
                target, self._deadline, self._target = self._target, None, None
            self._on_expire(target)  # outside the lock: a kill may take a moment


@dataclass(frozen=True)
class EngineSettings:
    """How an engine process is started and configured."""

    path: str  # the binary
    threads: int = THREADS  # search threads; 1 keeps limited searches deterministic
    hash_mb: int = HASH_MB  # transposition table size, fixed for reproducibility
    options: tuple[tuple[str, int | bool], ...] = ()  # further UCI options, e.g. UCI_Elo
    protocol: EngineProtocol = EngineProtocol.UCI  # UCI, or XBoard for some other families
    args: tuple[str, ...] = ()  # arguments after the binary, e.g. ('--uci',) for GNU Chess
    # 0: the fingerprint searches by nodes (Stockfish); D > 0: by depth D, for an engine of
    # another family that may ignore a node limit (Toga II does).
    fingerprint_depth: int = 0


class Engine:
    """A Stockfish process used as a context manager.

    Every search has a stall bound (`stall_bound`); an engine that dies or stalls is
    killed, and the unit of work it was on (one call, or a whole `run`) is redone from the
    start on a fresh process, so the result is what an undisturbed run gives.
    """

    def __init__(self, settings: EngineSettings) -> None:
        self.settings = settings
        self._engine: chess.engine.SimpleEngine | None = None
        self._game: object | None = None
        self._in_run = False
        self._stalled = False
        self._name = ""
        self.searches = 0  # searches started, and their node budgets summed (for benches)
        self.nodes_budget = 0
        self._watchdog = Watchdog(self._kill_stalled)

    def __enter__(self) -> Engine:
        self._start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _start(self) -> None:
        try:
            self._engine = self._popen()
            self._name = str(self._engine.id.get("name", "unknown engine"))
            # Threads and Hash where the engine has them (every Stockfish does); an engine of
            # another family gets the options its settings name and nothing else.
            fixed = {"Threads": self.settings.threads, "Hash": self.settings.hash_mb}
            options = {**{k: v for k, v in fixed.items() if k in self._engine.options},
                       **dict(self.settings.options)}
            self._engine.configure(options)
        except BaseException as exc:  # Ctrl-C too: a half-started engine is stopped
            self.close()
            if isinstance(exc, TimeoutError):  # before OSError, of which it is one
                raise EngineError(f"could not start {self.settings.path}: no answer to its "
                                  f"protocol's hello within {START_TIMEOUT_S:.0f} s") from exc
            if isinstance(exc, (OSError, chess.engine.EngineError)):
                raise EngineError(f"could not start {self.settings.path}: {exc}") from exc
            raise

    def _popen(self) -> chess.engine.SimpleEngine:
        """The engine process, python-chess's blocking interface over it (`open_engine`)."""
        command = [*engine_command(self.settings.path), *self.settings.args]
        xboard = self.settings.protocol == EngineProtocol.XBOARD
        # An XBoard engine's stderr is dropped: Sjeng talks about its book files there; so
        # is node's, which prints a stack trace when Ctrl-C closes its pipe first.
        quiet = xboard or str(self.settings.path).endswith(".js")
        return open_engine(command, xboard, quiet)

    def close(self) -> None:
        """Stop the engine process (and its watchdog)."""
        self._watchdog.close()
        self._watchdog = Watchdog(self._kill_stalled)  # a restart after close gets a new one
        if self._engine is not None:
            engine, self._engine = self._engine, None
            with contextlib.suppress(chess.engine.EngineError,
                                     chess.engine.EngineTerminatedError, TimeoutError,
                                     CancelledError):
                engine.quit()  # bounded by the engine's timeout
            engine.close()  # the process killed if it is still there

    @property
    def name(self) -> str:
        """The engine's own name and version, e.g. 'Stockfish 15.1' (known once started, and
        after it died)."""
        assert self._name, "the engine was never started"
        return self._name

    @property
    def pid(self) -> int:
        """Process id of the running engine."""
        assert self._engine is not None
        return int(self._engine.transport.get_pid())

    def run(self, board: chess.Board, work: Callable[[Engine], R]) -> R:
        """work(self) on one position; redone from scratch on a fresh engine if it dies.

        `work` must begin with a cleared hash (new_game), so a redo gives the same result as
        an undisturbed run. After MAX_ATTEMPTS failures an EngineError names the position.
        """
        if self._in_run:
            return work(self)
        last: EngineCrash | None = None
        for attempt in range(1, MAX_ATTEMPTS + 1):
            self._in_run = True
            try:
                return work(self)
            except EngineCrash as exc:
                last = exc
                log.warning("%s (attempt %d of %d)%s", exc, attempt, MAX_ATTEMPTS,
                            "; redoing the position on a fresh engine"
                            if attempt < MAX_ATTEMPTS else "")
            finally:
                self._in_run = False
        raise EngineError(f"the engine failed {MAX_ATTEMPTS} times on the position "
                          f"{board.fen()} (last: {last}); check the engine binary "
                          "(--stockfish) and the machine's memory")

    def _call(self, board: chess.Board, limit: chess.engine.Limit,
              call: Callable[[chess.engine.SimpleEngine], R]) -> R:
        """Run one search; a death or a stall kills the process and raises EngineCrash."""
        if self._engine is None:
            self._start()
        engine = self._engine
        assert engine is not None
        bound = stall_bound(limit)
        self.searches += 1
        self.nodes_budget += limit.nodes or 0
        self._stalled = False
        self._watchdog.arm(bound, engine)
        try:
            return call(engine)
        except (chess.engine.EngineTerminatedError, CancelledError) as exc:
            what = (f"stalled (no result within {bound:.0f} s)" if self._stalled
                    else f"died ({exc!r})")
            engine.close()
            self._engine = None
            raise EngineCrash(f"engine {what} on {board.fen()}") from exc
        finally:
            self._watchdog.disarm()

    def _kill_stalled(self, engine: object) -> None:
        assert isinstance(engine, chess.engine.SimpleEngine)
        self._stalled = True
        with contextlib.suppress(ProcessLookupError, TypeError):  # it ended meanwhile
            os.kill(int(engine.transport.get_pid()), signal.SIGKILL)

    def analyse(
        self, board: chess.Board, limit: chess.engine.Limit, multipv: int,
        root_moves: list[chess.Move] | None = None, new_game: bool = True,
        info: chess.engine.Info = PARSED,
    ) -> list[chess.engine.InfoDict]:
        """MultiPV analysis, with the stall bound and redo of `run`.

        With new_game (the default) the hash is cleared first, so the result does not depend
        on what was searched before; new_game=False keeps the hash of the previous search,
        for a caller chaining searches inside one `run`. `info` is what is parsed of the
        output (the score alone is cheaper than score and PV).
        """
        if not self._in_run:
            return self.run(board, lambda e: e.analyse(board, limit, multipv, root_moves,
                                                       info=info))
        if new_game or self._game is None:
            # A fresh game object makes python-chess send ucinewgame, which clears the hash.
            self._game = object()
        game = self._game
        return self._call(board, limit, lambda e: e.analyse(
            board, limit, multipv=multipv, game=game, root_moves=root_moves, info=info))

    def play(self, board: chess.Board, limit: chess.engine.Limit) -> chess.Move:
        """The engine's move, from a cleared hash (redone on a fresh engine if it dies)."""
        result = self.run(board, lambda _: self._call(
            board, limit, lambda e: e.play(board, limit, game=object())))
        if result.move is None:
            raise EngineError(f"engine returned no move on {board.fen()}")
        return result.move

    def ranked_moves(
        self, board: chess.Board, limit: chess.engine.Limit, multipv: int
    ) -> tuple[RankedMove, ...]:
        """The top `multipv` moves with their scores from the side to move, best first."""
        infos = self.analyse(board, limit, multipv)
        return tuple(
            RankedMove(info["pv"][0], info["score"].relative) for info in infos if info.get("pv")
        )

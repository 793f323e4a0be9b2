"""An exclusive claim on one run in a store: a second process running the same run (the same
player, settings and store, from the CLI or from Inspect) is refused in one line that names
the holder, instead of asking, and paying for, every request the first one is asking.

The claim is an OS file lock (flock; on Windows msvcrt's), so it ends with its process
however that ends (kill -9 included): a rerun after a crash is never refused. Runs of other
players or settings in the same store claim other runs and go on side by side.

A run that ends removes its lock file while it still holds the lock, so a finished run leaves
none behind (kill -9 leaves its file, which the next claim takes over). A process that opened
the file just before it was removed may lock that removed file: it then finds the path no
longer names what it locked and claims afresh, so two holders never run at once.
"""

from __future__ import annotations

import hashlib
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO

from chess_eval.errors import ChessEvalError, ConfigError


class ClaimHeld(ChessEvalError):
    """Another process is running this run on this store."""


def claim_path(store: Path, identity: str) -> Path:
    """The lock file of a run (`identity`: all that makes it this run) beside its store."""
    digest = hashlib.sha256(identity.encode()).hexdigest()[:16]
    return store.parent / f".{store.name}.{digest}.claim"


def _lock(handle: IO[str]) -> bool:
    """Take the lock without waiting; False when another process holds it."""
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        try:
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        except OSError:
            return False
        return True
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


@contextmanager
def claim(store: Path, identity: str, what: str) -> Iterator[None]:
    """Hold the run (`what`: how a message names it) for the block; ClaimHeld at once, in
    one line naming the holder, when another process holds it."""
    path = claim_path(store, identity)
    handle = _locked(path, store, what)
    try:
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()} on {socket.gethostname()}, since "
                     f"{time.strftime('%Y-%m-%d %H:%M:%S')}")
        handle.flush()
        yield
    finally:
        try:
            # Removed while still locked: a process that opens it now finds it gone or new.
            with suppress(OSError):  # Windows keeps an open file: it stays, unlocked
                path.unlink()
        finally:
            handle.close()  # closing the file releases the lock


def _locked(path: Path, store: Path, what: str) -> IO[str]:
    """The lock file at `path`, opened and locked by this process; ClaimHeld when another
    process holds it."""
    while True:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle = path.open("a+", encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"{store}: cannot keep a store there ({exc.strerror or exc}): "
                              "give a writable folder") from None
        if not _lock(handle):
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise ClaimHeld(f"{what} is already running on {store} ({holder}): wait for it "
                            "to end, or give this one other stores (another --out; in "
                            "Inspect another CHESS_EVAL_CACHE); nothing was asked")
        if _names(path, handle):
            return handle
        # Its holder removed the file as this process opened it (the holder's run ended):
        # what is locked is a removed file, so claim the path afresh.
        handle.close()


def _names(path: Path, handle: IO[str]) -> bool:
    """Whether `path` still names the file `handle` has open."""
    try:
        named = os.stat(path)
    except OSError:
        return False
    held = os.fstat(handle.fileno())
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)

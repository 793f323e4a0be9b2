"""A UCI engine that wraps the real Stockfish and fails on purpose, for fault-injection tests.

Environment: FAULT_ENGINE (the real binary), FAULT_COUNTER (a file counting `go` commands
across every process of a run), FAULT_AT (comma-separated `go` numbers, 1-based, at which
to fail) and FAULT_MODE: `die` (exit at once, as a crashed engine) or `stall` (keep running
but never answer again, as a hung engine). FAULT_NAME, when set, replaces the name the
engine reports (`id name`), as another Stockfish version would. FAULT_NODES, when set, is
added to the node limit of every `go nodes N`: a build that searches differently under the
same name, as a custom or mis-compiled one would. FAULT_LOG, when set, names a file every `go`
command is appended to as the caller sent it: what a run asked the engine to search.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import threading
from pathlib import Path


def _next_go(counter: Path) -> int:
    """Increment the shared `go` counter under a lock and return the new value."""
    with open(counter, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        n = int(handle.read() or 0) + 1
        handle.seek(0)
        handle.truncate()
        handle.write(str(n))
        return n


def main() -> None:
    """Proxy stdin/stdout to the real engine, failing at the configured `go` commands."""
    engine = subprocess.Popen([os.environ["FAULT_ENGINE"]], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, bufsize=1)
    fail_at = {int(n) for n in os.environ.get("FAULT_AT", "").split(",") if n}
    mode = os.environ.get("FAULT_MODE", "die")
    silent = threading.Event()
    name = os.environ.get("FAULT_NAME")
    extra_nodes = int(os.environ.get("FAULT_NODES", "0"))
    go_log = os.environ.get("FAULT_LOG")

    def forward_output() -> None:
        assert engine.stdout is not None
        for line in engine.stdout:
            if name and line.startswith("id name "):
                line = f"id name {name}\n"
            if not silent.is_set():
                sys.stdout.write(line)
                sys.stdout.flush()

    threading.Thread(target=forward_output, daemon=True).start()
    assert engine.stdin is not None
    for line in sys.stdin:
        if go_log and line.startswith("go"):
            with open(go_log, "a", encoding="utf-8") as handle:  # one short append a line
                handle.write(line)
        counted = line.startswith("go") and fail_at
        if counted and _next_go(Path(os.environ["FAULT_COUNTER"])) in fail_at:
            if mode == "die":
                engine.kill()
                os._exit(3)
            silent.set()  # stall: the search runs, but nothing ever reaches the caller
        if extra_nodes and line.startswith("go nodes "):
            words = line.split()
            words[2] = str(int(words[2]) + extra_nodes)
            line = " ".join(words) + "\n"
        engine.stdin.write(line)
        engine.stdin.flush()
        if line.strip() == "quit":  # as the real engine does: gone at once, not at EOF
            engine.wait(timeout=10)
            break
    engine.kill()


if __name__ == "__main__":
    main()

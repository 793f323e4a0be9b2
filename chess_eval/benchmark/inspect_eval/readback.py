"""The chess_eval tasks' Inspect logs in a results folder, read back as result files before
`leaderboard` or `report` ranks the folder (Inspect is imported only when there is one)."""

from __future__ import annotations

from pathlib import Path

from chess_eval.benchmark.core.header import inspect_logs


def read_back(results: Path) -> list[Path]:
    """Read back the chess_eval logs under `results` not read before (each once) as the CLI's
    result files, printing each run's file; the files written."""
    if not results.is_dir() or not inspect_logs(results):
        return []
    from chess_eval.benchmark.inspect_eval.logs import read_logs

    written = read_logs(results)
    for path in written:
        if path.suffix == ".json" and path.parent == results:
            print(f"read back from an Inspect log: {path}")
    return written

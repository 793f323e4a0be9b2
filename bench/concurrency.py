"""Wall time of 1000 questions against a local server answering in 200 ms, at concurrency 1
and 16 (target: >= 10x faster), and of a rerun served entirely from the cache (target < 5 s).
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import time
from pathlib import Path

import chess

import benchmark
from chess_eval.cli import run_cli
from tests.benchmark.chatserver import ChatServer, Response

ROOT = Path(__file__).resolve().parents[1]


def answer(fen: str, attempt: int) -> Response:
    """A legal move after a fixed latency."""
    board = chess.Board(fen)
    move = min(board.legal_moves, key=lambda m: m.uci())
    return Response(f"Final answer: {move.uci()}", delay=LATENCY)


LATENCY = 0.2


def write_questions(source: Path, target: Path, count: int) -> None:
    """`count` questions: the real ones, repeated under new ids when there are fewer."""
    with open(source, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
        fields = reader.fieldnames or []
    out = []
    for i in range(count):
        row = dict(rows[i % len(rows)])
        row["id"] = f"{row['id']}#{i // len(rows)}"
        out.append(row)
    with open(target, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(out)


def timed(argv: list[str]) -> float:
    """Seconds of one benchmark run."""
    start = time.perf_counter()
    if benchmark.main(argv) != 0:
        raise SystemExit("benchmark run failed")
    return time.perf_counter() - start


def main() -> None:
    """Run the three timings and print the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=Path, default=ROOT / "questions.csv")
    parser.add_argument("--count", type=int, default=1000, help="questions to ask")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, ChatServer(answer) as server:
        questions = Path(tmp) / "questions.csv"
        write_questions(args.questions, questions, args.count)

        def argv(out: str, concurrency: int) -> list[str]:
            return ["--model", "local/latency", "--base-url", server.base_url, "--questions",
                    str(questions), "--out", str(Path(tmp) / out), "--concurrency",
                    str(concurrency)]
        serial = timed(argv("serial", 1))
        parallel = timed(argv("parallel", 16))
        cached = timed(argv("parallel", 16))
    print(f"\n{args.count} questions, {LATENCY * 1000:.0f} ms per answer")
    print(f"concurrency 1:  {serial:7.1f} s")
    print(f"concurrency 16: {parallel:7.1f} s   speed-up {serial / parallel:.1f}x "
          "(target >= 10x)")
    print(f"cached rerun:   {cached:7.1f} s   (target < 5 s)")


if __name__ == "__main__":
    sys.exit(run_cli(main))

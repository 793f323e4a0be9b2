"""Step 06's evaluation against the anchor's, judged on what grading needs, in one run.

Positions: real rows of questions.csv, games and puzzles, the ones with the lowest
SHA256(id) (`--games`, at least `--endgames` of them endgames, `--puzzles`). Reference
(cached in output/bench/, about half a CPU minute per position): every legal move by
MultiPV at depth 16, then each top candidate (within 300 cp of that search's best, at most
8, plus any move whose depth-16 score beats them all) searched on its own to depth 20.
Anchor (the seed's public pipeline): MultiPV over all legal moves, depth 25 capped at 4 s,
one thread.

For every setting, overall, on the endgames alone, and split into balanced rows (the
reference's best within +-300 cp) and decided ones: (a) best-move agreement (its best move
is a reference-best move); (b) mean absolute error of cp loss (best minus move, clipped to
1000) over the moves whose reference loss is <= 300; (c) the share of those moves whose grade
class equals the reference's; (d) rows with a tie at the top that the reference lacks; (e)
engine CPU s per position; (f) our best move within 10 cp of the reference's best; (g)
cp-loss MAE over the moves within 200 cp of the reference's best. Goals: ours beats the
anchor on (a)-(c) at no more than half its CPU, (d) <= 2%, (f) >= 95%, (g) <= 15 cp.
`--reference-depth 24 --setting reference@20` measures the depth-20 reference itself
against a deeper one: how far the goals can be judged at all.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.engine
from tqdm import tqdm

from chess_eval.cli import run_cli
from chess_eval.engine import Engine, EngineSettings, find_stockfish, score_to_cp
from chess_eval.evaluation import DEFAULT_SETTING, EvalSetting, evaluate_moves
from chess_eval.grading import grade

ROOT = Path(__file__).resolve().parents[1]

CLIP = 1000
NEAR = 300  # moves whose reference loss is at most this are graded in (b) and (c)
CLOSE = 200  # (g): the MAE is over moves within this of the reference's best
BEST_SLACK = 10  # (f): a best move within this of the reference's best counts
BALANCED = 300  # rows whose reference best is within +-this are "balanced", others "decided"
GOALS = "(f) >= 95%, (g) <= 15 cp"
REF_SCAN_DEPTH = 16
REF_ALONE_DEPTH = 20  # issue 22: a depth-20 reference
REF_MARGIN = 300
REF_CANDIDATES = 8
CACHE = ROOT / "output" / "bench" / "eval_reference.json"


def ref_key(depth: int) -> str:
    """The reference cache's key for candidates searched alone to `depth`."""
    return f"d{REF_SCAN_DEPTH}+alone-d{depth}@{REF_MARGIN}x{REF_CANDIDATES}"


Scores = dict[str, int]
Evaluator = Callable[[Engine, chess.Board], Scores]


def positions(questions: Path, games: int, puzzles: int,
              endgames: int = 0) -> list[tuple[str, str]]:
    """(FEN, phase) of real rows: per source, the rows with the lowest SHA256(id), with at
    least `endgames` endgame rows among the games."""
    with open(questions, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    rows.sort(key=lambda r: hashlib.sha256(r["id"].encode()).hexdigest())
    game_rows = [r for r in rows if r["source"] == "game"]
    picked = [r for r in game_rows if r["phase"] == "Endgame"][:endgames]
    picked += [r for r in game_rows if r not in picked][:max(0, games - len(picked))]
    picked += [r for r in rows if r["source"] == "puzzle"][:puzzles]
    return [(r["prompt"], r["phase"]) for r in picked]


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds used so far by a process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _multipv(engine: Engine, board: chess.Board, limit: chess.engine.Limit) -> Scores:
    infos = engine.analyse(board, limit, board.legal_moves.count())
    return {i["pv"][0].uci(): score_to_cp(i["score"].relative) for i in infos if i.get("pv")}


def reference(engine: Engine, board: chess.Board, depth: int = REF_ALONE_DEPTH) -> Scores:
    """Depth-16 MultiPV over all moves, then the top candidates alone to `depth`."""
    scores = _multipv(engine, board, chess.engine.Limit(depth=REF_SCAN_DEPTH))
    for move in board.legal_moves:  # moves the MultiPV search did not report
        if move.uci() not in scores:
            scores[move.uci()] = _alone(engine, board, move, REF_SCAN_DEPTH)
    order = sorted(scores, key=lambda m: (-scores[m], m))
    deep: Scores = {}
    for uci in order:
        near = len(deep) < REF_CANDIDATES and scores[order[0]] - scores[uci] <= REF_MARGIN
        if not near and (not deep or scores[uci] <= max(deep.values())):
            break
        deep[uci] = _alone(engine, board, chess.Move.from_uci(uci), depth)
    return {**scores, **deep}


def _alone(engine: Engine, board: chess.Board, move: chess.Move, depth: int) -> int:
    info = engine.analyse(board, chess.engine.Limit(depth=depth), 1, root_moves=[move])
    return score_to_cp(info[0]["score"].relative)


def anchor(engine: Engine, board: chess.Board) -> Scores:
    """MultiPV over all legal moves, depth 25 capped at 4 s."""
    return _multipv(engine, board, chess.engine.Limit(depth=25, time=4.0))


def ours(setting: EvalSetting) -> Evaluator:
    """Step 06's evaluation with a given setting."""
    def run(engine: Engine, board: chess.Board) -> Scores:
        return {m.uci(): cp for m, cp in evaluate_moves(engine, board, setting)}
    return run


def _measure(job: tuple[str, str, str]) -> tuple[Scores, float]:
    path, name, fen = job
    with Engine(EngineSettings(path=path)) as engine:
        engine.analyse(chess.Board(), chess.engine.Limit(depth=1), 1)  # start-up off the clock
        before = cpu_seconds(engine.pid)
        result = evaluator(name)(engine, chess.Board(fen))
        return result, cpu_seconds(engine.pid) - before


def evaluator(name: str) -> Evaluator:
    """The evaluator a name stands for: reference@DEPTH (the reference's own procedure at a
    depth, to measure the reference against a deeper one), anchor, default or the fields of
    an EvalSetting separated by commas."""
    if name.startswith("reference@"):
        depth = int(name.split("@")[1])
        return lambda engine, board: reference(engine, board, depth)
    if name == "anchor":
        return anchor
    if name == "default":
        return ours(DEFAULT_SETTING)
    return ours(EvalSetting(*(int(x) for x in name.split(","))))


def run_all(path: str, name: str, fens: list[str], workers: int) -> list[tuple[Scores, float]]:
    """Evaluate every position with one evaluator, in parallel processes."""
    with ProcessPoolExecutor(workers) as pool:
        jobs = pool.map(_measure, [(path, name, fen) for fen in fens])
        return list(tqdm(jobs, total=len(fens), desc=name, unit="pos", leave=False))


@dataclass
class Row:
    """The figures of one position under one setting."""

    best_ok: bool
    errors: list[int]  # |cp loss - reference cp loss| of the graded moves
    same_grade: list[bool]
    false_tie: bool
    best_close: bool  # (f) our best move within BEST_SLACK of the reference's best
    close_errors: list[int]  # (g) the errors over moves within CLOSE of the reference's best


def _loss(scores: Scores) -> dict[str, int]:
    best = max(scores.values())
    return {m: min(best - cp, CLIP) for m, cp in scores.items()}


def _tied_top(scores: Scores) -> bool:
    top = sorted(scores.values(), reverse=True)
    return len(top) > 1 and top[0] == top[1]


def compare(result: Scores, ref: Scores) -> Row:
    """How one setting's evaluation of a position matches the reference."""
    ours_loss, ref_loss = _loss(result), _loss(ref)
    best = max(result, key=lambda m: result[m])
    graded = [m for m in ref if ref_loss[m] <= NEAR and m in result]
    return Row(
        best_ok=ref_loss[best] == 0,
        errors=[abs(ours_loss[m] - ref_loss[m]) for m in graded],
        same_grade=[grade(ours_loss[m]) == grade(ref_loss[m]) for m in graded],
        false_tie=_tied_top(result) and not _tied_top(ref),
        best_close=ref_loss[best] <= BEST_SLACK,
        close_errors=[abs(ours_loss[m] - ref_loss[m]) for m in graded
                      if ref_loss[m] <= CLOSE],
    )


def load_reference(path: str, fens: list[str], workers: int,
                   depth: int = REF_ALONE_DEPTH) -> dict[str, Scores]:
    """The cached reference of every position, computing what is missing."""
    cache = json.loads(CACHE.read_text()) if CACHE.is_file() else {}
    refs = cache.setdefault(ref_key(depth), {})
    todo = [f for f in fens if f not in refs]
    if todo:
        print(f"computing the reference for {len(todo)} positions ...", flush=True)
        with ProcessPoolExecutor(workers) as pool:
            jobs = [(path, f"reference@{depth}", fen) for fen in todo]
            for fen, (ref, _) in zip(todo, tqdm(pool.map(_measure, jobs), total=len(todo),
                                                desc="reference", unit="pos"), strict=True):
                refs[fen] = ref
                CACHE.parent.mkdir(parents=True, exist_ok=True)
                tmp = CACHE.with_suffix(".tmp")
                tmp.write_text(json.dumps(cache))
                tmp.replace(CACHE)
    return {f: refs[f] for f in fens}


def main() -> None:
    """Print (a)-(g) for the anchor, our default and any extra settings, overall and on the
    endgames."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=Path, default=ROOT / "questions.csv")
    parser.add_argument("--games", type=int, default=80, help="game positions (default 80)")
    parser.add_argument("--endgames", type=int, default=24,
                        help="of which at least this many endgames (default 24)")
    parser.add_argument("--puzzles", type=int, default=20, help="puzzles (default 20)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--stockfish", default=None)
    parser.add_argument("--no-anchor", action="store_true", help="skip the anchor's run")
    parser.add_argument("--reference-depth", type=int, default=REF_ALONE_DEPTH,
                        help=f"depth the reference searches its candidates alone to (default "
                        f"{REF_ALONE_DEPTH}); with --setting reference@{REF_ALONE_DEPTH} the "
                        "default reference is itself measured against this one")
    parser.add_argument("--setting", action="append", default=[],
                        metavar="SCAN,MOVE,MARGIN,CAP[,NEAR,NEAR_MARGIN]",
                        help="extra settings to compare, e.g. 60000,100000,20,2,800000,350, "
                        "or reference@DEPTH")
    args = parser.parse_args()
    path = find_stockfish(args.stockfish)
    picked = positions(args.questions, args.games, args.puzzles, args.endgames)
    fens = [fen for fen, _ in picked]
    endgame = [phase == "Endgame" for _, phase in picked]
    refs = load_reference(path, fens, args.workers, args.reference_depth)
    print(f"{len(fens)} real positions of {args.questions.name} ({sum(endgame)} endgames); "
          f"reference: MultiPV depth {REF_SCAN_DEPTH}, top {REF_CANDIDATES} within "
          f"{REF_MARGIN} cp alone to depth {args.reference_depth}; goals {GOALS}")
    print(f"{'setting':<36} {'rows':>9} {'(a) best':>8} {'(b) MAE':>8} {'(c) grade':>9} "
          f"{'(d) ties':>8} {'(e) CPU s':>9} {'(f) <=10':>8} {'(g) MAE':>8}")
    names = ([] if args.no_anchor else ["anchor"]) + ["default", *args.setting]
    for name in names:
        results = run_all(path, name, fens, args.workers)
        rows = [compare(r, refs[f]) for (r, _), f in zip(results, fens, strict=True)]
        label = {"anchor": "anchor (MultiPV all, d25 / 4 s)",
                 "default": f"default {DEFAULT_SETTING.label}"}.get(name, name)
        balanced = [abs(max(refs[f].values())) <= BALANCED for f in fens]
        for part, keep in (("all", [True] * len(rows)), ("endgames", endgame),
                           ("balanced", balanced),
                           ("decided", [not b for b in balanced])):
            chosen = [r for r, k in zip(rows, keep, strict=True) if k]
            if not chosen:
                continue
            cpu = [c for (_, c), k in zip(results, keep, strict=True) if k]
            print(f"{label if part == 'all' else '':<36} {part:>9} " + _figures(chosen, cpu)
                  + f" ({len(chosen)} rows)", flush=True)


def _figures(rows: list[Row], cpu: list[float]) -> str:
    """(a)-(g) of some positions' rows, as table cells."""
    errors = [e for r in rows for e in r.errors]
    grades = [g for r in rows for g in r.same_grade]
    close = [e for r in rows for e in r.close_errors]
    return (f"{sum(r.best_ok for r in rows) / len(rows):8.1%} "
            f"{sum(errors) / len(errors):8.1f} {sum(grades) / len(grades):9.1%} "
            f"{sum(r.false_tie for r in rows) / len(rows):8.1%} "
            f"{sum(cpu) / len(cpu):9.2f} {sum(r.best_close for r in rows) / len(rows):8.1%} "
            f"{sum(close) / len(close):8.1f}")


if __name__ == "__main__":
    sys.exit(run_cli(main))

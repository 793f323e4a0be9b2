"""Committed calibration games replayed from their seeds under the full judge and the screened
one: the results that differ, and what each judge costs, in one run. With --adjudication 2,
the screened judge applies that version of the rule (game.RULES): the results it changes
against version 1's, which every committed game was judged by.

A sample of `ladder_games.csv` (standard games of the engine here between rungs of the
default ladder; the rows with the lowest SHA256 of their key) is rebuilt from each row's seed,
pair, number and recorded book opening, as `calibrate` played it, and every game is played twice on
the Dask cluster: with `FullJudge` (the rule's own judge: version 1's nodes on a cleared hash
after every ply, as every committed game was judged) and with `ScreenedJudge` (a cheap look
at every position, the full search only where the rule can fire). Printed:
- the full judge's replay against the committed row (result, termination, plies): the replay
  reproduces the committed games;
- the screened judge against the full one: results, terminations and plies that differ
  (goal: no result);
- each judge's searches, node budgets and wall seconds per game, and its share of all nodes;
- the look's misses: at each margin, the positions where the look and the full eval fall on
  different sides of the decisive threshold by more than the margin (the margin in
  chess_eval/benchmark/arena/game.py must stand clear of them).

    python -m bench.judge_replay [--games 300] [--workers 2] [--adjudication 2]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from chess_eval.benchmark.arena import book
from chess_eval.benchmark.arena.game import (
    DECISIVE_CP,
    PLY_CAP,
    RULE,
    RULES,
    SCREEN,
    SCREEN_DRAW_CP,
    SCREEN_MARGIN_CP,
    WHITE_SCORE,
    Adjudication,
    FullJudge,
    Judge,
    ScreenedJudge,
    play_game,
)
from chess_eval.benchmark.arena.ladder import default_rungs, ladder_for
from chess_eval.benchmark.arena.match import PLAYERS, GameJob, on_worker
from chess_eval.benchmark.core.data import BOOK, LADDER_GAMES, games_path
from chess_eval.benchmark.core.turns import ENGINE_TEMPLATE, Side, Start
from chess_eval.benchmark.ladders.calibration import CalibrationGame, game_key, read_games
from chess_eval.benchmark.players.player import make_player
from chess_eval.cli import run_cli
from chess_eval.cluster import ClusterSettings, EngineCluster, worker_engine
from chess_eval.engine import Engine, EngineSettings, engine_identity, find_stockfish
from chess_eval.kvstore import JsonStore, MemoryStore

ROOT = Path(__file__).resolve().parents[1]
MARGINS = (100, 200, 300, 400, 500, 700)


@dataclass(frozen=True)
class Pass:
    """One replay of a game under one judge."""

    result: str
    termination: str
    plies: int
    seconds: float  # wall seconds of the game on its worker
    judge_searches: int
    judge_nodes: int  # node budgets of the judge's searches
    player_nodes: int  # node budgets of the players' searches
    evals: tuple[int, ...]  # FullJudge: every position's eval; ScreenedJudge: the looks
    full_searches: int  # full searches (the rule's nodes)


def replay_pass(judge_engine: Engine, job: GameJob, screened: bool) -> Pass:
    """One game under one judge, on this worker's engines (as match.play_job plays it); the
    screened judge applies the job's rule, the full one version 1 (the committed games')."""
    white, black = on_worker(job.white), on_worker(job.black)
    players = worker_engine(judge_engine.settings, PLAYERS)
    before = (judge_engine.searches, judge_engine.nodes_budget, players.nodes_budget)
    made: list[Judge] = []

    def game(engine: Engine) -> Any:
        judge = ScreenedJudge(engine, job.rule) if screened else FullJudge(engine)
        made.append(judge)
        return play_game(job.key, white, black, job.start, judge, MemoryStore(), job.ply_cap)

    start = time.perf_counter()
    record = judge_engine.run(job.start.board(), game)
    seconds = time.perf_counter() - start
    judge = made[-1]
    looks = judge.screen if isinstance(judge, ScreenedJudge) else judge.evals
    return Pass(record.result, str(record.termination), len(record.moves), seconds,
                judge_engine.searches - before[0], judge_engine.nodes_budget - before[1],
                players.nodes_budget - before[2], tuple(looks),
                judge.searches)


def replay(judge_engine: Engine, item: tuple[GameJob, bool]) -> tuple[Pass | None, Pass]:
    """The task: the game under the full judge (unless its pass is cached), then under the
    screened one."""
    job, full = item
    return (replay_pass(judge_engine, job, False) if full else None,
            replay_pass(judge_engine, job, True))


def rebuild(game: CalibrationGame, start: Start, settings: EngineSettings,
            rule: Adjudication = RULE) -> GameJob:
    """The committed game's job: its rungs, colours, key (the seed of its random moves) and
    the book opening it recorded; judged by `rule`."""
    specs = {r.name: r.spec for r in default_rungs()}
    sides = [Side(make_player(specs[name], None, settings.path, game.seed, 1), ENGINE_TEMPLATE)
             for name in (game.weak, game.strong)]
    white, black = sides if game.number % 2 else sides[::-1]
    return GameJob(game_key(game), white, black, start, PLY_CAP, rule)


def sample(games: list[CalibrationGame], engine: str, n: int) -> list[CalibrationGame]:
    """The n standard games of this engine between default rungs with the lowest
    SHA256(key)."""
    names = {r.name for r in default_rungs()}
    pool = [g for g in games if g.condition == "standard" and g.engine == engine
            and g.weak in names and g.strong in names and g.adjudication == RULE.version]
    pool.sort(key=lambda g: hashlib.sha256(game_key(g).encode()).hexdigest())
    return pool[:n]


def weak_score(game: CalibrationGame, result: str) -> float:
    """The weaker rung's score in `game` had it ended in `result`."""
    white = WHITE_SCORE[result]
    return white if game.number % 2 else 1 - white


def misses(pairs: list[tuple[int, int]], margin: int) -> tuple[int, int]:
    """(looks more than `margin` short of the threshold whose full eval passes it, looks
    more than `margin` beyond it whose full eval fails it), either side's threshold."""
    short = beyond = 0
    for look, full in pairs:
        for sign in (1, -1):
            a, b = sign * look, sign * full
            short += b >= DECISIVE_CP and a < DECISIVE_CP - margin
            beyond += b < DECISIVE_CP and a >= DECISIVE_CP + margin
    return short, beyond


def main() -> None:
    """Replay, compare, print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--games-file", type=games_path, default=None,
                        help="the games replayed (default: the engine's ladder's)")
    parser.add_argument("--stockfish", default=None)
    parser.add_argument("--adjudication", type=int, choices=sorted(RULES), default=1,
                        help="the rule the screened judge applies (default 1, the committed "
                        "games')")
    parser.add_argument("--cache", type=Path, default=ROOT / "results" / "judge_replay.db",
                        help="the full judge's replays, reused by a rerun")
    args = parser.parse_args()
    settings = EngineSettings(find_stockfish(args.stockfish))
    engine = engine_identity(settings.path)
    games_file = args.games_file or ladder_for(engine).with_name(LADDER_GAMES)
    rows = sample(read_games(games_file), engine, args.games)
    openings = tuple(o.start() for o in book.load_book(BOOK))
    starts = {o.label: o for o in openings}
    rule = RULES[args.adjudication]
    jobs = [(g, rebuild(g, starts[g.opening], settings, rule)) for g in rows]
    print(f"{len(jobs)} committed games of {engine} replayed from their seeds on "
          f"{args.workers} worker(s); full judge {RULE.nodes:,} nodes a position (rule 1), "
          f"screened judge {SCREEN.nodes:,}-node looks, margin +-{SCREEN_MARGIN_CP} cp "
          f"(draw {SCREEN_DRAW_CP}), confirmed by {rule.name} ({rule.nodes:,} nodes)")
    # The full judge's replays do not change with the screened judge's settings: kept.
    cache = JsonStore(args.cache, "full")
    start = time.perf_counter()
    out: dict[str, tuple[Pass, Pass]] = {}
    try:
        items = [(j, cache.get(j.key) is None) for _, j in jobs]
        with EngineCluster(settings, ClusterSettings(args.workers)) as cluster:
            for (job, _), (full, screened) in cluster.as_completed(replay, items):
                if full is not None:
                    cache.put(job.key, asdict(full))
                    cache.commit()
                out[job.key] = Pass(**cache.get(job.key)), screened
    finally:
        cache.close()
    print(f"wall {time.perf_counter() - start:.0f} s")
    report([(g, *out[j.key]) for g, j in jobs])


def report(done: list[tuple[CalibrationGame, Pass, Pass]]) -> None:
    """The comparison tables."""
    n = len(done)
    committed = Counter(
        "same" if (g.result, g.termination, g.plies) == (f.result, f.termination, f.plies)
        else "differs" for g, f, _ in done)
    print(f"\nfull judge against the committed rows: {committed['same']} of {n} identical "
          f"(result, termination, plies)")
    for what, key in (("results", lambda p: p.result), ("terminations", lambda p: p.termination),
                      ("plies", lambda p: p.plies)):
        differ = sum(key(f) != key(s) for _, f, s in done)
        print(f"screened against full: {differ} of {n} {what} differ")
    shift = [weak_score(g, s.result) - weak_score(g, f.result) for g, f, s in done]
    print(f"the weaker rung's score, screened minus full: {np.mean(shift):+.4f} a game "
          f"(+-{np.std(shift) / np.sqrt(n):.4f}, one standard error)")
    print(f"\n{'judge':<10}{'s/game':>8}{'searches/game':>15}{'judge Mnodes':>14}"
          f"{'players Mnodes':>16}{'judge share':>13}")
    for name, i in (("full", 1), ("screened", 2)):
        passes = [row[i] for row in done]
        seconds = sum(p.seconds for p in passes)
        judge = sum(p.judge_nodes for p in passes)
        players = sum(p.player_nodes for p in passes)
        searches = sum(p.judge_searches for p in passes)
        print(f"{name:<10}{seconds / n:>8.2f}{searches / n:>15.1f}{judge / 1e6:>14.1f}"
              f"{players / 1e6:>16.1f}{judge / (judge + players):>13.1%}")
    screened = [row[2] for row in done]
    print(f"screened: {sum(p.full_searches for p in screened) / n:.1f} full searches a game")
    pairs = [(look, full) for _, f, s in done
             for look, full in zip(s.evals, f.evals, strict=False)]
    print(f"\nthe look against the full eval, {len(pairs):,} positions "
          f"(|difference| median {np.median([abs(a - b) for a, b in pairs]):.0f} cp):")
    print(f"{'margin':>8}{'short but passes':>18}{'beyond but fails':>18}")
    for margin in MARGINS:
        short, beyond = misses(pairs, margin)
        print(f"{margin:>8}{short:>18}{beyond:>18}")
    print("(a look short by more than the margin can delay an adjudication; one beyond "
          "cannot make one: every adjudication is confirmed by the full search)")
    differ = [(g, f, s) for g, f, s in done if (f.termination, f.plies) != (s.termination,
                                                                               s.plies)]
    for g, f, s in differ:
        print(f"  {game_key(g)}: full {f.result} {f.termination} at ply {f.plies}; screened "
              f"{s.result} {s.termination} at ply {s.plies}")


if __name__ == "__main__":
    sys.exit(run_cli(main))

"""Is the ladder transitive across families? Head-to-head games against the ladder's reading.

For pairs of validation players from different families and near each other in strength,
the Elo difference the ladder gives (their `play` ratings in bench/data/validation_players.csv)
must agree with the difference their own games against each other give, under the same rules (the
same book, judge, adjudication and ply cap as calibration and play). The head-to-head games
are played by `benchmark.py calibrate`'s machinery on the embedded Dask cluster, resumably,
into bench/data/validation_head_to_head.csv.gz (committed). Agreement: the difference of the
two readings lies within its 90% interval, the games' spread and both ratings' errors included
(the ladder's part of the two ratings is counted twice, which only widens it).

    python -m bench.transitivity --games 60          # play what is missing, then the table
    python -m bench.transitivity --games 0           # the table from the committed games
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.family_fit import load
from chess_eval.benchmark.arena import book
from chess_eval.benchmark.arena.ladder import Rung
from chess_eval.benchmark.core.data import BOOK
from chess_eval.benchmark.ladders.calibration import (
    CalibrationConfig,
    CalibrationGame,
    add_games,
    read_games,
)
from chess_eval.benchmark.stats.btd import Z90
from chess_eval.cluster import ClusterSettings
from chess_eval.engine import EngineSettings, engine_identity, find_stockfish

ROOT = Path(__file__).resolve().parents[1]
GAMES = ROOT / "bench" / "data" / "validation_head_to_head.csv.gz"
STORE = ROOT / "results" / "validation" / "head_to_head.db"
PLAYERS = ROOT / "bench" / "data" / "validation_players.csv"
# Pairs of different families whose ladder ratings are close (bench/data/validation_players.csv).
PAIRS = (
    ("gnuchess:depth=1", "glaurung:depth=1"),
    ("glaurung:depth=4", "toga2:depth=3"),
    ("toga2:depth=1,random=25", "glaurung:depth=1,random=25"),
    ("glaurung:depth=1,random=25", "sjeng:depth=2"),
    ("sjeng:depth=2", "softmax:temp=100,nodes=2000"),
)


def plan(pairs: tuple[tuple[str, str], ...], games: int, engine: str,
         known: list[CalibrationGame]) -> list[CalibrationGame]:
    """The games each pair still lacks up to `games` (odd numbers: the first has White)."""
    have = {(g.weak, g.strong, g.number) for g in known}
    return [CalibrationGame("standard", a, b, 0, n, "", "", "", 0, engine)
            for a, b in pairs for n in range(1, games + 1) if (a, b, n) not in have]


def head_to_head(games: list[CalibrationGame], a: str, b: str) -> tuple[int, float, float]:
    """Games, and the Elo of b over a with its standard error (delta method on the mean
    score, draws counted as half)."""
    scores = np.array([1 - g.weak_score for g in games if (g.weak, g.strong) == (a, b)])
    n = len(scores)
    s = float(np.clip(scores.mean(), 0.5 / n, 1 - 0.5 / n))
    se_s = max(float(scores.std(ddof=1)), 0.5 / math.sqrt(n)) / math.sqrt(n)
    diff = 400 * math.log10(s / (1 - s))
    return n, diff, 400 / math.log(10) * se_s / (s * (1 - s))


def ratings(path: Path) -> dict[str, tuple[float, float]]:
    """Each validation player's game Elo on ladder.csv and its standard error."""
    return {p.name: (p.elo, p.elo_sd) for p in load(path)}


@dataclass(frozen=True)
class Check:
    """One pair's two readings of B over A, and their difference."""

    a: str
    b: str
    ladder: float  # B's game Elo minus A's, on the ladder
    h2h: float  # B over A in their own games
    games: int
    gap: float  # h2h - ladder
    sd: float  # the gap's standard error: the games' and both ratings'

    @property
    def agree(self) -> bool:
        """The gap is within its 90% interval of zero."""
        return abs(self.gap) <= Z90 * self.sd


def checks(games: list[CalibrationGame], rated: dict[str, tuple[float, float]]) -> list[Check]:
    """Every pair of PAIRS with games and ratings."""
    out = []
    for a, b in PAIRS:
        if a not in rated or b not in rated or not any(
                (g.weak, g.strong) == (a, b) for g in games):
            continue
        n, h2h, h2h_se = head_to_head(games, a, b)
        ladder = rated[b][0] - rated[a][0]
        sd = math.sqrt(h2h_se ** 2 + rated[a][1] ** 2 + rated[b][1] ** 2)
        out.append(Check(a, b, ladder, h2h, n, h2h - ladder, sd))
    return out


def table(games: list[CalibrationGame], rated: dict[str, tuple[float, float]]) -> str:
    """The transitivity table, as markdown."""
    lines = ["| pair (A vs B) | ladder: B - A | head to head: B - A | games | difference "
             "(90%) | agree |", "|---|---|---|---|---|---|"]
    found = checks(games, rated)
    for c in found:
        lines.append(f"| {c.a} vs {c.b} | {c.ladder:+.0f} | {c.h2h:+.0f} | {c.games} | "
                     f"{c.gap:+.0f} [{c.gap - Z90 * c.sd:+.0f}, {c.gap + Z90 * c.sd:+.0f}] | "
                     f"{'yes' if c.agree else 'no'} |")
    if found:
        zs = [c.gap / c.sd for c in found]
        outside = sum(not c.agree for c in found)
        lines += ["", f"{outside} of {len(zs)} pairs outside their 90% interval (by chance "
                  f"alone, {0.1 * len(zs):.1f} on average); over all pairs, the head-to-head "
                  f"reading minus the ladder's has a pooled z of {sum(zs) / np.sqrt(len(zs)):+.2f}"
                  f" (|z| < {Z90:.2f} nine times in ten when the ladder is transitive)."]
    return "\n".join(lines)


def main() -> None:
    """Play the missing head-to-head games, then print the table."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=60, help="games per pair (default 60)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--stockfish", default=None, help="the judge's Stockfish")
    p.add_argument("--file", type=Path, default=GAMES, help="the games file (default: the "
                   f"committed {GAMES.name})")
    p.add_argument("--store", type=Path, default=STORE,
                   help="the run's store, for resuming (default results/validation/)")
    args = p.parse_args()
    settings = EngineSettings(find_stockfish(args.stockfish))
    if args.games:
        rungs = [Rung(spec, spec) for spec in sorted({s for pair in PAIRS for s in pair})]
        openings = tuple(o.start() for o in book.load_book(BOOK))
        config = CalibrationConfig(ClusterSettings(args.workers), seed=0, openings=openings)
        engine = engine_identity(settings.path)
        args.store.parent.mkdir(parents=True, exist_ok=True)
        add_games(rungs, config, settings, args.file, args.store, 1,
                  lambda known: plan(PAIRS, args.games, engine, known))
    games = read_games(args.file)
    print(table(games, ratings(PLAYERS)))


if __name__ == "__main__":
    main()

"""The figures the docs quote from committed files, generated from those files.

A block of a docs page between `<!-- figures:NAME -->` and `<!-- /figures:NAME -->` is written
by the generator NAME below from the committed files it reads; nothing else writes it.
`python -m bench.doc_figures` rewrites every block; `--check` rewrites nothing and exits 1,
naming the blocks, when one differs from what the files give (a test runs it, so the docs
cannot drift from the files).
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import numpy as np

from lib.benchmark.core import btd
from lib.benchmark.core.cli import LADDER_GAMES
from lib.benchmark.games import design
from lib.benchmark.games.calibration import fit_by_span, games_to_goal, read_games, usable
from lib.benchmark.games.ladder import RUNG_SPACING, load_ladder
from lib.cli import run_cli
from lib.testset.tree import ELO_BUCKETS, GAME_TARGETS, PUZZLE_TARGETS, totals

ROOT = Path(__file__).resolve().parents[1]
MATE_CP = 20_000  # a score at least this far from 0 is a mate (30000 - 100 n)


def ladder_block(root: Path = ROOT) -> str:
    """The committed ladder: every rung with its interval, goal, games and next gap."""
    ladder = load_ladder(root / "ladder.csv")
    games = read_games(root / LADDER_GAMES)
    mine = [g for g in games if g.engine == ladder.engine]
    use = usable(ladder.rungs, games, ladder.engine)
    goal = design.goals(ladder.elos)
    head = (f"`{LADDER_GAMES}`: {len(games):,} games, {len(mine):,} of them with "
            f"{ladder.engine}; {len(use.weak):,} between rungs of this ladder (the rest are "
            f"earlier ladders' rungs, kept and left out of the fit). Joint BTD fit, nu = "
            f"{ladder.nu:.3f}; the random mover is the zero, exactly; intervals relative to "
            "it.")
    lines = [*textwrap.wrap(head, 95), "",
             "| rung | player | Elo | 90% interval | half-width (goal) | games | gap to next "
             "(expected) |", "|---|---|---|---|---|---|---|"]
    # The half-widths from the covariance, as bench/ladder_goals and calibrate compute them.
    halves = btd.Z90 * np.sqrt(np.diag(ladder.cov))
    for i, r in enumerate(ladder.rungs):
        half = float(halves[i])
        nxt = ""
        if i + 1 < len(ladder.rungs):
            gap = ladder.rungs[i + 1].elo - r.elo
            flag = "" if RUNG_SPACING[0] <= gap <= RUNG_SPACING[1] else " !"
            nxt = f"{gap:.0f} ({btd.expected_score(-gap, ladder.nu):.0%}){flag}"
        lines.append(f"| {r.name} | `{r.spec}` | {r.elo:.0f} | {r.lo:.0f} to {r.hi:.0f} | "
                     f"{half:.0f} ({goal[i]:.0f}){'' if half <= goal[i] else ' *'} | "
                     f"{r.games:,} | {nxt} |")
    met = int(np.sum(halves <= goal))
    more = games_to_goal(ladder, games)
    tail = (f"{met} of {len(ladder.rungs)} rungs meet their goal (`*`: missed); `!`: a gap "
            f"outside {RUNG_SPACING[0]:.0f}-{RUNG_SPACING[1]:.0f} Elo. The planner's estimate "
            "of the games still needed to meet every goal: "
            + (f"about {more:,}." if more else "none."))
    lines += ["", *textwrap.wrap(tail, 95), "", *textwrap.wrap(
        "The model by span (games between rungs k steps apart on this ladder; the weaker "
        "rung's mean score, observed and expected under the fit; z in standard errors):", 95),
        "", "| span | games | observed | expected | z |", "|---|---|---|---|---|"]
    lines += [f"| {f.span} | {f.games:,} | {f.observed:.3f} | {f.expected:.3f} | {f.z:+.1f} |"
              for f in fit_by_span(ladder, use)]
    return "\n".join(lines)


def testset_block(root: Path = ROOT) -> str:
    """The committed questions.csv: its counts against the tree's targets, mates, private."""
    with open(root / "questions.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    games = [r for r in rows if r["source"] == "game"]
    puzzles = [r for r in rows if r["source"] == "puzzle"]
    scores = {r["id"]: [cp for _, cp in json.loads(r["expected_output"])] for r in rows}
    mates = {kind: sum(scores[r["id"]][0] >= MATE_CP for r in group)
             for kind, group in (("game", games), ("puzzle", puzzles))}
    ties = sum(len(s) > 1 and s[0] == s[1] for s in scores.values())
    targets = totals(GAME_TARGETS, 1)
    leaves = ", ".join(f"{b} {sum(r['elo_bucket'] == b for r in games)}/{targets[(b,)]}"
                       for b in ELO_BUCKETS)
    ratings = [int(r["rating"]) for r in puzzles]
    text = (f"It holds **{len(rows):,} questions: {len(games):,} game positions (of "
            f"{sum(GAME_TARGETS.values()):,} targeted) and {len(puzzles):,} puzzles (of "
            f"{sum(PUZZLE_TARGETS.values()):,})**. Game positions per Elo bucket, achieved of "
            f"target: {leaves}. Puzzle ratings run from {min(ratings)} to {max(ratings)}. "
            f"Mates: {mates['game']} game positions whose best move forces mate and "
            f"{mates['puzzle']} mate puzzles, {sum(mates.values())} in all (the cap: 4% of the "
            f"rows in the file). {sum(r['private'] == 'true' for r in rows)} questions are "
            f"private (`hash_bucket < 20`); {ties} rows have two moves tied at the top, each "
            "from its own search (draws scored 0, equal mates).")
    return "\n".join(textwrap.wrap(text, 95))


def gamefit_block(root: Path = ROOT) -> str:
    """The committed static-to-game fit: its line, its rungs and its leave-one-out check."""
    fit = json.loads((root / "game_elo_fit.json").read_text(encoding="utf-8"))
    rungs, loo = fit["rungs"], fit["leave_one_out"]
    errors = np.array([abs(r["predicted"] - r["elo"]) for r in loo])
    held = np.mean([r["lo"] <= r["elo"] <= r["hi"] for r in loo])
    x = {"linear": "accuracy", "log-gap": "ln(100 - accuracy)",
         "logit": "ln(accuracy / (100 - accuracy))"}[fit["transform"]]
    sign = "+" if fit["slope"] >= 0 else "-"
    line = f"{fit['intercept']:.0f} {sign} {abs(fit['slope']):.1f} x {x}"
    random = next(r for r in loo if r["elo"] == min(x["elo"] for x in loo))
    text = (f"The committed fit (`game_elo_fit.json`, on {fit['scale']}; {fit['n']} rungs from "
            f"{rungs[0]['rung']} to {rungs[-1]['rung']}, static accuracy "
            f"{rungs[0]['accuracy']:.1f} to {rungs[-1]['accuracy']:.1f}) is game Elo = "
            f"{line}, residual sd {fit['residual_sd']:.0f}, the form chosen by leave-one-out "
            f"error: each rung predicted from the others is off by {errors.mean():.0f} Elo on "
            f"average (median {np.median(errors):.0f}), and {held:.0%} of the {len(loo)} "
            f"leave-one-out 90% intervals hold the rung's Elo. The random mover, measured at "
            f"{random['elo']:.0f}, is predicted at {random['lo']:.0f} to {random['hi']:.0f}.")
    return "\n".join(textwrap.wrap(text, 95))


# Each block: the page it lives in, and its generator.
BLOCKS: dict[str, tuple[str, Callable[[], str]]] = {
    "ladder": ("docs/games-and-ladder.md", ladder_block),
    "testset": ("docs/test-set.md", testset_block),
    "gamefit": ("docs/games-and-ladder.md", gamefit_block),
}


def rewrite(text: str, page: str) -> tuple[str, list[str]]:
    """A page with each of its blocks regenerated, and the names of those that changed."""
    changed = []
    for name, (where, make) in BLOCKS.items():
        if where != page:
            continue
        pattern = re.compile(rf"(<!-- figures:{name} -->\n)(.*?)(<!-- /figures:{name} -->)",
                             re.S)
        match = pattern.search(text)
        if match is None:
            raise SystemExit(f"{page} has no block figures:{name}")
        body = make() + "\n"
        if match[2] != body:
            changed.append(name)
            text = text[:match.start(2)] + body + text[match.end(2):]
    return text, changed


def main() -> None:
    """Rewrite the pages' blocks, or with --check say which would change."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 when a block differs from the files")
    args = p.parse_args()
    stale = []
    for page in sorted({where for where, _ in BLOCKS.values()}):
        text, changed = rewrite((ROOT / page).read_text(encoding="utf-8"), page)
        stale += [f"{page}: {name}" for name in changed]
        if changed and not args.check:
            (ROOT / page).write_text(text, encoding="utf-8")
    if args.check and stale:
        sys.exit(f"the docs are out of date with the committed files: {', '.join(stale)} "
                 "(run python -m bench.doc_figures)")
    if not args.check:
        print(f"rewritten: {', '.join(stale) or 'nothing'}")


if __name__ == "__main__":
    sys.exit(run_cli(main))

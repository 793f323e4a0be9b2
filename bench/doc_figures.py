"""The figures the docs quote from committed files, generated from those files.

A block of a docs page between `<!-- figures:NAME -->` and `<!-- /figures:NAME -->` is written
by the generator NAME below from the committed files it reads; nothing else writes it.
`python -m bench.doc_figures` rewrites every block; `--check` rewrites nothing and exits 1,
naming the blocks, when one differs from what the files give (a test runs it, so the docs
cannot drift from the files).

The images in docs/ come from here too, each recorded in docs/images.json with the command
and commit that made it, the digests of the files it was made from, and its own digest:
- docs/static_vs_game.png is drawn from data/game_elo_fit.json on every run (cheap), and `--check`
  draws it again and compares the bytes;
- docs/site.png and docs/report.png are screenshots of `make demo`'s site in headless
  Chromium, made with `--screenshots` (about three minutes), and docs/inspect_view.png of
  Inspect's log viewer on a chess_eval/games log, made with `--inspect-view`. `--check`
  cannot remake them (a browser, real runs): it checks that each is the recorded one and
  that none of the files it shows (the ladder, the test set, the site's templates, the games
  task) has changed since.
"""

from __future__ import annotations

import argparse
import ast
import csv
import hashlib
import json
import math
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np

from chess_eval.benchmark.arena.ladder import RUNG_SPACING, load_ladder
from chess_eval.benchmark.core.data import (
    FIRST_LADDER,
    HELD_OUT_GAMES,
    LADDER_GAMES,
    REFERENCE_LADDER,
)
from chess_eval.benchmark.core.header import revision
from chess_eval.benchmark.ladders import design, held_out
from chess_eval.benchmark.ladders.calibration import (
    CalibrationGame,
    fit_by_span,
    games_to_goal,
    read_games,
    usable,
)
from chess_eval.benchmark.ladders.ladder_prior import prior_from
from chess_eval.benchmark.stats import btd
from chess_eval.cli import run_cli
from chess_eval.testset.pgn import DROP_REASONS
from chess_eval.testset.report import achieved_from_questions
from chess_eval.testset.summary import load_summary, why_short
from chess_eval.testset.tree import ELO_BUCKETS, GAME_TARGETS, PUZZLE_TARGETS, totals

ROOT = Path(__file__).resolve().parents[1]
SUMMARY_FILE = "data/testset_build.json"  # the committed build's summary (print.py --summary)
DRAWS_FILE = "bench/data/select_draws.json"  # bench/select_draws.py's three selections
MATE_CP = 20_000  # a score at least this far from 0 is a mate (30000 - 100 n)
LADDER_DIR = FIRST_LADDER.parent.relative_to(ROOT).as_posix()  # the first ladder's folder
LADDER171_DIR = REFERENCE_LADDER.parent.relative_to(ROOT).as_posix()  # the reference's


def ladder_block(root: Path = ROOT, folder: str = "",
                 games: list[CalibrationGame] | None = None) -> str:
    """A committed ladder: every rung with its interval, goal, games and next gap (`games`:
    its folder's games file, read here unless the caller has it)."""
    folder = folder or LADDER_DIR
    ladder = load_ladder(root / folder / "ladder.csv")
    games = read_games(root / folder / LADDER_GAMES) if games is None else games
    mine = [g for g in games if g.engine == ladder.engine]
    use = usable(ladder.rungs, games, ladder.engine, rule=ladder.adjudication)
    goal = design.goals(ladder.elos)
    prior = prior_from(load_ladder(root / LADDER_DIR / "ladder.csv"), ladder.rungs) \
        if ladder.prior else None
    how = (f"Joint BTD fit with a prior ({ladder.prior})" if prior else "Joint BTD fit")
    engines = (f"{len(games):,} games of {ladder.engine}" if len(mine) == len(games) else
               f"{len(games):,} games, {len(mine):,} of them with {ladder.engine}")
    fitted = sum(r.games for r in ladder.rungs) // 2  # each game counts for both its rungs
    later = (f" The ladder below is the fit of {fitted:,} of them; the {len(use.weak) - fitted:,} "
             "played since, toward goals raised since, are fitted, as a new version of the "
             "ladder, once they meet them." if len(use.weak) > fitted else "")
    head = (f"`{folder}/{LADDER_GAMES}`: {engines}; {len(use.weak):,} between rungs of this "
            f"ladder (the rest are games of rungs it dropped, of other engines or of other "
            f"start conditions, kept and left out of the fit). "
            f"{how}, nu = {ladder.nu:.3f}; the random mover is the zero, exactly; intervals "
            f"relative to it.{later}")
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
    # The planner scales its variances to the fit's: with games the fit has not seen yet that
    # scale is off, so its estimate waits for the refit.
    more = None if later else games_to_goal(ladder, games, prior=prior)
    tail = (f"{met} of {len(ladder.rungs)} rungs meet their goal (`*`: missed); `!`: a gap "
            f"outside {RUNG_SPACING[0]:.0f}-{RUNG_SPACING[1]:.0f} Elo. The planner's estimate "
            "of the games still needed to meet every goal: "
            + ("made at the refit." if more is None else f"about {more:,}." if more
               else "none."))
    lines += ["", *textwrap.wrap(tail, 95), "", *textwrap.wrap(
        "The model by span (games between rungs k steps apart on this ladder; the weaker "
        "rung's mean score, observed and expected under the fit; z in standard errors):", 95),
        "", "| span | games | observed | expected | z |", "|---|---|---|---|---|"]
    lines += [f"| {f.span} | {f.games:,} | {f.observed:.3f} | {f.expected:.3f} | {f.z:+.1f} |"
              for f in fit_by_span(ladder, use)]
    return "\n".join(lines)


def testset_block(root: Path = ROOT) -> str:
    """The committed questions.csv: its counts against the tree's targets, mates, private,
    and from its build's summary the largest player's share and why a leaf is short."""
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
    achieved = Counter((r["elo_bucket"], r["phase"], r["type"], r["color"]) for r in games)
    below = [leaf for leaf in GAME_TARGETS if leaf[0] != ELO_BUCKETS[-1]]
    full = sum(achieved[leaf] >= GAME_TARGETS[leaf] for leaf in below)
    ratings = [int(r["rating"]) for r in puzzles]
    summary = load_summary(root / SUMMARY_FILE, root / "questions.csv")
    if summary is None:
        raise SystemExit(f"{SUMMARY_FILE} does not describe questions.csv: write it with "
                         f"python print.py --build output --summary {SUMMARY_FILE}")
    top = summary["selection"]["largest_player"]
    text = (f"It holds **{len(rows):,} questions: {len(games):,} game positions (of "
            f"{sum(GAME_TARGETS.values()):,} targeted) and {len(puzzles):,} puzzles (of "
            f"{sum(PUZZLE_TARGETS.values()):,})**. Game positions per Elo bucket, achieved of "
            f"target: {leaves}; {full} of the {len(below)} game leaves below 2600 are at "
            f"their target. Puzzle ratings run from {min(ratings)} to {max(ratings)}. "
            f"Mates: {mates['game']} game positions whose best move forces mate and "
            f"{mates['puzzle']} mate puzzles, {sum(mates.values())} in all (the cap: 4% of the "
            f"rows in the file). {sum(r['private'] == 'true' for r in rows)} questions are "
            f"private (`hash_bucket < 20`); {ties} rows have two moves tied at the top, each "
            "from its own search (draws scored 0, equal mates). At most "
            f"{summary['selection']['max_per_player']} positions come from one player's "
            f"games; the largest player's share is {top['positions']} positions "
            f"({top['share']:.1%}).")
    lines = [*textwrap.wrap(text, 95), "", "What is short, and why (from the build):", ""]
    for reason in why_short(summary):
        lines += textwrap.wrap(reason, 93, initial_indent="- ", subsequent_indent="  ")
    return "\n".join(lines)


def testset_leaves_block(root: Path = ROOT) -> str:
    """Every leaf of the tree: achieved of target in the committed questions.csv, by side."""
    with open(root / "questions.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    got = {kind: achieved_from_questions(rows, kind) for kind in ("game", "puzzle")}
    targets = {"game": GAME_TARGETS, "puzzle": PUZZLE_TARGETS}
    lines = ["| Elo bucket | phase | type | games, White | games, Black | puzzles, White | "
             "puzzles, Black |", "|---|---|---|---|---|---|---|"]
    for bucket, phase_name, type_name in dict.fromkeys(leaf[:3] for leaf in GAME_TARGETS):
        cells = []
        for kind in ("game", "puzzle"):
            for side in ("White", "Black"):
                leaf = (bucket, phase_name, type_name, side)
                n, target = got[kind].get(leaf, 0), targets[kind].get(leaf, 0)
                cells.append(f"{n}/{target}" + ("" if n >= target else " **short**"))
        lines.append(f"| {bucket} | {phase_name} | {type_name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def testset_sources_block(root: Path = ROOT) -> str:
    """Steps 01-02 per games file of the committed build: kept, and drops by reason."""
    summary = load_summary(root / SUMMARY_FILE, root / "questions.csv")
    if summary is None:
        raise SystemExit(f"{SUMMARY_FILE} does not describe questions.csv")
    reasons = [r for r in DROP_REASONS + ("duplicate",)
               if any(s["dropped"].get(r) for s in summary["sources"])]
    lines = ["| file | kept | " + " | ".join(r.replace("_", " ") for r in reasons) + " |",
             "|---|" + "---|" * (len(reasons) + 1)]
    total: Counter[str] = Counter()
    for s in summary["sources"]:
        total.update({"kept": s["kept"], **s["dropped"]})
        lines.append(f"| {s['file'].removesuffix('.pgn.zst')} | {s['kept']:,} | "
                     + " | ".join(f"{s['dropped'].get(r, 0):,}" if s["dropped"].get(r) else ""
                                  for r in reasons) + " |")
    lines.append(f"| **all {len(summary['sources'])} files** | **{total['kept']:,}** | "
                 + " | ".join(f"**{total[r]:,}**" for r in reasons) + " |")
    return "\n".join(lines)


def _leaf(key: str) -> tuple[str, str, str, str]:
    """A leaf from its 'bucket | phase | type | side' key."""
    bucket, phase_name, type_name, side = key.split(" | ")
    return (bucket, phase_name, type_name, side)


def testset_draws_block(root: Path = ROOT) -> str:
    """What each change to step 03 filled (bench/data/select_draws.json): per Elo bucket,
    and the leaves where the draw made a difference."""
    runs = json.loads((root / DRAWS_FILE).read_text())
    names = {"before": "previous sources, uniform draw (the previous set)",
             "before_scarcity": "previous sources, scarcity draw",
             "sources": "every folder, uniform draw",
             "scarcity": "every folder, scarcity draw (the committed build)"}
    lines = ["| step 03 on | " + " | ".join(ELO_BUCKETS) + " | all | probes | "
             "turned away by the player cap |", "|---|" + "---|" * (len(ELO_BUCKETS) + 3)]
    for key, title in names.items():
        run = runs[key]
        per = Counter()
        for leaf, n in run["achieved"].items():
            per[leaf.split(" | ")[0]] += n
        lines.append(f"| {title} | " + " | ".join(
            f"{per[b]}/{totals(GAME_TARGETS, 1)[(b,)]}" for b in ELO_BUCKETS)
            + f" | {run['selected']} | {run['probes']:,} | {run['player_cap']:,} |")
    def full(run: str) -> int:
        return sum(n >= GAME_TARGETS[_leaf(leaf)] for leaf, n in runs[run]["achieved"].items()
                   if not leaf.startswith(ELO_BUCKETS[-1]))

    def top(run: str) -> int:
        return sum(n for leaf, n in runs[run]["achieved"].items()
                   if leaf.startswith(ELO_BUCKETS[-1]))

    below = sum(leaf[0] != ELO_BUCKETS[-1] for leaf in GAME_TARGETS)
    before, after = runs["before"], runs["before_scarcity"]
    lines += ["", *textwrap.wrap(
        f"The new folders are what fills the game leaves below 2600: with every folder, "
        f"{full('sources')} of the {below} are full with the uniform draw and "
        f"{full('scarcity')} with the scarcity draw (from the previous sources, "
        f"{full('before')} and {full('before_scarcity')}). Where games are scarce, on the "
        f"previous sources, the scarcity draw selects {after['selected'] - before['selected']:+} "
        f"positions ({after['probes'] - before['probes']:+} probes); on every folder it "
        f"changes only the 2600+ bucket ({top('sources')} -> {top('scarcity')} positions), "
        "whose games the per-player cap limits (above).", 95)]
    for uniform, scarcity, title in (("before", "before_scarcity", "the previous sources"),
                                     ("sources", "scarcity", "every folder")):
        changed = [f"{leaf.replace(' | ', ' ')} {runs[uniform]['achieved'][leaf]} -> {n} of "
                   f"{GAME_TARGETS[_leaf(leaf)]}"
                   for leaf, n in runs[scarcity]["achieved"].items()
                   if n != runs[uniform]["achieved"][leaf]]
        lines += ["", *textwrap.wrap(
            f"On {title}, the leaves whose count the scarcity draw changed (uniform -> "
            "scarcity, of the target): " + ("; ".join(changed) or "none") + ".", 95)]
    return "\n".join(lines)


def ladder171_block(root: Path = ROOT) -> str:
    """The Stockfish 17.1 ladder, as ladder_block, and its held-out games' check."""
    games = read_games(root / LADDER171_DIR / LADDER_GAMES)
    lines = [ladder_block(root, LADDER171_DIR, games)]
    ladder = load_ladder(root / LADDER171_DIR / "ladder.csv")
    kept = held_out.unseen(read_games(root / LADDER171_DIR / HELD_OUT_GAMES), games)
    checks, pooled = held_out.check(ladder, usable(ladder.rungs, kept, ladder.engine,
                                                   rule=ladder.adjudication))
    if checks:
        inside = sum(c.inside for c in checks)
        n = sum(c.games for c in checks)
        observed = sum(c.observed * c.games for c in checks) / n
        expected = sum(c.expected * c.games for c in checks) / n
        text = (f"Held-out games (`{HELD_OUT_GAMES}`, never fitted): {n:,} games of "
                f"{ladder.engine} between {len(checks)} pairs of its rungs that no fitted game "
                f"pairs (played {held_out.SPANS[0]} and {held_out.SPANS[-1]} steps apart in "
                f"the rungs' order of their day); {inside} of them "
                f"({inside / len(checks):.0%}) score inside the ladder's 90% prediction (the "
                f"games' spread and the ladder's error). Over all of them the weaker rungs "
                f"scored {observed:.1%} against {expected:.1%} predicted: a pooled z of "
                f"{pooled:+.2f} (|z| < {btd.Z90:.2f} nine times in ten).")
        lines += ["", *textwrap.wrap(text, 95)]
    return "\n".join(lines)


def validation_block(root: Path = ROOT) -> str:
    """The validation players: family, game Elo on the reference scale, static scores, and
    what the fit on the other families predicted for each."""
    from bench.family_fit import REFERENCE_TABLE, load

    # The committed fit keeps its own leave-one-family-out check: read, not recomputed.
    fit = json.loads((root / FIT_INPUTS[0]).read_text(encoding="utf-8"))
    lofo = {x["name"]: x for x in fit["leave_one_family_out"]}
    players = [p for p in load(root / "bench" / "data" / "validation_players.csv", REFERENCE_TABLE)
               if p.family != "rungs"]
    lines = ["| player | family | game Elo, reference scale (90%) | accuracy | best-move rate "
             "| blunder rate | predicted, its family left out (90%) |",
             "|---|---|---|---|---|---|---|"]
    for p in players:
        x = lofo[p.name]
        shown = "unlike every fitted family" if x["unlike"] else \
            f"{x['predicted']:.0f} [{x['lo']:.0f}, {x['hi']:.0f}]"
        lines.append(f"| {p.name} | {p.family} | {p.elo:.0f} +-{btd.Z90 * p.elo_sd:.0f} | "
                     f"{p.metrics['accuracy'][0]:.1f} | {p.metrics['best_move_rate'][0]:.2f} "
                     f"| {p.metrics['grade_blunder'][0]:.3f} | {shown} |")
    return "\n".join(lines)


def familyfit_block(root: Path = ROOT) -> str:
    """Each candidate feature set's leave-one-family-out table (or why it was refused), and
    the committed fit."""
    from bench.family_fit import REFERENCE_TABLE, load, table
    from chess_eval.benchmark.static.family_fit import (
        FEATURE_SETS,
        against_chess,
        fit_families,
        leave_one_family_out,
        unidentifiable,
    )

    players = load(root / "bench" / "data" / "validation_players.csv", REFERENCE_TABLE)
    fit = json.loads((root / FIT_INPUTS[0]).read_text(encoding="utf-8"))
    parts = []
    for features in FEATURE_SETS:
        why = unidentifiable(players, features)
        if why is None:
            wrong = against_chess(fit_families(players, features))
            why = f"{', '.join(wrong)} weighed against chess" if wrong else None
        parts.append(f"features: {' + '.join(features)}: refused, {why}" if why
                     else table(features, leave_one_family_out(players, features)))
    coef = ", ".join(f"{c:.0f}" for c in fit["coef"])
    text = (f"The committed fit (`{FIT_INPUTS[0]}`) uses {' + '.join(fit['features'])} (as "
            f"log-odds), chosen by the smallest leave-one-family-out interval score (each "
            f"family weighed alike) among the admissible feature sets: {fit['n']} "
            f"players of {len(fit['families'])} families ({', '.join(fit['families'])}), "
            f"coefficients {coef} (intercept first), spread within a family "
            f"{fit['residual_sd']:.0f} Elo and between families {fit['family_sd']:.0f}; on "
            f"{fit['scale']}.")
    return "\n\n".join([*parts, "\n".join(textwrap.wrap(text, 95))])


PREVIOUS_TABLE = "bench/data/validation_players.previous_set.csv"  # the table on the last set


def familyfit_change_block(root: Path = ROOT) -> str:
    """The committed fit's feature set left out one family at a time, on the static scores of
    the previous test set (the table as it was) and of this one: the game Elos are the same,
    so the change is the test set's."""
    from bench.family_fit import REFERENCE_TABLE, load, summary
    from chess_eval.benchmark.static.family_fit import leave_one_family_out

    fit = json.loads((root / FIT_INPUTS[0]).read_text(encoding="utf-8"))
    features = tuple(fit["features"])
    history = json.loads((root / "data" / "testset_history.json").read_text(encoding="utf-8"))
    before = summary(leave_one_family_out(load(root / PREVIOUS_TABLE, REFERENCE_TABLE),
                                          features))
    after = summary(leave_one_family_out(
        load(root / "bench" / "data" / "validation_players.csv", REFERENCE_TABLE), features))

    def held(x: dict[str, float]) -> str:
        return f"{x['covered']:.0%} of {x['shown']}" if x["shown"] else "none shown"

    lines = ["| family left out | MAE, previous set (Elo) | MAE, this set | 90% intervals "
             "holding, previous set | this set |", "|---|---|---|---|---|"]
    lines += [f"| {name} | {before[name]['mae']:.0f} | {after[name]['mae']:.0f} | "
              f"{held(before[name])} | {held(after[name])} |" for name in after]
    old = history[0]
    lines += ["", *textwrap.wrap(
        f"Features {' + '.join(features)}; the previous set is the {old['questions']}-question "
        f"file of {old['date']} (sha256 {old['sha256'][:12]}, `{PREVIOUS_TABLE}`), this set "
        f"the committed questions.csv ({after['all']['players']} players, the same game "
        "Elos).", 95)]
    return "\n".join(lines)


def transitivity_block(root: Path = ROOT) -> str:
    """Head-to-head games between players of different families against the ladder."""
    from bench.transitivity import ratings, table

    games = read_games(root / "bench" / "data" / "validation_head_to_head.csv.gz")
    return table(games, ratings(root / "bench" / "data" / "validation_players.csv"))


def laddermap_block(root: Path = ROOT) -> str:
    """The map from Stockfish 15.1's ladder to the reference ladder: every player rated on
    both, each held out of the fit once, and the fit on all of them (the committed map)."""
    data = json.loads((root / MAP_INPUTS[0]).read_text(encoding="utf-8"))
    lines = ["| player | family | Stockfish 15.1 | reference (17.1) | mapped, held out "
             "(90%) | inside |", "|---|---|---|---|---|---|"]
    sds = {r["player"]: (r["x_sd"], r["y_sd"]) for r in data["readings"]}
    for x in data["loo"]:
        sx, sy = sds[x["player"]]
        lines.append(f"| {x['player']} | {x['family']} | {x['x']:.0f} +-{btd.Z90 * sx:.0f} | "
                     f"{x['y']:.0f} +-{btd.Z90 * sy:.0f} | {x['predicted']:.0f} "
                     f"[{x['lo']:.0f}, {x['hi']:.0f}] | {'yes' if x['inside'] else 'no'} |")
    from scipy.stats import binomtest

    inside = sum(x["inside"] for x in data["loo"])
    n = len(data["loo"])
    consistent = [k for k in range(n + 1) if binomtest(k, n, 0.9).pvalue >= 0.05]
    estimate = data.get("tau_estimate")
    text = (f"Fitted on all {len(data['readings'])} players: reference = {data['slope']:.3f} "
            f"x 15.1 reading (+-{btd.Z90 * data['slope_sd']:.3f}, 90%), players' spread about "
            f"the line beyond their own errors (tau) {data['tau']:.0f} Elo, the one-sided 90% "
            "upper bound that every conversion carries"
            + (f" (its estimate: {estimate:.0f})" if estimate is not None else "")
            + f". Left out one at a time, {inside} of {n} players' reference readings fall "
            f"inside the 90% interval the others' fit gives them; {consistent[0]} to "
            f"{consistent[-1]} of {n} are consistent with 90% (binomial test, 5%).")
    return "\n".join([*lines, "", *textwrap.wrap(text, 95)])


def maia_block(root: Path = ROOT) -> str:
    """The nine Maia nets' game Elos on the reference ladder, and what the static test makes
    of them (maia_players.csv)."""
    from bench.maia_players import read_rows

    lines = ["| net | game Elo (90%) | games (distinct) | static accuracy | human-move "
             "Elo (static) | game Elo the static fit predicts |", "|---|---|---|---|---|---|"]
    for r in read_rows(root / HUMAN / "maia_players.csv"):
        lines.append(f"| maia-{r['net']} | {float(r['game_elo']):.0f} "
                     f"[{float(r['game_elo_lo']):.0f}, {float(r['game_elo_hi']):.0f}] | "
                     f"{r['games']} ({r['distinct']}) | {r['accuracy'] or '-'} | "
                     f"{r['human_text'] or '-'} | {r['predicted_text'] or '-'} |")
    return "\n".join(lines)


def crosswalk_block(root: Path = ROOT) -> str:
    """The anchors, the band each time control covers, and the four checks."""
    from bench.maia_players import (
        CARRIED,
        band_order,
        leave_one_anchor_out,
        read_rows,
        slope_rows,
        static_against_bots,
        static_fit_on_maia,
        width_rows,
    )
    from chess_eval.benchmark.arena.ladder import reference_ladder
    from chess_eval.benchmark.human.crosswalk import load_crosswalks

    walks = load_crosswalks(root / HUMAN, reference_ladder(root / LADDER171_DIR / "ladder.csv"))
    lines = ["| time control | bot (net) | game Elo here (sd: own, ladder's) | Lichess rating "
             "(sd used) | snapshot | ratings |", "|---|---|---|---|---|---|"]
    for w in walks:
        for a in w.anchors:
            m = a.measured
            lines.append(f"| {w.time_control} | {a.bot} (maia-{a.net}) | {a.reading:.0f} "
                         f"({m.sd:.0f}: {m.own_sd:.0f}, {m.ladder_sd:.0f}) | {a.rating:.0f} "
                         f"({a.human_sd:.0f}) | {a.date} | "
                         f"{'quoted, no RD' if a.quoted else 'profile, RD'} |")
    lines += ["", "The slope (Lichess Elo per Elo here): its prior, what the anchors alone say "
              "(a flat prior), its posterior, the data's share of the posterior's precision, "
              "and what it would take for the data to carry it (the anchors alone knowing it "
              f"to +-{CARRIED}, four times the prior's precision):", "",
              "| time control | anchors | prior (mean, sd) | anchors alone (mean, sd) | "
              "posterior (mean, sd) | median [90%] | the data's share | sd with no game "
              "error | anchors at this spread | or three spread over |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for w, x in zip(walks, slope_rows(root / HUMAN), strict=True):
        lines.append(f"| {x['time_control']} | {len(w.anchors)} | {x['prior'][0]:.1f}, "
                     f"{x['prior'][1]:.1f} | {x['alone'][0]:.2f}, {x['alone'][1]:.2f} | "
                     f"{x['mean']:.2f}, {x['sd']:.2f} | {x['median']:.2f} [{x['lo']:.2f}, "
                     f"{x['hi']:.2f}] | {x['share']:.0%} | {x['no_game_error']:.2f} | "
                     f"{x['anchors_needed']} | {x['span_needed']:,.0f} Elo (now "
                     f"{x['span']:,.0f}) |")
    lines += ["", "The 90% width of the figure at the middle of the anchors' readings, for a "
              "run rated like the middle anchor (its games, its rungs):", "",
              "| time control | reading (sd) | before: noise added to the readings | errors in "
              "variables, errors apart | and the ladder's covariance |", "|---|---|---|---|---|"]
    for x in width_rows(root / HUMAN):
        lines.append(f"| {x['time_control']} | {x['reading']:.0f} ({x['sd']:.0f}) | "
                     f"{x['before']:.0f} | {x['apart']:.0f} | {x['shared']:.0f} |")
    rows = read_rows(root / HUMAN / "maia_players.csv")
    loo = leave_one_anchor_out(root / HUMAN)
    lines += ["", "(a) Each anchor left out, its rating predicted from the others:", "",
              "| time control | left out | rating | predicted (90%) | inside | where |",
              "|---|---|---|---|---|---|"]
    for x in loo:
        if "predicted" not in x:
            lines.append(f"| {x['time_control']} | - | - | - | - | {x['note']} |")
            continue
        lines.append(f"| {x['time_control']} | {x['bot']} | {x['rating']:.0f} | "
                     f"{x['predicted']:.0f} [{x['lo']:.0f}, {x['hi']:.0f}] | "
                     f"{'yes' if x['inside'] else 'no'} | {x['note']} |")
    order = band_order(rows)
    steps = ", ".join(f"{s['from']}->{s['to']} {s['gap']:+.0f} (z {s['z']:+.1f})"
                      for s in order["steps"])
    text = (f"(b) The readings against the nets' training bands: Spearman's rho "
            f"{order['rho']:.2f} over {len(rows)} nets; steps {steps}; "
            f"{order['contradictions']} step(s) down beyond 1.645 sd.")
    lines += ["", *textwrap.wrap(text, 95), "",
              "(c) The static test's human-move Elo of each anchor net against its "
              "bot's rating:", "", "| time control | bot | rating | static, human-move "
              "(90%) | inside |", "|---|---|---|---|---|"]
    for x in static_against_bots(rows, root / HUMAN):
        inside = "-" if x["inside"] is None else "yes" if x["inside"] else "no"
        lines.append(f"| {x['time_control']} | {x['bot']} | {x['rating']:.0f} | "
                     f"{x['static'] or '-'} | {inside} |")
    fit = static_fit_on_maia(rows)
    held = [x for x in fit if x["inside"] is not None]
    text = (f"(d) The static-to-game fit, learned on engines, on the nets: "
            f"{sum(x['inside'] for x in held)} of {len(held)} readings inside the interval "
            "the fit predicts from the static test (table above).")
    return "\n".join([*lines, "", *textwrap.wrap(text, 95)])


def crosswalk_statements_block(root: Path = ROOT) -> str:
    """What runs of a few kinds are told on each time control (human.statement), and what a
    figure would take at the anchors' middle."""
    from chess_eval.benchmark.arena.ladder import reference_ladder
    from chess_eval.benchmark.human.crosswalk import load_crosswalks
    from chess_eval.benchmark.human.statement import narrowest, state

    walks = load_crosswalks(root / HUMAN, reference_ladder(root / LADDER171_DIR / "ladder.csv"))
    middle = walks[0].anchors[1]
    shared = {"sd": middle.measured.ladder_sd, "weights": list(middle.measured.weights)}
    mid = round(sum(walks[0].band) / 2)
    # The net the crosswalk never saw, as it was played served (data/human/maia_players.csv).
    with (root / HUMAN / "maia_players.csv").open(encoding="utf-8", newline="") as handle:
        [net] = [r for r in csv.DictReader(handle) if r["net"] == "1700"]
    served = (round(float(net["game_elo"])),
              round((float(net["game_elo_hi"]) - float(net["game_elo_lo"])) / 2))
    runs = (("the random mover", 0, 30, 40, None),
            ("a 1,268 player", 1268, 60, 100, None),
            (f"maia-1700, served ({int(net['games'])} games)", *served, int(net["games"]),
             shared),
            ("at the anchors' middle, play's default +-70", mid, 70, 100, shared),
            ("at the anchors' middle, +-40", mid, 40, 300, shared),
            ("a strong engine", 2800, 50, 100, None))
    lines = ["| run | game Elo (90%) | " + " | ".join(f"Lichess {w.time_control}"
                                                    for w in walks) + " |",
             "|---|---|" + "---|" * len(walks)]
    for label, mean, half, games, ladder in runs:
        elo = {"mean": mean, "lo": mean - half, "hi": mean + half, "kind": "interval",
               "n": games}
        cells = []
        for w in walks:
            place = state(w, elo, ladder)
            cells.append("-" if place is None else place["text"].replace(
                f"Lichess {w.time_control} ", ""))
        lines.append(f"| {label} | {mean:,} +-{half} | " + " | ".join(cells) + " |")
    lines += ["", "The narrowest 90% interval each time control gives (a reading with no "
              "error at the anchors' middle), against the anchors' ratings:", "",
              "| time control | anchors' ratings | apart | narrowest 90% interval | a figure "
              "possible |", "|---|---|---|---|---|"]
    for w in walks:
        low, high = w.ratings
        width = narrowest(w)
        lines.append(f"| {w.time_control} | {low:,.0f}-{high:,.0f} | {high - low:,.0f} | "
                     f"{width:,.0f} | {'yes' if width < high - low else 'never'} |")
    return "\n".join(lines)


def crosswalk_coverage_block(root: Path = ROOT) -> str:
    """Each kind of statement's coverage per time control (bench/crosswalk_coverage.py)."""
    from bench.crosswalk_coverage import GOAL, HALF_WIDTHS, READINGS, read_table, summary

    cells = read_table(root / "bench" / "data" / "crosswalk_coverage.csv")
    rows = summary(cells)
    reps = _table_reps(root)
    lines = [f"{reps} drawn worlds per time control, each reading {READINGS[0]:,.0f}-"
             f"{READINGS[-1]:,.0f} (every 100, and every 10 from 2,150 to 2,450: "
             f"{len(READINGS)} readings) at each half-width "
             f"{HALF_WIDTHS[0]:.0f}-{HALF_WIDTHS[-1]:.0f} (every "
             f"{HALF_WIDTHS[1] - HALF_WIDTHS[0]:.0f}); goal {GOAL[0]:.0%}-{GOAL[1]:.0%}:", "",
             "| time control | kind | statements | coverage (readings evenly) | over the "
             "half-widths (200 or more statements each) |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['time_control']} | {r['kind'].replace('_', ' ')} | "
                     f"{r['statements']:,} | {r['coverage']:.1%} | {r['lowest']:.1%}-"
                     f"{r['highest']:.1%} |")
    low = min(r["lowest"] for r in rows)
    high = max(r["highest"] for r in rows)
    lines += ["", f"Every kind, every time control and half-width: {low:.1%}-{high:.1%}."]
    return "\n".join(lines)


def _table_reps(root: Path) -> int:
    """The drawn worlds the committed coverage table rests on."""
    import csv

    with (root / "bench" / "data" / "crosswalk_coverage.csv").open(encoding="utf-8") as f:
        return int(next(csv.DictReader(f))["reps"])


def protocol_examples_block() -> str:
    """What a model is sent under each protocol, in one position (after 1. e4 e5 2. Nf3,
    the model playing Black), made by the protocols' own code."""
    import chess

    from chess_eval.benchmark.core import turns
    from chess_eval.benchmark.players import protocols as proto

    start = turns.Start(turns.Condition.STANDARD, "standard", chess.STARTING_FEN)
    board = chess.Board()
    for san in ("e4", "e5", "Nf3"):
        board.push_san(san)
    sans = ["e4", "e5", "Nf3"]
    moves = proto.moves_so_far(sans, start)
    first = proto.chat_message(chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b "
                                           "KQkq - 0 1"), proto.moves_so_far(sans[:1], start), None,
                               True, False, False, None)
    later = proto.chat_message(board, moves, "2. Nf3", False, False, False, None)
    tools = [t["function"]["name"] for t in proto.TOOLS]
    parts = [
        ("fen", "one user message per move, no history", proto.game_prompt(
            board, sans, start, False, None)),
        ("blind", "one user message per move, no board", proto.blind_prompt(
            board, moves, False, False, None)),
        ("chat", "one conversation per game: the request for its second move", "\n".join([
            "[user] " + first.replace("\n", "\n       "), "[assistant] Final answer: e5",
            "[user] " + later.replace("\n", "\n       ")])),
        ("tools", f"a fresh conversation per move, with the tools {', '.join(tools)}",
         "\n".join(["[user] " + proto.tools_prompt(board),
                    '[assistant] calls get_board {}',
                    "[tool] " + proto.board_text(board, moves).replace("\n", "\n       "),
                    '[assistant] calls make_move {"move": "Nc6"}',
                    "[tool] (none: the move is legal, the turn ends)"])),
        ("pgn", f"a text completion at /completions, at most {proto.PGN_MAX_TOKENS} tokens; "
         "the continuation's first move is the answer",
         proto.pgn_prompt(board, sans, chess.STARTING_FEN, False)),
    ]
    out = []
    for name, how, text in parts:
        out += [f"**{name}** ({how}):", "", "```text", text, "```", ""]
    return "\n".join(out).rstrip()


def neutrality_block(root: Path = ROOT) -> str:
    """One scripted player under every protocol (bench/protocols.py)."""
    from bench.protocols import markdown

    return markdown(root / "bench" / "data" / "protocol_neutrality.csv")


# What each entry of the repository's root is (the layout block lists them in this order; a
# new entry must say what it is here, or the block cannot be made).
ROOT_NOTES = {
    "generate.py": "the test-set pipeline's driver (python generate.py)",
    "print.py": "what the pipeline achieved, step by step",
    "steps": "the six numbered pipeline steps, each also a script",
    "questions.csv": "the test set the pipeline writes and every mode reads",
    "benchmark.py": "the benchmark's entry point: sub-parsers, dispatch (run is the default)",
    "chess_eval": "",  # its packages below, each by its own docstring
    "register": "the listing for inspect_evals' register",
    "data": "data the product reads: ladders/ (a folder per engine build that measured a "
            "ladder: stockfish-15.1, Debian 12's; stockfish-17.1, the reference; each with "
            "its rungs, their covariance, the engine's fingerprint, its calibration games and "
            "held-out games; the map between the two beside them), openings.csv (the opening "
            "book), game_elo_fit.json (static scores -> game Elo), paired_baselines.json "
            "(for compare), human/ (the Lichess crosswalk), eco.tsv.gz (opening names), "
            "testset_build.json (the committed set's build summary: per source file, the "
            "selection, why leaves are short), testset_history.json (the sets committed "
            "before this one)",
    "docs": "the documentation (this page among it)",
    "bench": "scripts that print measured figures against a same-run baseline, run as "
             "modules: python -m bench.games_coverage; bench/data/ holds what only they and "
             "the docs read (the validation players, their head-to-head games, the "
             "protocols' neutrality table)",
    "tests": "tests of the core; tests/testset/ and tests/benchmark/ mirror the halves",
    "README.md": "what it is, and the commands",
    "Makefile": "set-up and entry points (make setup, make test, make demo, ...)",
    "pyproject.toml": "the package, its entry points and the linters' settings",
    "requirements.txt": "pinned Python packages",
    "requirements-dev.txt": "and the tests' and linters'",
    "package.json": "the npm packages: the portable Stockfish build",
    "package-lock.json": "their pinned versions",
}


def layout_block() -> str:
    """The repository's layout: each root entry git tracks and each package of chess_eval/, with
    what it is (the package's own docstring, its first sentence)."""
    import subprocess
    import textwrap

    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    top = {path.split("/")[0] for path in tracked if not path.startswith(".")}
    unknown = sorted(top - set(ROOT_NOTES))
    if unknown:
        raise SystemExit(f"say what {', '.join(unknown)} is in bench/doc_figures.py's "
                         "ROOT_NOTES")
    rows = []
    for name in [n for n in ROOT_NOTES if n in top]:
        if name != "chess_eval":
            rows.append((name + ("/" if (ROOT / name).is_dir() else ""), ROOT_NOTES[name]))
        else:
            for init in sorted((ROOT / "chess_eval").glob("**/__init__.py")):
                doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
                sentence = " ".join(doc.split("\n\n")[0].split()).split(". ")[0].rstrip(".")
                rows.append((str(init.parent.relative_to(ROOT)) + "/", sentence))
    width = 27
    lines = []
    for name, note in rows:
        wrapped = textwrap.wrap(note, 92 - width) or [""]
        first = f"{name:<{width}}" if len(name) < width else f"{name}\n{'':<{width}}"
        lines.append(first + wrapped[0])
        lines += [" " * width + more for more in wrapped[1:]]
    return "```\n" + "\n".join(lines) + "\n```"


def inspect_games_block() -> str:
    """The Inspect task's ratings against play's, pair by pair, and their mean difference."""
    from bench.inspect_games import TABLE, read_table, summary

    rows = read_table(TABLE)
    lines = ["  | player | seed | `play` | `chess_eval/games` | difference | half-widths "
             "combined |", "  |---|---|---|---|---|---|"]
    for r in rows:
        play, ins = float(r["play"]), float(r["inspect"])
        half = math.hypot((float(r["play_hi"]) - float(r["play_lo"])) / 2,
                          (float(r["inspect_hi"]) - float(r["inspect_lo"])) / 2)
        lines.append(f"  | {r['player']} | {r['seed']} | {play:.0f} [{float(r['play_lo']):.0f}, "
                     f"{float(r['play_hi']):.0f}] | {ins:.0f} [{float(r['inspect_lo']):.0f}, "
                     f"{float(r['inspect_hi']):.0f}] | {ins - play:+.0f} | {half:.0f} |")
    return "\n".join(lines) + "\n\n" + "\n".join(f"  {line}." for line in
                                                summary(rows).splitlines())


def ladder_coverage_block(root: Path = ROOT) -> str:
    """Play's end-to-end simulation on each version of the reference ladder in the table:
    median games to the +-70 stop and the 90% interval's coverage by true Elo, against the
    goals (median at 2,350 at most 110 games, coverage 87-93% everywhere)."""
    from bench.ladder_coverage import TABLE, read_table

    rows = [r for r in read_table(root / TABLE.relative_to(ROOT))
            if r["ladder"] == REFERENCE_LADDER.parent.name]
    if not rows:
        raise SystemExit(f"{TABLE.relative_to(ROOT)}: no rows of the reference ladder")
    versions = sorted({int(r["version"]) for r in rows})
    cell = {(int(r["version"]), float(r["true_elo"])): r for r in rows}
    elos = sorted({float(r["true_elo"]) for r in rows})
    head = [f"version {v} ({int(cell[next(k for k in cell if k[0] == v)]['ladder_games']):,} "
            "games)" for v in versions]
    # A run stopped by the ladder ends wider than the target: its games are not the cost of
    # the target, so each version's share of them and median half-width stand beside them.
    lines = ["| true Elo | " + " | ".join(f"median games, {h}" for h in head) + " | "
             + " | ".join(f"coverage, {h}" for h in head) + " | "
             + " | ".join(f"stopped by the ladder (median half-width), {h}" for h in head)
             + " |", "|---" * (1 + 3 * len(versions)) + "|"]
    for elo in elos:
        got = [cell.get((v, elo)) for v in versions]
        games = [r["median_games"] if r else "-" for r in got]
        covered = [f"{float(r['coverage']):.1%}" if r else "-" for r in got]
        limited = [f"{float(r['limited']):.1%} (+-{float(r['median_half_width']):.0f})"
                   if r else "-" for r in got]
        lines.append(f"| {elo:,.0f} | {' | '.join(games)} | {' | '.join(covered)} | "
                     f"{' | '.join(limited)} |")
    latest = [r for r in rows if int(r["version"]) == versions[-1]]
    runs = min(int(r["runs"]) for r in latest)
    at_2350 = [r for r in latest if float(r["true_elo"]) == 2350]
    games_ok = bool(at_2350) and float(at_2350[0]["median_games"]) <= 110
    cover_ok = all(0.87 <= float(r["coverage"]) <= 0.93 for r in latest)
    target = float(latest[0]["target"])
    text = (f"{runs} runs per true Elo and version, --seed={latest[0]['seed']}; a coverage's Monte "
            f"Carlo error is about +-{100 * math.sqrt(0.09 / runs):.1f} points (one sd). On "
            f"version {versions[-1]}: median games to the +-{target:.0f} stop at 2,350")
    text += (f" at most 110: {'met' if games_ok else 'not met'}; coverage 87-93% at every "
             f"true Elo: {'met' if cover_ok else 'not met'}.")
    return "\n".join(lines) + "\n\n" + "\n".join(textwrap.wrap(text, 95))


def ladder_refit_block(root: Path = ROOT) -> str:
    """The last two versions of the reference ladder side by side: its rungs, and the map,
    the Maia readings, the crosswalk and the static fit regenerated on each
    (bench/data/ladder_refit.csv)."""
    from bench.ladder_refit import TABLE, markdown, read_table

    rows = read_table(root / TABLE.relative_to(ROOT))
    if not rows:
        raise SystemExit(f"{TABLE.relative_to(ROOT)}: no rows")
    return markdown(rows)


def head_to_head_block(root: Path = ROOT) -> str:
    """Served engine players of known game Elo played through `match`: the measured score
    beside the ladder's prediction, pooled z."""
    from bench.head_to_head import TABLE, pairs_markdown, read

    return pairs_markdown(read(root / TABLE.relative_to(ROOT)))


def head_to_head_cost_block(root: Path = ROOT) -> str:
    """One pair's difference by `match` and by two `play` runs: games and requests."""
    from bench.head_to_head import COST_TABLE, cost_markdown, read

    return cost_markdown(read(root / COST_TABLE.relative_to(ROOT)))


def match_cost_block(root: Path = ROOT) -> str:
    """match against play, simulated on one scale: games, requests, half-widths, coverage."""
    from bench.match_cost import TABLE, markdown, read

    return markdown(read(root / TABLE.relative_to(ROOT)))


def draw_model_block(root: Path = ROOT) -> str:
    """One draw parameter against one by strength, and the gaps on the posterior."""
    from bench.draw_model import OUT, markdown

    return markdown(json.loads((root / OUT.relative_to(ROOT)).read_text(encoding="utf-8")))


def draw_refit_block(root: Path = ROOT) -> str:
    """The reference ladder refitted with the draw model: its fit against one nu, every
    rating before and after, the gaps on its posterior (bench/data/draw_refit.json)."""
    from bench.draw_refit import REFIT, refit_markdown

    return refit_markdown(json.loads((root / REFIT.relative_to(ROOT)).read_text(
        encoding="utf-8")))


def draw_coverage_block(root: Path = ROOT) -> str:
    """play's coverage on the reference ladder's draw model when the games follow it, and the
    goal's verdict (bench/data/draw_coverage.csv)."""
    from bench.draw_refit import COVERAGE, coverage_markdown
    from bench.ladder_coverage import read_table

    rows = read_table(root / COVERAGE.relative_to(ROOT))
    if not rows:
        raise SystemExit(f"{COVERAGE.relative_to(ROOT)}: no rows")
    return coverage_markdown(rows)


# Each block: the page it lives in, and its generator.
BLOCKS: dict[str, tuple[str, Callable[[], str]]] = {
    "ladder": ("docs/games-and-ladder.md", ladder_block),
    "ladder171": ("docs/games-and-ladder.md", ladder171_block),
    "maia": ("docs/games-and-ladder.md", maia_block),
    "crosswalk": ("docs/games-and-ladder.md", crosswalk_block),
    "crosswalkstatements": ("docs/games-and-ladder.md", crosswalk_statements_block),
    "crosswalkcoverage": ("docs/games-and-ladder.md", crosswalk_coverage_block),
    "testset": ("docs/test-set.md", testset_block),
    "testset_leaves": ("docs/test-set.md", testset_leaves_block),
    "testset_sources": ("docs/test-set.md", testset_sources_block),
    "testset_draws": ("docs/test-set.md", testset_draws_block),
    "validation": ("docs/validation.md", validation_block),
    "familyfit": ("docs/validation.md", familyfit_block),
    "familyfit_change": ("docs/validation.md", familyfit_change_block),
    "transitivity": ("docs/validation.md", transitivity_block),
    "laddermap": ("docs/games-and-ladder.md", laddermap_block),
    "protocols": ("docs/protocols.md", protocol_examples_block),
    "neutrality": ("docs/protocols.md", neutrality_block),
    "layout": ("docs/getting-started.md", layout_block),
    "inspectgames": ("docs/inspect.md", inspect_games_block),
    "headtohead": ("docs/games-and-ladder.md", head_to_head_block),
    "headtohead_cost": ("docs/games-and-ladder.md", head_to_head_cost_block),
    "matchcost": ("docs/games-and-ladder.md", match_cost_block),
    "drawmodel": ("docs/games-and-ladder.md", draw_model_block),
    "drawrefit": ("docs/games-and-ladder.md", draw_refit_block),
    "drawcoverage": ("docs/games-and-ladder.md", draw_coverage_block),
    "laddercoverage": ("docs/games-and-ladder.md", ladder_coverage_block),
    "ladderrefit": ("docs/games-and-ladder.md", ladder_refit_block),
}


IMAGES_FILE = "docs/images.json"
FIT_FIGURE = "docs/static_vs_game.png"
FIT_INPUTS = ("data/game_elo_fit.json",)
MAP_FIGURE = "docs/ladder_map.png"
MAP_INPUTS = ("data/ladders/ladder_map.json",)
CROSSWALK_FIGURE = "docs/crosswalk.png"
HUMAN = "data/human"  # the crosswalk's committed data
MAIA_FIGURE = "docs/maia_readings.png"
MAIA_INPUTS = (f"{HUMAN}/maia_players.csv",)
CROSSWALK_INPUTS = (f"{HUMAN}/maia_players.csv", f"{HUMAN}/lichess_anchors.csv",
                    f"{LADDER171_DIR}/ladder.csv", f"{LADDER171_DIR}/ladder_cov.csv",
                    "chess_eval/benchmark/human/crosswalk.py")
SCREENSHOTS = ("docs/site.png", "docs/report.png")
# What a screenshot of the demo's site shows is made from these: a change to one changes it.
DEMO_INPUTS = ("questions.csv", f"{LADDER_DIR}/ladder.csv", f"{LADDER_DIR}/ladder_cov.csv",
               "data/game_elo_fit.json", "data/openings.csv",
               "chess_eval/benchmark/leaderboard/templates",
               "chess_eval/benchmark/leaderboard/assets", "data/human/lichess_anchors.csv",
               "data/human/maia_players.csv")
DEMO_DIR = "output/doc-images"
SHOT_SIZE = (1280, 760)  # the window of a screenshot, in CSS pixels
INSPECT_SHOT = "docs/inspect_view.png"
# What the viewer shows of a chess_eval/games log is made from these (and Inspect's version).
INSPECT_INPUTS = ("chess_eval/benchmark/inspect_eval/games.py", "chess_eval/tasks.py",
                  "requirements.txt", f"{LADDER171_DIR}/ladder.csv", "data/openings.csv")
INSPECT_PLAYER = "served/sjeng:depth=1"  # a served player the ladder places in a few games


def digest(path: Path) -> str:
    """A file's SHA-256, or a folder's: of its files' names and digests, in order."""
    if path.is_dir():
        h = hashlib.sha256()
        for f in sorted(p for p in path.rglob("*") if p.is_file()):
            h.update(f"{f.relative_to(path).as_posix()} {digest(f)}\n".encode())
        return h.hexdigest()
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fit_figure(path: Path, root: Path = ROOT) -> None:
    """docs/static_vs_game.png: the validation players' static accuracy against their game
    Elo by family, and the fit's leave-one-family-out predictions, drawn from the committed
    data/game_elo_fit.json."""
    from bench.family_fit import figure

    if not (root / FIT_INPUTS[0]).is_file():
        raise SystemExit(f"{FIT_INPUTS[0]}: no fit to draw")
    figure(json.loads((root / FIT_INPUTS[0]).read_text(encoding="utf-8")), path)


def map_figure(path: Path, root: Path = ROOT) -> None:
    """docs/ladder_map.png: every player's reading on both ladders with its 90% error bars,
    and the fitted map with its 90% band (the slope's error and tau), from the committed map."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from chess_eval.benchmark.stats.ladder_map import load_map
    from chess_eval.figures import save_figure

    fit = load_map(root / MAP_INPUTS[0])
    if fit is None:
        raise SystemExit(f"{MAP_INPUTS[0]}: no map to draw")
    fig, ax = plt.subplots(figsize=(6.4, 5.2))
    families = sorted({r["family"] for r in fit.readings})
    for i, family in enumerate(families):
        mine = [r for r in fit.readings if r["family"] == family]
        ax.errorbar([r["x"] for r in mine], [r["y"] for r in mine],
                    xerr=[btd.Z90 * r["x_sd"] for r in mine],
                    yerr=[btd.Z90 * r["y_sd"] for r in mine], fmt="o", ms=4, capsize=2,
                    color=plt.get_cmap("tab10")(i), label=family)
    top = max(max(r["x"], r["y"]) for r in fit.readings) + 200
    xs = np.linspace(0, top, 50)
    sd = np.array([fit.convert(float(x), 0.0)[1] for x in xs])
    ax.plot(xs, fit.slope * xs, "k-", lw=1, label=f"map: {fit.slope:.3f} x")
    ax.fill_between(xs, fit.slope * xs - btd.Z90 * sd, fit.slope * xs + btd.Z90 * sd,
                    color="grey", alpha=0.25, label="90% band")
    ax.plot(xs, xs, "k:", lw=0.8, label="one scale (y = x)")
    ax.set_xlim(0, top)
    ax.set_ylim(0, top)
    ax.set_xlabel("game Elo on ladder.csv (Stockfish 15.1)")
    ax.set_ylabel("game Elo on the reference ladder (Stockfish 17.1)")
    ax.legend(fontsize=8, loc="upper left")
    save_figure(fig, path)


def crosswalk_figure(path: Path, root: Path = ROOT) -> None:
    """docs/crosswalk.png: the anchors' readings against their bots' ratings per time control
    with their errors, the line each draw fits (median and 90% band) over the band the anchors
    cover, and the nine nets' readings along the game Elo axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bench.maia_players import read_rows
    from chess_eval.benchmark.arena.ladder import reference_ladder
    from chess_eval.benchmark.human.crosswalk import load_crosswalks
    from chess_eval.figures import save_figure

    walks = load_crosswalks(root / HUMAN, reference_ladder(root / LADDER171_DIR / "ladder.csv"))
    if not walks:
        raise SystemExit(f"{HUMAN}: no crosswalk to draw")
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    for i, w in enumerate(walks):
        color = plt.get_cmap("tab10")(i)
        low, high = w.band
        xs = np.linspace(low, high, 25)
        bands = np.array([[p.median, p.lo, p.hi] for p in (w.predict(float(x), 0.0)
                                                           for x in xs)])
        ax.plot(xs, bands[:, 0], color=color, lw=1)
        ax.fill_between(xs, bands[:, 1], bands[:, 2], color=color, alpha=0.15)
        ax.errorbar([a.reading for a in w.anchors], [a.rating for a in w.anchors],
                    xerr=[btd.Z90 * a.reading_sd for a in w.anchors],
                    yerr=[btd.Z90 * a.human_sd for a in w.anchors], fmt="o", ms=4,
                    capsize=2, color=color, label=f"{w.time_control} ({w.snapshot})")
        for a in w.anchors:
            ax.annotate(a.bot, (a.reading, a.rating), textcoords="offset points",
                        xytext=(4, -10), fontsize=7, color=color)
    low = min(w.band[0] for w in walks)
    high = max(w.band[1] for w in walks)
    ax.axvspan(low, high, color="grey", alpha=0.08, label="between the anchors' readings")
    bottom = ax.get_ylim()[0]
    for r in read_rows(root / HUMAN / "maia_players.csv"):
        ax.plot(float(r["game_elo"]), bottom, "|", color="black", ms=10)
        ax.annotate(r["net"], (float(r["game_elo"]), bottom), textcoords="offset points",
                    xytext=(0, 8), fontsize=6, ha="center", rotation=90)
    ax.set_xlabel("game Elo, reference ladder (Stockfish 17.1)")
    ax.set_ylabel("Lichess rating of the bot running the net")
    ax.legend(fontsize=8, loc="upper left")
    save_figure(fig, path)


def maia_figure(path: Path, root: Path = ROOT) -> None:
    """docs/maia_readings.png: each Maia net's game Elo on the reference ladder with its 90%
    interval, against the Lichess band it was trained on (data/human/maia_players.csv)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bench.maia_players import read_rows
    from chess_eval.figures import save_figure

    rows = read_rows(root / HUMAN / "maia_players.csv")
    if not rows:
        raise SystemExit(f"{HUMAN}/maia_players.csv: no reading to draw")
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    nets = [int(r["net"]) for r in rows]
    elos = [float(r["game_elo"]) for r in rows]
    low = [e - float(r["game_elo_lo"]) for e, r in zip(elos, rows, strict=True)]
    high = [float(r["game_elo_hi"]) - e for e, r in zip(elos, rows, strict=True)]
    bots = {1100: "maia1", 1500: "maia5", 1900: "maia9"}
    colors = ["tab:orange" if n in bots else "tab:blue" for n in nets]
    for n, e, lo, hi, c in zip(nets, elos, low, high, colors, strict=True):
        ax.errorbar([n], [e], yerr=[[lo], [hi]], fmt="o", ms=5, capsize=3, color=c)
        if n in bots:
            ax.annotate(bots[n], (n, e), textcoords="offset points", xytext=(6, -3),
                        fontsize=8, color=c)
    ax.set_xticks(nets)
    ax.set_xlabel("Maia-1 net: trained on Lichess players rated N to N+99")
    ax.set_ylabel("game Elo, reference ladder (90%)")
    ax.set_title("orange: the nets with a Lichess bot (the crosswalk's anchors)", fontsize=9)
    save_figure(fig, path)


def screenshots(demo: Path, root: Path = ROOT) -> None:
    """docs/site.png and docs/report.png: the demo site's index, and a play run's game viewer,
    in headless Chromium (the driver the site's tests use)."""
    from tests.browser import Browser, find_chromium

    executable = find_chromium()
    if executable is None:
        raise SystemExit("no chromium: make chromium installs Debian's (or set CHROMIUM_PATH)")
    [play] = sorted((demo / "site" / "runs").glob("play__*.html"))
    with Browser(executable, *SHOT_SIZE) as browser:
        browser.open((demo / "site" / "index.html").as_uri())
        browser.screenshot(root / SCREENSHOTS[0], whole=False)
        browser.open(play.as_uri())
        # The first game's eighth move, the viewer in view: the board and the model's reply.
        browser.js("document.querySelectorAll('#moves button')[7].click();"
                   "document.getElementById('viewer').scrollIntoView()")
        browser.screenshot(root / SCREENSHOTS[1], whole=False)


def inspect_view_shot(root: Path = ROOT) -> None:
    """docs/inspect_view.png: Inspect's log viewer (`inspect view`) on a real chess_eval/games
    log of a served player, in headless Chromium."""
    import os
    import socket
    import threading
    import time
    import urllib.request

    from chess_eval.benchmark.core.server import PlayerServer
    from chess_eval.engine import find_stockfish
    from tests.browser import Browser, find_chromium

    executable = find_chromium()
    if executable is None:
        raise SystemExit("no chromium: make chromium installs Debian's (or set CHROMIUM_PATH)")
    inspect = str(Path(sys.executable).parent / "inspect")
    server = PlayerServer("127.0.0.1", 0, find_stockfish(None), seed=0, slots=2)
    threading.Thread(target=server.serve, daemon=True).start()
    with tempfile.TemporaryDirectory(prefix="chess_eval_logs_") as logs:
        try:
            # A store of its own: the games are played (their requests in the transcripts),
            # not replayed from an earlier eval's.
            env = {**os.environ, "LOCAL_BASE_URL": server.base_url, "LOCAL_API_KEY": "unused",
                   "CHESS_EVAL_CACHE": str(Path(logs) / "stores")}
            subprocess.run([inspect, "eval", "chess_eval/games", "--model",
                            f"openai-api/local/{INSPECT_PLAYER}", "-T", "max_games=8",
                            "-T", "endpoint_id=served", "--log-dir", logs, "--display", "none"],
                           check=True, env=env, timeout=1800, cwd=logs)
        finally:
            server.shutdown()
            server.close()
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        view = subprocess.Popen([inspect, "view", "start", "--log-dir", logs, "--host",
                                 "127.0.0.1", "--port", str(port)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            url = f"http://127.0.0.1:{port}/"
            for _ in range(600):  # until the viewer answers (a minute at most)
                try:
                    urllib.request.urlopen(url, timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.1)
            with Browser(executable, *SHOT_SIZE) as browser:
                browser.open(url)
                for _ in range(600):  # until the log's samples are listed
                    if browser.js("document.body.innerText.includes('game 1')"):
                        break
                    browser.settle(0.1)
                browser.settle(1.0)
                browser.screenshot(root / INSPECT_SHOT, whole=False)
        finally:
            view.terminate()
            view.wait(timeout=30)


def image_record(command: str, inputs: tuple[str, ...], image: Path, earlier: object,
                 commit: str, root: Path = ROOT) -> dict[str, object]:
    """What docs/images.json says of one image: how, when and from what it was made. An image
    remade with the same bytes from the same files keeps its `earlier` record (its commit)."""
    record = {"command": command, "commit": commit,
              "inputs": {name: digest(root / name) for name in inputs},
              "sha256": digest(image)}
    if isinstance(earlier, dict) and all(earlier.get(k) == record[k]
                                         for k in ("command", "inputs", "sha256")):
        return earlier
    return record


def write_images(take_screenshots: bool, take_inspect: bool = False,
                 root: Path = ROOT) -> list[str]:
    """Draw the fit figure (and, when asked, the demo's screenshots) into docs/, recording
    each in docs/images.json; the names of the images written."""
    record_path = root / IMAGES_FILE
    records = json.loads(record_path.read_text(encoding="utf-8")) if record_path.is_file() \
        else {}
    commit = revision()  # before any image is written: the code that makes them
    fit_figure(root / FIT_FIGURE, root)
    map_figure(root / MAP_FIGURE, root)
    crosswalk_figure(root / CROSSWALK_FIGURE, root)
    maia_figure(root / MAIA_FIGURE, root)
    written = [FIT_FIGURE, MAP_FIGURE, CROSSWALK_FIGURE, MAIA_FIGURE]
    for name, inputs in ((FIT_FIGURE, FIT_INPUTS), (MAP_FIGURE, MAP_INPUTS),
                         (CROSSWALK_FIGURE, CROSSWALK_INPUTS), (MAIA_FIGURE, MAIA_INPUTS)):
        records[name] = image_record("python -m bench.doc_figures", inputs, root / name,
                                     records.get(name), commit, root)
    if take_screenshots:
        demo = root / DEMO_DIR
        # A fresh demo: a run kept from before a change to its inputs (a new ladder version)
        # would be a second result beside the new one.
        shutil.rmtree(demo, ignore_errors=True)
        subprocess.run(["make", "demo", f"DEMO={DEMO_DIR}"], cwd=root, check=True,
                       timeout=1800)
        screenshots(demo, root)
        for name in SCREENSHOTS:
            records[name] = image_record("python -m bench.doc_figures --screenshots",
                                         DEMO_INPUTS, root / name, records.get(name), commit,
                                         root)
        written += list(SCREENSHOTS)
    if take_inspect:
        inspect_view_shot(root)
        records[INSPECT_SHOT] = image_record("python -m bench.doc_figures --inspect-view",
                                             INSPECT_INPUTS, root / INSPECT_SHOT,
                                             records.get(INSPECT_SHOT), commit, root)
        written.append(INSPECT_SHOT)
    record_path.write_text(json.dumps(records, indent=1, sort_keys=True) + "\n",
                           encoding="utf-8")
    return written


def stale_images(root: Path = ROOT, redraw: bool = True) -> list[str]:
    """Each image in docs/ that is not what its generator makes from today's files, and why
    (with redraw False, the drawn figures are checked against their records only)."""
    record_path = root / IMAGES_FILE
    records = json.loads(record_path.read_text(encoding="utf-8")) if record_path.is_file() \
        else {}
    stale = [f"{p.relative_to(root).as_posix()}: made by no generator (not in {IMAGES_FILE})"
             for p in sorted((root / "docs").glob("*.png"))
             if p.relative_to(root).as_posix() not in records]
    for name, rec in sorted(records.items()):
        path = root / name
        if not path.is_file():
            stale.append(f"{name}: recorded but missing")
            continue
        if digest(path) != rec["sha256"]:
            stale.append(f"{name}: not the image its command made (changed by hand?)")
        changed = [i for i, d in rec["inputs"].items()
                   if not (root / i).exists() or digest(root / i) != d]
        if changed:
            stale.append(f"{name}: made from an earlier {', '.join(changed)}; run "
                         f"{rec['command']}")
    if not redraw:
        return stale
    with tempfile.TemporaryDirectory() as tmp:
        for name, draw in ((FIT_FIGURE, fit_figure), (MAP_FIGURE, map_figure),
                           (CROSSWALK_FIGURE, crosswalk_figure), (MAIA_FIGURE, maia_figure)):
            fresh = Path(tmp) / "figure.png"
            draw(fresh, root)
            if (root / name).is_file() and fresh.read_bytes() != (root / name).read_bytes():
                stale.append(f"{name}: differs from what its data draws; run "
                             "python -m bench.doc_figures")
    return stale


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
                   help="write nothing; exit 1 when a block or an image differs from the files")
    p.add_argument("--screenshots", action="store_true",
                   help="also run make demo and take docs/site.png and docs/report.png in "
                   "headless Chromium (about three minutes)")
    p.add_argument("--inspect-view", action="store_true",
                   help=f"also take {INSPECT_SHOT}: Inspect's log viewer on a real "
                   "chess_eval/games log of a served player (about a minute)")
    args = p.parse_args()
    stale = []
    for page in sorted({where for where, _ in BLOCKS.values()}):
        text, changed = rewrite((ROOT / page).read_text(encoding="utf-8"), page)
        stale += [f"{page}: {name}" for name in changed]
        if changed and not args.check:
            (ROOT / page).write_text(text, encoding="utf-8")
    if args.check:
        stale += stale_images()
        if stale:
            sys.exit(f"the docs are out of date with the committed files: {'; '.join(stale)} "
                     "(run python -m bench.doc_figures)")
        return
    print(f"rewritten: {', '.join(stale) or 'nothing'}")
    images = write_images(args.screenshots, args.inspect_view)
    print(f"images: {', '.join(images)} (recorded in {IMAGES_FILE})")


if __name__ == "__main__":
    sys.exit(run_cli(main))

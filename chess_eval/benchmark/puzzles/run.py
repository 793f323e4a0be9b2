"""An adaptive puzzle run: whole lines chosen by Thompson sampling, stored for resuming, and
its result, report and figure."""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from chess_eval.benchmark.core.header import Kind, write_result
from chess_eval.benchmark.core.progress import Progress
from chess_eval.benchmark.core.run import Breaker, Run, within
from chess_eval.benchmark.core.runner import BREAKER
from chess_eval.benchmark.core.turns import GameAborted, Side
from chess_eval.benchmark.model import cost
from chess_eval.benchmark.model.cost import Price
from chess_eval.benchmark.players.player import Player, budget_stop
from chess_eval.benchmark.puzzles.line import (
    ALT_MARGIN,
    ALTERNATIVE,
    FAILED,
    RULES,
    SOLVED,
    TEMPLATE,
    WIN_FLOOR,
    BadPuzzle,
    LineResult,
    play_line,
)
from chess_eval.benchmark.puzzles.result import PuzzlesResult
from chess_eval.benchmark.puzzles.sampler import Pool, draw, finished, pick, puzzles_expected
from chess_eval.benchmark.question.answers import ILLEGAL_CATEGORIES
from chess_eval.benchmark.stats.elo import Estimate, puzzle_elo_laplace, puzzle_elo_mcmc
from chess_eval.engine import Engine, EngineSettings
from chess_eval.figures import save_figure
from chess_eval.files import atomic_write
from chess_eval.kvstore import JsonStore
from chess_eval.puzzledb import LinePuzzle

log = logging.getLogger(__name__)

POOL = 100_000  # a larger puzzle file is sampled down to this many (seeded, the same for all)


@dataclass(frozen=True)
class PuzzleConfig:
    """An adaptive puzzle run."""

    target: float  # stop when the 90% half-width is at most this (Elo)
    max_puzzles: int  # ... or after this many rated puzzles
    seed: int  # seed of the Thompson draws
    breaker: int = BREAKER  # puzzles in a row failing for infrastructure reasons stop the run


@dataclass
class PuzzleSession:
    """What a run played, in order."""

    lines: list[LineResult] = field(default_factory=list)
    bad: list[str] = field(default_factory=list)  # puzzles whose own moves are illegal
    # Puzzles whose line could not be played for infrastructure reasons: left out of the
    # estimate, and the result is incomplete (a rerun plays them at the same point).
    infra: list[str] = field(default_factory=list)
    stopped: str | None = None  # --max-cost stopped the run before its stop rule


def pool_of(puzzles: list[LinePuzzle]) -> Pool:
    """The sampler's view of the puzzles."""
    return Pool(np.array([p.rating for p in puzzles], float),
                tuple(p.motifs for p in puzzles))


def estimate(lines: list[LineResult], mcmc: bool = False, seed: int = 0,
             strict: bool = False) -> Estimate | None:
    """The puzzle-Elo estimate from the lines so far (None before any); `strict` counts a
    credited alternative as a failure, as Lichess does."""
    if not lines:
        return None
    ratings = np.array([r.rating for r in lines], float)
    solved = np.array([r.outcome == SOLVED if strict else r.solved for r in lines], float)
    return puzzle_elo_mcmc(ratings, solved, seed) if mcmc else puzzle_elo_laplace(ratings,
                                                                                   solved)


# How one line is played: `line.play_line`, or a log's read back (inspect_eval.logs).
LinePlayer = Callable[[LinePuzzle, Side, Engine, JsonStore], LineResult]


def run_puzzles(player: Player, puzzles: list[LinePuzzle], config: PuzzleConfig, store: Path,
                settings: EngineSettings, lines: LinePlayer = play_line,
                run: Run | None = None) -> PuzzleSession:
    """Play the adaptive sequence to its stop, reusing stored lines and answers; `lines`
    plays each line; `run`: the invocation that claims the store and owns the requests
    (else one of its own). One process at a time runs it on a store."""
    with within(run) as owner:
        prefix = claim_puzzles(owner, player, store)
        return _run_puzzles(player, puzzles, config, store, settings, lines, prefix, owner)


def claim_puzzles(run: Run, player: Player, store: Path) -> str:
    """Claim the player's lines in `store` for `run`: their key prefix."""
    ident = json.dumps([player.id, TEMPLATE, RULES])  # all that changes how lines are played
    return run.claim(store, f"puzzles {ident}", f"puzzles of {player.id}")


def next_puzzle(lines: list[LineResult], pool: Pool, used: np.ndarray, played: Counter[str],
                config: PuzzleConfig) -> int | None:
    """The pool's index of the next puzzle after `lines` (`used`: the puzzles taken so far,
    `played`: their motifs), or None once the stop rule is met (the CLI's choice and the
    Inspect task's)."""
    if finished(estimate(lines), len(lines), config.target, config.max_puzzles) or used.all():
        return None
    return pick(pool, used, played, draw([r.rating for r in lines], [r.solved for r in lines],
                                         config.seed))


def _run_puzzles(player: Player, puzzles: list[LinePuzzle], config: PuzzleConfig, store: Path,
                 settings: EngineSettings, lines: LinePlayer, prefix: str,
                 run: Run) -> PuzzleSession:
    """run_puzzles once its run is claimed (`prefix`: its stored lines' key prefix)."""
    lines_db, cache = run.store(store, "puzzles"), run.store(store, "answers")
    side = Side(player, TEMPLATE, retries=0, gate=run.gate)
    pool, session = pool_of(puzzles), PuzzleSession()
    used = np.zeros(len(puzzles), bool)
    played: Counter[str] = Counter()
    # The bar counts the puzzles the run will most likely play, re-estimated as it goes.
    progress = Progress(puzzles_expected(None, 0, config.target, config.max_puzzles),
                        f"puzzles {player.id[:30]}",
                        kinds=(SOLVED, FAILED, ALTERNATIVE, "infra"), unit="puzzle")
    checked = False
    breaker = Breaker(config.breaker, "puzzles")
    try:
        with Engine(settings) as engine:
            while (index := next_puzzle(session.lines, pool, used, played,
                                        config)) is not None:
                progress.expect(puzzles_expected(estimate(session.lines), len(session.lines),
                                                 config.target, config.max_puzzles))
                used[index] = True
                puzzle = puzzles[index]
                key = f"{prefix}|{puzzle.id}"
                stored = lines_db.get(key)
                if stored is None:
                    if not checked:
                        player.preflight()
                        checked = True
                    try:
                        line = lines(puzzle, side, engine, cache)
                    except BadPuzzle as exc:
                        log.warning("skipping %s", exc)
                        session.bad.append(puzzle.id)
                        continue
                    except GameAborted as exc:
                        if (spent := budget_stop(player)) is not None:
                            # Not a failure: the budget left no room for this puzzle's
                            # requests; the same command resumes here.
                            session.stopped = spent
                            break
                        log.warning("puzzle %s left out, not rated: %s", puzzle.id, exc)
                        session.infra.append(puzzle.id)
                        progress.update("infra", False)
                        breaker.fail(exc)
                        continue
                    breaker.passed()
                    lines_db.put(key, line.as_dict())
                    lines_db.commit()
                else:
                    line = LineResult(**stored)
                session.lines.append(line)
                played.update(puzzle.motifs)
                progress.update(line.outcome, stored is not None)
        progress.finish()
    finally:
        # (Ctrl-C, or a failure: the run lets the requests in flight land and be stored
        # before it closes the stores.)
        progress.close()
    return session


def _illegal(lines: list[LineResult]) -> dict[str, int]:
    counts = Counter(a["category"] for r in lines for a in r.attempts if a["category"])
    return {c: counts[c] for c in ILLEGAL_CATEGORIES}


def run_result(model: str, player_id: str, settings: dict[str, Any], session: PuzzleSession,
               mcmc: bool, seed: int, price: Price | None = None) -> PuzzlesResult:
    """The run's result: the estimate, outcomes, taxonomy, the sequence with the posterior."""
    lines = session.lines
    est, strict = estimate(lines, mcmc, seed), estimate(lines, mcmc, seed, strict=True)
    outcomes = Counter(r.outcome for r in lines)
    sequence = []
    for k, r in enumerate(lines, 1):
        after = estimate(lines[:k])
        assert after is not None
        sequence.append({"puzzle": r.puzzle, "rating": r.rating, "outcome": r.outcome,
                         "elo": after.as_dict()})
    motifs = Counter(t for r in lines for t in r.themes)
    return PuzzlesResult(
        model=model, player=player_id, settings=settings,
        complete=not session.infra and session.stopped is None, infra=len(session.infra),
        n=len(lines), solved=outcomes[SOLVED], alternative=outcomes[ALTERNATIVE],
        failed=outcomes[FAILED], mates_off_key=sum(r.mates for r in lines),
        bad_puzzles=session.bad, illegal=_illegal(lines),
        elo=None if est is None else est.as_dict(),
        elo_lichess_rule=None if strict is None else strict.as_dict(),
        themes=dict(motifs.most_common(15)), sequence=sequence,
        lines=[r.as_dict() for r in lines],
        rules="whole lines; any mate counts; a move off the key that the engine (200k nodes) "
              f"finds winning (winning chances >= {WIN_FLOOR}) and within {ALT_MARGIN} of "
              "the key's is credited as an alternative and ends the puzzle; an illegal answer "
              "fails it",
        usage=cost.summary([a for r in lines for a in r.attempts], price),
        stopped=session.stopped)


def summary(result: dict[str, Any]) -> str:
    """The terminal summary."""
    elo, strict = result["elo"], result["elo_lichess_rule"]
    return "\n".join([
        f"model {result['model']}: {result['n']} puzzles, solved {result['solved']} "
        f"(+{result['alternative']} by a credited alternative), failed {result['failed']}",
        f"  puzzle Elo (Lichess puzzle rating scale): {elo['text'] if elo else 'none'}",
        "  by Lichess's rule (an alternative counts as a failure; the sequence was chosen "
        f"by the first): {strict['text'] if strict else 'none'}",
        "  illegal answers: " + ", ".join(f"{k} {v}" for k, v in result["illegal"].items()),
        *([f"  cost: {cost.text(result['usage'])}"]
          if (result.get("usage") or {}).get("requests") else []),
        *([f"  {result['stopped']}"] if result.get("stopped") else [])])


def markdown(result: dict[str, Any]) -> str:
    """A markdown report of the run."""
    s = result["settings"]
    out = [f"# Puzzles: {result['model']}", "",
           f"Puzzle file `{s['puzzles']}` (sha256 {s['puzzles_sha256'][:12]}); target "
           f"+-{s['target']:.0f}, at most {s['max_puzzles']}, --seed={s['seed']}.", "",
           f"Rules: {result['rules']}.", "", summary(result).replace("\n  ", "\n- "), "",
           "| # | puzzle | rating | outcome | Elo after |", "|---|---|---|---|---|"]
    out += [f"| {k} | {e['puzzle']} | {e['rating']} | {e['outcome']} | {e['elo']['text']} |"
            for k, e in enumerate(result["sequence"], 1)]
    out += ["", "Themes played: " + ", ".join(f"{t} {n}" for t, n in result["themes"].items())]
    return "\n".join(out) + "\n"


def write_run(out: Path, name: str, record: PuzzlesResult) -> list[Path]:
    """JSON, markdown and the posterior-evolution figure."""
    result = record.as_dict()
    paths = [out / f"{name}.json", out / f"{name}.md"]
    write_result(paths[0], Kind.PUZZLES, result,
                 None if record.complete else record.stopped or f"{record.infra} puzzles "
                 "failed for infrastructure reasons")
    with atomic_write(paths[1]) as handle:
        handle.write(markdown(result))
    if result["sequence"]:
        paths.append(_figure(result, out / name))
    return paths


def _figure(result: dict[str, Any], stem: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    seq = result["sequence"]
    n = np.arange(1, len(seq) + 1)
    fig, ax = plt.subplots(figsize=(8, 4))
    colors = {SOLVED: "tab:green", ALTERNATIVE: "tab:olive", FAILED: "tab:red"}
    for outcome, color in colors.items():
        k = [i for i, e in enumerate(seq) if e["outcome"] == outcome]
        ax.scatter(n[k], [seq[i]["rating"] for i in k], s=8, color=color,
                   label=f"puzzle {outcome}")
    shown = [(i, e["elo"]) for i, e in enumerate(seq) if e["elo"]["mean"] is not None]
    if shown:
        x = [n[i] for i, _ in shown]
        ax.plot(x, [e["mean"] for _, e in shown], color="black", label="posterior mean")
        ax.fill_between(x, [e["lo"] if e["lo"] is not None else np.nan for _, e in shown],
                        [e["hi"] if e["hi"] is not None else np.nan for _, e in shown],
                        color="grey", alpha=0.3, label="90% interval")
    ax.set(title=f"{result['model']}: puzzle Elo as puzzles accrue", xlabel="puzzles",
           ylabel="Lichess puzzle rating")
    ax.legend(loc="best", fontsize=8)
    return save_figure(fig, stem.with_name(f"{stem.name}-posterior.png"))

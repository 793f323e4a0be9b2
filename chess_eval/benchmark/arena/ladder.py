"""The opponents' ladder: named, versioned, reproducible rungs from a random mover to
node-limited full-strength Stockfish, and its calibrated Elos with their covariance.

Rungs, weakest first: a uniformly random mover; "mix" rungs that play a seeded random move
with a set probability and Stockfish's best move at MIX_NODES otherwise; full-strength
Stockfish limited by nodes (one thread, fixed hash cleared before every move). Every rung's
moves reproduce from the game's key. UCI_Elo / Skill Level settings are not rungs: their move
choice is seeded from the clock, so their games cannot be replayed.

The scale: Elo differences of the BTD model (`stats/btd.py`) with the random mover fixed at 0,
exactly: a game Elo is "Elo above a random mover", the scale's zero is where language models
play today, and it is the same player on every machine and every engine version, so ladders
of different Stockfish builds share their zero. A rung's interval is relative to it. It is not
Lichess, FIDE or CCRL: those pools share no games with this one.

The rungs were chosen from the first ladder's measurements (ladder 1, anchored at Stockfish
at 1,000 nodes = 2600; README's design history): adjacent rungs about RUNG_GAP apart, so that
each expects 30-70% against the next, from the random mover to above 3000.

Files: a ladder is one folder named by the engine build that measured it
(`data/ladders/stockfish-17.1/`; core/data.py): `ladder_games.csv.gz` (every calibration game
of that engine, committed; see calibration.py) is the data; `ladder.csv` (one row per rung)
and `ladder_cov.csv` (the rungs' covariance, Elo^2) are derived from it by
`benchmark.py calibrate`; `ladder_fingerprint.json` records the engine's searches;
`ladder_versions.csv` lists every fit (versions.py).

A ladder belongs to the engine build it was measured with (its `engine` column): a rung at
fixed nodes is another player under another Stockfish version. Ladders of several engines
live side by side, a folder each (`ladder_for`); a run uses the one of the engine it finds
(`ladder_of`), and refuses one of another. The default rungs below are the first ladder's
(Stockfish 15.1's); another engine's ladder starts from them and may keep rungs of its own
(the 17.1 ladder's, spaced for 17.1): every ladder file lists its rungs, and `calibrate`
reads them from there (`load_rungs`).
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from chess_eval import fingerprint
from chess_eval.benchmark.core.data import (
    FIRST_LADDER,
    LADDER_FILE,
    LADDERS,
    REFERENCE_LADDER,
    ROOT,
    ladder_name,
)
from chess_eval.benchmark.stats import btd
from chess_eval.benchmark.stats.draws import DrawModel, constant
from chess_eval.engine import GET_ENGINE
from chess_eval.errors import DataError, FitError
from chess_eval.files import write_csv

MIX_NODES = 1_000  # the engine half of a mix rung: weak but instant
RUNG_GAP = 125  # Elo: the aimed gap between adjacent rungs (150 = 70% expected score)
# Random-move shares of the mix rungs, and node counts of the Stockfish rungs: a monotone
# curve through ladder 1's Elos of its mix rungs (random share -> Elo) read at RUNG_GAP steps
# from the random mover; nodes in steps of 1.3x (ladder 1: about 300 Elo per doubling). Then
# refined on ladder III's own fit at 10,530 games: 97, 92, 81 and 10 added where neighbours
# were 152-190 Elo apart, and 1 (28 Elo below Stockfish at 1,000 nodes) replaced by 2; at
# 13,639 games 94 dropped (33 Elo from 92; without it 97-92-90 are 101 and 119 apart). At
# 27,202 games (bench/ladder_rungs.py): 3 dropped (37 Elo from 2; 5-2 then 137 apart), 31
# added (the curve's 1606 in 35-28's 152) and 2,500 nodes (2.2k-2.9k's 156, read in log nodes);
# at 27,701, 87 (the curve's 431 in 90-84's 154).
MIX_PERCENTS = (97, 92, 90, 87, 84, 81, 78, 72, 67, 62, 57, 52, 47, 42, 35, 31, 28, 23, 18, 13,
                10, 8, 5, 2)
NODE_COUNTS = (1_000, 1_300, 1_700, 2_200, 2_500, 2_900, 3_800)
ZERO_ELO = 0  # the random mover's Elo: the scale's zero, exact
RUNG_SPACING = (50.0, 150.0)  # Elo: the gaps between adjacent rungs that inform (150: the
# weaker expects 30%); nearer rungs are one player twice, farther ones a blind spot
LADDER_FIELDS = ["rung", "spec", "anchor", "elo", "lo", "hi", "games", "score", "nu", "engine"]
DRAW_TERMS = ("draws:1", "draws:x", "draws:x^2")  # the covariance file's rows and columns of
# the draw model's coefficients (a ladder fitted with one, draws.py), after the rungs'


@dataclass(frozen=True)
class Rung:
    """One opponent of the ladder."""

    name: str  # versioned: a changed spec gets a new name
    spec: str  # a player spec that make_player accepts
    anchor: int | None = None  # the Elo that fixes the scale, on the anchor rung only (the
    # random mover's 0 on the default ladder)
    elo: float = float("nan")  # measured by calibrate
    lo: float = float("nan")  # 90% interval, relative to the anchor
    hi: float = float("nan")
    games: int = 0
    score: float = float("nan")  # its mean score in the calibration games


def default_rungs() -> list[Rung]:
    """The random mover (the anchor, at 0), the mix rungs, Stockfish at each of NODE_COUNTS."""
    rungs = [Rung("random@1", "random", ZERO_ELO)]
    for percent in MIX_PERCENTS:
        rungs.append(Rung(f"mix{percent}@1", f"mix:random={percent},nodes={MIX_NODES}"))
    for nodes in NODE_COUNTS:
        rungs.append(Rung(f"nodes{nodes / 1000:g}k@1", f"stockfish:nodes={nodes}"))
    return rungs


def load_rungs(path: Path | None) -> list[Rung]:
    """Rungs from a CSV with columns rung, spec and anchor (a ladder.csv will do), weakest
    first; exactly one anchored. No path: the default rungs."""
    if path is None:
        return default_rungs()
    rows = _read(path, "rungs", "")
    if not rows or {"rung", "spec", "anchor"} - set(rows[0]):
        raise DataError(f"{path}: not a rungs file (expected columns rung, spec, anchor)")
    try:
        rungs = [Rung(r["rung"], r["spec"], int(r["anchor"]) if r["anchor"] else None)
                 for r in rows]
    except (TypeError, ValueError) as exc:
        raise DataError(f"{path}: anchor must be a whole number ({exc})") from exc
    if len({r.name for r in rungs}) != len(rungs):
        raise DataError(f"{path}: rung names must be unique")
    anchor_of(rungs)
    return rungs


MAX_SPAN = 4  # calibration pairs rungs up to this many steps apart. A game k steps apart
# measures k gaps at once: for the far end of a chain of K gaps, N games k apart give a
# variance of about K^2 / (k^2 N w), and w (a game's information) falls more slowly than k^2
# grows up to k = 4 (expected scores 35%, 22%, 13%, 7% at 110 Elo a step). On ladder III's
# 12,802 games the planner needs 19,500 more games with spans up to 4 instead of 31,500
# with spans up to 2. Whether the model holds that far is measured, span by span
# (calibration.fit_by_span, printed by bench/ladder_goals.py).


def pairs(n_rungs: int, span: int = MAX_SPAN) -> list[tuple[int, int]]:
    """The pairs calibration may play (weaker, stronger): rungs 1 to `span` steps apart."""
    return [(i, i + d) for i in range(n_rungs) for d in range(1, span + 1) if i + d < n_rungs]


def anchor_of(rungs: list[Rung]) -> int:
    """The index of the one anchored rung."""
    anchored = [i for i, r in enumerate(rungs) if r.anchor is not None]
    if len(anchored) != 1:
        raise DataError(f"a ladder needs exactly one anchored rung, not {len(anchored)}")
    return anchored[0]


def anchor_elo(rungs: list[Rung]) -> float:
    """The Elo the anchored rung is fixed at (the scale's zero for ladder III)."""
    anchor = rungs[anchor_of(rungs)].anchor
    assert anchor is not None  # anchor_of found it
    return float(anchor)


def relative_cov(cov: np.ndarray, anchor: int) -> np.ndarray:
    """The covariance of every rating minus the anchor's (the anchor's row and column 0)."""
    a = np.eye(len(cov))
    a[:, anchor] -= 1
    relative: np.ndarray = a @ cov @ a.T
    return relative


def rate(rungs: list[Rung], white: np.ndarray, black: np.ndarray,
         scores: np.ndarray, prior: btd.PoolPrior | None = None) -> Ladder:
    """The rungs rated by a joint BTD fit of all games, anchored, in the given order; engine
    left blank. `prior`: on the ratings relative to the first rung (btd.fit_pool's)."""
    pool = btd.fit_pool(len(rungs), white, black, scores, prior=prior)
    k = anchor_of(rungs)
    cov = relative_cov(pool.cov, k)
    elos = pool.ratings - pool.ratings[k] + anchor_elo(rungs)
    for i, rung in enumerate(rungs):
        if i != k and not cov[i, i] > 0:
            raise FitError(f"ladder fit of {len(rungs)} rungs on {len(scores)} games: rung "
                           f"{rung.name} has no positive variance")
    return Ladder(rungs_measured(rungs, elos, cov, white, black, scores), pool.nu, "", cov)


def rungs_measured(rungs: list[Rung], elos: np.ndarray, cov: np.ndarray, first: np.ndarray,
                   second: np.ndarray, scores: np.ndarray) -> list[Rung]:
    """The rungs with their fitted Elos, 90% intervals, games and mean scores (`scores`:
    the first player's of each game)."""
    out = []
    for i, rung in enumerate(rungs):
        sd = float(np.sqrt(max(cov[i, i], 0.0)))
        played = (first == i) | (second == i)
        own = np.where(first == i, scores, 1 - scores)[played]
        out.append(Rung(rung.name, rung.spec, rung.anchor, float(elos[i]),
                        float(elos[i] - btd.Z90 * sd), float(elos[i] + btd.Z90 * sd),
                        int(played.sum()), float(own.mean()) if played.any() else float("nan")))
    return out


CONDITION_TAU = 100.0  # Elo: how far a rung's strength in another start condition may
# plausibly sit from its standard one, relative to the anchor (the prior of rate_in_condition)


def rate_in_condition(standard: Ladder, weak: np.ndarray, strong: np.ndarray,
                      scores: np.ndarray, tau: float = CONDITION_TAU) -> Ladder:
    """The standard ladder's rungs re-measured in another start condition: each rung's Elo
    there has the prior Normal(its standard Elo, its standard variance + tau^2) (the anchor
    stays fixed; nu stays the standard one), updated by that condition's games (indices into
    standard.rungs; `scores` the weaker's). Rungs without games there keep the prior, so a
    condition measured on a subset of pairs carries its shift to the rest only through the
    prior's width: every interval says how well it is known."""
    k = anchor_of(standard.rungs)
    free = np.arange(len(standard.rungs)) != k
    prior_mean = standard.elos[free]
    prior_cov = standard.cov[np.ix_(free, free)] + tau ** 2 * np.eye(free.sum())
    precision = np.linalg.inv(prior_cov)
    elos = standard.elos.copy()
    jac = np.zeros((len(weak), len(elos)))
    rows = np.arange(len(weak))
    jac[rows, weak] += btd.C / 2
    jac[rows, strong] -= btd.C / 2
    jac = jac[:, free]
    nu = standard.nu
    sign = np.where(scores == btd.WIN, 1.0, np.where(scores == btd.LOSS, -1.0, 0.0))
    for _ in range(100):  # Newton on a concave log posterior
        half = btd.C * (elos[weak] - elos[strong]) / 2
        z = 2 * np.cosh(half) + nu
        grad = jac.T @ (sign - 2 * np.sinh(half) / z) - precision @ (elos[free] - prior_mean)
        hess = jac.T @ (((4 + 2 * nu * np.cosh(half)) / z ** 2)[:, None] * jac) + precision
        step = np.linalg.solve(hess, grad)
        elos[free] += step
        if np.max(np.abs(step)) < 1e-6:
            break
    else:
        raise FitError(f"ladder fit in a condition ({len(scores)} games) did not converge")
    cov = np.zeros_like(standard.cov)
    cov[np.ix_(free, free)] = np.linalg.inv(hess)
    rungs = rungs_measured(standard.rungs, elos, cov, weak, strong, scores)
    return by_elo(Ladder(rungs, nu, standard.engine, cov, adjudication=standard.adjudication))


def condition_path(path: Path, condition: str) -> Path:
    """Where the ladder measured in a start condition lives: NAME_CONDITION.csv beside the
    standard one (the standard condition's is the standard ladder itself)."""
    return path if condition == "standard" else path.with_name(
        f"{path.stem}_{condition}{path.suffix}")


def by_elo(ladder: Ladder) -> Ladder:
    """The ladder weakest first by measured Elo (the covariance permuted alike)."""
    order = np.argsort(ladder.elos, kind="stable")
    joint = None
    if ladder.joint is not None:
        full = np.concatenate([order, np.arange(len(order), len(ladder.joint))])
        joint = ladder.joint[np.ix_(full, full)]
    return Ladder([ladder.rungs[i] for i in order], ladder.nu, ladder.engine,
                  ladder.cov[np.ix_(order, order)], ladder.prior, ladder.adjudication,
                  ladder.draws, joint)


@dataclass(frozen=True)
class Ladder:
    """A calibrated ladder, weakest rung first."""

    rungs: list[Rung]
    nu: float  # BTD draw parameter from the calibration games
    engine: str  # name and version of the engine it was measured with
    cov: np.ndarray  # the rungs' Elo covariance relative to the anchor (Elo^2)
    prior: str = ""  # what was known before its games (ladder_prior.py); "": nothing
    # The adjudication rule's version its games were judged by (game.RULES), and so play's
    # games on it: 1 for a file without the column.
    adjudication: int = 1
    # The draw model (draws.py: log nu by the pair's mean Elo) where the ladder was fitted
    # with one, and the joint covariance of (rungs, its coefficients); None: one nu, `nu`.
    draws: DrawModel | None = None
    joint: np.ndarray | None = None

    @property
    def elos(self) -> np.ndarray:
        """The rungs' measured Elos, weakest first."""
        return np.array([r.elo for r in self.rungs])

    @property
    def draw_model(self) -> DrawModel:
        """How often a game on this ladder's scale is drawn: its draw model, or its one nu
        as a draw model of one coefficient."""
        return self.draws if self.draws is not None else constant(self.nu)

    @property
    def joint_cov(self) -> np.ndarray:
        """The covariance of (the rungs' Elos, the draw model's coefficients); the rungs'
        alone for a one-nu ladder (its nu is taken as exact, as it always was)."""
        return self.joint if self.joint is not None else self.cov

    def nu_at(self, mean_elo: float) -> float:
        """nu for a game between players whose mean Elo is `mean_elo`."""
        return float(self.draw_model.nu(mean_elo))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Ladder) and self.rungs == other.rungs and self.nu == other.nu
                and self.engine == other.engine and np.array_equal(self.cov, other.cov)
                and self.prior == other.prior and self.adjudication == other.adjudication
                and self.draws == other.draws
                and np.array_equal(self.joint_cov, other.joint_cov))

    # Unhashable on purpose (__eq__ compares covariance arrays); mypy types __hash__ as a
    # method, so setting it to None, as the data model asks, needs this one ignore.
    __hash__ = None  # type: ignore[assignment]


def engine_slug(engine: str) -> str:
    """A file-name form of an engine's name: 'Stockfish 17.1' -> 'stockfish-17.1'."""
    return re.sub(r"[^a-z0-9.]+", "-", engine.lower()).strip("-.") or "engine"


def ladder_engine(path: Path) -> str | None:
    """The engine a ladder file was measured with (None: no such file)."""
    if not path.exists():
        return None
    rows = _read(path, "ladder")
    if not rows or "engine" not in rows[0]:
        raise DataError(f"{path}: not a ladder file (expected columns {LADDER_FIELDS})")
    return rows[0]["engine"]


def ladder_for(engine: str, root: Path = LADDERS) -> Path:
    """Where the ladder of `engine` lives: its own folder under `root`, named by its slug."""
    return root / engine_slug(engine) / LADDER_FILE


def fingerprint_path(path: Path) -> Path:
    """Where the fingerprint of the engine that measured the ladder at `path` lives:
    NAME_fingerprint.json beside it (one for a ladder and its conditions' ladders)."""
    return path.with_name(f"{path.stem}_fingerprint.json")


def ladders_in(root: Path = LADDERS) -> list[Path]:
    """Every ladder under `root` (data/ladders), a folder each; and the ladders calibrate
    wrote at the repository's root (two levels up) before ladders became folders
    (ladder@ENGINE.csv, not its _cov or _fingerprint files), which still read."""
    found = sorted(root.glob(f"*/{LADDER_FILE}"))
    return found + sorted(p for p in root.parent.parent.glob("ladder@*.csv")
                          if "_" not in p.stem.split("@", 1)[1])


def ladder_of(engine: str, binary: str, root: Path = LADDERS,
              default: Path = FIRST_LADDER) -> Path:
    """The ladder of the engine at `binary` (reporting `engine`) under `root`: the one whose
    recorded fingerprint its searches match, else the one measured under its name, else
    `default` (which check_engine then refuses, listing the ladders there are)."""
    candidates = ladders_in(root)
    for path in candidates:
        recorded = fingerprint.read(fingerprint_path(path))
        if recorded is not None and recorded.difference(fingerprint.of_binary(binary)) is None:
            return path
    return next((p for p in candidates if ladder_engine(p) == engine), default)


def check_engine(path: Path, ladder: Ladder, engine: str, binary: str,
                 recorded: fingerprint.Fingerprint | None) -> None:
    """A DataError in one line unless the engine at `binary` (reporting `engine`) plays the
    ladder's rungs as they were measured: its searches must match the `recorded`
    fingerprint (the name may differ), or, for a ladder with none, its name must."""
    if recorded is not None:
        why = recorded.difference(fingerprint.of_binary(binary))
        if why is None:
            return
        problem = (f"the engine here ({binary}, which reports {engine}) searches "
                   f"differently from the {ladder.engine} that measured it: {why}")
    elif ladder.engine != engine:
        problem = f"the engine here ({binary}) is {engine}"
    else:
        return
    mine = ladder_for(engine)
    others = ", ".join(f"{ladder_name(p)} ({ladder_engine(p)})" for p in ladders_in())
    raise DataError(
        f"{path} was measured with {ladder.engine}, but {problem}. Ladders here: "
        f"{others or 'none'}. Point --stockfish at a build of one of them (to get Stockfish "
        f"17.1, {GET_ENGINE}), or calibrate a ladder for {engine} "
        f"('benchmark.py calibrate --add-games N --stockfish {binary}' writes "
        f"{mine.relative_to(ROOT)})")


def cov_path(path: Path) -> Path:
    """Where the covariance of the ladder at `path` lives: NAME_cov.csv beside it."""
    return path.with_name(f"{path.stem}_cov{path.suffix}")


def write_ladder(path: Path, ladder: Ladder) -> list[Path]:
    """ladder.csv and its covariance file (each written to a temporary name, renamed). A
    ladder with a draw model keeps it in a `draws` column (its coefficients, the range its
    pairs' mean Elo is clipped to, the centre and scale of x), its `nu` column the model's
    nu at the centre, and the coefficients' rows and columns (DRAW_TERMS) in the covariance
    file after the rungs'."""
    model = ladder.draws
    drawn = {} if model is None else {"draws": json.dumps(
        {"coef": [round(c, 6) for c in model.coef], "low": round(model.low, 1),
         "high": round(model.high, 1), "centre": model.centre, "scale": model.scale})}
    nu = ladder.nu if model is None else float(model.nu(model.centre))
    rows = [{"rung": r.name, "spec": r.spec, "anchor": "" if r.anchor is None else r.anchor,
             # A tenth of an Elo: two rungs whose fits round to the same whole Elo (a rung
             # with few games beside its neighbour) stay ordered, as play needs them.
             "elo": f"{r.elo:.1f}", "lo": round(r.lo), "hi": round(r.hi), "games": r.games,
             "score": f"{r.score:.3f}", "nu": f"{nu:.4f}", "engine": ladder.engine,
             **({"prior": ladder.prior} if ladder.prior else {}),
             **({"adjudication": ladder.adjudication} if ladder.adjudication != 1 else {}),
             **drawn}
            for r in ladder.rungs]
    n = len(ladder.rungs)
    names = [r.name for r in ladder.rungs] + \
        ([] if model is None else list(DRAW_TERMS[:len(model.coef)]))
    # The rungs' Elo^2 to a tenth; a coefficient's row and column to six figures.
    cov_rows = [{"rung": name, **{m: f"{v:.1f}" if i < n and j < n else f"{v:.6g}"
                                  for j, (m, v) in enumerate(zip(names, row, strict=True))}}
                for i, (name, row) in enumerate(zip(names, ladder.joint_cov, strict=True))]
    write_csv(cov_path(path), ["rung", *names], cov_rows)
    # A ladder fitted with a prior says so in a last column (one measured from its games
    # alone has none, so its file is what it was before priors existed); so does one judged
    # by an adjudication rule other than version 1, and one fitted with a draw model.
    write_csv(path, LADDER_FIELDS + (["prior"] if ladder.prior else [])
              + (["adjudication"] if ladder.adjudication != 1 else [])
              + (["draws"] if model is not None else []), rows)
    return [path, cov_path(path)]


def _read(path: Path, what: str, hint: str = "; run 'benchmark.py calibrate' to make one"
          ) -> list[dict[str, str]]:
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            return list(csv.DictReader(handle))
    except OSError as exc:
        raise DataError(f"cannot read the {what} {path}: {exc.strerror}{hint}") from exc
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8") from exc


def load_ladder(path: Path) -> Ladder:
    """ladder.csv and its covariance, checked: one line naming the row on any problem."""
    rows = _read(path, "ladder")
    if not rows or set(LADDER_FIELDS) - set(rows[0]):
        raise DataError(f"{path}: not a ladder file (expected columns {LADDER_FIELDS})")
    rungs = []
    for number, row in enumerate(rows, start=2):
        try:
            rungs.append(Rung(row["rung"], row["spec"],
                              int(row["anchor"]) if row["anchor"] else None,
                              float(row["elo"]), float(row["lo"]), float(row["hi"]),
                              int(row["games"]), float(row["score"])))
            nu = float(row["nu"])
        except (TypeError, ValueError) as exc:
            raise DataError(f"{path}: line {number}: {exc}") from exc
        if not np.isfinite(rungs[-1].elo) or not nu >= 0:
            raise DataError(f"{path}: line {number}: Elo and nu must be finite numbers")
    if any(b.elo <= a.elo for a, b in zip(rungs, rungs[1:], strict=False)):
        raise DataError(f"{path}: rungs must be listed weakest first with rising Elo")
    rule = rows[0].get("adjudication") or "1"
    if not rule.isdigit():
        raise DataError(f"{path}: line 2: adjudication must be a rule's version number")
    model = _load_draws(path, rows[0].get("draws") or "")
    terms = [] if model is None else list(DRAW_TERMS[:len(model.coef)])
    joint = _load_cov(cov_path(path), rungs, terms)
    n = len(rungs)
    return Ladder(rungs, nu, rows[0]["engine"], joint[:n, :n], rows[0].get("prior") or "",
                  int(rule), model, None if model is None else joint)


def _load_draws(path: Path, text: str) -> DrawModel | None:
    """The `draws` column: the ladder's draw model (None where the ladder has one nu)."""
    if not text:
        return None
    try:
        found = json.loads(text)
        model = DrawModel(tuple(float(c) for c in found["coef"]), float(found["low"]),
                          float(found["high"]), float(found["centre"]), float(found["scale"]))
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise DataError(f"{path}: line 2: the draws column is not a draw model ({exc})") \
            from exc
    if not 1 <= len(model.coef) <= len(DRAW_TERMS) or not model.low < model.high:
        raise DataError(f"{path}: line 2: the draw model needs 1-{len(DRAW_TERMS)} "
                        "coefficients and a range low < high")
    return model


def _load_cov(path: Path, rungs: list[Rung], terms: list[str] | None = None) -> np.ndarray:
    """The covariance file: a symmetric matrix over the same rungs, in the same order (and
    the draw model's coefficients after them, `terms`)."""
    names = [r.name for r in rungs] + (terms or [])
    rows = _read(path, "ladder covariance")
    if [r.get("rung") for r in rows] != names or (rows and list(rows[0])[1:] != names):
        raise DataError(f"{path}: not the covariance of the ladder beside it (expected rows "
                        "and columns named by its rungs, in order)")
    try:
        cov = np.array([[float(r[n]) for n in names] for r in rows])
    except (TypeError, ValueError) as exc:
        raise DataError(f"{path}: {exc}") from exc
    if not (np.all(np.isfinite(cov)) and np.allclose(cov, cov.T, atol=1.0)
            and np.all(np.diag(cov) >= 0)):
        raise DataError(f"{path}: not a covariance matrix (finite, symmetric, variances >= 0)")
    return cov


def reference_ladder(path: Path = REFERENCE_LADDER) -> Ladder | None:
    """The reference ladder (whose covariance every reading on it shares), None where it is
    not there."""
    return load_ladder(path) if path.exists() else None


def reference_nu(path: Path = REFERENCE_LADDER, mean_elo: float | None = None) -> float:
    """The reference ladder's BTD draw parameter for a pair whose mean Elo is `mean_elo`:
    the one a match's Elo difference is read with, so a match's Elo is on the ladder's scale
    (DataError when it is missing). The ladder's draw model gives nu by the pair's level; a
    match between two players neither of which has a reading does not know its level, so
    without one it is the model's nu at its centre (draws.CENTRE, 1,600: the middle of the
    ladder), the same for every match, and a one-nu ladder's nu is that nu everywhere."""
    ladder = reference_ladder(path)
    if ladder is None:
        raise DataError(f"{path}: the reference ladder is missing (it ships with the "
                        "package; reinstall, or check out data/ladders/)")
    model = ladder.draw_model
    return float(model.nu(model.centre if mean_elo is None else mean_elo))

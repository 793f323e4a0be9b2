"""Which rung to play next (Thompson sampling), when to stop, and the game Elo reported.

The scheme of the promptfoo gpt5-chess write-up: three games at each of three rungs spread over
the ladder, then draw an Elo from the posterior and play the rung whose expected score against
that draw is nearest 1/2; stop when the 90% interval's half-width is at most the target, or at
the game cap. The rungs' Elos are measured, not known: the ladder's covariance (from its
calibration) enters every interval by the delta method. The MAP rating moves with the rungs'
Elos by dR/dE_k = I_k / I (I_k: the information of the games against rung k, I: all of it plus
the prior's), so the ladder adds the variance g' Cov g to the player's own; the stop rule aims
at the total width. A run whose own width has reached the target while the ladder's part is at
least as wide as its own stops as "limited by the ladder": from there more games shrink the
total little (at most by 1 - 1/sqrt(2) of it) and cost as many as the run so far. Several games
run at once, so rungs are chosen a batch at a time from the posterior of the games finished
before the batch, each by its own seeded draw: the schedule depends only on the seed, the batch
size and the results, never on which game finished first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from scipy import optimize

from chess_eval.benchmark.arena.ladder import Ladder
from chess_eval.benchmark.stats import btd, draws
from chess_eval.benchmark.stats.draws import DrawModel
from chess_eval.benchmark.stats.elo import ABOVE, BELOW, INTERVAL, ONE_SIDED, Estimate, bounded

PRIOR = btd.Prior(1500.0, 1000.0)  # see bench/games_coverage.py for why this wide
REACH = 400.0  # Elos this far beyond the ladder's ends are not measured
OPENING_GAMES = 3  # games at each of the three opening rungs
TARGET = 70.0
MAX_GAMES = 200
TYPICAL_GAMES = 100  # a run's games to the stop before any are played (progress estimate)


@dataclass(frozen=True)
class SamplerConfig:
    """The adaptive schedule."""

    elos: tuple[float, ...]  # the rungs' Elos, weakest first
    nu: float  # the BTD draw parameter (fixed from calibration)
    prior: btd.Prior = PRIOR
    target: float = TARGET  # stop when the 90% half-width is at most this
    max_games: int = MAX_GAMES
    ladder_cov: tuple[tuple[float, ...], ...] = ()  # the rungs' Elo covariance (Elo^2);
    # empty: the rungs' Elos are taken as exact
    draws: DrawModel | None = None  # the ladder's draw model (nu by the pair's mean Elo,
    # draws.py) where it has one: then every fit, choice and bound reads nu from it, and
    # `nu` is unused; None: one nu
    draws_cov: tuple[tuple[float, ...], ...] = ()  # the draw model's coefficients' rows of
    # the ladder's joint covariance (coefficients x (rungs, coefficients)); empty: exact

    @property
    def model(self) -> DrawModel:
        """The draw model every game is read with (one nu's, where there is none)."""
        return self.draws if self.draws is not None else draws.constant(self.nu)

    def cov(self) -> np.ndarray:
        """The ladder's covariance as a matrix (zeros when none was given)."""
        n = len(self.elos)
        return np.array(self.ladder_cov, float) if self.ladder_cov else np.zeros((n, n))

    def joint_cov(self) -> np.ndarray:
        """The covariance of (the rungs' Elos, the draw model's coefficients): the rungs'
        alone without a draw model's rows."""
        rungs = self.cov()
        if not self.draws_cov:
            return rungs
        rows = np.array(self.draws_cov, float)
        n = len(self.elos)
        out: np.ndarray = np.block([[rungs, rows[:, :n].T], [rows[:, :n], rows[:, n:]]])
        return out


def for_ladder(base: SamplerConfig, ladder: Ladder) -> SamplerConfig:
    """`base`'s prior, target and cap on this ladder's Elos, draw model and covariance."""
    n = len(ladder.rungs)
    rows = () if ladder.joint is None else tuple(
        tuple(float(v) for v in row) for row in ladder.joint[n:])
    return replace(base, elos=tuple(float(e) for e in ladder.elos), nu=ladder.nu,
                   ladder_cov=tuple(tuple(float(v) for v in row) for row in ladder.cov),
                   draws=ladder.draws, draws_cov=rows)


def opening_rungs(n_rungs: int) -> list[int]:
    """Three games at each of the rungs at a quarter, half and three quarters of the ladder."""
    spread = [round((n_rungs - 1) * k / 4) for k in (1, 2, 3)]
    return [r for r in spread for _ in range(OPENING_GAMES)]


def choose(posterior: btd.Posterior, config: SamplerConfig, rng: np.random.Generator) -> int:
    """A rung by Thompson sampling: nearest an expected score of 1/2 at a posterior draw."""
    draw = rng.normal(posterior.mean, posterior.sd)
    expected = draws.expected_score(draw, np.asarray(config.elos), config.model) \
        if config.draws is not None else btd.expected_score(draw - np.asarray(config.elos),
                                                            config.nu)
    return int(np.argmin(np.abs(expected - 0.5)))


def rung_indices(opponents: list[float] | np.ndarray, config: SamplerConfig) -> np.ndarray:
    """Each opponent's rung (opponents are given by their Elos, which are the rungs')."""
    elos = np.asarray(config.elos, float)
    opp = np.asarray(opponents, float)
    idx = np.clip(np.searchsorted(elos, opp), 0, len(elos) - 1)
    if not np.array_equal(elos[idx], opp):
        raise ValueError("an opponent's Elo is not one of the ladder's rungs")
    return idx


def ladder_gradient(opponents: list[float], scores: list[float], rating: float,
                    config: SamplerConfig) -> np.ndarray:
    """How far the player's MAP rating moves per Elo each rung's Elo moves (dR/dE_k) and,
    on a ladder with a draw model, per unit of each of its coefficients after them. With one
    nu, dR/dE_k = I_k / I (the information of the games against rung k over all of it and
    the prior's); with the draw model, the implicit-function derivatives (draws.sensitivity:
    a rung's Elo also moves the level each game's nu is read at)."""
    if config.draws is None:
        info = btd.game_information(rating - np.asarray(opponents, float), config.nu)
        per_rung = np.bincount(rung_indices(opponents, config), weights=info,
                               minlength=len(config.elos))
        weights: np.ndarray = per_rung / (per_rung.sum() + 1 / config.prior.sd ** 2)
        return weights
    per_game, per_coef = draws.sensitivity(rating, np.asarray(opponents, float),
                                           np.asarray(scores, float), config.draws,
                                           config.prior)
    out: np.ndarray = np.concatenate([np.bincount(rung_indices(opponents, config),
                                                  weights=per_game,
                                                  minlength=len(config.elos)), per_coef])
    return out


def ladder_weights(opponents: list[float], rating: float, config: SamplerConfig,
                   scores: list[float] | None = None) -> np.ndarray:
    """dR/dE_k: how far the player's MAP rating moves per Elo a rung's Elo moves (the
    rungs' part of ladder_gradient; a ladder with a draw model needs the `scores`)."""
    if config.draws is not None and scores is None:
        raise ValueError("a ladder with a draw model needs the scores for its weights")
    weights: np.ndarray = ladder_gradient(opponents, scores or [], rating,
                                          config)[:len(config.elos)]
    return weights


def ladder_sd(opponents: list[float], rating: float, config: SamplerConfig,
              scores: list[float] | None = None) -> float:
    """The sd the ladder's uncertainty adds to a rating from games against these rungs
    (on a ladder with a draw model, its coefficients' too: the `scores` are needed)."""
    if not config.ladder_cov or not len(opponents):
        return 0.0
    g = ladder_gradient(opponents, scores or [], rating, config)
    cov = config.joint_cov()
    g = g[:len(cov)]
    return float(np.sqrt(max(g @ cov @ g, 0.0)))


def posterior(opponents: list[float], scores: list[float], config: SamplerConfig,
              mcmc: bool = False, seed: int = 0) -> btd.Posterior:
    """The rating posterior after these games (the prior alone before any), its width
    including the ladder's uncertainty."""
    if not scores:
        p = config.prior
        return btd.Posterior(p.mean, p.sd, p.mean - btd.Z90 * p.sd, p.mean + btd.Z90 * p.sd,
                             0, "prior")
    opp, sc = np.array(opponents, float), np.array(scores, float)
    if config.draws is not None:
        own = draws.fit_mcmc(opp, sc, config.draws, config.prior, seed) if mcmc else \
            draws.fit(opp, sc, config.draws, config.prior)
    else:
        args = (opp, sc, config.nu, config.prior)
        own = btd.fit_mcmc(*args, seed) if mcmc else btd.fit(*args)
    extra = ladder_sd(opponents, own.mean, config, scores)
    if not extra:
        return own
    wide = btd.Z90 * extra
    return btd.Posterior(own.mean, float(np.hypot(own.sd, extra)),
                         own.mean - float(np.hypot(own.mean - own.lo, wide)),
                         own.mean + float(np.hypot(own.hi - own.mean, wide)),
                         own.games, own.method, extra)


def schedule(done: int, opponents: list[float], scores: list[float], config: SamplerConfig,
             batch: int, seed: int) -> list[int]:
    """Rungs of the next batch of games, given the `done` games so far."""
    opening = opening_rungs(len(config.elos))
    if done < len(opening):
        return opening[done: done + batch]
    post = posterior(opponents, scores, config)
    rng = np.random.default_rng([seed, done])
    return [choose(post, config, rng) for _ in range(batch)]


def finished(post: btd.Posterior, games: int, config: SamplerConfig) -> bool:
    """Stop: the interval (the ladder's part included) is narrow enough; or the player's own
    part is, and the ladder's part is at least as wide (more games help little); or the game
    cap is reached."""
    if games >= config.max_games:
        return True
    return games >= len(opening_rungs(len(config.elos))) and (
        post.half_width <= config.target or limited_by_ladder(post, config))


def games_expected(post: btd.Posterior | None, games: int, config: SamplerConfig) -> int:
    """How many rated games the run will most likely end with. The player's own part narrows
    as 1/sqrt(games) while the ladder's (L) stays: the stop rule ends the run when the own
    half-width reaches the target T (L >= T), else max(sqrt(T^2 - L^2), L), whichever of
    its two ends comes first; so near games x (own/that)^2. Before any games, the median of
    bench/ladder_coverage.py."""
    if post is None or games == 0:
        return min(TYPICAL_GAMES, config.max_games)
    if finished(post, games, config):
        return games
    t, ladder = config.target, post.ladder_half_width
    own_at_stop = t if ladder >= t else max(math.sqrt(t ** 2 - ladder ** 2), ladder)
    ratio = (post.own_half_width / own_at_stop) ** 2
    return int(min(config.max_games, max(games + 1, math.ceil(games * ratio))))


def limited_by_ladder(post: btd.Posterior, config: SamplerConfig) -> bool:
    """The total is wider than the target, the player's own part is not, and the ladder's
    part is at least as wide as the player's own."""
    return (post.half_width > config.target and post.own_half_width <= config.target
            and post.ladder_half_width >= post.own_half_width)


def one_sided(opponents: np.ndarray, scores: np.ndarray, nu: float,
              model: DrawModel | None = None) -> float:
    """The Elo at which every game ending as it did (all lost or all won) has probability 5%
    (with a draw model, nu at each game's level; else `nu`)."""
    won = bool(scores[0] == btd.WIN)
    if model is not None:
        return draws.one_sided(opponents, won, model, ONE_SIDED)

    def excess(r: float) -> float:
        win, _, loss = btd.probabilities(r - opponents, nu)
        return float(np.sum(np.log(win if won else loss)) - np.log(ONE_SIDED))
    return float(optimize.brentq(excess, opponents.min() - 5000, opponents.max() + 5000))


def game_elo(opponents: list[float], scores: list[float], config: SamplerConfig,
             mcmc: bool = False, seed: int = 0) -> Estimate:
    """The reported game Elo: an interval, or 'below ~N' / 'above ~N' when every game was
    lost / won, limited to the ladder's range plus REACH."""
    floor, ceil = min(config.elos) - REACH, max(config.elos) + REACH
    opp, sc = np.array(opponents, float), np.array(scores, float)
    method = "mcmc" if mcmc else "laplace"
    if len(sc) and (np.all(sc == btd.LOSS) or np.all(sc == btd.WIN)):
        kind = ABOVE if sc[0] == btd.WIN else BELOW
        # The bound moves with the rungs: widened by the ladder's one-sided 95% (z = Z90).
        bound = one_sided(opp, sc, config.nu, config.draws)
        bound += (-1 if kind == ABOVE else 1) * btd.Z90 * ladder_sd(opponents, bound, config,
                                                                     scores)
        est = Estimate(np.nan, bound if kind == ABOVE else -np.inf,
                       bound if kind == BELOW else np.inf, len(sc), method,
                       f"every game {'won' if kind == ABOVE else 'lost'}: a 95% bound", kind)
        return bounded(est, floor, ceil)
    post = posterior(opponents, scores, config, mcmc, seed)
    note = "Elo above a random mover (ladder scale)"
    if post.ladder:
        note += f"; the ladder's own uncertainty +-{post.ladder_half_width:.0f} included"
    if limited_by_ladder(post, config):
        note += f"; limited by the ladder (+-{post.ladder_half_width:.0f})"
    est = Estimate(post.mean, post.lo, post.hi, len(sc), method, note, INTERVAL)
    return bounded(est, floor, ceil)

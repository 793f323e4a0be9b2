"""Which rung to play next (Thompson sampling), when to stop, and the game Elo reported.

Seed 001's scheme: three games at each of three rungs spread over the ladder, then draw an
Elo from the posterior and play the rung whose expected score against that draw is nearest
1/2; stop when the 90% interval's half-width is at most the target, or at the game cap.
Several games run at once, so rungs are chosen a batch at a time from the posterior of the
games finished before the batch, each by its own seeded draw: the schedule depends only on
the seed, the batch size and the results, never on which game finished first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from lib.benchmark.core import btd
from lib.benchmark.core.elo import ABOVE, BELOW, INTERVAL, ONE_SIDED, Estimate, bounded

PRIOR = btd.Prior(1500.0, 1000.0)  # see bench/games_coverage.py for why this wide
REACH = 400.0  # Elos this far beyond the ladder's ends are not measured
OPENING_GAMES = 3  # games at each of the three opening rungs
TARGET = 70.0
MAX_GAMES = 200


@dataclass(frozen=True)
class SamplerConfig:
    """The adaptive schedule."""

    elos: tuple[float, ...]  # the rungs' Elos, weakest first
    nu: float  # the BTD draw parameter (fixed from calibration)
    prior: btd.Prior = PRIOR
    target: float = TARGET  # stop when the 90% half-width is at most this
    max_games: int = MAX_GAMES


def opening_rungs(n_rungs: int) -> list[int]:
    """Three games at each of the rungs at a quarter, half and three quarters of the ladder."""
    spread = [round((n_rungs - 1) * k / 4) for k in (1, 2, 3)]
    return [r for r in spread for _ in range(OPENING_GAMES)]


def choose(posterior: btd.Posterior, config: SamplerConfig, rng: np.random.Generator) -> int:
    """A rung by Thompson sampling: nearest an expected score of 1/2 at a posterior draw."""
    draw = rng.normal(posterior.mean, posterior.sd)
    expected = btd.expected_score(draw - np.asarray(config.elos), config.nu)
    return int(np.argmin(np.abs(expected - 0.5)))


def posterior(opponents: list[float], scores: list[float], config: SamplerConfig,
              mcmc: bool = False, seed: int = 0) -> btd.Posterior:
    """The rating posterior after these games (the prior alone before any)."""
    if not scores:
        p = config.prior
        return btd.Posterior(p.mean, p.sd, p.mean - btd.Z90 * p.sd, p.mean + btd.Z90 * p.sd,
                             0, "prior")
    args = (np.array(opponents), np.array(scores), config.nu, config.prior)
    return btd.fit_mcmc(*args, seed) if mcmc else btd.fit(*args)


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
    """Stop: the interval is narrow enough, or the game cap is reached."""
    return games >= config.max_games or (
        games >= len(opening_rungs(len(config.elos))) and post.half_width <= config.target)


def one_sided(opponents: np.ndarray, scores: np.ndarray, nu: float) -> float:
    """The Elo at which every game ending as it did (all lost or all won) has probability 5%."""
    won = bool(scores[0] == btd.WIN)

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
        bound = one_sided(opp, sc, config.nu)
        kind = ABOVE if sc[0] == btd.WIN else BELOW
        est = Estimate(np.nan, bound if kind == ABOVE else -np.inf,
                       bound if kind == BELOW else np.inf, len(sc), method,
                       f"every game {'won' if kind == ABOVE else 'lost'}: a 95% bound", kind)
        return bounded(est, floor, ceil)
    post = posterior(opponents, scores, config, mcmc, seed)
    est = Estimate(post.mean, post.lo, post.hi, len(sc), method, "CCRL-Blitz-like ladder scale",
                   INTERVAL)
    return bounded(est, floor, ceil)

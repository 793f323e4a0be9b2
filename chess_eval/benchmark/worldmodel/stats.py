"""The statistics of the world-model tests: intervals, the trend test, the world-model rubric and
its hypothesis test with the power reached."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

from chess_eval.benchmark.stats.bootstrap import percentile_interval, resample
from chess_eval.benchmark.stats.elo import LEVEL, world_model_score

H0_RATE = 0.02  # H0 (pattern matching): an illegal rate of at least 2% at T = 0 ...
H0_INCONSISTENT = 0.05  # ... or an inconsistency rate of 5% (the rubric's "minor" line)
ALPHA = 0.05  # the test's size
POWER_AT = (0.0, 0.005)  # true illegal rates the power is reported for
POWER_GOAL = 0.90  # the write-up's power target
# The consistency part of the rubric, on the worst failure rate of the consistency checks.
CONSISTENCY = ((0.0, 1.0, "passes all consistency tests"),
               (0.05, 0.8, "minor inconsistencies (< 5%)"),
               (0.10, 0.6, "fails edge cases (< 10%)"),
               (0.25, 0.3, "frequent inconsistencies (< 25%)"))
ILLEGAL_RUBRIC = ("1.0: no illegal answer at T = 0; 0.8: < 1%; 0.6: < 2%; 0.3: < 5%; "
                  "0.0: >= 5%")


def wilson(k: int, n: int, level: float = LEVEL) -> dict[str, Any]:
    """A proportion with its Wilson score interval (scipy's binomtest)."""
    if n == 0:
        return {"k": 0, "n": 0, "value": None, "lo": None, "hi": None}
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
    return {"k": k, "n": n, "value": round(k / n, 4), "lo": round(max(0.0, ci.low), 4),
            "hi": round(min(1.0, ci.high), 4)}


def paired_mean(diffs: np.ndarray, level: float, seed: int, boot: int = 2000) -> dict[str, Any]:
    """The mean of paired differences with a bootstrap interval over the pairs."""
    if len(diffs) == 0:
        return {"n": 0, "value": None, "lo": None, "hi": None}
    idx = resample(np.random.default_rng(seed), [np.arange(len(diffs))], boot)
    lo, hi = percentile_interval(diffs[idx].mean(axis=1), level)
    return {"n": len(diffs), "value": round(float(diffs.mean()), 4), "lo": round(lo, 4),
            "hi": round(hi, 4)}


def pooled_ratio(num: np.ndarray, den: np.ndarray, seed: int,
                 boot: int = 2000) -> dict[str, Any]:
    """sum(num) / sum(den) with a 90% bootstrap interval over the items."""
    if den.sum() == 0:
        return {"value": None, "lo": None, "hi": None}
    idx = resample(np.random.default_rng(seed), [np.arange(len(num))], boot)
    with np.errstate(invalid="ignore"):
        reps = num[idx].sum(axis=1) / den[idx].sum(axis=1)
    lo, hi = percentile_interval(reps[np.isfinite(reps)], LEVEL)
    return {"value": round(float(num.sum() / den.sum()), 4), "lo": round(float(lo), 4),
            "hi": round(float(hi), 4)}


def trend(temps: list[float], illegal: list[int], n: list[int]) -> dict[str, Any]:
    """Cochran-Armitage test for a trend of the illegal rate with the temperature."""
    t, k, m = (np.asarray(x, float) for x in (temps, illegal, n))
    total = m.sum()
    if len(t) < 2 or total == 0:
        return {"z": None, "p": None, "note": "fewer than two temperatures answered"}
    p = k.sum() / total
    var = p * (1 - p) * ((m * t * t).sum() - (m * t).sum() ** 2 / total)
    if var <= 0:
        return {"z": None, "p": None,
                "note": "the same illegal rate (0% or 100%) at every temperature: no trend"}
    z = float((t * (k - m * p)).sum() / np.sqrt(var))
    return {"z": round(z, 3), "p": round(float(2 * stats.norm.sf(abs(z))), 4),
            "note": "Cochran-Armitage, two-sided; positive z: more illegal answers when hotter"}


def consistency_score(failure: float | None) -> tuple[float, str]:
    """The rubric's consistency part from the worst consistency failure rate."""
    if failure is None:
        return 0.0, "no consistency result"
    for bound, score, text in CONSISTENCY:
        if failure <= bound if bound == 0 else failure < bound:
            return score, text
    return 0.0, "fails basic tests (>= 25%)"


def rubric(illegal_rate: float | None, failure: float | None) -> dict[str, Any]:
    """The world-model score: the lower of its illegal-rate part and its consistency part."""
    if illegal_rate is None:
        return {"score": None, "note": "no scored answer at T = 0"}
    by_illegal = world_model_score(illegal_rate)
    by_consistency, text = consistency_score(failure)
    return {"score": min(by_illegal, by_consistency), "by_illegal_rate": by_illegal,
            "by_consistency": by_consistency, "consistency": text,
            "worst_failure_rate": failure, "thresholds": {
                "illegal rate at T = 0": ILLEGAL_RUBRIC,
                "consistency (worst of: B not in A's list, A's illegal claims, mirrored "
                "answers neither corresponding nor as good)": "; ".join(
                    f"{s}: {t}" for _, s, t in CONSISTENCY) + "; 0.0: fails basic tests"}}


def _critical(n: int, p0: float) -> int | None:
    """The largest k with P(X <= k | n, p0) <= ALPHA, or None when none is."""
    k = int(stats.binom.ppf(ALPHA, n, p0))
    while k >= 0 and stats.binom.cdf(k, n, p0) > ALPHA:
        k -= 1
    return k if k >= 0 else None


def power(n: int, p0: float, p1: float) -> float:
    """The power of the exact one-sided test of H0 rate >= p0 at a true rate p1."""
    crit = _critical(n, p0) if n else None
    return 0.0 if crit is None else float(stats.binom.cdf(crit, n, p1))


def n_for_power(p0: float, p1: float, goal: float = POWER_GOAL, cap: int = 20_000) -> int | None:
    """The smallest n whose exact test of H0 rate >= p0 reaches `goal` power at p1."""
    for n in range(1, cap):
        if power(n, p0, p1) >= goal:
            return n
    return None


def exact_test(k: int, n: int, p0: float, per_unit: int = 1) -> dict[str, Any]:
    """The exact one-sided binomial test of H0 rate >= p0: p-value, power reached, n needed.

    A unit may hold `per_unit` answers and fail when any of them fails (a position and its
    mirror): the power at a per-answer rate p1 is then taken at 1 - (1 - p1) ** per_unit, the
    failure rate of a unit whose answers fail independently (correlated answers fail
    together more often, which only raises the power)."""
    if n == 0:
        return {"k": 0, "n": 0, "h0_rate": p0, "p_value": None, "reject": False,
                "power": {}, "n_for_90_power": {}}
    p_value = float(stats.binom.cdf(k, n, p0))
    at = {f"{p1:.1%}": 1 - (1 - p1) ** per_unit for p1 in POWER_AT}
    return {"k": k, "n": n, "h0_rate": p0, "p_value": round(p_value, 4),
            "reject": p_value <= ALPHA,
            "power": {name: round(power(n, p0, q), 4) for name, q in at.items()},
            "n_for_90_power": {name: n_for_power(p0, q) for name, q in at.items()}}


def mcnemar_power(n: int, p10: float, p01: float, alpha: float = ALPHA) -> float:
    """The power of the exact McNemar test at `alpha` over n pairs, when a pair fails only in
    the first condition with probability p10 and only in the second with p01."""
    if n == 0 or p10 + p01 == 0:
        return 0.0
    d = np.arange(1, n + 1)  # discordant pairs
    # The largest lower-tail count that rejects, for each number of discordant pairs.
    k = stats.binom.ppf(alpha / 2, d, 0.5).astype(int)
    k = np.where(stats.binom.cdf(k, d, 0.5) * 2 <= alpha, k, k - 1)
    r = p10 / (p10 + p01)
    reject = np.where(k >= 0, stats.binom.cdf(k, d, r) + stats.binom.sf(d - k - 1, d, r), 0.0)
    return float(np.sum(stats.binom.pmf(d, n, p10 + p01) * reject))


def mcnemar_n_for_power(p10: float, p01: float, goal: float = POWER_GOAL,
                        cap: int = 5000, step: int = 10) -> int | None:
    """The smallest n (in steps of `step`) whose McNemar test reaches `goal` power."""
    for n in range(step, cap + 1, step):
        if mcnemar_power(n, p10, p01) >= goal:
            return n
    return None


def hypothesis(illegal: int, positions: int, outside: int, chosen: int, unequal: int,
               pairs: int, per_position: int = 1) -> dict[str, Any]:
    """The test on the illegal rate and the consistency scores together, as an
    intersection-union test: H0 pattern matching (illegal rate >= 2% at T = 0, or B outside
    A's list >= 5%, or mirrored answers neither corresponding nor as good >= 5%) against H1
    a world model (all below). H0 is rejected only when every exact one-sided test rejects
    at ALPHA, which keeps the level at ALPHA; the power is the product of the parts' (the
    answers are separate requests).

    The illegal part counts positions: `illegal` of `positions` had an illegal answer among
    their `per_position` answers at T = 0 (a position and its mirror). Whatever the
    correlation within a position, P(any illegal) >= the illegal rate, so the exact test of
    P(any) >= 2% keeps its level; pooling the 2n answers as independent did not."""
    parts = {"illegal": exact_test(illegal, positions, H0_RATE, per_position),
             "b_outside_a": exact_test(outside, chosen, H0_INCONSISTENT),
             "mirror_unequal": exact_test(unequal, pairs, H0_INCONSISTENT)}
    both = {f"{p1:.1%}": round(float(np.prod([t["power"].get(f"{p1:.1%}", 0.0)
                                               for t in parts.values()])), 4)
            for p1 in POWER_AT}
    short = [f"{name}: {t['n']} cases cannot reject even with none failing (at least "
             f"{n_for_power(t['h0_rate'], 0.0)} needed)"
             for name, t in parts.items() if not t["n"] or t["power"].get("0.0%", 0) == 0]
    return {"h0": f"pattern matching: illegal rate >= {H0_RATE:.0%} at T = 0, or B outside "
                  f"A's list >= {H0_INCONSISTENT:.0%}, or mirrored answers neither "
                  f"corresponding nor as good >= {H0_INCONSISTENT:.0%}",
            "h1": "a world model: all below", "alpha": ALPHA, "parts": parts,
            "reject_h0": all(t["reject"] for t in parts.values()), "power": both,
            "note": "; ".join(short)}

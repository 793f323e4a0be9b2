"""Power before the run: how many questions, puzzles or games a comparison needs to detect a
given difference.

Static runs are paired: their per-question spread and correlation come from the committed
baselines' answers (paired_baselines.json, written by `python -m bench.paired_compare
--write`), or, without that file, from the stated defaults below. Puzzle and game runs are
independent samples; their information per puzzle or game is the rating model's at an even
score, where the adaptive samplers keep them.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scipy import stats

from chess_eval.benchmark.compare.paired import ALPHA, effective_ratio, questions_needed
from chess_eval.benchmark.core.data import PAIRED_BASELINES
from chess_eval.benchmark.stats import btd
from chess_eval.errors import DataError

# Without measurements: a per-question sd and a paired correlation stated, not measured.
DEFAULTS: dict[str, dict[str, float]] = {
    "accuracy": {"sd_a": 30.0, "sd_b": 30.0, "rho": 0.5},
    "best_move_rate": {"sd_a": 0.5, "sd_b": 0.5, "rho": 0.3},
    "legal_rate": {"sd_a": 0.4, "sd_b": 0.4, "rho": 0.3},
    "acpl": {"sd_a": 250.0, "sd_b": 250.0, "rho": 0.5},
}
PUZZLE_INFO = (math.log(10) / 400) ** 2 / 4  # logistic Fisher information at p = 1/2, per Elo^2
PLAN_NU = 0.2  # draws of the current ladder's fit, about; more draws inform a little more


@dataclass(frozen=True)
class Plan:
    """What a comparison needs, and what the figure rests on."""

    metric: str
    difference: float
    power: float
    n: int  # questions (paired), or puzzles / games per run
    unit: str
    rests_on: str
    paired_gain: float | None = None  # unpaired questions one paired question is worth

    def text(self) -> str:
        """As printed."""
        gain = (f"; pairing makes each question worth {self.paired_gain:.1f} unpaired ones"
                if self.paired_gain else "")
        return (f"to detect a difference of {self.difference:g} in {self.metric} with "
                f"{self.power:.0%} power (two-sided, alpha {ALPHA}): {self.n:,} {self.unit}"
                f"{gain}. Rests on {self.rests_on}.")


def measured(path: Path = PAIRED_BASELINES) -> dict[str, Any] | None:
    """The committed baselines' per-question spread and correlation, when the file exists."""
    if not path.is_file():
        return None
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return data
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: unreadable ({exc}); delete it or rerun "
                        "python -m bench.paired_compare --write") from exc


def plan(metric: str, difference: float, power: float = 0.8,
         path: Path = PAIRED_BASELINES) -> Plan:
    """How many questions, puzzles or games detect `difference` in `metric` with `power`."""
    if difference <= 0 or not 0 < power < 1:
        raise DataError("--difference must be > 0 and --power within (0, 1)")
    z = stats.norm.ppf(1 - ALPHA / 2) + stats.norm.ppf(power)
    if metric == "puzzle_elo":
        n = math.ceil(2 * (z / difference) ** 2 / PUZZLE_INFO)
        return Plan(metric, difference, power, n, "puzzles per run", "the logistic puzzle "
                    "model's information at an even chance, each run independent")
    if metric == "game_elo":
        info = float(btd.game_information(0.0, PLAN_NU))
        n = math.ceil(2 * (z / difference) ** 2 / info)
        return Plan(metric, difference, power, n, "games per run", f"the BTD model's "
                    f"information per game at an even score (nu {PLAN_NU}); the ladder's "
                    "shared error cancels between runs on one ladder")
    data = measured(path) or {}
    source = data.get("metrics", {}).get(metric)
    if source is None and metric not in DEFAULTS:
        raise DataError(f"no plan for {metric!r}: choose from {', '.join(sorted(DEFAULTS))}, "
                        "puzzle_elo, game_elo")
    spread = source or DEFAULTS[metric]
    rests = (f"the committed baselines' answers ({data['measured_on']})" if source
             else "stated defaults (sd and correlation not measured: run python -m "
             "bench.paired_compare --write)")
    n = questions_needed(difference, spread["sd_a"], spread["sd_b"], spread["rho"], power)
    return Plan(metric, difference, power, n, "questions, answered by both runs",
                f"{rests}: per-question sd {spread['sd_a']:.3g} and {spread['sd_b']:.3g}, "
                f"paired correlation {spread['rho']:.2f}", effective_ratio(
                    spread["sd_a"], spread["sd_b"], spread["rho"]))

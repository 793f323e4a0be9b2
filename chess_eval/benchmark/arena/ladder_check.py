"""What the ladder predicted for a match, and the two ratings with the match's games added.

Where both players have a `play` result on one ladder (the same fit), their games against
the rungs give each a rating (joint.joint_fit without head-to-head games: play's own
estimator, with the ladder's shared error in the difference), so the score A should make
against B: the BTD expected score at the difference, with the ladder's draw parameter, its
90% interval from the difference's. The match's measured score beside it, with
z = (measured - predicted) / sqrt(sd_measured^2 + sd_predicted^2): a |z| above about 2 says
the two are not transitive through the ladder's engines (docs/games-and-ladder.md). The same
fit with the head-to-head games added (their own draw parameter fitted with them) gives both
ratings refitted, reported apart from the ladder-only ones.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from chess_eval.benchmark.core.header import Kind, read_result
from chess_eval.benchmark.core.turns import Condition
from chess_eval.benchmark.stats.btd import Z90, Prior, expected_score
from chess_eval.benchmark.stats.draws import DrawModel, constant
from chess_eval.benchmark.stats.joint import JointFit, RungGames, joint_fit
from chess_eval.benchmark.stats.pairs import PairStats, pair_stats, totals_of
from chess_eval.errors import DataError, FitError

STANDARD = Condition.STANDARD.value


def rung_games(result: dict[str, Any]) -> list[RungGames]:
    """A play result's standard games, per rung (indices into its ladder's names)."""
    names = result["ladder"]["names"]
    rows = result["conditions"][STANDARD]["rungs"]
    return [RungGames(names.index(name), int(r["w"]), int(r["d"]), int(r["l"]))
            for name, r in rows.items()]


def _prior(result: dict[str, Any]) -> Prior:
    mean, sd = result["settings"]["prior"]
    return Prior(float(mean), float(sd))


def draw_model_of(ladder: dict[str, Any]) -> DrawModel:
    """The draws a play result's ladder read its games with: its draw model where the
    result keeps one (the reference ladder from version 11), else its one nu."""
    found = ladder.get("draws")
    if not found:
        return constant(float(ladder["nu"]))
    return DrawModel(tuple(float(c) for c in found["coef"]), float(found["low"]),
                     float(found["high"]), float(found["centre"]), float(found["scale"]))


def fits(play_a: dict[str, Any], play_b: dict[str, Any],
         head_to_head: tuple[int, int, int]) -> tuple[JointFit, JointFit]:
    """The two players' ratings from the ladder alone, and with the match's games added."""
    ladder = play_a["ladder"]
    model = draw_model_of(ladder)
    args = (ladder["elos"], np.array(ladder["cov"], float),
            model if ladder.get("draws") else float(ladder["nu"]),
            (rung_games(play_a), rung_games(play_b)))
    priors = (_prior(play_a), _prior(play_b))
    return joint_fit(*args, (0, 0, 0), priors), joint_fit(*args, head_to_head, priors)


def _rating(fit: JointFit, player: int) -> dict[str, float]:
    lo, hi = fit.interval(player)
    return {"mean": round(fit.means[player], 1), "lo": round(lo, 1), "hi": round(hi, 1)}


def ladder_check(match: dict[str, Any], play_a: dict[str, Any], play_b: dict[str, Any],
                 head_to_head: tuple[int, int, int]) -> dict[str, Any]:
    """The ladder's predicted score beside the match's, their z, and both ratings with and
    without the match's games (the match result's `ladder_check` block)."""
    alone, joint = fits(play_a, play_b, head_to_head)
    # nu where the two play: the ladder's draw model at their mean rating.
    nu = float(draw_model_of(play_a["ladder"]).nu(sum(alone.means) / 2))
    difference, sd = alone.difference()
    predicted = float(expected_score(difference, nu))
    # The score's sd by the delta method: the slope of the expected score at the difference.
    slope = float(expected_score(difference + 0.5, nu) - expected_score(difference - 0.5, nu))
    predicted_sd = abs(slope) * sd
    score = match["score"]
    measured_sd = (score["hi"] - score["lo"]) / (2 * Z90)
    z = (score["value"] - predicted) / math.hypot(measured_sd, predicted_sd)
    return {
        "play_results": [play_a["_file"], play_b["_file"]],
        "ladder_sha256": play_a["settings"]["ladder_sha256"],
        # The scale the ratings are on (a 15.1 ladder's are not the reference's).
        "ladder": f"the {play_a['ladder']['engine']} ladder" + (
            f", version {v}" if (v := play_a["ladder"].get("version")) else ""),
        "predicted": {
            "elo_difference": round(difference, 1), "elo_difference_sd": round(sd, 1),
            "score": round(predicted, 4),
            "lo": round(float(expected_score(difference - Z90 * sd, nu)), 4),
            "hi": round(float(expected_score(difference + Z90 * sd, nu)), 4)},
        "z": round(z, 2), "nu": round(nu, 4),
        "ratings": {"ladder_only": [_rating(alone, 0), _rating(alone, 1)],
                    "with_match": [_rating(joint, 0), _rating(joint, 1)]},
        "difference_with_match": {"value": round(joint.difference()[0], 1),
                                  "sd": round(joint.difference()[1], 1)},
        # The match games' own draw parameter, fitted in the refit (the rungs keep nu).
        "nu_match": None if joint.nu_match is None else round(joint.nu_match, 4)}


def why_not(play_a: dict[str, Any] | None, play_b: dict[str, Any] | None,
            labels: tuple[str, str]) -> str:
    """Why no prediction can be made ('' when one can)."""
    for play, label in zip((play_a, play_b), labels, strict=True):
        if play is None:
            return f"no complete play result of {label} with standard games"
    assert play_a is not None and play_b is not None
    if play_a["settings"]["ladder_sha256"] != play_b["settings"]["ladder_sha256"]:
        return "the two play results were rated on different fits of the ladder"
    return ""


def pick_play(results: list[dict[str, Any]], label: str) -> dict[str, Any] | None:
    """The play result of `label` to predict with: complete, with standard games; of
    several, the one with the most games (then the last by file name)."""
    found = []
    for result in results:
        standard = result.get("conditions", {}).get(STANDARD)
        if result.get("model") == label and result.get("complete") and standard \
                and standard.get("games") and standard.get("rungs"):
            found.append((standard["games"], result.get("_file", ""), result))
    return max(found, key=lambda f: (f[0], f[1]))[2] if found else None


def find_play(results: Path, label: str) -> dict[str, Any] | None:
    """pick_play among the play results in the folder `results`."""
    found = []
    for path in sorted(results.glob(f"{Kind.PLAY}__*.json")) if results.is_dir() else []:
        try:
            found.append(read_result(path, (Kind.PLAY,)))
        except DataError:
            continue
    return pick_play(found, label)


def check_of(match: dict[str, Any], plays: list[dict[str, Any]]) -> dict[str, Any]:
    """A match result's ladder check from these play results: its `ladder_check` block and
    `ladder_check_missing` (why there is none, or None)."""
    labels = (match["first"]["model"], match["second"]["model"])
    a, b = (pick_play(plays, label) for label in labels)
    missing = "no complete pair" if not match.get("score") else why_not(a, b, labels)
    if missing:
        return {"ladder_check": None, "ladder_check_missing": missing}
    assert a is not None and b is not None
    wdl = match["wdl"]
    try:
        check = ladder_check(match, a, b, (wdl[0], wdl[1], wdl[2]))
    # A play result of an older version (a field missing) or one the fit cannot use: the
    # match's own result stands, and says why it has no prediction.
    except (KeyError, TypeError, ValueError, IndexError, FitError) as exc:
        return {"ladder_check": None, "ladder_check_missing": "the play results cannot be "
                f"read for a prediction ({type(exc).__name__}: {exc})"}
    return {"ladder_check": check, "ladder_check_missing": None}


def _bound(value: float) -> float | None:
    return None if math.isinf(value) else round(value, 1)


def elo_block(stats: PairStats) -> dict[str, Any]:
    """A match result's `elo_difference`: the BTD reading of its pairs, with its nu."""
    kind = "interval" if stats.elo is not None else (
        "below" if stats.score == 0.0 else "above")
    return {"kind": kind, "value": None if stats.elo is None else round(stats.elo, 1),
            "lo": _bound(stats.elo_lo), "hi": _bound(stats.elo_hi), "model": "BTD",
            "nu": round(stats.nu, 4)}


def match_elo(result: dict[str, Any], nu: float) -> dict[str, Any] | None:
    """A match result's Elo difference on the reference scale's model: as written where the
    file read it through BTD, else (a file of an earlier version, whose figure was the
    logistic one) read again from its pentanomial with `nu`; None before a complete pair."""
    written = result.get("elo_difference")
    if written is not None and "nu" in written:
        return dict(written)
    counts = result.get("pentanomial") or []
    if not sum(counts):
        return None
    return elo_block(pair_stats(totals_of(counts), nu))


def elo_difference_text(e: dict[str, Any] | None) -> str:
    """The Elo difference as text: an interval, or a one-sided bound."""
    if e is None:
        return "no complete pair"
    if e["kind"] == "below":
        return f"below {e['hi']:+.0f} (a one-sided 95% bound: every game lost)"
    if e["kind"] == "above":
        return f"above {e['lo']:+.0f} (a one-sided 95% bound: every game won)"
    lo = "no lower bound" if e["lo"] is None else f"{e['lo']:+.0f}"
    hi = "no upper bound" if e["hi"] is None else f"{e['hi']:+.0f}"
    return f"{e['value']:+.0f} [{lo}, {hi}] (90%)"


def _rating_text(r: dict[str, float]) -> str:
    return f"{r['mean']:.0f} [{r['lo']:.0f}, {r['hi']:.0f}]"


def ladder_lines(result: dict[str, Any]) -> list[str]:
    """The ladder's prediction, z and the refitted ratings, or why there are none."""
    check = result.get("ladder_check")
    if check is None:
        why = result.get("ladder_check_missing")
        return [f"ladder's prediction: none ({why})"] if why else []
    p, r = check["predicted"], check["ratings"]
    names = (result["first"]["model"], result["second"]["model"])
    on = f" on {check['ladder']}" if check.get("ladder") else ""
    return [f"ladder's prediction (their play ratings{on}, {p['elo_difference']:+.0f} +- "
            f"{Z90 * p['elo_difference_sd']:.0f} Elo apart): score {p['score']:.3f} "
            f"[{p['lo']:.3f}, {p['hi']:.3f}]; measured - predicted z = {check['z']:+.2f}",
            *(f"{name}: ladder only {_rating_text(alone)}; with the match's games "
              f"{_rating_text(joint)}" for name, alone, joint in
              zip(names, r["ladder_only"], r["with_match"], strict=True))]

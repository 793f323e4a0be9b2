"""What a `play` session measured: Elo per condition, rungs, forfeits, taxonomy, ACPL."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from chess_eval.benchmark.arena.game import cp_losses, pgn, rule_of, side_usage
from chess_eval.benchmark.arena.ladder import Ladder, reference_ladder
from chess_eval.benchmark.arena.match import Played
from chess_eval.benchmark.arena.versions import ladder_version_text
from chess_eval.benchmark.core.header import Kind, write_result
from chess_eval.benchmark.core.scoring import truncation_hint
from chess_eval.benchmark.core.turns import Condition
from chess_eval.benchmark.games.figures import figures
from chess_eval.benchmark.games.play import Session
from chess_eval.benchmark.games.pooling import pool
from chess_eval.benchmark.games.result import GamesResult
from chess_eval.benchmark.games.sampler import (
    SamplerConfig,
    for_ladder,
    game_elo,
    ladder_weights,
    limited_by_ladder,
    posterior,
)
from chess_eval.benchmark.human.block import committed_block, human_text
from chess_eval.benchmark.model import cost
from chess_eval.benchmark.model.cost import Price
from chess_eval.benchmark.question.answers import FAILED_ANSWERS, Category
from chess_eval.benchmark.stats.bootstrap import percentile_interval, resample
from chess_eval.benchmark.stats.elo import INTERVAL, LEVEL
from chess_eval.files import atomic_write

BOOT = 1000  # bootstrap replicates of the by-opening-and-colour interval
OPENING_PLIES = 4  # standard games: the opening is the first this many plies


def opening(game: Played) -> str:
    """The game's opening: its start, or the first plies of a standard game."""
    assert game.record is not None
    if game.condition != Condition.STANDARD:
        return str(game.record.start["label"])
    return " ".join(game.record.sans[:OPENING_PLIES])


def bootstrap(games: list[Played], ladder: Ladder, config: SamplerConfig, seed: int,
              boot: int = BOOT) -> tuple[float, float] | None:
    """The bootstrap interval of the promptfoo gpt5-chess write-up: resample openings with
    replacement within each colour, refit."""
    if len(games) < 2:
        return None
    by_colour: dict[bool, dict[str, list[Played]]] = {True: {}, False: {}}
    for g in games:
        by_colour[g.first_white].setdefault(opening(g), []).append(g)
    clusters = [c for by_opening in by_colour.values() for c in by_opening.values()]
    sizes = [len(by_opening) for by_opening in by_colour.values()]
    groups = np.split(np.arange(len(clusters)), np.cumsum(sizes)[:-1])  # clusters by colour
    estimates = []
    for idx in resample(np.random.default_rng(seed), groups, boot):
        sample = [g for i in idx for g in clusters[i]]
        estimates.append(posterior([float(ladder.elos[g.rung]) for g in sample],
                                   [g.score for g in sample], config).mean)
    return percentile_interval(np.array(estimates), LEVEL)


def condition_report(games: list[Played], ladder: Ladder, config: SamplerConfig, seed: int,
                     mcmc: bool) -> dict[str, Any]:
    """One condition's Elo (posterior and bootstrap), games per rung, forfeits, evolution."""
    rated = [g for g in games if g.record is not None]
    opponents = [float(ladder.elos[g.rung]) for g in rated]
    scores = [g.score for g in rated]
    est = game_elo(opponents, scores, config, mcmc, seed)
    post = posterior(opponents, scores, config, mcmc, seed)
    per_rung: dict[str, dict[str, Any]] = {}
    for g in rated:
        row = per_rung.setdefault(ladder.rungs[g.rung].name, {
            "elo": round(ladder.rungs[g.rung].elo), "games": 0, "w": 0, "d": 0, "l": 0})
        row["games"] += 1
        row[{1.0: "w", 0.5: "d", 0.0: "l"}[g.score]] += 1
    evolution = []
    for n in range(1, len(rated) + 1):
        p = posterior(opponents[:n], scores[:n], config)
        evolution.append({"games": n, "mean": round(p.mean, 1), "lo": round(p.lo, 1),
                          "hi": round(p.hi, 1), "rung": rated[n - 1].rung})
    boot = bootstrap(rated, ladder, config, seed) if est.kind == INTERVAL else None
    return {
        "games": len(rated), "distinct": distinct_games(rated), "aborted": len(games) - len(rated),
        "w": sum(s == 1 for s in scores), "d": sum(s == 0.5 for s in scores),
        "l": sum(s == 0 for s in scores),
        "elo": est.as_dict(), "posterior": {"mean": post.mean, "sd": post.sd},
        # The ladder's part: its sd, the weights of the rungs' Elos in the rating (for the
        # leaderboard's shared ladder draws), and whether it alone stopped the run.
        "ladder": {"sd": round(post.ladder, 2),
                   "half_width": round(post.ladder_half_width),
                   "weights": [round(float(w), 5) for w in
                               ladder_weights(opponents, post.mean, config, scores)]
                   if rated else [],
                   "limited": bool(rated) and limited_by_ladder(post, config)},
        "bootstrap": None if boot is None else {"lo": round(boot[0]), "hi": round(boot[1])},
        "rungs": dict(sorted(per_rung.items(), key=lambda kv: kv[1]["elo"])),
        "forfeits": [{"game": g.record.key, "reason": g.record.forfeit}
                     for g in rated if g.record and g.record.forfeit],
        "terminations": dict(Counter(g.record.termination for g in rated if g.record)),
        "evolution": evolution,
    }


def distinct_games(games: list[Played]) -> int:
    """How many of the games differ: a deterministic player from one start with one colour
    against one rung plays the same game again, and a repeat is no new evidence."""
    return len({(json.dumps(g.record.start, sort_keys=True), g.record.white, g.record.black,
                 tuple(g.record.moves)) for g in games if g.record is not None})


def add_pooled(conditions: dict[str, dict[str, Any]], seed: int) -> None:
    """A hierarchical model, as the promptfoo gpt5-chess write-up proposes: each rated
    condition's partially pooled Elo, when two
    or more conditions have an interval (added to their reports as "pooled")."""
    names = [c for c, r in conditions.items() if r["elo"]["kind"] == INTERVAL and r["games"]]
    if len(names) < 2:
        return
    ladder = np.array([conditions[c]["ladder"]["sd"] for c in names])
    sds = np.array([conditions[c]["posterior"]["sd"] for c in names])
    means = np.array([conditions[c]["posterior"]["mean"] for c in names])
    own = np.sqrt(np.maximum(sds ** 2 - ladder ** 2, 1e-12))
    for name, p in zip(names, pool(means, own, ladder, seed=seed), strict=True):
        conditions[name]["pooled"] = {"mean": round(p.mean), "lo": round(p.lo),
                                      "hi": round(p.hi), "shrinkage": round(p.shrinkage, 3)}


def compare(conditions: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Every pair of conditions: the Elo gap with a Bonferroni-simultaneous 90% interval."""
    names = [c for c, r in conditions.items() if r["elo"]["kind"] == INTERVAL and r["games"]]
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    if not pairs:
        return []
    z = float(stats.norm.ppf(1 - (1 - LEVEL) / (2 * len(pairs))))
    out = []
    for a, b in pairs:
        pa, pb = conditions[a]["posterior"], conditions[b]["posterior"]
        gap, sd = pa["mean"] - pb["mean"], float(np.hypot(pa["sd"], pb["sd"]))
        lo, hi = gap - z * sd, gap + z * sd
        out.append({"a": a, "b": b, "gap": round(gap), "lo": round(lo), "hi": round(hi),
                    "pairs": len(pairs), "significant": bool(lo > 0 or hi < 0)})
    return out


def taxonomy(session: Session) -> dict[str, Any]:
    """The model's answers over all attempts: legal, and illegal by category."""
    counts: Counter[str] = Counter()
    for games in session.games.values():
        for g in games:
            if g.record is None:
                continue
            side = "white" if g.first_white else "black"
            for a in g.record.attempts:
                if a["side"] == side:
                    counts[a["category"] or "legal"] += 1
    total = sum(counts.values())
    return {"attempts": total, "legal": counts["legal"],
            **{c: counts[c] for c in FAILED_ANSWERS},
            "illegal_rate": (total - counts["legal"]) / total if total else None}


def acpl(session: Session) -> dict[str, Any]:
    """The model's mean cp loss per move in its games, graded by the judge."""
    losses = [loss for games in session.games.values() for g in games if g.record
              for loss in cp_losses(g.record, g.first_white)]
    return {"moves": len(losses), "acpl": float(np.mean(losses)) if losses else None}


def usage(session: Session, price: Price | None) -> dict[str, Any]:
    """Tokens, requests, tool calls and cost of the model's answers (cached ones included),
    in all, per move and per game."""
    return side_usage(((g.record, g.first_white) for games in session.games.values()
                       for g in games if g.record is not None), price)


def _limited(condition: dict[str, Any]) -> str:
    """' (limited by the ladder (+-L))' when the ladder alone stopped the condition."""
    ladder = condition["ladder"]
    return f" (limited by the ladder (+-{ladder['half_width']}))" if ladder["limited"] else ""


@dataclass(frozen=True)
class Intransitive:
    """A pair of the validation set whose head-to-head games disagreed with the difference
    of their ladder ratings beyond the 90% interval."""

    a: str  # the pair's players (baseline specs)
    b: str
    gap: int  # head-to-head difference (B over A) minus the ladder's, Elo
    lo: int  # its 90% interval
    hi: int


# Measured by bench/transitivity.py on ladder.csv (docs/validation.md; a test checks these
# against the committed games and ratings). Each kind of player in such a pair gets the note.
INTRANSITIVE = (
    Intransitive("gnuchess:depth=1", "glaurung:depth=1", 218, 50, 385),
    Intransitive("sjeng:depth=2", "softmax:temp=100,nodes=2000", 523, 271, 776),
)


def transitivity_note(model: str) -> str:
    """For a baseline (or 'served/' baseline) of a kind the ladder was measured not to place
    transitively, what was measured; '' for anything else."""
    kind = model.rpartition("/")[2].split(":")[0]
    found = [p for p in INTRANSITIVE if kind in (p.a.split(":")[0], p.b.split(":")[0])]
    return "; ".join(
        f"the ladder was measured not transitive for this family: {p.b} scored {p.gap:+d} Elo "
        f"[{p.lo:+d}, {p.hi:+d}] more against {p.a} head to head than their game Elos differ "
        "(docs/validation.md)" for p in found)


def btd_note(ladder: Ladder) -> str:
    """How the draws were modelled."""
    model = ladder.draws
    if model is None:
        return (f"BTD draw parameter nu = {ladder.nu:.3f}, fixed from the ladder's calibration "
                f"games (P(draw) at equal strength {ladder.nu / (2 + ladder.nu):.0%})")
    at = [(e, float(model.nu(e))) for e in (400.0, 1600.0, 2800.0)]
    return ("BTD with nu by the pair's mean Elo, the ladder's draw model (log nu quadratic "
            "in it, fitted with the rungs on its calibration games): P(draw) at equal "
            "strength " + ", ".join(f"{nu / (2 + nu):.0%} at {e:,.0f}" for e, nu in at))


def markdown(result: dict[str, Any]) -> str:
    """The session as a markdown report."""
    lines = [f"# {result['model']}: games against the ladder", "",
             f"Player `{result['player']}`, protocol {result.get('protocol', 'fen')} "
             f"(`{result['prompt']}`), legal-move list "
             f"{'given' if result['legal_moves'] else 'not given'}, illegal retries "
             f"{result['illegal_retries']}. Ladder of {result['ladder']['rungs']} rungs "
             f"({result['ladder']['engine']}, {ladder_version_text(result)}); scale: Elo "
             "above a random mover, its rungs Stockfish at fixed nodes, some mixed with random "
             "moves (not Lichess, FIDE or CCRL); every interval includes the ladder's own "
             "uncertainty. "
             + result["ladder"]["note"] + ".", "",
             *([f"Note: {note}.", ""] if (note := transitivity_note(result["model"])) else []),
             *([f"**{result['stopped']}.**", ""] if result.get("stopped") else []),
             "| condition | games | distinct | W/D/L | Elo (90%) | bootstrap by opening and "
             "colour | aborted |", "|---|---|---|---|---|---|---|"]
    for name, c in result["conditions"].items():
        boot = c["bootstrap"]
        shown = f"[{boot['lo']}, {boot['hi']}]" if boot else "-"
        lines.append(f"| {name} | {c['games']} | {c['distinct']} | {c['w']}/{c['d']}/{c['l']} "
                     f"| {c['elo']['text']}{_limited(c)} | {shown} | {c['aborted']} |")
    for name, c in result["conditions"].items():
        if name != Condition.STANDARD:
            lines.append("" if c["ladder"]["measured_in"] == name else
                         f"\n{name}: rated on the standard ladder; its rungs' strength in "
                         f"{name} is not measured (benchmark.py calibrate --condition {name})")
    pooled = {n: c["pooled"] for n, c in result["conditions"].items() if c.get("pooled")}
    if pooled:
        lines += ["", "Partially pooled across conditions (a hierarchical model: "
                  "offsets between conditions ~ Normal(0, tau^2), tau estimated; shrinkage 0 "
                  "keeps a condition's own estimate, 1 pools it fully):", ""]
        lines += [f"- {n}: {p['mean']} [{p['lo']}, {p['hi']}], shrinkage {p['shrinkage']:.2f}"
                  for n, p in pooled.items()]
    if result["comparisons"]:
        lines += ["", "Conditions compared (Bonferroni-simultaneous 90% intervals):", ""]
        for cmp in result["comparisons"]:
            verdict = "significant" if cmp["significant"] else "not significant"
            lines.append(f"- {cmp['a']} - {cmp['b']}: {cmp['gap']:+d} Elo "
                         f"[{cmp['lo']}, {cmp['hi']}], {verdict}")
    lines += human_markdown(result.get("human"))
    tax = result["taxonomy"]
    rate = tax["illegal_rate"]
    lines += ["", f"Answers: {tax['attempts']} attempts, {tax['legal']} legal; illegal: "
              + ", ".join(f"{c} {tax.get(c, 0)}" for c in FAILED_ANSWERS)
              + (f" (rate {rate:.1%})" if rate is not None else ""),
              f"ACPL in its games: {_num(result['acpl']['acpl'])} over "
              f"{result['acpl']['moves']} moves (judge: {result['judge']})",
              f"Cost: {cost.text(result['usage'])}", ""]
    if hint := truncation_hint(tax[Category.TRUNCATED], tax["attempts"], None):
        lines[-1:-1] = [hint]
    for name, c in result["conditions"].items():
        lines += [f"## {name}", "", "| rung | Elo | games | W | D | L |",
                  "|---|---|---|---|---|---|"]
        for rung, row in c["rungs"].items():
            lines.append(f"| {rung} | {row['elo']} | {row['games']} | {row['w']} | {row['d']} "
                         f"| {row['l']} |")
        lines += ["", "Terminations: " + ", ".join(f"{k} {v}" for k, v in
                                                    sorted(c["terminations"].items()))]
        for f in c["forfeits"]:
            lines.append(f"- forfeit in {f['game']}: {f['reason']}")
        lines.append("")
    return "\n".join(lines)


def human_markdown(block: dict[str, Any] | None) -> list[str]:
    """The standard game Elo on Lichess's scale: a table per time control, or nothing."""
    if not block:
        return []
    scale = "" if block["scale"] == "reference" else f" ({block['scale']})"
    lines = ["", f"What it means to a chess player{scale}: the Maia nets that play on Lichess "
             "as bots anchor a line from the reference scale to their ratings; a figure only "
             "where the line's whole 90% predictive interval lies between their ratings, else "
             "a one-sided 90% bound, else the expected score against the nearest anchor "
             "(docs/games-and-ladder.md).",
             "", "| time control | Lichess | anchors' readings (game Elo) | their ratings | "
             "anchors | basis |", "|---|---|---|---|---|---|"]
    for tc in block["time_controls"]:
        ratings = tc.get("ratings") or ["-", "-"]
        lines.append(f"| {tc['time_control']} | {tc['text']} | {tc['band'][0]}-{tc['band'][1]} "
                     f"| {ratings[0]}-{ratings[1]} | {', '.join(tc['anchors'])} | "
                     f"{tc.get('basis', tc['snapshot'])} |")
    return lines


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.0f}"

def session_result(model: str, player_id: str, settings: dict[str, Any], session: Session,
                   ladders: dict[str, Ladder], config: SamplerConfig, seed: int, mcmc: bool,
                   questions_sha256: str | None, price: Price | None = None,
                   version: int | None = None) -> GamesResult:
    """The session's result record (`questions_sha256`: the mid-game starts' file, if any;
    `version`: the standard ladder's version number, None where its registry does not list
    it); each condition rated on its own ladder (the standard one where none was measured)."""
    ladder = ladders[Condition.STANDARD]
    conditions = {}
    for name, games in session.games.items():
        own = ladders[name]
        conditions[name] = condition_report(games, own, for_ladder(config, own), seed, mcmc)
        if own is not ladder:  # measured in this condition: its rungs and covariance here
            conditions[name]["ladder"] |= _ladder_json(own, name)
        else:
            conditions[name]["ladder"]["measured_in"] = Condition.STANDARD.value
    add_pooled(conditions, seed)
    return GamesResult(
        model=model, player=player_id,
        prompt=settings["prompt"], legal_moves=settings["legal_moves"],
        illegal_retries=settings["illegal_retries"], settings=settings,
        ladder={"rungs": len(ladder.rungs), "engine": ladder.engine, "version": version,
                "nu": ladder.nu,
                **({} if ladder.draws is None else {"draws": {
                    "coef": list(ladder.draws.coef), "low": ladder.draws.low,
                    "high": ladder.draws.high, "centre": ladder.draws.centre,
                    "scale": ladder.draws.scale}}),
                "adjudication": rule_of(ladder.adjudication).name,
                **_ladder_json(ladder, "standard"), "note": btd_note(ladder)},
        judge=f"{rule_of(ladder.adjudication).nodes} nodes per position",
        complete=not any(c["aborted"] for c in conditions.values()) and not session.stopped,
        conditions=conditions, comparisons=compare(conditions), taxonomy=taxonomy(session),
        acpl=acpl(session), usage=usage(session, price), questions_sha256=questions_sha256,
        protocol=settings.get("protocol", "fen"), stopped=session.stopped,
        human=committed_block(conditions[Condition.STANDARD]["elo"], ladder.engine,
                              reference_ladder(), conditions[Condition.STANDARD]["ladder"])
        if Condition.STANDARD in conditions else None)


def session_summary(result: dict[str, Any]) -> str:
    """A few lines for the terminal."""
    lines = [f"{result['model']} against the ladder:"]
    for name, c in result["conditions"].items():
        lines.append(f"  {name:9} {c['elo']['text'] + _limited(c):32} {c['games']} games "
                     f"({c['distinct']} distinct; W/D/L {c['w']}/{c['d']}/{c['l']}), "
                     f"{c['aborted']} aborted")
        if c.get("pooled"):
            p = c["pooled"]
            lines.append(f"  {'':9} pooled across conditions: {p['mean']} [{p['lo']}, "
                         f"{p['hi']}]")
    for cmp in result["comparisons"]:
        lines.append(f"  {cmp['a']} - {cmp['b']}: {cmp['gap']:+d} [{cmp['lo']}, {cmp['hi']}] "
                     f"({'significant' if cmp['significant'] else 'not significant'}, "
                     "Bonferroni)")
    if note := transitivity_note(result["model"]):
        lines.append(f"  note: {note}")
    tax = result["taxonomy"]
    lines.append(f"  answers {tax['attempts']}, illegal " + ", ".join(
        f"{c} {tax.get(c, 0)}" for c in FAILED_ANSWERS))
    if cost.shown(result["usage"]):
        lines.append(f"  cost: {cost.text(result['usage'])}")
    if human := human_text(result.get("human")):
        lines.append(f"  human scale: {human}")
    if result.get("stopped"):
        lines.append(f"  {result['stopped']}")
    hint = truncation_hint(tax[Category.TRUNCATED], tax["attempts"], None)
    return "\n".join(lines + ([f"  {hint}"] if hint else []))


def _ladder_json(ladder: Ladder, measured: str) -> dict[str, Any]:
    """A ladder's rungs, Elos and covariance as a result file keeps them."""
    return {"measured_in": measured,
            "elos": [round(e) for e in ladder.elos], "names": [r.name for r in ladder.rungs],
            "cov": [[round(float(v), 1) for v in row] for row in ladder.cov]}


def write_session(out: Path, name: str, record: GamesResult, session: Session,
                  ladders: dict[str, Ladder]) -> list[Path]:
    """JSON, markdown, PGN, traces and figures, each written atomically; their paths."""
    result = record.as_dict()
    paths = [out / f"{name}.json", out / f"{name}.md", out / f"{name}.pgn",
             out / "traces" / f"{name}.jsonl"]
    aborted = sum(c["aborted"] for c in result["conditions"].values())
    write_result(paths[0], Kind.PLAY, result,
                 None if record.complete else record.stopped or f"{aborted} games aborted "
                 "for infrastructure reasons")
    with atomic_write(paths[1]) as handle:
        handle.write(markdown(result))
    games = [(g, g.record) for gs in session.games.values() for g in gs if g.record is not None]
    with atomic_write(paths[2], encoding="utf-8") as handle:
        for g, played in games:
            rung = ladders[g.condition].rungs[g.rung]
            headers = {"Round": f"{g.condition} {g.index + 1}", "GameId": played.key,
                       "WhiteElo" if not g.first_white else "BlackElo": str(round(rung.elo)),
                       "Rung": rung.name, "Condition": g.condition}
            handle.write(pgn(played, headers) + "\n\n")
    paths[3].parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(paths[3], encoding="utf-8") as handle:
        for g, played in games:
            for a in played.attempts:
                handle.write(json.dumps({"game": played.key, "condition": g.condition,
                                         "rung": ladders[g.condition].rungs[g.rung].name,
                                         **a}) + "\n")
    return paths + figures(result, out / name)

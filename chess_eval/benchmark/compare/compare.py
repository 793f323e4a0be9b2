"""Two result files compared on what they share: the same questions (paired), the same
puzzle scale, or the same ladder. Anything else is refused with one line."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from chess_eval.benchmark.arena.ladder import reference_nu
from chess_eval.benchmark.arena.ladder_check import (
    elo_difference_text,
    ladder_check,
    match_elo,
    why_not,
)
from chess_eval.benchmark.arena.versions import ladder_version_text
from chess_eval.benchmark.compare.paired import (
    ALPHA,
    Difference,
    discordant_bound,
    normal_difference,
    paired_difference,
)
from chess_eval.benchmark.core.header import Kind, read_result
from chess_eval.benchmark.core.results import result_files
from chess_eval.benchmark.core.scoring import STRATA, UNSCORED, Item, metric_arrays
from chess_eval.benchmark.core.scoring import metric_digits as digits
from chess_eval.benchmark.core.turns import Condition
from chess_eval.benchmark.question.answers import Category
from chess_eval.benchmark.stats.elo import Z
from chess_eval.benchmark.stats.mcnemar import mcnemar
from chess_eval.errors import DataError, FitError
from chess_eval.files import results_dir

HEADLINE = ("legal_rate", "accuracy", "acpl", "best_move_rate", "puzzle_solve_rate")
LOWER_IS_BETTER = {"acpl"}
VERDICT_METRIC = "accuracy"  # the static comparison's one-line verdict
STRATUM_BOOT = 500  # replicates per stratum (the overall figures use paired.BOOT)


@dataclass
class Comparison:
    """What compare found: every difference (B minus A), the verdict line, and the basis."""

    kind: str  # static, puzzles or play
    a: str  # the two runs' names
    b: str
    basis: str  # what the two share, e.g. "paired, 758 questions"
    differences: list[Difference]
    verdict: str
    # per stratum (source, Elo bucket, ...) and value: every headline metric's difference
    by: dict[str, dict[str, list[Difference]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON form (the file's header is added when it is written)."""
        return {"compares": str(self.kind), "a": self.a, "b": self.b,
                "basis": self.basis, "verdict": self.verdict, "notes": self.notes,
                "differences": [d.as_dict() for d in self.differences],
                "by": {k: {v: [d.as_dict() for d in ds] for v, ds in g.items()}
                       for k, g in self.by.items()}}


def find_run(name: str, results: Path) -> Path:
    """A result file by path, by its name in `results`, by the one name it starts, or by
    its model's name (e.g. stockfish:nodes=1000); DataError naming every run a name matches
    when it matches several."""
    path = Path(name)
    if path.suffix == ".json" and path.is_file():
        return path
    try:
        results_dir(results)
    except DataError as exc:
        raise DataError(f"no run {name!r}: {exc}") from None
    exact = results / f"{name.removesuffix('.json')}.json"
    if exact.is_file():
        return exact
    # A name may leave out the kind its file begins with: "random__" finds static__random__...
    prefixes = (name, *(f"{k}__{name}" for k in Kind if k != Kind.COMPARE))
    found = sorted(p for p in result_files(results)
                   if not p.stem.startswith((f"{Kind.COMPARE}__", f"{Kind.MATCH}__"))
                   and (p.stem.startswith(prefixes) or _model_of(p) == name))
    if len(found) == 1:
        return found[0]
    if not found:
        raise DataError(f"no run {name!r} in {results} (give a file, a model's name, or a "
                        f"name from {results}: ls {results}/*.json)")
    raise DataError(f"{name!r} names {len(found)} runs in {results}: "
                    + ", ".join(p.stem for p in found[:5]) + (" ..." if len(found) > 5 else "")
                    + " (give one's file name)")


def _model_of(path: Path) -> str | None:
    """The model a result file names, None when it cannot be read as a result."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    model = data.get("model") if isinstance(data, dict) else None
    return model if isinstance(model, str) else None


def match_results(results: Path, *runs: dict[str, Any]) -> list[dict[str, Any]]:
    """The match results in `results` and in the runs' own folders (when they were given as
    files elsewhere), read as the leaderboard reads them; unreadable files are skipped."""
    folders = {results, *(Path(r["_path"]).parent for r in runs if r.get("_path"))}
    found: dict[str, dict[str, Any]] = {}
    for folder in sorted(folders):
        for path in sorted(folder.glob(f"{Kind.MATCH}__*.json")) if folder.is_dir() else []:
            try:
                found.setdefault(path.name, read_result(path, (Kind.MATCH,)))
            except DataError:
                continue
    return list(found.values())


def load_run(path: Path) -> dict[str, Any]:
    """A result file's JSON (its header checked), with its kind and name."""
    data = read_result(path, (Kind.STATIC, Kind.PLAY, Kind.PUZZLES, Kind.WORLDMODEL))
    if not data["complete"]:
        raise DataError(f"{path}: incomplete run (rerun its command to complete it first)")
    return {**data, "_kind": data["kind"], "_name": path.stem, "_path": str(path)}


def compare(a: dict[str, Any], b: dict[str, Any], seed: int = 0,
            matches: list[dict[str, Any]] | None = None) -> Comparison:
    """B against A, by what the two runs share; DataError when they share nothing. Two play
    runs: a complete match between their models among `matches` is direct evidence, added
    beside the ladder route (match_evidence)."""
    kinds = (a["_kind"], b["_kind"])
    if kinds[0] != kinds[1]:
        raise DataError(f"cannot compare a {kinds[0]} run with a {kinds[1]} run: they "
                        "measure on different scales")
    how = {Kind.STATIC: compare_static, Kind.PUZZLES: compare_puzzles,
           Kind.PLAY: compare_games}
    if kinds[0] not in how:
        raise DataError(f"compare does not handle {kinds[0]} runs (world-model runs report "
                        "tests, not one score)")
    try:
        found = how[kinds[0]](a, b, seed)
    except (KeyError, TypeError, ValueError) as exc:  # a file of another version, or edited
        raise DataError(f"{a['_name']} or {b['_name']} is not a {kinds[0]} result of this "
                        f"version ({type(exc).__name__}: {exc})") from exc
    if kinds[0] == Kind.PLAY:
        match_evidence(found, a, b, matches or [])
    protocols = (a.get("protocol", "fen"), b.get("protocol", "fen"))
    if protocols[0] != protocols[1]:  # one model under two protocols: what asking changes
        found.notes.append(f"protocols: A {protocols[0]}, B {protocols[1]} (the difference "
                           "includes how the model was asked; docs/protocols.md)")
    return found


def _items(run: dict[str, Any]) -> dict[str, Item]:
    return {d["id"]: Item(**d) for d in run["items"] if d["category"] not in UNSCORED}


def compare_static(a: dict[str, Any], b: dict[str, Any], seed: int = 0) -> Comparison:
    """Every headline metric of two static runs on the same questions, paired by question,
    overall and per stratum; McNemar's exact test for the binary ones."""
    if a["questions_sha256"] != b["questions_sha256"]:
        raise DataError("the two runs answered different questions files (sha256 "
                        f"{a['questions_sha256'][:12]} and {b['questions_sha256'][:12]}): "
                        "nothing to pair")
    items_a, items_b = _items(a), _items(b)
    common = sorted(set(items_a) & set(items_b))
    if not common:
        raise DataError("the two runs share no scored question (other splits or filters)")
    xa, xb = [items_a[i] for i in common], [items_b[i] for i in common]
    diffs = _differences(xa, xb, seed)
    notes = []
    if len(common) < max(len(items_a), len(items_b)):
        notes.append(f"paired on the {len(common)} questions both runs scored "
                     f"(A scored {len(items_a)}, B {len(items_b)})")
    by: dict[str, dict[str, list[Difference]]] = {}
    for key in STRATA:
        for value in sorted({getattr(i, key) for i in xa}):
            keep = [k for k, i in enumerate(xa) if getattr(i, key) == value]
            found = _differences([xa[k] for k in keep], [xb[k] for k in keep], seed,
                                 STRATUM_BOOT)
            if found:
                by.setdefault(key, {})[value] = found
    basis = f"paired, {len(common)} questions"
    headline = next(d for d in diffs if d.metric == VERDICT_METRIC)
    return Comparison("static", a["_name"], b["_name"], basis, diffs,
                      verdict(headline, basis), by, notes)


def _differences(xa: list[Item], xb: list[Item], seed: int, boot: int = 2000,
                 metrics: tuple[str, ...] = HEADLINE) -> list[Difference]:
    strata = np.array([f"{i.source}|{i.elo_bucket}" for i in xa])
    groups = [np.flatnonzero(strata == s) for s in np.unique(strata)]
    arrays_a, arrays_b = metric_arrays(xa), metric_arrays(xb)
    binary = {"legal_rate": _legal, "best_move_rate": _best}
    out = []
    for metric in metrics:
        d = paired_difference(metric, *arrays_a[metric], *arrays_b[metric], groups, seed, boot)
        if d is None:
            continue
        if metric in binary:
            test = mcnemar(np.array([binary[metric](i) for i in xa]),
                           np.array([binary[metric](i) for i in xb]))
            lo, hi = d.lo, d.hi
            if test["only_a"] + test["only_b"] == 0:
                # No question answered differently: a bootstrap has nothing to resample and
                # says [0, 0]; the difference is bounded by the discordant share's exact bound.
                bound = discordant_bound(d.n)
                lo, hi = -bound, bound
            d = Difference(d.metric, d.a, d.b, d.diff, lo, hi, test["p"], d.n,
                           "McNemar's exact test", test)
        out.append(d)
    return out


def _legal(item: Item) -> bool:
    return item.category == Category.LEGAL


def _best(item: Item) -> bool:
    return bool(item.best)


def verdict(d: Difference, basis: str) -> str:
    """One line: which run is better in this metric, by how much, and how sure."""
    better = (d.diff < 0) if d.metric in LOWER_IS_BETTER else (d.diff > 0)
    head = ("no significant difference" if d.p >= ALPHA or d.diff == 0
            else "B better than A" if better else "A better than B")
    k = digits(d.metric)
    return (f"{head} in {d.metric.replace('_', ' ')}: {d.diff:+.{k}f} [{d.lo:+.{k}f}, "
            f"{d.hi:+.{k}f}], p {_p(d.p)} ({basis})")


def _p(p: float) -> str:
    return "< 0.001" if p < 0.001 else f"= {p:.3f}"


def _interval(run: dict[str, Any], e: dict[str, Any] | None, what: str) -> dict[str, Any]:
    if not e or e.get("kind") != "interval" or e.get("mean") is None \
            or e.get("lo") is None or e.get("hi") is None:
        text = (e or {}).get("text", "none")
        raise DataError(f"{run['_name']}'s {what} is {text}: a bound or nothing, not an "
                        "estimate to compare")
    return e


def _sd(e: dict[str, Any]) -> float:
    return (float(e["hi"]) - float(e["lo"])) / (2 * Z)


def compare_puzzles(a: dict[str, Any], b: dict[str, Any], seed: int = 0) -> Comparison:
    """Two adaptive puzzle runs: the difference of their puzzle Elos (independent runs on
    puzzles of one rating scale)."""
    if a["settings"].get("puzzles_sha256") != b["settings"].get("puzzles_sha256"):
        raise DataError("the two puzzle runs drew from different puzzle files: their Elos "
                        "are on different pools")
    ea, eb = _interval(a, a.get("elo"), "puzzle Elo"), _interval(b, b.get("elo"), "puzzle Elo")
    basis = f"independent, {a['n']} and {b['n']} puzzles"
    d = normal_difference("puzzle_elo", ea, eb, math.hypot(_sd(ea), _sd(eb)),
                          a["n"] + b["n"], "normal, independent posteriors")
    return Comparison("puzzles", a["_name"], b["_name"], basis, [d], verdict(d, basis))


def compare_games(a: dict[str, Any], b: dict[str, Any], seed: int = 0) -> Comparison:
    """Two play runs rated on one ladder: each shared condition's Elo difference, its
    variance the two players' own parts plus the ladder's part that does not cancel,
    (w_B - w_A)' Cov (w_B - w_A)."""
    la, lb = a["ladder"], b["ladder"]
    if (la.get("names"), la.get("elos"), la.get("engine")) != \
            (lb.get("names"), lb.get("elos"), lb.get("engine")):
        fits = "" if la.get("engine") != lb.get("engine") else (
            f" (the {la.get('engine')} ladder's {ladder_version_text(a)} and "
            f"{ladder_version_text(b)})")
        raise DataError("the two play runs were rated on different ladders (rungs, Elos or "
                        f"engine differ{fits}): rerun one on the other's ladder")
    shared = sorted(set(a["conditions"]) & set(b["conditions"]))
    if not shared:
        raise DataError("the two play runs share no start condition")
    cov = np.array(la["cov"], float)
    diffs = []
    for c in shared:
        ca, cb = a["conditions"][c], b["conditions"][c]
        ea = _interval(a, ca["elo"], f"{c} game Elo")
        eb = _interval(b, cb["elo"], f"{c} game Elo")
        own = [_own(_sd(e), cond) for e, cond in ((ea, ca), (eb, cb))]
        w = np.array(cb["ladder"]["weights"], float) - np.array(ca["ladder"]["weights"], float)
        sd = math.sqrt(own[0] ** 2 + own[1] ** 2 + max(float(w @ cov @ w), 0.0))
        diffs.append(normal_difference(f"game_elo_{c}", ea, eb, sd, ca["games"] + cb["games"],
                                       "normal, the ladder's shared error cancelled"))
    basis = f"one ladder, {', '.join(shared)}"
    return Comparison("games", a["_name"], b["_name"], basis, diffs, verdict(diffs[0], basis))


def match_evidence(found: Comparison, a: dict[str, Any], b: dict[str, Any],
                   matches: list[dict[str, Any]]) -> None:
    """A match between the two runs' models (the one with the most games) as direct
    evidence: a note with its score, Elo difference and the ladder's z, and the two game
    Elos refitted with its games (one BTD fit, the ladder's shared error in it) as the
    verdict's difference."""
    models = (a["model"], b["model"])
    played = [m for m in matches if m.get("complete") and m.get("score") and models[0] !=
              models[1] and {m["first"]["model"], m["second"]["model"]} == set(models)]
    if not played:
        return
    m = max(played, key=lambda m: (m["games"], m.get("_file", "")))
    first_is_a = m["first"]["model"] == models[0]
    found.notes.append(
        f"direct evidence: match {m.get('_file', '')} ({m['games']} games, {m['pairs']} "
        f"pairs): {m['first']['model']} - {m['second']['model']} "
        f"{elo_difference_text(match_elo(m, reference_nu()))}")
    plays = (a, b) if first_is_a else (b, a)
    missing = why_not(plays[0], plays[1], models)
    if missing or Condition.STANDARD.value not in found_conditions(a, b):
        why = missing or "no standard games in both runs"
        found.notes.append(f"not combined with the ladder route: {why}")
        return
    wdl = m["wdl"]
    try:
        check = ladder_check(m, plays[0], plays[1], (wdl[0], wdl[1], wdl[2]))
    except (KeyError, TypeError, ValueError, IndexError, FitError) as exc:  # an older file
        found.notes.append(f"not combined with the ladder route: the play results cannot be "
                           f"read for it ({type(exc).__name__}: {exc})")
        return
    found.notes.append(f"the ladder predicted a score of {check['predicted']['score']:.3f} "
                       f"for {m['first']['model']}, measured {m['score']['value']:.3f}: "
                       f"z = {check['z']:+.2f}")
    joint = check["ratings"]["with_match"]
    ra, rb = (joint[0], joint[1]) if first_is_a else (joint[1], joint[0])
    sd = check["difference_with_match"]["sd"]
    combined = normal_difference("game_elo_with_match", ra, rb, sd,
                                 found.differences[0].n + m["games"],
                                 "normal; one BTD fit of both runs' games and the match's")
    found.differences.insert(0, combined)
    found.basis += f"; with match {m.get('_file', '')}"
    found.verdict = verdict(combined, found.basis)


def found_conditions(a: dict[str, Any], b: dict[str, Any]) -> set[str]:
    """The start conditions both play runs have."""
    return set(a["conditions"]) & set(b["conditions"])


def _own(total_sd: float, condition: dict[str, Any]) -> float:
    """A game Elo's own part: its total sd without the ladder's."""
    ladder_sd = float((condition.get("ladder") or {}).get("sd") or 0.0)
    return math.sqrt(max(total_sd ** 2 - ladder_sd ** 2, 0.0))


def table(c: Comparison) -> str:
    """The comparison as printed: one row per metric, then the verdict."""
    lines = [f"A: {c.a}", f"B: {c.b}", f"({c.basis})", "",
             f"{'metric':<22}{'A':>10}{'B':>10}{'B - A':>10}   90% interval"]
    for d in c.differences:
        k = digits(d.metric)
        extra = ""
        if d.mcnemar:
            extra = f"  (McNemar: A only {d.mcnemar['only_a']}, B only {d.mcnemar['only_b']})"
        lines.append(f"{d.metric:<22}{d.a:>10.{k}f}{d.b:>10.{k}f}{d.diff:>+10.{k}f}   "
                     f"[{d.lo:+.{k}f}, {d.hi:+.{k}f}]".ljust(75) + f"p {_p(d.p)}{extra}")
    for key, group in c.by.items():  # the verdict's metric; the JSON has every metric
        k = digits(VERDICT_METRIC)
        cells = ", ".join(f"{v} {d.diff:+.{k}f} [{d.lo:+.{k}f}, {d.hi:+.{k}f}]"
                          for v, ds in group.items() for d in ds if d.metric == VERDICT_METRIC)
        lines.append(f"  {VERDICT_METRIC} by {key}: {cells}")
    lines += [*(f"note: {n}" for n in c.notes), "", c.verdict]
    return "\n".join(lines)

"""A world-model run: ask the three tests' prompts through the cache, score them, and write
the result, report and the figure of illegal answers by type."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import chess
import numpy as np

from chess_eval.benchmark.core.header import Kind, write_result
from chess_eval.benchmark.core.progress import Progress
from chess_eval.benchmark.core.prompts import TEMPLATES
from chess_eval.benchmark.core.runner import Outcome, ask_all
from chess_eval.benchmark.core.scoring import NOT_APPLICABLE, UNSCORED, Item, score_item
from chess_eval.benchmark.model import cost
from chess_eval.benchmark.model.cost import Price
from chess_eval.benchmark.model.inflight import InFlight
from chess_eval.benchmark.players.player import Player
from chess_eval.benchmark.question.answers import ILLEGAL_CATEGORIES, Category
from chess_eval.benchmark.question.questions import Question
from chess_eval.benchmark.stats.elo import LEVEL
from chess_eval.benchmark.stats.mcnemar import mcnemar_p
from chess_eval.benchmark.worldmodel.prompts import (
    CHOOSE_TEMPLATE,
    LIST_TEMPLATE,
    MIRROR,
    MOVE_TEMPLATE,
    Listed,
    choose_prompt,
    chosen_claim,
    list_prompt,
    mirrored,
    parse_list,
)
from chess_eval.benchmark.worldmodel.result import WorldModelResult
from chess_eval.benchmark.worldmodel.stats import (
    hypothesis,
    mcnemar_n_for_power,
    mcnemar_power,
    paired_mean,
    pooled_ratio,
    rubric,
    trend,
    wilson,
)
from chess_eval.cluster import ClusterSettings
from chess_eval.figures import save_figure
from chess_eval.files import atomic_write
from chess_eval.kvstore import JsonStore
from chess_eval.position import mirror_move

EQUAL_CP = 10  # mirrored answers this close in cp loss are equally good


@dataclass(frozen=True)
class WorldModelConfig:
    """How the tests are asked."""

    temperatures: tuple[float, ...]  # of the temperature test
    base: float  # the temperature of the self-consistency and symmetry prompts
    concurrency: int  # requests in flight
    breaker: int  # infrastructure failures in a row that stop the run
    seed: int  # seed of the bootstrap intervals
    cluster: ClusterSettings | None = None  # where a Stockfish player's answers are computed
    baseline: bool = False  # a baseline player: legal by construction, so no score
    price: Price | None = None  # --price, for replies whose cost the server does not report
    # Ask the model's preflight before its first request (an Inspect eval's model is made and
    # checked by Inspect: a preflight there is a request bought for nothing).
    preflight: bool = True


@dataclass
class Answers:
    """Everything the tests were answered."""

    original: list[Item] = field(default_factory=list)  # single move, base temperature
    mirror: list[Item] = field(default_factory=list)  # the same on the mirrored positions
    by_temperature: dict[float, list[Item]] = field(default_factory=dict)
    lists: dict[str, Listed] = field(default_factory=dict)  # prompt A, by question id
    chosen: dict[str, Item] = field(default_factory=dict)  # prompt B, by question id
    infra: int = 0  # requests that failed for infrastructure reasons
    truncated_lists: int = 0
    replies: list[dict[str, Any]] = field(default_factory=list)  # every reply: tokens, cost


def _ask(player: Player, template: str, render: Callable[[Question], str],
         questions: list[Question], cache: JsonStore, config: WorldModelConfig,
         progress: Progress, replies: list[dict[str, Any]],
         gate: InFlight | None) -> list[Outcome]:
    outcomes = []
    for o in ask_all(player, template, render, questions, cache, config.concurrency,
                     config.breaker, config.cluster, gate, config.preflight):
        outcomes.append(o)
        if o.reply is not None:
            replies.append(asdict(o.reply))
        progress.update(Category.INFRA if o.reply is None else "answered", o.cached)
    return sorted(outcomes, key=lambda o: o.question.id)


def _items(outcomes: list[Outcome]) -> list[Item]:
    return [score_item(o.question, o.reply.text if o.reply else None, o.infra_error,
                       o.prompt, o.reply.finish_reason if o.reply else None) for o in outcomes]


def ask_tests(players: Callable[[float], Player], questions: list[Question], cache: JsonStore,
              config: WorldModelConfig, gate: InFlight | None = None) -> Answers:
    """Ask every prompt of the three tests (cached answers are reused; `gate`: the run's
    requests in flight)."""
    base = players(config.base)
    # Original, mirror, list A, choice B (at most), and each temperature but the base one.
    total = len(questions) * (4 + sum(t != config.base for t in config.temperatures))
    progress = Progress(total, f"worldmodel {base.id[:30]}", kinds=("answered", Category.INFRA))
    out = Answers()
    move = TEMPLATES[MOVE_TEMPLATE]
    try:
        seen = (cache, config, progress, out.replies, gate)  # where answers come from and go
        out.original = _items(_ask(base, MOVE_TEMPLATE, move, questions, *seen))
        out.mirror = _items(_ask(base, MOVE_TEMPLATE, move, [mirrored(q) for q in questions],
                                 *seen))
        for t in config.temperatures:
            out.by_temperature[t] = out.original if t == config.base else _items(
                _ask(players(t), MOVE_TEMPLATE, move, questions, *seen))
        for o in _ask(base, LIST_TEMPLATE, list_prompt, questions, *seen):
            if o.reply is None:
                out.infra += 1
            elif o.reply.finish_reason == "length":
                # Cut off: a failure like any other, read as an empty list (every move missed)
                out.truncated_lists += 1
                out.lists[o.question.id] = parse_list("", o.question.board())
            else:
                out.lists[o.question.id] = parse_list(o.reply.text, o.question.board())
        listed = [q for q in questions if out.lists.get(q.id) and out.lists[q.id].claimed]
        chosen = _ask(base, CHOOSE_TEMPLATE,
                      lambda q: choose_prompt(q, out.lists[q.id].claimed), listed, *seen)
        out.chosen = {i.id: i for i in _items(chosen)}
    finally:
        progress.close()
    items = out.original + out.mirror + list(out.chosen.values()) + [
        i for t, items in out.by_temperature.items() if t != config.base for i in items]
    out.infra += sum(i.category == Category.INFRA for i in items)
    return out


def merged(parts: list[Answers]) -> Answers:
    """Answers asked a few positions at a time (the Inspect task's samples) as one run's, in
    the order ask_tests gives them (by question id), so every figure is the run's."""
    def by_id(items: Iterable[Item]) -> list[Item]:
        return sorted(items, key=lambda i: i.id)
    out = Answers()
    out.original = by_id(i for p in parts for i in p.original)
    out.mirror = by_id(i for p in parts for i in p.mirror)
    temperatures = parts[0].by_temperature if parts else {}
    out.by_temperature = {t: by_id(i for p in parts for i in p.by_temperature[t])
                          for t in temperatures}
    out.lists = dict(sorted(((k, v) for p in parts for k, v in p.lists.items()),
                            key=lambda kv: kv[0]))
    out.chosen = dict(sorted(((k, v) for p in parts for k, v in p.chosen.items()),
                             key=lambda kv: kv[0]))
    out.infra = sum(p.infra for p in parts)
    out.truncated_lists = sum(p.truncated_lists for p in parts)
    out.replies = [r for p in parts for r in p.replies]
    return out


def _scored(items: list[Item]) -> list[Item]:
    return [i for i in items if i.category not in UNSCORED]


def self_consistency(ans: Answers, seed: int) -> dict[str, Any]:
    """Prompt A's precision and recall; how often B is in A's list, and legal."""
    lists = list(ans.lists.values())
    claims = np.array([len(x.claimed) for x in lists], float)
    right = np.array([len(x.legal) for x in lists], float)
    truth = np.array([len(x.truth) for x in lists], float)
    chosen = _scored(list(ans.chosen.values()))
    in_list = [chosen_claim(chess.Move.from_uci(i.move) if i.move else None, i.text)
               in ans.lists[i.id].claimed for i in chosen]
    return {"positions": len(lists), "truncated_lists": ans.truncated_lists,
            "empty_lists": int((claims == 0).sum()),
            "precision": pooled_ratio(right, claims, seed),
            "recall": pooled_ratio(right, truth, seed + 1),
            "exact_lists": wilson(sum(x.exact for x in lists), len(lists)),
            "b_in_a": wilson(sum(in_list), len(in_list)),
            "b_legal": wilson(sum(i.category == Category.LEGAL for i in chosen), len(chosen))}


# The "2% illegal-rate difference" of the promptfoo gpt5-chess write-up, as (only the
# original illegal, only the mirror
# illegal) rates of a pair: all one way, and with discordance both ways.
DIFFERENCES = ((0.02, 0.0), (0.03, 0.01))


def symmetry(ans: Answers, seed: int) -> dict[str, Any]:
    """How often the mirrored answers correspond; paired differences (Bonferroni, 2)."""
    level = 1 - (1 - LEVEL) / 2
    mirror = {i.id: i for i in ans.mirror}
    pairs = [(x, mirror[x.id + MIRROR]) for x in ans.original
             if x.category not in UNSCORED and mirror[x.id + MIRROR].category not in UNSCORED]
    agree = [x.move is not None and m.move is not None
             and mirror_move(chess.Move.from_uci(x.move)).uci() == m.move for x, m in pairs]
    # Two different moves of equal worth are no contradiction: an engine's search is not
    # colour-symmetric either, and picks among equals by move order.
    same = [a or (x.category == Category.LEGAL and m.category == Category.LEGAL
                  and abs((x.cp_loss or 0) - (m.cp_loss or 0)) <= EQUAL_CP)
            for a, (x, m) in zip(agree, pairs, strict=True)]
    legal = Category.LEGAL
    illegal = np.array([(x.category != legal) - (m.category != legal) for x, m in pairs], float)
    both = [(x, m) for x, m in pairs if x.category == legal and m.category == legal]
    loss = np.array([(x.cp_loss or 0) - (m.cp_loss or 0) for x, m in both], float)
    only_x, only_m = int((illegal > 0).sum()), int((illegal < 0).sum())
    return {"pairs": len(pairs), "agree": wilson(sum(agree), len(pairs)),
            "equivalent": wilson(sum(same), len(pairs)),
            "illegal_mcnemar": {
                "original_only": only_x, "mirror_only": only_m,
                "p_value": round(mcnemar_p(only_x, only_m), 6),
                "power": {f"{a:.0%} vs {b:.0%}": round(mcnemar_power(len(pairs), a, b), 4)
                          for a, b in DIFFERENCES},
                "n_for_90_power": {f"{a:.0%} vs {b:.0%}": mcnemar_n_for_power(a, b)
                                   for a, b in DIFFERENCES},
                "note": "exact McNemar test on the pairs where one answer is illegal and the "
                        "other not; power for a 2% difference in the illegal rate (as the promptfoo"
                        " gpt5-chess write-up asks), "
                        "computed for the pairs of this run"},
            "illegal_difference": paired_mean(illegal, level, seed),
            "cp_loss_difference": paired_mean(loss, level, seed + 1),
            "level": level, "note": "differences are original minus mirror; intervals are "
            f"paired bootstraps at {level:.0%} each (Bonferroni for 2 comparisons)"}


def temperature(ans: Answers) -> dict[str, Any]:
    """The illegal rate at each temperature (Bonferroni over them) and the trend test."""
    temps = sorted(ans.by_temperature)
    level = 1 - (1 - LEVEL) / max(1, len(temps))
    rows, k, n = [], [], []
    for t in temps:
        scored = _scored(ans.by_temperature[t])
        k.append(sum(i.category != Category.LEGAL for i in scored))
        n.append(len(scored))
        rows.append({"temperature": t, **wilson(k[-1], n[-1], level)})
    return {"levels": rows, "level": level, "trend": trend(temps, k, n)}


def t0_answers(ans: Answers, base: float) -> list[Item]:
    """The scored single-move answers at T = 0: the original and mirrored positions when the
    base temperature is 0, else the temperature test's T = 0 answers."""
    items = ans.original + ans.mirror if base == 0 else ans.by_temperature.get(0.0, [])
    return _scored(items)


def summarise(ans: Answers, config: WorldModelConfig) -> dict[str, Any]:
    """The tests' figures, the rubric score and the hypothesis test."""
    sc, sym = self_consistency(ans, config.seed), symmetry(ans, config.seed + 7)
    t0 = t0_answers(ans, config.base)
    illegal = [i for i in t0 if i.category != Category.LEGAL]
    rate = len(illegal) / len(t0) if t0 else None
    # The test counts positions, not answers: a position and its mirror are not independent.
    positions = {i.id.removesuffix(MIRROR) for i in t0}
    failed = {i.id.removesuffix(MIRROR) for i in illegal}
    per_position = 2 if config.base == 0 else 1  # t0_answers: original and mirror at T = 0
    failures = [1 - x["value"] for x in (sc["b_in_a"], sc["precision"], sym["equivalent"])
                if x.get("value") is not None]
    return {"self_consistency": sc, "symmetry": sym, "temperature": temperature(ans),
            "t0": {"answers": len(t0), "illegal": len(illegal), "rate": rate,
                   "taxonomy": {c: sum(i.category == c for i in illegal)
                                for c in ILLEGAL_CATEGORIES}},
            "score": ({"score": None, "note": NOT_APPLICABLE} if config.baseline
                      else rubric(rate, max(failures) if failures else None)),
            "hypothesis": hypothesis(
                len(failed), len(positions), sc["b_in_a"]["n"] - sc["b_in_a"]["k"],
                sc["b_in_a"]["n"], sym["pairs"] - sym["equivalent"]["k"], sym["pairs"],
                per_position),
            "infra": ans.infra,
            "complete": ans.infra == 0,
            "usage": cost.summary(ans.replies, config.price)}


def _pct(x: dict[str, Any]) -> str:
    if x.get("value") is None:
        return "none"
    return f"{x['value']:.1%} [{x['lo']:.1%}, {x['hi']:.1%}]"


def summary(result: dict[str, Any]) -> str:
    """The terminal summary."""
    sc, sym, t0 = result["self_consistency"], result["symmetry"], result["t0"]
    temps = "; ".join(f"T={r['temperature']:g} {_pct(r)}" for r in
                      result["temperature"]["levels"])
    hyp, score = result["hypothesis"], result["score"]
    trend_ = result["temperature"]["trend"]
    return "\n".join([
        f"model {result['model']}: {result['positions']} positions",
        f"  self-consistency: list precision {_pct(sc['precision'])}, recall "
        f"{_pct(sc['recall'])}; B in A's list {_pct(sc['b_in_a'])}, B legal {_pct(sc['b_legal'])}",
        f"  symmetry: mirrored answers correspond {_pct(sym['agree'])}, are as good "
        f"(within {EQUAL_CP} cp) {_pct(sym['equivalent'])}; illegal difference "
        f"{_num(sym['illegal_difference'])}, cp-loss difference {_num(sym['cp_loss_difference'])}",
        f"  temperature (illegal rate, {result['temperature']['level']:.1%} each): {temps}; "
        f"trend p = {trend_['p'] if trend_['p'] is not None else 'n/a'}",
        f"  illegal at T = 0: {t0['illegal']} of {t0['answers']}; world-model score "
        + (f"{score['score']} (illegal part {score.get('by_illegal_rate')}, consistency part "
           f"{score.get('by_consistency')})" if score["score"] is not None
           else score["note"]),
        f"  H0 {hyp['h0']}: {'rejected' if hyp['reject_h0'] else 'not rejected'} (p = "
        + ", ".join(f"{k} {t['p_value']}" for k, t in hyp["parts"].items())
        + "); power at this n against true rates of "
        + ", ".join(f"{rate}: {power:.0%}" for rate, power in hyp["power"].items())
        + (f"; {hyp['note']}" if hyp["note"] else ""),
        *([f"  cost: {cost.text(result['usage'])}"]
          if cost.shown(result.get("usage")) else [])])


def _num(x: dict[str, Any]) -> str:
    if x.get("value") is None:
        return "none"
    return f"{x['value']:+.3f} [{x['lo']:+.3f}, {x['hi']:+.3f}]"


def markdown(result: dict[str, Any]) -> str:
    """The report: every figure, the rubric's thresholds, the test and the figure."""
    score = result["score"]
    out = [f"# World model: {result['model']}", "",
           f"Questions `{result['questions']}` (sha256 {result['questions_sha256'][:12]}), "
           f"{result['positions']} positions (--seed={result['settings']['seed']}); "
           f"settings `{json.dumps(result['settings'], sort_keys=True)}`.", "",
           "```", summary(result), "```", "", "## Score", "",
           f"Score {score['score']}: the lower of its two parts." if score["score"] is not None
           else f"Score {score['note']}."]
    out += [f"- {k}: {v}" for k, v in score.get("thresholds", {}).items()]
    hyp = result["hypothesis"]
    out += ["", "## Hypothesis test", "", f"- H0: {hyp['h0']}; H1: {hyp['h1']}.",
            f"- An intersection-union test at alpha {hyp['alpha']}: H0 is rejected only when "
            "every exact one-sided binomial test rejects; the power is their product: "
            f"{hyp['power']} against those true rates of all. "
            f"{'Rejected.' if hyp['reject_h0'] else 'Not rejected.'} {hyp['note']}"]
    out += [f"- {name}: {t['k']} of {t['n']} against H0 rate {t['h0_rate']:.0%}, p = "
            f"{t['p_value']}; power {t['power']}; n for 90% power {t['n_for_90_power']}"
            for name, t in hyp["parts"].items()]
    out += ["- The illegal part counts positions (a position fails when its original or its "
            "mirrored answer is illegal): the two answers of a position are not independent "
            "trials."]
    mc = result["symmetry"]["illegal_mcnemar"]
    out += ["", "## Original against mirror", "",
            f"- Exact McNemar test of the illegal rate over {result['symmetry']['pairs']} "
            f"pairs: {mc['original_only']} illegal only in the original, {mc['mirror_only']} "
            f"only in the mirror, p = {mc['p_value']}.",
            f"- Power at this n to detect a 2% difference (the aim of the promptfoo gpt5-chess "
            f"write-up): {mc['power']}; "
            f"pairs needed for 90%: {mc['n_for_90_power']}."]
    out += ["", f"![breakdown]({result['figure']})", ""]
    return "\n".join(out)


def figure(result: dict[str, Any], stem: Path) -> Path:
    """The world-model breakdown: illegal types, temperature, consistency, symmetry."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(10, 8))
    tax = result["t0"]["taxonomy"]
    ax = axes[0][0]
    if sum(tax.values()):
        kinds = [k for k in tax if tax[k]]
        ax.pie([tax[k] for k in kinds], labels=kinds, autopct="%1.0f%%")
    else:
        ax.text(0.5, 0.5, "no illegal answer", ha="center", va="center")
        ax.axis("off")
    ax.set_title(f"Illegal answers at T = 0 by type ({result['t0']['illegal']} of "
                 f"{result['t0']['answers']})")
    _bars(axes[0][1], [(f"T={r['temperature']:g}", r) for r in
                       result["temperature"]["levels"]],
          f"Illegal rate by temperature ({result['temperature']['level']:.1%} intervals)")
    sc = result["self_consistency"]
    _bars(axes[1][0], [("A precision", sc["precision"]), ("A recall", sc["recall"]),
                       ("B in A", sc["b_in_a"]), ("B legal", sc["b_legal"])],
          "Self-consistency (90% intervals)")
    _bars(axes[1][1], [("mirrored answers\ncorrespond", result["symmetry"]["agree"]),
                       (f"as good\n(within {EQUAL_CP} cp)", result["symmetry"]["equivalent"])],
          "Symmetry (90% interval)")
    fig.suptitle(f"{result['model']}: world-model breakdown (score {result['score']['score']})")
    return save_figure(fig, stem.with_name(f"{stem.name}-worldmodel.png"))


def _bars(ax: Any, rows: list[tuple[str, dict[str, Any]]], title: str) -> None:
    names = [name for name, _ in rows]
    values = [r.get("value") or 0.0 for _, r in rows]
    lo = [v - (r.get("lo") or v) for v, (_, r) in zip(values, rows, strict=True)]
    hi = [(r.get("hi") or v) - v for v, (_, r) in zip(values, rows, strict=True)]
    ax.bar(names, values, yerr=[lo, hi], capsize=4, color="tab:blue")
    ax.set(title=title, ylim=(0, 1.05))


def write_run(out: Path, name: str,
              record: WorldModelResult) -> tuple[WorldModelResult, list[Path]]:
    """The figure, JSON and markdown report; the record naming its figure, and the paths."""
    png = figure(record.as_dict(), out / name)
    record = replace(record, figure=png.name)
    result = record.as_dict()
    paths = [out / f"{name}.json", out / f"{name}.md", png]
    write_result(paths[0], Kind.WORLDMODEL, result,
                 None if record.complete else record.stopped or f"{record.infra} requests "
                 "failed for infrastructure reasons")
    with atomic_write(paths[1]) as handle:
        handle.write(markdown(result))
    return record, paths

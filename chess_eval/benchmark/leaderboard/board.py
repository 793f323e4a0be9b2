"""The leaderboard: static, games, puzzle and world-model results per model, each Elo with its
interval, the probability of being stronger than the next entry, a rank interval and
lichess-bench's low-confidence dagger; markdown, SVG and PNG.

Scales differ and are never mixed: game Elo is on the ladder's scale (zero at the random
mover), puzzle Elo on Lichess's puzzle-rating scale, the human-move Elo on its own scale (the
rating of the Lichess players whose moves in these positions lose as much: a move-quality
scale, not a Lichess game rating; the one Lichess game figure is the crosswalk's, benchmark.human).
Each is ranked in its own table. Game Elos are ranked on the reference
scale, the Stockfish 17.1 ladder's; a run on Stockfish 15.1's ladder is shown on it through
the measured map (data/ladders/ladder_map.json), flagged "converted", its interval widened
by the map's error. Play runs rated on any other ladder, or on an earlier ladder with another
zero (ladder 1 fixed Stockfish at 1,000 nodes at 2600), stay readable: they are listed apart,
each marked with its ladder, and not ranked. The rows are also written machine-readable
(leaderboard.json and .csv: one row per run and scale). Rank figures use a normal
approximation of each 90% interval; an estimate bounded on one side only ("below ~N") is
placed by its bound and not ranked.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from chess_eval.benchmark.arena.game import PLY_CAP
from chess_eval.benchmark.arena.ladder import ladder_for, reference_ladder, reference_nu
from chess_eval.benchmark.arena.ladder_check import check_of, elo_difference_text, match_elo
from chess_eval.benchmark.arena.versions import version_of
from chess_eval.benchmark.core.data import LADDER_MAP
from chess_eval.benchmark.core.header import Kind, read_result
from chess_eval.benchmark.core.results import elo_text, load_results, result_files
from chess_eval.benchmark.core.scoring import SUMMARY_METRICS, illegal_text, metric_digits
from chess_eval.benchmark.human.anchors import HUMAN_DIR, TimeControl
from chess_eval.benchmark.human.block import human_block, human_metrics, human_text
from chess_eval.benchmark.human.crosswalk import Crosswalk, load_crosswalks
from chess_eval.benchmark.leaderboard.paired import PairedPart, joint_draws, paired_part
from chess_eval.benchmark.leaderboard.ranking import Rank, Shared, ranks, ranks_of_draws
from chess_eval.benchmark.leaderboard.testsets import (
    previous_results,
    previous_set_text,
    previous_sets,
)
from chess_eval.benchmark.question.answers import ILLEGAL_CATEGORIES
from chess_eval.benchmark.question.questions import Question, load_questions
from chess_eval.benchmark.stats.elo import LEVEL, Z
from chess_eval.benchmark.stats.ladder_map import LadderMap, load_map
from chess_eval.engine import REFERENCE_ENGINE
from chess_eval.errors import DataError
from chess_eval.figures import save_figure
from chess_eval.files import atomic_write, sha256_file

log = logging.getLogger(__name__)

# The committed map from Stockfish 15.1's ladder to the reference ladder.
MAP_PATH = LADDER_MAP
DAGGER_N = 30  # lichess-bench: fewer observations than this are low confidence ...
DAGGER_HALF_95 = 100.0  # ... and so is a 95% interval wider than +-this
Z95 = 1.959964
SPAN = 1500.0  # a figure panel shows at most +-this around the entries' median; beyond: arrows
DAGGER_RULE = (f"† low confidence, lichess-bench's rule: fewer than {DAGGER_N} games, puzzles or "
               f"positions, or a 95% interval wider than +-{DAGGER_HALF_95:.0f} Elo (ours are "
               "90% intervals, widened by 1.96/1.645 for the rule); an estimate bounded on one "
               "side only is always marked")


@dataclass(frozen=True)
class Entry:
    """One rated line of a table."""

    model: str
    label: str  # what tells the model's runs apart: prompt, condition, ...
    elo: dict[str, Any]  # an Estimate's JSON form
    n: int  # games, puzzles or positions behind it
    cells: tuple[str, ...] = ()  # the table's other columns
    ladder: LadderPart | None = None  # game Elos: the part the ladder's error contributes
    paired: PairedPart | None = None  # static Elos: what a paired resample recomputes
    protocol: str = "fen"  # how the model was asked (a model's protocols side by side)
    converted: bool = False  # a game Elo read on another ladder, shown through the map
    cost: float | None = None  # what the run cost (a play run: per game)
    # A game Elo on Lichess's scale per time control, where the anchors place it (benchmark.human).
    human: dict[str, Any] | None = None


@dataclass(frozen=True)
class LadderPart:
    """How a game Elo depends on the ladder it was measured against."""

    key: str  # the ladder's identity (its file's digest)
    weights: tuple[float, ...]  # dR/dE per rung
    sd: float  # the ladder's part of the Elo's sd
    cov: tuple[tuple[float, ...], ...]  # the rungs' covariance


ZERO_RUNG = "random"  # the spec's name of the current ladders' zero: the random mover at 0
# The table of static runs on a test set committed before the current questions.csv: their
# human-move Elos answered other positions, so they are listed apart, not ranked.
PREVIOUS = "previous test set"
EARLIER = "earlier ladders"  # the table of play runs rated on a ladder with another zero, or
# on an engine's ladder the map does not convert from (across engines the ladders disagree:
# players of other families read higher on the Stockfish 17.1 ladder than on 15.1's;
# docs/games-and-ladder.md, one reference scale)
NOT_RANKED = (EARLIER, PREVIOUS)  # tables listed, never ranked


def ladder_zero(ladder: dict[str, Any]) -> str:
    """The rung a play run's ladder fixed (the one without variance), as 'NAME = ELO'; '' when
    the result does not say."""
    names, elos, cov = ladder.get("names"), ladder.get("elos"), ladder.get("cov")
    if not names or not elos or not cov:
        return ""
    fixed = [i for i, row in enumerate(cov) if row[i] == 0]
    return f"{names[fixed[0]]} = {elos[fixed[0]]}" if len(fixed) == 1 else ""


def on_current_scale(result: dict[str, Any]) -> bool:
    """Whether a play run was rated on a ladder whose zero is the random mover at 0."""
    name, _, elo = ladder_zero(result.get("ladder", {})).partition(" = ")
    return name.split("@")[0] == ZERO_RUNG and elo == "0"


def primary_ladder(games: list[dict[str, Any]]) -> str:
    """The engine of the ladder whose runs are ranked: the reference ladder's."""
    return REFERENCE_ENGINE


def apart(result: dict[str, Any], primary: str, ladder_map: LadderMap | None = None) -> str:
    """Why a play run is listed apart from the ranked game Elos ('' when it is not): an
    earlier ladder's zero, or another engine's ladder than `primary` that the map does not
    convert from."""
    if not on_current_scale(result):
        return f"earlier ladder, zero {ladder_zero(result.get('ladder', {})) or 'unknown'}"
    engine = result["ladder"].get("engine", "")
    if engine == primary or converts(result, ladder_map):
        return ""
    return f"the {engine} ladder"


def converts(result: dict[str, Any], ladder_map: LadderMap | None) -> bool:
    """Whether a play run's game Elos are shown on the reference scale through the map."""
    return ladder_map is not None and on_current_scale(result) \
        and result["ladder"].get("engine", "") == ladder_map.source


NA = "n/a"  # a world-model score that does not apply (a baseline: legal by construction)
UNRANKED = ("bounded on one side only (\"below ~N\", \"above ~N\") or with an open end "
            "(\">N\"), placed by the estimate or the bound")


def place(e: dict[str, Any]) -> float:
    """Where an estimate sits on its scale: its mean, else its bound (-inf for none)."""
    for key in ("mean", "hi" if e.get("kind") == "below" else "lo", "hi", "lo"):
        if e.get(key) is not None:
            return float(e[key])
    return float("-inf")


def _rankable(e: dict[str, Any]) -> bool:
    return e.get("kind") == "interval" and e.get("lo") is not None and e.get("hi") is not None


def dagger(entry: Entry) -> bool:
    """lichess-bench's low-confidence mark."""
    if not _rankable(entry.elo):
        return True
    half95 = (entry.elo["hi"] - entry.elo["lo"]) / 2 * Z95 / Z
    return entry.n < DAGGER_N or half95 > DAGGER_HALF_95


def ranked(entries: list[Entry], seed: int = 0,
           draws: list[tuple[Entry, Rank]] | None = None) -> list[tuple[Entry, str, str]]:
    """Entries strongest first, each with P(stronger than the next ranked one) and its 90%
    rank interval among the ranked entries ('' when not ranked); `draws`: rank_draws of
    the same entries, when the caller has them already ([]: rank none)."""
    entries = sorted(entries, key=lambda e: (-place(e.elo), e.model, e.label))
    stats = {}
    for e, r in rank_draws(entries, seed) if draws is None else draws:
        above = "" if r.above_next is None else f"{r.above_next:.2f}"
        span = str(r.lo) if r.lo == r.hi else f"{r.lo}-{r.hi}"
        stats[id(e)] = (above, span)
    return [(e, *stats.get(id(e), ("", ""))) for e in entries]


def rank_draws(entries: list[Entry], seed: int = 0) -> list[tuple[Entry, Rank]]:
    """The rankable entries, strongest first, each with its Rank from joint posterior draws
    (a shared ladder drawn once per draw)."""
    able = sorted((e for e in entries if _rankable(e.elo)),
                  key=lambda e: (-place(e.elo), e.model, e.label))
    if not able:
        return []
    sds = [max((e.elo["hi"] - e.elo["lo"]) / (2 * Z), 1e-6) for e in able]
    shared = _shared(able)
    if shared is not None:  # each model's own part; the ladder's is drawn once per draw
        sds = [float(np.sqrt(max(sd ** 2 - (e.ladder.sd if e.ladder else 0) ** 2, 1e-12)))
               for sd, e in zip(sds, able, strict=True)]
    keys = [f"{i}" for i in range(len(able))]
    means = [e.elo["mean"] for e in able]
    parts = [e.paired for e in able if e.paired is not None]
    sample = joint_draws(parts, seed) if len(parts) == len(able) > 1 else None
    if sample is not None:  # static runs on the same questions: resampled together
        return [(able[int(r.name)], r) for r in ranks_of_draws(keys, means, sample)]
    return [(able[int(r.name)], r) for r in ranks(keys, means, sds, seed, shared=shared)]


def _shared(entries: list[Entry]) -> Shared | None:
    """The ladder the game Elos share, when every one of them was measured against the same
    ladder; None (independent draws) otherwise."""
    parts = [e.ladder for e in entries if e.ladder is not None]
    if not parts or len(parts) < len(entries) or len({p.key for p in parts}) > 1:
        return None
    return Shared(np.array([p.weights for p in parts]), np.array(parts[0].cov))


def _table(head: list[str], entries: list[Entry], seed: int, rank: bool = True) -> list[str]:
    """The ranked entries, numbered; then, apart and unnumbered, those that cannot be ranked
    (bounded on one side only, or `rank` False): a bound is no place in an order."""
    rows = ranked(entries, seed, None if rank else [])
    lines = []
    numbered = [row for row in rows if row[2]]
    if numbered:
        lines += ["| # | " + " | ".join(head) + " | Elo (90%) | P(> next) | rank (90%) |",
                  "|" + "---|" * (len(head) + 4)]
        for k, (e, above, span) in enumerate(numbered, 1):
            lines.append(f"| {k} | {e.model} | {e.label} | " + " | ".join(e.cells) +
                         f"{' | ' if e.cells else ''}{_elo_cell(e)} | {above} | {span} |")
    apart = [e for e, _, span in rows if not span]
    if apart:
        if rank:
            lines += [*([""] if lines else []), f"Not ranked: {UNRANKED}.", ""]
        lines += ["| " + " | ".join(head) + " | Elo (90%) |", "|" + "---|" * (len(head) + 1)]
        lines += [f"| {e.model} | {e.label} | " + " | ".join(e.cells) +
                  f"{' | ' if e.cells else ''}{_elo_cell(e)} |" for e in apart]
    return lines


def _elo_cell(e: Entry) -> str:
    return elo_text(e.elo) + (" †" if dagger(e) else "")


def _kind_files(out: Path) -> dict[str, list[dict[str, Any]]]:
    """The JSON results of `play`, `puzzles` and `worldmodel` in a directory."""
    found: dict[str, list[dict[str, Any]]] = {"games": [], "puzzles": [], "worldmodel": [],
                                              "match": []}
    table_of = {Kind.PLAY: "games", Kind.PUZZLES: "puzzles", Kind.WORLDMODEL: "worldmodel",
                Kind.MATCH: "match"}
    for path in result_files(out):
        try:
            data = read_result(path, tuple(table_of))
        except DataError:
            continue  # load_results names every file that is no result
        try:  # read it as the table will: a file edited by hand is one warning
            _read_as_table(data)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            log.warning("skipping %s: not a well-formed %s result (%s %s)", path,
                        data["kind"], type(exc).__name__, exc)
            continue
        found[table_of[data["kind"]]].append(data)
    return found


def _read_as_table(data: dict[str, Any]) -> None:
    """Read a result as its table will (KeyError, TypeError, ... when it cannot be)."""
    if data["kind"] == Kind.PLAY:
        game_entries([data], "")
    elif data["kind"] == Kind.MATCH:
        head_to_head_rows([data], [])
    elif data["kind"] == "puzzles":
        puzzle_entries([data], data["settings"]["puzzles_sha256"])
    else:
        world_model_rows([data])
        (data["t0"]["taxonomy"], data["questions_sha256"], data["complete"])


def game_entries(results: list[dict[str, Any]], digest: str,
                 ladder_map: LadderMap | None = None,
                 crosswalks: list[Crosswalk] | None = None) -> list[Entry]:
    """One entry per complete condition of every play run (mid-game starts only on the same
    questions file); a run the map converts, on the reference scale; with `crosswalks`, its
    place on Lichess's scale as a last cell (blitz) and in `human` (every time control)."""
    out = []
    for r in results:
        for name, c in r["conditions"].items():
            if name == "midgame" and r.get("questions_sha256") != digest:
                log.info("leaving out %s's mid-game games: another questions file", r["_file"])
                continue
            if c["aborted"] or not c["games"]:
                continue
            part = None
            own = c.get("ladder", {})
            cov = own.get("cov") or r.get("ladder", {}).get("cov")
            if own.get("weights") and cov:  # the condition's own ladder, or the standard one
                digest = r["settings"].get("condition_ladders_sha256", {}).get(
                    name, r["settings"]["ladder_sha256"])
                part = LadderPart(f"{digest}:{own.get('measured_in', 'standard')}",
                                  tuple(own["weights"]), float(own["sd"]),
                                  tuple(map(tuple, cov)))
            protocol = r.get("protocol", "fen")
            label = name if protocol == "fen" else f"{name} ({protocol})"
            cap = (r.get("settings") or {}).get("ply_cap", PLY_CAP)
            # Games drawn early: a score the ladder's games (to the default cap) never met.
            label += f"; games drawn at ply {cap}" if cap < PLY_CAP else ""
            label += superseded(r)
            per_game = (r.get("usage") or {}).get("per_game") or {}
            elo, converted = c["elo"], converts(r, ladder_map)
            if converted and ladder_map is not None:
                # The map's error is the player's own: no longer the reference ladder's
                # shared part, so its draws are independent of the other runs'.
                elo, part = ladder_map.convert_elo(elo), None
                label = f"{label}; converted from {ladder_map.source}"
            cells: tuple[str, ...] = (str(c["games"]), f"{c['w']}/{c['d']}/{c['l']}",
                                      money(per_game.get("cost")))
            block = None if crosswalks is None else human_block(
                elo, REFERENCE_ENGINE, crosswalks, None,
                None if converted else c.get("ladder"))
            if crosswalks is not None:
                cells += (_blitz(block),)
            out.append(Entry(r["model"], label, elo, c["games"], cells, part,
                             protocol=protocol, converted=converted,
                             cost=per_game.get("cost"), human=block))
    return out


def superseded(result: dict[str, Any]) -> str:
    """'; ladder version 7 of 8' for a play run rated on a fit of its ladder that was
    refitted since (its Elo is that fit's reading); '' otherwise."""
    version = version_of(ladder_for(result["ladder"].get("engine", "")),
                         result.get("settings", {}).get("ladder_sha256"))
    if version is None or version.current:
        return ""
    return f"; ladder version {version.number} of {version.latest}"


def _blitz(block: dict[str, Any] | None) -> str:
    """The blitz statement, short: '~1,450 [1,420, 1,560]', 'at most ~1,550 (90%); scores
    ...', 'scores 2% [1%, 4%] against maia1 (...)', or '-' where there is none."""
    found = [tc for tc in (block or {}).get("time_controls", [])
             if tc["time_control"] == TimeControl.BLITZ]
    return found[0]["text"].replace("Lichess blitz ", "") if found else "-"


def puzzle_entries(results: list[dict[str, Any]], digest: str) -> list[Entry]:
    """One entry per puzzle run on the puzzle file with this digest."""
    other = sum(r["settings"]["puzzles_sha256"] != digest for r in results)
    if other:
        log.warning("left out %d puzzle run(s) on another puzzle file", other)
    return [Entry(r["model"], f"seed={r['settings']['seed']}", r["elo"], r["n"],
                  (str(r["n"]), f"{r['solved']}/{r['alternative']}/{r['failed']}",
                   elo_text(r["elo_lichess_rule"])))
            for r in results if r["settings"]["puzzles_sha256"] == digest and r["elo"]]


def static_entries(results: list[dict[str, Any]], kind: str,
                   questions: dict[str, Question] | None = None) -> list[Entry]:
    """One entry per static run, rated by its `kind` Elo (human or puzzle); with the
    questions, each carries what a paired rank draw recomputes its Elo from."""
    out = []
    for r in results:
        e = r["elo"].get(kind)
        if not e:
            continue
        cells = tuple(_short(r["intervals"].get(m), m) for m in SUMMARY_METRICS[:3]
                      + ("puzzle_solve_rate",))
        out.append(Entry(r["model"], r["prompt"], e, e["n"],
                         (str(r["n"]), *cells, illegal_text(r["world_model"]),
                          money((r.get("usage") or {}).get("cost"))),
                         paired=paired_part(r, kind, questions) if questions else None,
                         protocol=r.get("protocol", "fen"),
                         cost=(r.get("usage") or {}).get("cost")))
    return out


def money(x: float | None) -> str:
    """A cost as tables show it: '-' when no cost is known."""
    return "-" if x is None else f"{x:.4f}"


def _number(x: float | None, metric: str) -> str:
    """A metric's value as shown: rates with 3 decimals, cp losses and accuracies with 1."""
    return "" if x is None else f"{x:.{metric_digits(metric)}f}"


def by_model(tables: dict[str, list[Entry]], wm: list[dict[str, Any]]) -> list[str]:
    """One row per model: its estimate of each kind and its world-model score."""
    best: dict[tuple[str, str], Entry] = {}
    for key, entries in tables.items():
        for e in sorted(entries, key=lambda e: (-e.n, e.label)):
            # One row per model and protocol: a model's protocols side by side.
            name = e.model if e.protocol == "fen" else f"{e.model} ({e.protocol})"
            best.setdefault((name, key), e)
    scores = {r["model"]: _wm_score(r["score"]) for r in sorted(wm, key=lambda r: r["_file"])}
    models = sorted({m for m, _ in best} | set(scores))
    lines = ["| model | " + " | ".join(title for _, title in PANELS) + " | world model |",
             "|---|" + "---|" * (len(PANELS) + 1)]
    for m in models:
        cells = [elo_text(best[(m, k)].elo) + (" †" if dagger(best[(m, k)]) else "")
                 + _capped(best[(m, k)].label) if (m, k) in best else "" for k, _ in PANELS]
        lines.append(f"| {m} | " + " | ".join(cells) + f" | {scores.get(m, '')} |")
    return lines


def _capped(label: str) -> str:
    """' (games drawn at ply N)' where the row's games were cut short, else ''."""
    found = re.search(r"games drawn at ply \d+", label)
    return f" ({found.group(0)})" if found else ""


def _short(m: dict[str, float] | None, metric: str) -> str:
    return "" if not m else _number(m["value"], metric)


def _pct(x: dict[str, Any] | None) -> str:
    return "" if not x or x.get("value") is None else f"{x['value']:.1%}"


def world_model_rows(wm: list[dict[str, Any]]) -> list[str]:
    """The world-model table: the runs of the world-model tests, each with its score."""
    lines = ["| model | score | rests on | illegal at T = 0 | B in A's list | mirrored "
             "answers correspond | trend p | H0 rejected (p illegal, B outside A, mirror "
             "unequal; power at 0.5%) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in sorted(wm, key=lambda r: (r["model"], r["_file"])):
        h, p = r["hypothesis"], r["temperature"]["trend"]["p"]
        lines.append(
            f"| {r['model']} | {_wm_score(r['score'])} | worldmodel run, {r['positions']} "
            f"positions{_on_previous(r)} | {r['t0']['illegal']}/{r['t0']['answers']} | "
            f"{_pct(r['self_consistency']['b_in_a'])} | {_pct(r['symmetry']['agree'])} | "
            f"{'' if p is None else p} | {'yes' if h['reject_h0'] else 'no'} "
            f"(p {', '.join(str(t['p_value']) for t in h['parts'].values())}; "
            f"{h['power'].get('0.5%', '')}) |")
    if not wm:
        lines.append("| (no world-model run) | | | | | | | |")
    return lines


def _on_previous(r: dict[str, Any]) -> str:
    """' of <a previous test set>' for a run on an earlier committed set, else ''."""
    return f" of {r['_previous_set']}" if "_previous_set" in r else ""


def _wm_score(score: dict[str, Any]) -> str:
    """A world-model score as shown: n/a for a baseline, which is legal by construction."""
    return NA if score.get("score") is None else str(score["score"])


@dataclass(frozen=True)
class Board:
    """Every complete result in a directory that the leaderboard compares."""

    digest: str  # the questions file's SHA-256
    static: list[dict[str, Any]]  # static runs on that file
    games: list[dict[str, Any]]  # complete play runs
    primary: str  # the engine of the ladder whose runs are ranked (primary_ladder)
    puzzles: list[dict[str, Any]]  # puzzle runs on the puzzle file
    worldmodel: list[dict[str, Any]]  # complete world-model runs on the questions file
    tables: dict[str, list[Entry]]  # each Elo scale's entries: games, puzzles, human, ...
    ladder_map: LadderMap | None = None  # converts Stockfish 15.1's ladder to the reference
    # Complete head-to-head matches, a row each: the measured score beside the ladder's
    # prediction from the two players' play runs here (head_to_head_rows).
    head_to_head: tuple[dict[str, Any], ...] = ()
    matches: tuple[dict[str, Any], ...] = ()  # the complete match results behind them
    # Complete static runs on a test set committed before this one (previous_results).
    previous: tuple[dict[str, Any], ...] = ()


def collect(out: Path, questions: Path, puzzles: Path | None) -> Board:
    """Read and select the results in `out` (DataError when none is comparable); game Elos
    of Stockfish 15.1's ladder converted by the committed map (MAP_PATH) when it exists."""
    digest = sha256_file(questions)
    puzzle_digest = sha256_file(puzzles) if puzzles is not None and puzzles.exists() else ""
    static = load_results(out, digest)
    earlier = previous_results(out, digest)
    by_id = {q.id: q for q in load_questions(questions)} if len(static) > 1 else None
    kinds = _kind_files(out)
    wm = worldmodel_runs(kinds["worldmodel"], digest)
    games = longest_runs([r for r in kinds["games"] if r["complete"]])
    primary = primary_ladder(games)
    conv = load_map(MAP_PATH)
    tables = {
        "games": game_entries([r for r in games if not apart(r, primary, conv)], digest,
                              conv, load_crosswalks(HUMAN_DIR, reference_ladder())),
        EARLIER: [replace(e, label=f"{e.label}; {apart(r, primary, conv)}")
                  for r in games if apart(r, primary, conv)
                  for e in game_entries([r], digest)],
        "puzzles": puzzle_entries(kinds["puzzles"], puzzle_digest),
        "human": static_entries(static, "human", by_id),
        "static puzzle": static_entries(static, "puzzle", by_id),
        PREVIOUS: [replace(e, label=f"{e.label}; on {r['_previous_set']}")
                   for r in earlier for e in static_entries([r], "human")]}
    matches = [r for r in kinds["match"] if r["complete"]]
    pairs = head_to_head_rows(matches, games)
    if not static and not wm and not any(tables.values()) and not pairs:
        raise DataError(f"no complete results on {questions} (sha256 {digest[:12]}) in {out}: "
                        "run python benchmark.py --model ... (or play, puzzles, worldmodel) "
                        "first")
    kept = [r for r in kinds["puzzles"] if r["settings"]["puzzles_sha256"] == puzzle_digest]
    return Board(digest, static, games, primary, kept, wm, tables, conv, tuple(pairs),
                 tuple(matches), tuple(earlier))


# Settings that only say how far or how fast a play run went: two runs alike but for these
# are one player's, the shorter one's games (the same seeds, the same store) the longer's start.
HOW_FAR = ("max_games", "target", "concurrency")


def longest_runs(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Of play runs of one model with the same settings but for HOW_FAR, the one with the most
    games (then the last by file name): ranking the shorter beside it would rank a player
    against itself on shared games."""
    best: dict[str, tuple[int, str, int]] = {}  # player -> (games, file, index in runs)
    for i, r in enumerate(runs):
        same = json.dumps([r["model"], r.get("protocol", "fen"),
                           {k: v for k, v in (r.get("settings") or {}).items()
                            if k not in HOW_FAR}], sort_keys=True, default=str)
        mine = (sum(c.get("games", 0) for c in r["conditions"].values()), r.get("_file", ""), i)
        best[same] = max(best.get(same, mine), mine)
    kept = {i for _, _, i in best.values()}
    left = [r.get("_file", "") for i, r in enumerate(runs) if i not in kept]
    if left:
        log.warning("left out %d play run(s) of a player a longer run with the same settings "
                    "also rates (their games are its first): %s", len(left), ", ".join(left))
    return [r for i, r in enumerate(runs) if i in kept]


def worldmodel_runs(runs: list[dict[str, Any]], digest: str) -> list[dict[str, Any]]:
    """The complete world-model runs on the questions file with `digest`, and those on a set
    this repository committed before it, each of those marked with that set
    (`_previous_set`): the table ranks nothing, so both stand in it, told apart."""
    known = previous_sets()
    kept = []
    for r in runs:
        if not r["complete"]:
            continue
        if r["questions_sha256"] == digest:
            kept.append(r)
        elif r["questions_sha256"] in known:
            kept.append({**r, "_previous_set": previous_set_text(known[r["questions_sha256"]])})
    return kept


def head_to_head_rows(matches: list[dict[str, Any]],
                      games: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A row per match: both players, games and pairs, the pentanomial, the measured score
    and Elo difference (90%), and, where both have play runs among `games` on one ladder
    fit, the ladder's predicted score (90%) and z; sorted by the players' names."""
    rows = []
    nu = reference_nu() if matches else 0.0
    for m in matches:
        check = check_of(m, games)
        c = check["ladder_check"]
        score, diff = m["score"], match_elo(m, nu)
        rows.append({
            "first": m["first"]["model"], "second": m["second"]["model"], "games": m["games"],
            "pairs": m["pairs"], "pentanomial": m["pentanomial"],
            "score": None if score is None else score["value"],
            "score_lo": None if score is None else score["lo"],
            "score_hi": None if score is None else score["hi"],
            "elo_difference": elo_difference_text(diff),
            "predicted": None if c is None else c["predicted"]["score"],
            "predicted_lo": None if c is None else c["predicted"]["lo"],
            "predicted_hi": None if c is None else c["predicted"]["hi"],
            "z": None if c is None else c["z"],
            "why_no_prediction": check["ladder_check_missing"], "file": m.get("_file", "")})
    return sorted(rows, key=lambda r: (r["first"], r["second"], r["games"]))


def head_to_head_lines(rows: tuple[dict[str, Any], ...]) -> list[str]:
    """The pairwise table in markdown."""
    out = ["| A | B | games (pairs) | pairs scoring 0/½/1/1½/2 for A | A's score (90%) | Elo A - B "
           "| ladder's predicted score (90%) | z |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        score = "-" if r["score"] is None else \
            f"{r['score']:.3f} [{r['score_lo']:.3f}, {r['score_hi']:.3f}]"
        predicted = "- (" + str(r["why_no_prediction"]) + ")" if r["predicted"] is None \
            else f"{r['predicted']:.3f} [{r['predicted_lo']:.3f}, {r['predicted_hi']:.3f}]"
        z = "-" if r["z"] is None else f"{r['z']:+.2f}"
        out.append(f"| {r['first']} | {r['second']} | {r['games']} ({r['pairs']}) | "
                   f"{'/'.join(map(str, r['pentanomial']))} | {score} | "
                   f"{r['elo_difference']} | {predicted} | {z} |")
    return out


# The crosswalk's place per time control, flat and named for what each is (human_metrics).
HUMAN_FIELDS = tuple(name for tc in TimeControl for name in human_metrics(
    {"time_control": tc.value, "value": None, "lo": None, "hi": None}))
ROW_FIELDS = ("model", "protocol", "scale", "label", "elo", "lo", "hi", "kind", "text",
              "converted", "games", "cost", "human", *HUMAN_FIELDS)
SCALES = {"games": "game Elo, reference ladder (Stockfish 17.1)",
          EARLIER: "game Elo, another ladder (not ranked)",
          "puzzles": "puzzle Elo, whole lines", "human": "human-move Elo",
          "static puzzle": "puzzle Elo, first move",
          PREVIOUS: "human-move Elo, a previous test set (not ranked)"}


def board_rows(board: Board) -> list[dict[str, Any]]:
    """One row per run and scale, as leaderboard.json and .csv hold them and the site reads
    them: the Elo's mean and 90% interval (null where open), whether it was converted from
    another ladder, the games (puzzles, positions) behind it, its cost (per game for a
    play run) and, for a game Elo, its place on Lichess's scale per time control."""
    rows = []
    for key, entries in board.tables.items():
        for e in sorted(entries, key=lambda e: (-place(e.elo), e.model, e.label)):
            rows.append({"model": e.model, "protocol": e.protocol, "scale": SCALES[key],
                         "label": e.label, "elo": e.elo.get("mean"), "lo": e.elo.get("lo"),
                         "hi": e.elo.get("hi"), "kind": e.elo.get("kind"),
                         "text": e.elo.get("text"), "converted": e.converted, "games": e.n,
                         "cost": e.cost, "human": human_text(e.human),
                         **dict.fromkeys(HUMAN_FIELDS),
                         **{k: v for tc in (e.human or {}).get("time_controls", [])
                            for k, v in human_metrics(tc).items()}})
    return rows


def write_rows(board: Board, out: Path) -> list[Path]:
    """leaderboard.json and leaderboard.csv in `out`."""
    import csv
    import json

    rows = board_rows(board)
    paths = [out / "leaderboard.json", out / "leaderboard.csv"]
    with atomic_write(paths[0], encoding="utf-8") as handle:
        json.dump({"reference": REFERENCE_ENGINE, "rows": rows,
                   "head_to_head": list(board.head_to_head)}, handle, indent=1)
        handle.write("\n")
    with atomic_write(paths[1], encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=ROW_FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return paths


def leaderboard(out: Path, questions: Path, puzzles: Path | None, floor: dict[str, Any],
                seed: int = 0) -> list[Path]:
    """Write leaderboard.md, .svg, .png and the world-model breakdown figure: runs on
    `questions`, and puzzle runs on `puzzles` (none when it does not exist)."""
    board = collect(out, questions, puzzles)
    static, wm, tables, digest = board.static, board.worldmodel, board.tables, board.digest
    md = _markdown(tables, static, wm, floor, questions, digest, seed, board.head_to_head)
    paths = [out / "leaderboard.md", out / "leaderboard.svg", out / "leaderboard.png",
             out / "leaderboard-worldmodel.png"]
    with atomic_write(paths[0], encoding="utf-8") as handle:
        handle.write(md)
    _plot(tables, floor, paths[1], paths[2])
    _plot_world_model(wm, static, paths[3])
    return paths + write_rows(board, out)


def _markdown(tables: dict[str, list[Entry]], static: list[dict[str, Any]],
              wm: list[dict[str, Any]], floor: dict[str, Any], questions: Path, digest: str,
              seed: int, pairs: tuple[dict[str, Any], ...] = ()) -> str:
    out = ["# Leaderboard", "",
           f"Runs on `{questions}` (sha256 {digest[:12]}) only; incomplete runs are left out. "
           "Each scale is ranked in its own table and never mixed. \"below ~N\" / \"above ~N\": "
           "the data bound the Elo on one side only; such an entry is placed by its bound and "
           "not ranked.", "",
           f"P(> next): the probability that the entry is stronger than the next ranked one "
           f"below it; rank (90%): its rank's {LEVEL:.0%} interval among the ranked entries. "
           "Both come from joint draws of the posteriors (normal approximations of the "
           f"{LEVEL:.0%} intervals).", "", DAGGER_RULE + ".", "",
           "![Elo](leaderboard.png)", ""]
    sections = (
        ("games", "Game Elo against the calibrated ladder (Elo above a random mover, on the "
         "reference scale: the Stockfish 17.1 ladder's; \"converted\": read on Stockfish "
         "15.1's ladder and shown through the measured map, its interval widened by the "
         "map's error)",
         ["model", "condition (protocol)", "games", "W/D/L", "cost per game",
          "Lichess blitz"]),
        (EARLIER, "Game Elo on an earlier ladder (another zero) or another engine's ladder "
         "that no measured map converts (its scale is not the one above: "
         "docs/games-and-ladder.md, one reference scale): not comparable with the game "
         "Elos above, and not ranked",
         ["model", "condition (protocol); the ladder", "games", "W/D/L", "cost per game"]),
        ("puzzles", "Puzzle Elo, adaptive whole lines (Lichess puzzle-rating scale)",
         ["model", "run", "puzzles", "solved/alternative/failed", "by Lichess's rule"]),
        ("human", "Human-move Elo of the static run (the rating of Lichess players whose moves "
         "in these positions lose as much: a move-quality scale, not a Lichess rating)",
         ["model", "prompt", "n", "legal", "ACPL", "accuracy", "puzzles solved",
          "illegal rate (90%)", "cost"]),
        ("static puzzle", "First-move puzzle Elo of the static run (only each line's first "
         "move asked, so above a whole-line rating; Lichess puzzle-rating scale)",
         ["model", "prompt", "n", "legal", "ACPL", "accuracy", "puzzles solved",
          "illegal rate (90%)", "cost"]),
        (PREVIOUS, "Human-move Elo of static runs on a previous test set (other positions "
         "than the current questions file's, so not comparable with the tables above, and "
         "not ranked; run the model again for a figure on this set)",
         ["model", "prompt; the set", "n", "legal", "ACPL", "accuracy", "puzzles solved",
          "illegal rate (90%)", "cost"]))
    for key, title, head in sections:
        if tables[key]:
            lines = _table(head, tables[key], seed, key not in NOT_RANKED)
            if key in ("human", "static puzzle"):
                kind = "human" if key == "human" else "puzzle"
                cells = [_number(floor.get(m), m) for m in SUMMARY_METRICS[:3]
                         + ("puzzle_solve_rate",)]
                elo = floor["elo"].get(kind)
                row = (" - | all | " + " | ".join(cells)
                       + f" | | | {elo_text(elo) if elo else ''} |")
                # Appended to the last table of the section, in its columns.
                numbered = lines[-1].count("|") == len(head) + 5
                lines.append(f"| floor | random mover |{row} | |" if numbered
                             else f"| random mover (floor) |{row}")
            out += [f"## {title}", "", *lines, ""]
    if pairs:
        out += ["## Head to head", "", "Matches played in colour-reversed pairs (benchmark.py "
                "match): A's score with its 90% interval from the pairs, the Elo difference, "
                "and where both players have play runs here on one ladder fit, the score the "
                "ladder predicts from their game Elos and z = (measured - predicted) / its sd "
                "(beyond about +-2: not transitive through the ladder).", "",
                *head_to_head_lines(pairs), ""]
    out += ["## By model", "", "The run with the most observations of each kind, one row per "
            "model and protocol (docs/protocols.md).", "",
            *by_model(tables, wm), ""]
    out += ["## World model", "", "Runs of the world-model tests (benchmark.py worldmodel: "
            "self-consistency, mirror symmetry, temperature), scored by the world-model rubric "
            "(thresholds in each run's report). A static run has no score here: it measures the "
            "illegal rate only, shown in its own table above.", "",
            *world_model_rows(wm), "", "![Illegal answers by type]"
            "(leaderboard-worldmodel.png)", ""]
    out += [f"- {r['model']}: [{r['figure']}]({r['figure']})" for r in wm if r.get("figure")]
    return "\n".join(out) + "\n"


PANELS = (("games", "game Elo (ladder)"),
          (EARLIER, "game Elo, earlier ladder or another engine's (not ranked)"),
          ("puzzles", "puzzle Elo, adaptive"),
          ("human", "human-move Elo (static)"),
          ("static puzzle", "first-move puzzle Elo (static)"),
          (PREVIOUS, "human-move Elo, previous test set (not ranked)"))


def _plot(tables: dict[str, list[Entry]], floor: dict[str, Any], svg: Path, png: Path) -> None:
    """One panel per scale: intervals, with arrows for open or off-scale ends."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [(key, title) for key, title in PANELS if tables[key]]
    rows = {key: [e for e, _, _ in ranked(tables[key],
                                          draws=None if key not in NOT_RANKED else [])]
            for key, _ in panels}
    for key, kind in (("human", "human"), ("static puzzle", "puzzle")):
        if key in rows and floor["elo"].get(kind):
            rows[key].append(Entry("random mover", "floor", floor["elo"][kind], 0))
    heights = [max(1, len(rows[k])) * 0.45 + 1.2 for k, _ in panels] or [2]
    fig, axes = plt.subplots(len(heights), 1, figsize=(9, sum(heights)), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    for ax, (key, title) in zip(axes[:, 0], panels, strict=False):
        lim = _limits([e.elo for e in rows[key]])
        for y, e in enumerate(rows[key]):
            _draw(ax, y, e.elo, lim)
        ax.set_yticks(range(len(rows[key])),
                      [f"{e.model} ({e.label}){' †' if dagger(e) else ''}: {elo_text(e.elo)}"
                       for e in rows[key]], fontsize=8)
        ax.set_ylim(len(rows[key]) - 0.5, -0.5)
        ax.set_xlim(*lim)
        ax.set_title(title, fontsize=10)
    if not panels:
        axes[0, 0].text(0.5, 0.5, "no Elo estimate", ha="center")
    axes[-1, 0].set_xlabel("Elo, 90% intervals; arrows: open on that side, or beyond the axis")
    save_figure(fig, svg, png)


def _limits(elos: list[dict[str, Any]]) -> tuple[float, float]:
    """The axis: the entries' finite values, at most +-SPAN around their median."""
    values = [float(e[k]) for e in elos for k in ("mean", "lo", "hi") if e.get(k) is not None]
    if not values:
        return 0.0, 3000.0
    centre = float(np.median([place(e) for e in elos if np.isfinite(place(e))] or values))
    lo, hi = max(min(values), centre - SPAN), min(max(values), centre + SPAN)
    pad = max(100.0, 0.12 * (hi - lo))  # room for the arrows of open ends
    return lo - pad, hi + pad


def _draw(ax: Any, y: float, e: dict[str, Any], lim: tuple[float, float]) -> None:
    """An interval clipped to the axis; an open or clipped end becomes an arrow at the edge."""
    kind, mean, lo, hi = e.get("kind"), e.get("mean"), e.get("lo"), e.get("hi")
    if kind == "not identifiable" or (mean is None and lo is None and hi is None):
        ax.text(sum(lim) / 2, y, "not identifiable", ha="center", va="center", fontsize=8)
        return
    left = lim[0] if lo is None else min(max(lo, lim[0]), lim[1])
    right = lim[1] if hi is None else max(min(hi, lim[1]), lim[0])
    ax.plot([left, right], [y, y], "-", color="C0")
    if mean is not None and lim[0] <= mean <= lim[1]:
        ax.plot([mean], [y], "o", color="C0")
    arrow = {"arrowstyle": "->", "color": "C0"}
    step = 0.06 * (lim[1] - lim[0])
    if lo is None or lo < lim[0]:
        ax.annotate("", xy=(lim[0], y), xytext=(lim[0] + step, y), arrowprops=arrow)
    if hi is None or hi > lim[1]:
        ax.annotate("", xy=(lim[1], y), xytext=(lim[1] - step, y), arrowprops=arrow)


def _plot_world_model(wm: list[dict[str, Any]], static: list[dict[str, Any]],
                      path: Path) -> None:
    """Illegal answers by type across runs: a world-model run with its score, a static run
    with its illegal rate (it has no score)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [(f"{r['model']} (worldmodel, T=0)", r["t0"]["taxonomy"], r["t0"]["answers"],
             f"score {_wm_score(r['score'])}")
            for r in sorted(wm, key=lambda r: (r["model"], r["_file"]))]
    rows += [(f"{r['model']} ({r['prompt']}, static)", r["illegal"], r["n"],
              f"illegal {illegal_text(r['world_model'])}") for r in static]
    fig, ax = plt.subplots(figsize=(9, 0.45 * max(1, len(rows)) + 1.8))
    left = np.zeros(len(rows))
    for c, color in zip(ILLEGAL_CATEGORIES, ("C0", "C1", "C3", "C4"), strict=True):
        share = np.array([t.get(c, 0) / n if n else 0.0 for _, t, n, _ in rows])
        ax.barh(range(len(rows)), share, left=left, color=color, label=c)
        left += share
    ax.set_yticks(range(len(rows)), [f"{name}: {score}" for name, _, _, score in rows],
                  fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, max(0.05, 1.1 * float(left.max(initial=0))))
    ax.set(xlabel="share of answers that were illegal, by type",
           title="World model: illegal answers by type")
    ax.legend(loc="lower right", fontsize=8)
    save_figure(fig, path)

"""`benchmark.py report`: the results directory as a static site that opens from file://.

Pages: index.html (every run in one sortable table, each Elo scale's ranking with its rank-
probability heat map, game Elos against the ladder's rungs and the random mover), ladder.html
(rungs, intervals, games per pair) and runs/NAME.html per result file (strata with intervals,
the illegal-move taxonomy, the posterior's evolution, the rungs played, and a viewer for every
game and puzzle line). Jinja2 renders with autoescaping on: answers, model names and PGN text
are escaped everywhere, and reach the viewer's script only as JSON (`tojson`), which the
script writes into the page as text, never as HTML. No file is fetched from elsewhere.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chess
import chess.svg
import jinja2
import markupsafe

from chess_eval.benchmark.arena.ladder import reference_ladder
from chess_eval.benchmark.arena.ladder_check import check_of, ladder_lines
from chess_eval.benchmark.core.results import elo_text
from chess_eval.benchmark.core.scoring import illegal_text, metric_digits
from chess_eval.benchmark.human.anchors import HUMAN_DIR
from chess_eval.benchmark.human.crosswalk import load_crosswalks
from chess_eval.benchmark.leaderboard.board import (
    DAGGER_RULE,
    EARLIER,
    NA,
    NOT_RANKED,
    PANELS,
    PREVIOUS,
    UNRANKED,
    Board,
    Entry,
    apart,
    collect,
    converts,
    dagger,
    head_to_head_rows,
    on_current_scale,
    place,
    rank_draws,
    ranked,
    write_rows,
)
from chess_eval.benchmark.leaderboard.views import (
    elo_axis,
    evolution,
    game_views,
    ladder_view,
    puzzle_views,
    strata,
)
from chess_eval.benchmark.model import cost
from chess_eval.benchmark.stats.elo import LEVEL
from chess_eval.eco import Opening, load_table
from chess_eval.files import atomic_write

log = logging.getLogger(__name__)
HERE = Path(__file__).resolve().parent
CHART_W, CHART_H = 480.0, 160.0  # the inline charts' drawing box (SVG user units)
STRATA_W = 260.0  # a stratum chart's plot width, beside its labels and values
BOARD_PX = 360


@dataclass(frozen=True)
class SiteInputs:
    """What the site is built from."""

    results: Path  # the results directory
    questions: Path  # runs on this questions file only
    puzzles: Path | None  # puzzle runs on this puzzle file only
    ladder: Path  # a ladder.csv (its games file beside it)
    floor: dict[str, Any]  # the random mover's figures on the questions
    seed: int  # seed of the rank draws


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["elo"] = lambda e: elo_text(e) if e else ""
    # One format per kind of number: rates with 3 decimals, cp losses and accuracies with 1.
    env.filters["metric"] = lambda v, key: f"{v:.{metric_digits(key)}f}"
    env.filters["breakable"] = breakable
    return env


def breakable(name: str) -> markupsafe.Markup:
    """A name, escaped, that a narrow column may break only after a separator (: , / @ and
    space), never inside a number: a <wbr> after each."""
    parts = re.split(r"(?<=[:,/@ ])", str(name))
    return markupsafe.Markup("<wbr>").join(markupsafe.escape(p) for p in parts)


def _page_name(file: str) -> str:
    return "runs/" + Path(file).stem + ".html"


def _elo_value(e: dict[str, Any] | None) -> float | None:
    """The number a table sorts an estimate by (the leaderboard's place); None for none."""
    value = place(e) if e else float("-inf")
    return None if value == float("-inf") else value


def _rows(board: Board) -> list[dict[str, Any]]:
    """One row per run (a play run: one per condition) for the index's sortable table."""
    rows = []
    for r in board.static:
        m = r["intervals"]
        rows.append({"model": r["model"], "kind": "static", "label": r["prompt"], "n": r["n"],
                     "protocol": r.get("protocol", "fen"),
                     "cost": (r.get("usage") or {}).get("cost"),
                     "page": _page_name(r["_file"]), "settings": r["settings"],
                     "metrics": {k: m.get(k) for k in ("legal_rate", "acpl", "accuracy",
                                                       "best_move_rate")},
                     "first_move": r["elo"].get("puzzle"), "human": r["elo"].get("human"),
                     # No world-model score: its consistency tests were not run.
                     "world_note": "not run"})
    for r in board.games:
        for name, c in r["conditions"].items():
            if c["aborted"] or not c["games"]:
                continue
            why = apart(r, board.primary, board.ladder_map)
            elo = c["elo"]
            if converts(r, board.ladder_map) and board.ladder_map is not None:
                why, elo = f"converted from {board.ladder_map.source}", \
                    board.ladder_map.convert_elo(elo)
            label = f"{name}; {why}" if why else name
            rows.append({"model": r["model"], "kind": "games", "label": label, "n": c["games"],
                         "protocol": r.get("protocol", "fen"),
                         "cost": ((r.get("usage") or {}).get("per_game") or {}).get("cost"),
                         "per_game": True,
                         "page": _page_name(r["_file"]), "settings": r["settings"],
                         "game": elo, "ladder": c.get("ladder", {})})
    for r in board.puzzles:
        rows.append({"model": r["model"], "kind": "puzzles", "label": f"seed="
                     f"{r['settings']['seed']}", "n": r["n"], "page": _page_name(r["_file"]),
                     "settings": r["settings"], "line": r["elo"]})
    for r in board.worldmodel:
        rows.append({"model": r["model"], "kind": "worldmodel", "label": "consistency tests",
                     "n": r["positions"], "page": _page_name(r["_file"]),
                     "settings": r["settings"], "world": _world(r["score"])})
    for row in rows:
        row["sort"] = {k: _elo_value(row.get(k)) for k in ("first_move", "human", "line",
                                                           "game")}
        row["settings_text"] = json.dumps(row["settings"], indent=1, sort_keys=True)
    return sorted(rows, key=lambda r: (r["model"], r["kind"], r["label"]))


def _world(score: dict[str, Any]) -> float | str:
    """A run's world-model score, or n/a for a baseline (legal by construction)."""
    return NA if score.get("score") is None else float(score["score"])


def _ranking(entries: list[Entry], seed: int, rank: bool = True) -> dict[str, Any]:
    """A scale's ranking table and its rank-probability matrix (none when not `rank`)."""
    draws = rank_draws(entries, seed) if rank else []  # the joint posterior draws, once
    rows = [{"model": e.model, "label": e.label, "protocol": e.protocol, "n": e.n,
             "elo": e.elo, "dagger": dagger(e), "above": above, "span": span}
            for e, above, span in ranked(entries, seed, draws)]
    heat = [{"model": e.model, "label": e.label, "p": list(r.probabilities)} for e, r in draws]
    # A one-sided estimate is a bound, not a place: it is listed apart, unnumbered.
    return {"table": [r for r in rows if r["span"]], "apart": [r for r in rows if not r["span"]],
            "unranked": UNRANKED if rank else "", "heat": heat if len(heat) > 1 else []}


def _references(board: Board, ladder: dict[str, Any], floor: dict[str, Any]
                ) -> dict[str, list[tuple[str, float]]]:
    """Reference lines per scale: the rungs of the ladder the games were rated on (else
    --ladder's) on the game scale, the random mover's estimate (or bound) on the static ones."""
    played = next((g["ladder"] for g in board.games
                   if g.get("ladder", {}).get("names") and on_current_scale(g)), None)
    rungs = (list(zip(played["names"], map(float, played["elos"]), strict=True)) if played
             else [(r["rung"], float(r["elo"])) for r in ladder["rungs"] if r.get("elo")])
    refs: dict[str, list[tuple[str, float]]] = {"games": rungs}
    for key, kind in (("human", "human"), ("static puzzle", "puzzle")):
        value = _elo_value(floor.get("elo", {}).get(kind))
        refs[key] = [] if value is None else [("random mover", value)]
    refs["puzzles"] = refs[EARLIER] = refs[PREVIOUS] = []
    return refs


def _index(board: Board, inputs: SiteInputs, ladder: dict[str, Any]) -> dict[str, Any]:
    refs = _references(board, ladder, inputs.floor)
    scales = []
    for key, title in PANELS:
        entries = board.tables.get(key, [])
        if not entries:
            continue
        ranking = _ranking(entries, inputs.seed, key not in NOT_RANKED)
        # Strongest first; none without a ranked entry (the reference lines alone say
        # nothing: the bounded entries are listed apart).
        axis = elo_axis([{"model": t["model"], "label": t["label"], **t["elo"]}
                         for t in ranking["table"]], refs[key], CHART_W) \
            if ranking["table"] else {}
        scales.append({"key": key, "title": title, "axis": axis, **ranking})
    return {"rows": _rows(board), "scales": scales, "human": _human(board),
            "digest": board.digest,
            "questions": inputs.questions.name, "dagger_rule": DAGGER_RULE, "level": LEVEL,
            "floor": inputs.floor, "comparisons": comparisons(inputs.results),
            "head_to_head": [{**row, "page": _page_name(row["file"])}
                             for row in board.head_to_head]}


def _human(board: Board) -> dict[str, Any]:
    """The crosswalk to Lichess's scale: the anchors' readings and the band they cover on the
    game Elo axis, each ranked game run on it, and each run's place per time control."""
    crosswalks = load_crosswalks(HUMAN_DIR, reference_ladder())
    if not crosswalks:
        return {}
    entries = [e for e in board.tables.get("games", []) if e.human]
    anchors = {(a.bot, a.net): a for c in crosswalks for a in c.anchors}
    lines = [(f"maia-{net} ({bot})", a.reading) for (bot, net), a in sorted(anchors.items())]
    axis = elo_axis([{"model": e.model, "label": e.label, **e.elo} for e in entries
                     if e.elo.get("mean") is not None], lines, CHART_W)
    places = [{"model": e.model, "label": e.label, "elo": e.elo,
               "places": {tc["time_control"]: tc["text"] for tc in
                          (e.human or {}).get("time_controls", [])}} for e in entries]
    return {"axis": axis, "rows": places, "time_controls": [c.time_control.value
                                                            for c in crosswalks],
            "bases": {c.time_control.value: c.basis for c in crosswalks},
            "anchors": [{"time_control": c.time_control.value, "bot": a.bot, "net": a.net,
                         "reading": round(a.reading), "rating": round(a.rating),
                         "date": a.date} for c in crosswalks for a in c.anchors]}


def comparisons(results: Path) -> list[dict[str, Any]]:
    """The `compare` results in the directory (their verdicts), oldest name first; a file
    that is not one is left to the leaderboard's warnings."""
    found = []
    for path in sorted(results.glob("compare__*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("kind") == "compare" and data.get("verdict"):
            found.append({"a": str(data.get("a", "")), "b": str(data.get("b", "")),
                          "basis": str(data.get("basis", "")), "verdict": data["verdict"]})
    return found


def _run_page(kind: str, result: dict[str, Any], results: Path,
              board_games: list[dict[str, Any]] | None = None,
              table: dict[str, Opening] | None = None) -> dict[str, Any]:
    """What one run's page shows, by the kind of run (`table`: the ECO table that names
    the games' openings)."""
    usage = result.get("usage") or {}
    page: dict[str, Any] = {"kind": kind, "r": result, "games": [],
                            "settings_text": json.dumps(result.get("settings", {}), indent=1,
                                                        sort_keys=True),
                            "cost_text": cost.text(usage) if cost.shown(usage) else ""}
    if kind == "static":
        page["r"] = {**page["r"], "illegal_text": illegal_text(result["world_model"])}
        page["strata"] = strata(result, STRATA_W)
        page["strata_width"] = STRATA_W
        page["items"] = result.get("items", [])
    elif kind == "games":
        stem = Path(result["_file"]).stem
        pgn = results / f"{stem}.pgn"
        page["games"] = game_views(pgn, results / "traces" / f"{stem}.jsonl", table) \
            if pgn.is_file() else []
        page["evolution"] = {name: evolution(c.get("evolution", []), CHART_W, CHART_H,
                                             c.get("elo"))
                             for name, c in result["conditions"].items()}
    elif kind == "match":
        pgn = results / f"{Path(result['_file']).stem}.pgn"
        page["games"] = game_views(pgn, results / "none.jsonl", table) \
            if pgn.is_file() else []
        plays = board_games or []
        page["match"] = head_to_head_rows([result], plays)[0]
        page["match_lines"] = ladder_lines(result | check_of(result, plays))
    elif kind == "puzzles":
        page["games"] = puzzle_views(result)
        page["evolution"] = {"puzzles": evolution(
            [s.get("elo") or {} for s in result.get("sequence", [])], CHART_W, CHART_H,
            result.get("elo"))}
    return page


def _board_svg() -> str:
    """python-chess's board with every piece's definition, for the viewer to set up."""
    return chess.svg.board(chess.Board(), size=BOARD_PX, coordinates=True)


def build_site(inputs: SiteInputs, out: Path) -> list[Path]:
    """Write the site into `out`; the pages written, index first."""
    board = collect(inputs.results, inputs.questions, inputs.puzzles)
    env = _environment()
    ladder = ladder_view(inputs.ladder)
    pages = _run_pages(env, board, inputs.results, out)
    index = _index(board, inputs, ladder)
    for row in index["rows"]:  # a run whose page could not be drawn is listed unlinked
        row["linked"] = out / row["page"] in pages
    written = [_write(out / "index.html", env.get_template("index.html").render(
        root="", title="Leaderboard", **index))]
    written.append(_write(out / "ladder.html", env.get_template("ladder.html").render(
        root="", title="The ladder", ladder=ladder)))
    assets = out / "assets"
    assets.mkdir(parents=True, exist_ok=True)
    for name in ("site.css", "site.js"):
        with atomic_write(assets / name, encoding="utf-8") as handle:
            handle.write((HERE / "assets" / name).read_text(encoding="utf-8"))
    # The ranked tables' rows, machine-readable: the leaderboard's own (board_rows).
    return written + pages + write_rows(board, out)


def _run_pages(env: jinja2.Environment, board: Board, results: Path, out: Path) -> list[Path]:
    """One page per run; a file of an older version that lacks a field is skipped, logged."""
    runs = [("static", r) for r in (*board.static, *board.previous)] + \
        [("games", r) for r in board.games] + \
        [("puzzles", r) for r in board.puzzles] + [("worldmodel", r) for r in board.worldmodel] + \
        [("match", _as_run(r)) for r in board.matches]
    board_svg = markupsafe.Markup(_board_svg())  # python-chess's, no model text
    table = load_table()
    written = []
    for kind, result in runs:
        try:
            page = _run_page(kind, result, results, board.games, table)
            html = env.get_template("run.html").render(
                root="../", title=f"{result['model']}: {kind}", board_svg=board_svg, **page)
        except (jinja2.UndefinedError, KeyError, TypeError, ValueError) as exc:
            log.warning("no page for %s: not a %s result this version can show (%s: %s)",
                        result["_file"], kind, type(exc).__name__, exc)
            continue
        written.append(_write(out / _page_name(result["_file"]), html))
    return written


def _as_run(match: dict[str, Any]) -> dict[str, Any]:
    """A match result as a run page reads one: its two players as the model and player."""
    return {**match, "model": f"{match['first']['model']} vs {match['second']['model']}",
            "player": f"{match['first']['player']} / {match['second']['player']}"}


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path, encoding="utf-8") as handle:
        handle.write(text)
    return path


def remove_stale(out: Path) -> None:
    """Remove the run pages of an earlier build, so a deleted result leaves no page behind."""
    shutil.rmtree(out / "runs", ignore_errors=True)

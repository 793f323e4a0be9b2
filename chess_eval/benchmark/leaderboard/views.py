"""What the report site shows, computed from result files only: games and puzzle lines as
replayable plies with the model's answers, charts as plain numbers (positions in a box of a
given size), and the ladder from its CSV files.

Everything here is data; the templates turn it into HTML with autoescaping, so no string a
model or a results file wrote is ever marked safe.
"""

from __future__ import annotations

import csv
import json
import logging
import math
import re
import urllib.parse
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import chess
import chess.pgn

from chess_eval.accuracy import game_accuracy
from chess_eval.benchmark.arena.versions import version_of
from chess_eval.benchmark.core.data import LADDER_GAMES
from chess_eval.benchmark.core.scoring import CELLS, MIN_INTERVAL_N, metric_digits
from chess_eval.benchmark.stats.elo import ABOVE, BELOW
from chess_eval.eco import Opening, opening_of
from chess_eval.engine import MATE_CP, cp_to_score, score_to_cp
from chess_eval.errors import DataError
from chess_eval.files import open_text, sha256_file
from chess_eval.grading import Judgement, MoveNote, game_notes, win_percent

log = logging.getLogger(__name__)

BOUND_SPAN = 600.0  # a one-sided chart shows this far either side of its bound
ANSWER_CHARS = 2000  # a raw answer longer than this is cut in the viewer (the trace has it all)
BOOK_COMMENT = re.compile(r"^starts after ((?:\S+ ?)+)$")  # play's PGN: the book's moves
COMMAND = re.compile(r"\[%[^\]]*\]")  # a PGN comment's command ([%eval 0.35])
LICHESS_ANALYSIS = "https://lichess.org/analysis/pgn/"  # + the PGN, URL-encoded
SHORT_CHARS = 24  # a player's label in the viewer's narrow places (the full name on hover)
STRATA = ("source", "elo_bucket", "phase", "type", "color", CELLS)  # older files lack CELLS
STRATUM_METRICS = (("accuracy", "accuracy", 100.0), ("legal_rate", "legal rate", 1.0),
                   ("best_move_rate", "best move", 1.0))


def _try(attempt: dict[str, Any]) -> dict[str, Any]:
    """One reply as the viewer shows it: the raw answer, what was read, the category."""
    answer = attempt.get("answer") or ""
    return {"answer": answer[:ANSWER_CHARS] + ("..." if len(answer) > ANSWER_CHARS else ""),
            "read": attempt.get("text") or "", "category": attempt.get("category") or "legal",
            "detail": attempt.get("detail") or ""}


def short_name(name: str, rung: str = "") -> str:
    """A player's label that fits a narrow column: a rung by its rung name, anyone else by
    the name before its engine ("@..."), cut to SHORT_CHARS."""
    label = f"rung {rung}" if rung else name.split("@", 1)[0]
    return label if len(label) <= SHORT_CHARS else label[:SHORT_CHARS - 1] + "\u2026"


def eval_text(cp: int) -> str:
    """An eval for White as Lichess writes one: +0.35, -1.20, #3, #-2."""
    score = cp_to_score(cp)
    mate = score.mate()
    if mate == 0:
        return "mate"  # the side to move is checkmated
    if mate is not None:
        return f"#{mate}"
    return f"{cp / 100:+.2f}"


def _replay(board: chess.Board, moves: list[chess.Move], by: list[str],
            tries: dict[int, list[dict[str, Any]]], notes: list[MoveNote] | None = None,
            evals: list[int] | None = None, best: list[str] | None = None,
            book: int = 0) -> list[dict[str, Any]]:
    """The plies from `board` on: SAN, UCI, the FEN after the move, who moved, the replies;
    after the first `book` plies (the opening book's), with the judge's evals: its eval
    after the move, White's win% after it, the mover's loss, accuracy and mark, and the
    judge's best move in the position before it where the game records one."""
    plies = []
    for i, move in enumerate(moves):
        if move not in board.legal_moves:
            raise ValueError(f"{move.uci()} is illegal in {board.fen()}")
        san = board.san(move)
        judged_at = i - book  # the move's index among the judged ones
        top = best[judged_at] if best and 0 <= judged_at < len(best) else ""
        top_move = chess.Move.from_uci(top) if top else None
        best_san = board.san(top_move) if top_move and top_move in board.legal_moves else ""
        board.push(move)
        ply: dict[str, Any] = {"san": san, "uci": move.uci(), "fen": board.fen(),
                               "by": by[i], "tries": [_try(a) for a in tries.get(i, [])]}
        if notes and evals and judged_at >= 0:
            n = notes[judged_at]
            ply |= {"win": round(n.win, 1), "loss": round(n.win_loss, 1),
                    "accuracy": round(n.accuracy, 1), "mark": n.mark and str(n.mark),
                    "eval": eval_text(evals[judged_at + 1])}
            if best_san:
                ply["best"] = best_san
        plies.append(ply)
    return plies


def judged(game: chess.pgn.Game) -> list[int] | None:
    """The judge's eval of every position of a PGN game (cp for White; the start's first),
    None unless every position has one. A checkmate's has none in the PGN (python-chess
    writes no [%eval #0]): the rules give it."""
    evals = []
    for node in [game, *game.mainline()]:
        score = node.eval()
        if score is not None:
            evals.append(score_to_cp(score.white()))
        elif node.board().is_checkmate():
            evals.append(-MATE_CP if node.board().turn == chess.WHITE else MATE_CP)
        else:
            return None
    return evals


def best_moves(game: chess.pgn.Game) -> list[str]:
    """The judge's best move (UCI) in every position before a move, where the PGN records
    them (its JudgeBest tag: each a variation beside the move played, none where the move
    played was the best); [] where it does not."""
    if game.headers.get("JudgeBest") != "variations":
        return []
    nodes = [game, *game.mainline()][:-1]
    return [(n.variations[1].move if len(n.variations) > 1 else n.variations[0].move).uci()
            for n in nodes]


def book_moves(game: chess.pgn.Game) -> list[chess.Move]:
    """The opening book's moves that led from the initial position to the game's start,
    from the comment play writes on it ("starts after g3 d5 ..."); [] when there is none or
    the moves do not lead there."""
    found = BOOK_COMMENT.match(COMMAND.sub("", game.comment).strip())
    if not found or "FEN" not in game.headers:
        return []
    board = chess.Board()
    try:
        moves = [board.push_san(san) for san in found.group(1).split()]
    except ValueError:
        return []
    return moves if board.epd() == game.board().epd() else []


def side_summary(notes: list[MoveNote], white: bool,
                 accuracy: float | None = None) -> dict[str, Any]:
    """One side's marks, moves and game accuracy (Lichess's, computed here from the
    judge's evals by chess_eval/accuracy.py)."""
    own = [n for n in notes if n.white == white]
    counts = {str(j): sum(n.mark == j for n in own) for j in Judgement}
    return {**counts, "moves": len(own),
            "accuracy": None if accuracy is None else round(accuracy, 1)}


def game_pgn(game: chess.pgn.Game, book: list[chess.Move], opening: Opening | None) -> str:
    """The game as PGN for a person to download: from the initial position when the book's
    moves are known (each marked book), with the opening's name and every eval and best
    move the run's PGN holds."""
    out = chess.pgn.Game()
    out.headers.update({k: v for k, v in game.headers.items()
                        if not book or k not in ("FEN", "SetUp")})
    node: chess.pgn.GameNode = out
    for move in book:
        node = node.add_variation(move, comment="book")
    # The start's eval stays on the position the judge looked at first.
    node.comment = " ".join(["book", *COMMAND.findall(game.comment)]) if book else \
        game.comment
    _graft(node, game)
    if opening is not None:
        out.headers["ECO"], out.headers["Opening"] = opening.eco, opening.name
    return str(out)


def _graft(into: chess.pgn.GameNode, source: chess.pgn.GameNode) -> None:
    """Copy `source`'s variations (moves, comments, evals) under `into`."""
    for child in source.variations:
        copy = into.add_variation(child.move, comment=child.comment, nags=child.nags)
        _graft(copy, child)


def lichess_url(game: chess.pgn.Game, book: list[chess.Move], white: bool) -> str:
    """A link that opens the game in Lichess's analysis board: its moves (SAN, from the
    initial position or with the start's FEN tag) in the address, nothing sent by the page."""
    board = chess.Board() if book else game.board()
    moves = [*book, *game.mainline_moves()]
    text = board.variation_san(moves)
    if board.fen() != chess.STARTING_FEN:
        text = f'[FEN "{board.fen()}"] ' + text
    return LICHESS_ANALYSIS + urllib.parse.quote(text, safe="") + \
        ("" if white else "?color=black")


def _traces(path: Path) -> dict[str, dict[int, list[dict[str, Any]]]]:
    """A play run's replies by game key and ply (empty when the trace file is missing)."""
    found: dict[str, dict[int, list[dict[str, Any]]]] = {}
    if not path.is_file():
        return found
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            try:
                row = json.loads(line)
                found.setdefault(row["game"], {}).setdefault(int(row["ply"]), []).append(row)
            except (ValueError, KeyError, TypeError):
                log.warning("%s:%d: not a trace row; skipped", path, number)
    return found


def game_views(pgn: Path, traces: Path,
               table: dict[str, Opening] | None = None) -> list[dict[str, Any]]:
    """Every game of a play run's PGN, with the model's replies from its trace file and the
    opening's name from the ECO table (`table`, by position)."""
    replies = _traces(traces)
    games: list[dict[str, Any]] = []
    with open(pgn, encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            if game.errors:
                log.warning("%s: game %d has errors (%s); skipped", pgn, len(games) + 1,
                            game.errors[0])
                continue
            games.append(_game_view(game, replies.get(game.headers.get("GameId", ""), {}),
                                    table or {}))
    return games


def _game_view(game: chess.pgn.Game, tries: dict[int, list[dict[str, Any]]],
               table: dict[str, Opening]) -> dict[str, Any]:
    h = game.headers
    board = game.board()
    book = book_moves(game)
    game_id = h.get("GameId", "")
    if game_id.startswith("match:"):  # a match's: "model" is --model, the first player
        model_white = game_id.endswith("first-white")
    elif "Rung" in h:  # a play game's: the rung's side carries its Elo
        model_white = "WhiteElo" not in h
    else:
        sides = {a.get("side") for rows in tries.values() for a in rows}
        model_white = "white" in sides or "black" not in sides
    moves = list(game.mainline_moves())
    first_white = board.turn == chess.WHITE
    by = ["model" if ((i % 2 == 0) == first_white) == model_white else "engine"
          for i in range(len(moves))]
    # Only the model's own replies: a trace may hold the other side's moves too.
    colour = "white" if model_white else "black"
    tries = {i + len(book): kept for i, rows in tries.items()
             if (i >= len(moves) or by[i] == "model")
             and (kept := [a for a in rows if a.get("side") in (None, colour)])}
    opening = opening_of(chess.Board() if book else board, [*book, *moves], table)
    rung, white, black = h.get("Rung", ""), h.get("White", "?"), h.get("Black", "?")
    extra = {"white_short": short_name(white, rung if "WhiteElo" in h else ""),
             "black_short": short_name(black, rung if "BlackElo" in h else ""),
             "pgn": game_pgn(game, book, opening),
             "lichess": lichess_url(game, book, model_white),
             "opening": opening.text() if opening else ""}
    if book:
        board, moves, by = chess.Board(), [*book, *moves], ["book"] * len(book) + by
    return _view(board, moves, by, tries, model_white, judged(game), best_moves(game),
                 len(book), extra,
                 title=f"{h.get('Round', '')}: {extra['white_short']} - {extra['black_short']}",
                 white=h.get("White", "?"), black=h.get("Black", "?"),
                 result=h.get("Result", "*"), termination=h.get("Termination", ""),
                 rung=h.get("Rung", ""), condition=h.get("Condition", ""),
                 # A match's game: two players, neither "the model" (the board from White).
                 match="1" if h.get("GameId", "").startswith("match:") else "")


def _view(board: chess.Board, moves: list[chess.Move], by: list[str],
          tries: dict[int, list[dict[str, Any]]], model_white: bool,
          evals: list[int] | None = None, best: list[str] | None = None, book: int = 0,
          extra: dict[str, Any] | None = None, **labels: str) -> dict[str, Any]:
    """What the viewer gets for one game or line: its labels, the start, every ply with its
    replies (the first `book` plies the opening book's), the replies after the last move (a
    forfeit's) and the final position; with the judge's evals (from the book's end), White's
    win% there, each side's marks and game accuracy, and the judge's best moves."""
    start = board.fen()
    white_first = (board.turn == chess.WHITE) == (book % 2 == 0)  # the first judged mover
    notes = game_notes(evals, white_first) if evals else None
    plies = _replay(board, moves, by, tries, notes, evals, best, book)
    view: dict[str, Any] = {
        **labels, **(extra or {}), "orientation": "white" if model_white else "black",
        "start": start, "book": book, "plies": plies,
        "end": [_try(a) for a in tries.get(len(moves), [])], "final": board.fen()}
    if evals and notes is not None:
        accuracy = game_accuracy(evals, white_first)
        view |= {"start_win": round(win_percent(evals[0]), 1),
                 "start_eval": eval_text(evals[0]),
                 "sides": {"white": side_summary(notes, True, accuracy.white),
                           "black": side_summary(notes, False, accuracy.black)}}
    return view


def puzzle_views(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Every puzzle line of a run as plies: the puzzle's moves and the model's answers."""
    views = []
    for line in result.get("lines", []):
        if not line.get("fen") or not line.get("solution"):
            continue  # a run from before lines kept their position
        try:
            views.append(_line_view(line))
        except ValueError as exc:
            log.warning("puzzle %s: cannot replay its line (%s); skipped", line.get("puzzle"),
                        exc)
    return views


def _line_view(line: dict[str, Any]) -> dict[str, Any]:
    board = chess.Board(line["fen"])
    model_white = board.turn == chess.BLACK  # the puzzle's first move is the opponent's
    solution = [chess.Move.from_uci(u) for u in line["solution"]]
    moves, by = [solution[0]], ["puzzle"]
    for step, uci in enumerate(line["moves"]):
        move = chess.Move.from_uci(uci)
        moves.append(move)
        by.append("model")
        key, reply = 2 * step + 1, 2 * step + 2
        if key < len(solution) and move == solution[key] and reply < len(solution):
            moves.append(solution[reply])
            by.append("puzzle")
    tries: dict[int, list[dict[str, Any]]] = {}
    for a in line.get("attempts", []):
        tries.setdefault(int(a["ply"]), []).append(a)
    result = line["outcome"] + (f" ({line['reason']})" if line.get("reason") else "")
    return _view(board, moves, by, tries, model_white,
                 title=f"puzzle {line['puzzle']} ({line['rating']})", white="", black="",
                 result=result, termination="", rung="", condition="puzzle",
                 themes=", ".join(line.get("themes", [])))


def nice_ticks(lo: float, hi: float, most: int = 7) -> list[float]:
    """Round values within [lo, hi] for an axis's ticks: steps of 1, 2 or 5 times a power of
    ten, the smallest giving at most `most` ticks."""
    if not hi > lo:
        return [lo]
    span = hi - lo
    for power in range(math.floor(math.log10(span / most)), math.ceil(math.log10(span)) + 1):
        for mult in (1, 2, 5):
            step = mult * 10.0 ** power
            first = math.ceil(lo / step) * step
            count = math.floor((hi - first) / step + 1e-9) + 1
            if count <= most:
                return [round(first + k * step, 10) for k in range(count)]
    return [lo, hi]


def _tick_label(v: float) -> str:
    return f"{v:g}" if abs(v) < 1000 else f"{v:.0f}"


def interval_rows(values: list[tuple[str, dict[str, Any] | None, int | None]], scale: float,
                  width: float, digits: int = 3) -> list[dict[str, Any]]:
    """Rows of an interval chart: the label, the value and its interval as x positions in
    [0, width] for a metric on [0, scale]; rows without a value are kept, empty."""
    def x(v: float) -> float:
        return round(max(0.0, min(width, width * float(v) / scale)), 1)

    rows: list[dict[str, Any]] = []
    for label, m, n in values:
        if not m or m.get("value") is None:
            rows.append({"label": label, "n": n, "text": "n/a"})
            continue
        few = n is not None and n < MIN_INTERVAL_N  # a bootstrap of a handful bounds nothing
        rows.append({"label": label, "n": n, "x": x(m["value"]),
                     "lo": None if few else x(m["lo"]), "hi": None if few else x(m["hi"]),
                     "text": f"{m['value']:.{digits}f} " + (
                         "(no interval)" if few else
                         f"[{m['lo']:.{digits}f}, {m['hi']:.{digits}f}]")})
    return rows


def axis_ticks(lo: float, hi: float, width: float) -> list[dict[str, Any]]:
    """Ticks of an axis from lo to hi drawn over [0, width]: x position and label."""
    return [{"x": round(width * (v - lo) / (hi - lo), 1), "label": _tick_label(v)}
            for v in nice_ticks(lo, hi)]


def strata(result: dict[str, Any], width: float) -> list[dict[str, Any]]:
    """A static run's metrics per stratum (Elo bucket, phase, type, ...) as interval charts."""
    charts = []
    for key, title, scale in STRATUM_METRICS:
        for dim in STRATA:
            groups = result.get("by", {}).get(dim, {})
            if not groups:
                continue
            values = [(name, g.get(key), g.get("n")) for name, g in groups.items()]
            charts.append({"metric": title, "by": dim.replace("_", " "),
                           "rows": interval_rows(values, scale, width, metric_digits(key)),
                           "ticks": axis_ticks(0, scale, width),
                           "wide": dim == CELLS})  # long labels: a row of its own
    return charts


def evolution(points: list[dict[str, Any]], width: float, height: float,
              final: dict[str, Any] | None = None) -> dict[str, Any]:
    """A posterior's evolution (mean and 90% band after each game or puzzle) as polyline
    coordinates in a width x height box, with the y axis's range. When the `final` estimate
    is one-sided ("below ~N", "above ~N") the data bound the Elo on that side only, so the
    chart draws that bound, not a band: a two-sided band would be the prior's shape."""
    pts = [p for p in points if p.get("mean") is not None]
    if final and final.get("kind") in (BELOW, ABOVE):
        return _bound_chart(final, len(points), width, height)
    if not pts:
        return {}
    # An open end (an estimate bounded on one side only) is drawn at the mean.
    lows = [p["mean"] if p.get("lo") is None else p["lo"] for p in pts]
    highs = [p["mean"] if p.get("hi") is None else p["hi"] for p in pts]
    y0, y1 = min(lows), max(highs)
    y1 = y1 if y1 > y0 else y0 + 1

    def xy(i: int, v: float) -> str:
        x = width * i / max(len(pts) - 1, 1)
        return f"{x:.1f},{height - height * (v - y0) / (y1 - y0):.1f}"

    band = [xy(i, v) for i, v in enumerate(highs)] + \
        [xy(i, v) for i, v in reversed(list(enumerate(lows)))]
    yticks = [{"y": round(height - height * (v - y0) / (y1 - y0), 1), "label": _tick_label(v)}
              for v in nice_ticks(y0, y1, 5)]
    return {"mean": " ".join(xy(i, p["mean"]) for i, p in enumerate(pts)),
            "band": " ".join(band), "y0": round(y0), "y1": round(y1), "n": len(pts),
            "yticks": yticks, "width": width, "height": height}


def _bound_chart(final: dict[str, Any], n: int, width: float,
                 height: float) -> dict[str, Any]:
    """A one-sided estimate's chart: its bound as a line, the side the Elo lies on shaded."""
    below = final["kind"] == BELOW
    bound = float(final["hi"] if below else final["lo"])
    y0, y1 = bound - BOUND_SPAN, bound + BOUND_SPAN
    y = round(height / 2, 1)
    shade = (f"0,{y} {width},{y} {width},{height} 0,{height}" if below
             else f"0,0 {width},0 {width},{y} 0,{y}")
    yticks = [{"y": round(height - height * (v - y0) / (y1 - y0), 1), "label": _tick_label(v)}
              for v in nice_ticks(y0, y1, 5)]
    return {"bound": {"y": y, "text": final.get("text", ""), "shade": shade}, "n": n,
            "y0": round(y0), "y1": round(y1), "yticks": yticks, "width": width,
            "height": height}


def elo_axis(entries: list[dict[str, Any]], lines: list[tuple[str, float]],
             width: float) -> dict[str, Any]:
    """Game Elos with intervals and reference lines (rungs, the random mover) on one x axis."""
    values = [v for e in entries for v in (e.get("lo"), e.get("hi"), e.get("mean"))
              if v is not None] + [v for _, v in lines]
    if not values:
        return {}
    lo, hi = min(values) - 50, max(values) + 50

    def x(v: float | None) -> float | None:
        return None if v is None else round(width * (v - lo) / (hi - lo), 1)

    rows = [{**e, "x": x(e.get("mean")), "xlo": x(e.get("lo")), "xhi": x(e.get("hi"))}
            for e in entries]
    refs = [{"label": name, "x": x(v), "elo": round(v)} for name, v in lines]
    return {"rows": rows, "refs": refs, "lo": round(lo), "hi": round(hi),
            "ticks": axis_ticks(lo, hi, width)}


LADDER_COLUMNS = ("rung", "spec", "anchor", "elo", "lo", "hi", "games", "engine")


def _csv_rows(path: Path, columns: tuple[str, ...]) -> list[dict[str, str]]:
    """A CSV file's rows, gzip-compressed or not (DataError naming the file when a column is
    missing)."""
    try:
        with open_text(path) as handle:
            reader = csv.DictReader(handle)
            missing = [c for c in columns if c not in (reader.fieldnames or [])]
            if missing:
                raise DataError(f"{path}: no column {', '.join(missing)}")
            return list(reader)
    except (OSError, UnicodeDecodeError, csv.Error, EOFError, zlib.error) as exc:
        raise DataError(f"{path}: cannot read it ({exc})") from exc


def ladder_view(ladder: Path) -> dict[str, Any]:
    """ladder.csv's rungs and, from the calibration games beside it, the games of every
    pair played by its engine under its adjudication rule (the others belong to other
    engines' ladders: counted, not shown)."""
    rungs = _csv_rows(ladder, LADDER_COLUMNS)
    first = rungs[0] if rungs else {}
    mine = (first.get("engine", ""), first.get("adjudication") or "1")
    games_file = ladder.with_name(LADDER_GAMES)
    pairs: Counter[tuple[str, str, str]] = Counter()
    other = 0
    if games_file.is_file():
        for row in _csv_rows(games_file, ("condition", "weak", "strong", "engine")):
            if (row["engine"], row.get("adjudication") or "1") != mine:
                other += 1
                continue
            pairs[(row["condition"], row["weak"], row["strong"])] += 1
    names = [r["rung"] for r in rungs]
    matrix = [[pairs[("standard", a, b)] + pairs[("standard", b, a)] for b in names]
              for a in names]
    known = set(names)
    off = sum(n for (_, a, b), n in pairs.items() if a not in known or b not in known)
    return {"rungs": rungs, "names": names, "matrix": matrix,
            "conditions": sorted({c for c, _, _ in pairs}), "games": sum(pairs.values()),
            "off_ladder": off, "other_engines": other, "engine": mine[0],
            "file": ladder_name(ladder)}


def ladder_name(ladder: Path) -> str:
    """The ladder as the run pages name it: its folder and file, the version its file is
    (the registry beside it) and the digest every play result records."""
    sha = sha256_file(ladder)
    version = version_of(ladder, sha)
    return (f"{ladder.parent.name}/{ladder.name}"
            + (f", version {version.number}" if version else "") + f", sha256 {sha[:12]}")

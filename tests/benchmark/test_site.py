"""The report site in a real headless Chromium: every page loads with no console error and no
request outside the site, tables sort, the viewer steps through a game and a puzzle line to
their final positions, hostile answers stay text, and pages fit a phone's width. The results
come from real runs against a local server whose every answer carries a <script>, an
<img onerror> and a javascript: link; screenshots of each page kind land in
output/screenshots/ for a person to look at."""

from __future__ import annotations

import csv
import gzip
import html
import io
import json
import os
import re
import shutil
import urllib.parse
from pathlib import Path

import chess
import chess.engine
import chess.pgn
import html5lib
import numpy as np
import pytest

import benchmark
from chess_eval.benchmark.arena.ladder import load_ladder
from chess_eval.benchmark.core.data import FIRST_LADDER, LADDER_GAMES, REFERENCE_LADDER
from chess_eval.benchmark.leaderboard import views
from chess_eval.benchmark.leaderboard.views import evolution, ladder_view
from chess_eval.files import sha256_file
from tests.benchmark.chatserver import ChatServer, Response
from tests.browser import Browser, find_chromium
from tests.conftest import PUZZLES_1K, ROOT
from tests.test_public_names import internal_names

QUESTIONS = ROOT / "questions.csv"
SHOTS = Path(os.environ.get("SCREENSHOTS", ROOT / "output" / "screenshots"))
HOSTILE = ('<script>window.__pwned = 1</script> <img src=x onerror="window.__pwned = 2"> '
           '<a id="evil" href="javascript:window.__pwned = 3">click</a>')
MODEL = "evil/<b>model</b>"
PWNED = "window.__pwned === undefined ? null : window.__pwned"


def _script(fen: str, attempt: int) -> Response:
    """Every answer hostile; a third of first tries name no move (an illegal answer)."""
    moves = sorted(chess.Board(fen).legal_moves, key=chess.Move.uci)
    if attempt == 0 and len(moves) % 3 == 0:
        return Response(HOSTILE + "\nFinal answer: Zz9")
    return Response(HOSTILE + "\nFinal answer: " + moves[len(moves) // 2].uci())


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(results, site) from real static, play, puzzle and world-model runs."""
    results = tmp_path_factory.mktemp("results")
    out = tmp_path_factory.mktemp("site")
    with ChatServer(_script) as server:
        # A fixed endpoint id: the server's port, drawn anew each run, would otherwise be
        # part of the player's identity, which seeds the rungs' random moves, and so of
        # which games hold an illegal answer.
        common = ["--model", MODEL, "--base-url", server.base_url, "--retries", "0",
                  "--endpoint-id", "site", "--out", str(results)]
        assert benchmark.main(["run", *common, "--limit", "24"]) == 0
        assert benchmark.main(["play", *common, "--max-games", "2", "--ply-cap", "24"]) == 0
        assert benchmark.main(["puzzles", *common, "--puzzles", str(PUZZLES_1K),
                               "--max-puzzles", "3"]) == 0
        assert benchmark.main(["worldmodel", *common, "--questions", str(QUESTIONS),
                               "--limit", "2"]) == 0
    assert benchmark.main(["run", "--model", "random", "--limit", "60", "--out",
                           str(results)]) == 0
    assert benchmark.main(["match", "--model", "stockfish:nodes=1", "--opponent", "random",
                           "--max-games", "2", "--ply-cap", "24", "--out", str(results)]) == 0
    assert benchmark.main(["report", "--results", str(results), "--out", str(out),
                           "--puzzles", str(PUZZLES_1K)]) == 0
    return results, out


@pytest.fixture(scope="module")
def browser() -> Browser:
    """One headless Chromium for the module."""
    executable = find_chromium()
    assert executable, "no chromium: `make test` installs Debian's (or set CHROMIUM_PATH)"
    with Browser(executable) as b:
        yield b


def _pages(out: Path) -> list[Path]:
    return [out / "index.html", out / "ladder.html", *sorted((out / "runs").glob("*.html"))]


def _kind(page: Path) -> str:
    """index, ladder, or the kind of run a run page shows."""
    if page.stem in ("index", "ladder"):
        return page.stem
    return next((k for k in ("play", "puzzles", "worldmodel", "match")
                 if page.stem.startswith(k)), "static")


def test_every_page_loads_clean_with_nothing_from_elsewhere(site, browser: Browser) -> None:
    _, out = site
    pages = _pages(out)
    assert {_kind(p) for p in pages} == {"index", "ladder", "static", "play", "puzzles",
                                         "worldmodel", "match"}
    shot_of: dict[str, Path] = {}
    for page in pages:
        since = len(browser.events)
        browser.open(page.as_uri())
        browser.settle()
        assert browser.errors(since) == [], page.name
        assert browser.js(PWNED) is None, page.name
        outside = [u for u in browser.requests(since) if not u.startswith(out.as_uri() + "/")]
        assert outside == [], page.name
        assert browser.js("document.querySelectorAll('img, a[href^=\"javascript\"], "
                          "iframe, object').length") == 0, page.name
        text = browser.js("document.body.innerText")
        assert "{'" not in text and "['" not in text, f"a Python repr on {page.name}"
        shot_of.setdefault(_kind(page), page)
    assert browser.dialogs() == []
    for kind, page in shot_of.items():
        browser.open(page.as_uri())
        assert browser.screenshot(SHOTS / f"{kind}.png").stat().st_size > 10_000


def test_hostile_answers_and_names_are_shown_as_text(site, browser: Browser) -> None:
    _, out = site
    [static] = [p for p in _pages(out) if _kind(p) == "static" and "evil" in p.name]
    source = static.read_text(encoding="utf-8")
    assert "<script>window.__pwned" not in source and "<b>model</b>" not in source
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in source
    browser.open(static.as_uri())
    browser.js("document.querySelectorAll('details').forEach(d => d.open = true)")
    text = browser.js("document.body.innerText")
    assert "<script>window.__pwned = 1</script>" in text and MODEL in text
    assert browser.js(PWNED) is None


def test_the_runs_table_sorts_both_ways(site, browser: Browser) -> None:
    _, out = site
    browser.open((out / "index.html").as_uri())
    column = "Array.from(document.querySelectorAll('#runs tbody tr')).map(r => r.cells[3]" \
             ".dataset.value).map(Number)"
    unsorted = browser.js(column)
    assert len(unsorted) == 5 and unsorted != sorted(unsorted)  # n: 3, 2 games, 24, 2, 60
    header = "document.querySelectorAll('#runs thead th')[3]"
    browser.js(f"{header}.click()")
    assert browser.js(column) == sorted(unsorted)
    assert browser.js(f"{header}.getAttribute('aria-sort')") == "ascending"
    browser.js(f"{header}.click()")
    assert browser.js(column) == sorted(unsorted, reverse=True)


def _final_fens(pgn: Path) -> list[str]:
    """Each game's final position, by python-chess from the run's PGN."""
    fens = []
    with open(pgn, encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            fens.append(game.end().board().fen())
    return fens


def test_the_viewer_steps_through_a_game_by_keys_and_buttons(site, browser: Browser) -> None:
    results, out = site
    [pgn] = results.glob("play__*.pgn")
    finals = _final_fens(pgn)
    page = out / "runs" / (pgn.stem + ".html")
    browser.open(page.as_uri())
    fen = "document.getElementById('board').dataset.fen"
    data = json.loads(browser.js("document.getElementById('games-data').textContent"))
    assert browser.js(fen) == data[0]["start"]
    for ply in data[0]["plies"]:  # step by the right-arrow key through every move
        browser.key("ArrowRight", "ArrowRight", 39)
        assert browser.js(fen) == ply["fen"]
    assert browser.js(fen) == finals[0]
    browser.key("Home", "Home", 36)
    assert browser.js(fen) == data[0]["start"]
    browser.js("document.getElementById('game-select').value = '1';"
               "document.getElementById('game-select').dispatchEvent(new Event('change'))")
    browser.js("document.getElementById('last').click()")
    assert browser.js(fen) == finals[1]
    pieces = browser.js("document.querySelectorAll('#board svg use').length")
    assert pieces == len(chess.Board(finals[1]).piece_map())
    # A move the model first answered illegally shows that raw answer, as text.
    browser.js("document.querySelector('#moves li.had-illegal button').click()")
    answers = browser.js("document.getElementById('answers').innerText")
    assert "format" in answers and "<script>window.__pwned = 1</script>" in answers
    assert browser.js(PWNED) is None


def test_the_viewer_replays_a_puzzle_line(site, browser: Browser) -> None:
    results, out = site
    [result] = results.glob("puzzles__*.json")
    lines = json.loads(result.read_text(encoding="utf-8"))["lines"]
    board = chess.Board(lines[0]["fen"])
    board.push_uci(lines[0]["solution"][0])  # the opponent's move that sets the puzzle
    for uci in lines[0]["moves"][:1]:
        board.push_uci(uci)
    browser.open((out / "runs" / (result.stem + ".html")).as_uri())
    browser.js("document.getElementById('next').click(); "
               "document.getElementById('next').click()")
    if lines[0]["moves"]:
        assert browser.js("document.getElementById('board').dataset.fen") == board.fen()


def test_pages_are_well_formed_html(site) -> None:
    _, out = site
    for page in _pages(out):
        parser = html5lib.HTMLParser(strict=True)
        parser.parse(page.read_text(encoding="utf-8"))  # raises on any parse error


def test_what_the_product_writes_uses_public_names_and_scores_only_run_tests(
        site, browser: Browser) -> None:
    """Every page, report and leaderboard names methods publicly; a world-model score is
    shown only for a run of the world-model tests; a static run shows its illegal rate."""
    results, out = site
    assert benchmark.main(["leaderboard", "--results", str(results), "--questions",
                           str(QUESTIONS), "--puzzles", str(PUZZLES_1K)]) == 0
    written = [*_pages(out), *results.glob("*.md")]
    assert len(written) >= 9  # index, ladder, four run pages, their reports, the leaderboard
    for path in written:
        assert internal_names(path.read_text(encoding="utf-8")) == [], path.name
    browser.open((out / "index.html").as_uri())
    cells = browser.js("""[...document.querySelectorAll('#runs tbody tr')].map(
        tr => [tr.cells[1].textContent.trim().split(/\\s+/)[0],
               tr.cells[tr.cells.length - 2].textContent.trim()])""")
    world = {kind: cell for kind, cell in cells if kind in ("static", "worldmodel")}
    assert world["static"] == "not run" and float(world["worldmodel"]) >= 0
    board = (results / "leaderboard.md").read_text(encoding="utf-8")
    static_tables = board.split("## World model")[0]
    assert "illegal only" not in board and "| illegal rate (90%) |" in static_tables
    # A static row gives the illegal rate with its exact interval (0 of 60 for random: n/a).
    assert re.search(r"\| evil/<b>model</b> \| fen@1 \|.*\| \d+\.\d% \[\d+\.\d%, "
                     r"\d+\.\d%\] \|", static_tables)
    wm_table = board.split("## World model")[1]
    assert "worldmodel run, 2 positions" in wm_table and "fen@1" not in wm_table
    [static_md] = results.glob("static__evil*.md")
    report = static_md.read_text(encoding="utf-8")
    assert "## Illegal rate" in report and "no world-model score" in report
    assert "rubric" not in report


def test_pages_fit_a_phone(site) -> None:
    _, out = site
    executable = find_chromium()
    assert executable
    with Browser(executable, width=390, height=844) as phone:
        for page in _pages(out):
            phone.open(page.as_uri())
            width = phone.js("document.documentElement.scrollWidth")
            assert width <= 390, f"{page.name} is {width} px wide on a 390 px screen"
        phone.open(next(p for p in _pages(out) if _kind(p) == "play").as_uri())
        phone.screenshot(SHOTS / "play-phone.png")


def test_report_errors_are_one_line(tmp_path: Path, capsys) -> None:
    assert benchmark.main(["report", "--results", str(tmp_path / "nope"),
                           "--out", str(tmp_path / "site")]) == 2
    assert "no such results directory" in capsys.readouterr().err
    assert benchmark.main(["report", "--results", str(tmp_path), "--out", str(tmp_path)]) == 2
    assert "is the results directory" in capsys.readouterr().err
    (tmp_path / "file").write_text("")
    assert benchmark.main(["report", "--results", str(tmp_path), "--out",
                           str(tmp_path / "file")]) == 2
    assert "is a file, not a directory" in capsys.readouterr().err
    assert benchmark.main(["report", "--results", str(tmp_path), "--out",
                           str(tmp_path / "site"), "--ladder", str(tmp_path / "no.csv")]) == 2
    assert "no.csv: no such file" in capsys.readouterr().err
    assert benchmark.main(["report", "--results", str(tmp_path), "--out",
                           str(tmp_path / "site")]) == 2
    assert "no complete results" in capsys.readouterr().err


def test_a_one_sided_result_draws_its_bound_not_a_band() -> None:
    """All games lost: the per-game posteriors are two-sided, but they are the prior's shape;
    the chart shows the bound the data give and the side the Elo lies on."""
    points = [{"mean": 300, "lo": -400, "hi": 950}, {"mean": 250, "lo": -420, "hi": 900}]
    final = {"mean": None, "lo": None, "hi": 881, "kind": "below", "text": "below ~881"}
    chart = evolution(points, 100.0, 50.0, final)
    assert "band" not in chart and "mean" not in chart
    assert chart["bound"]["text"] == "below ~881" and chart["bound"]["y"] == 25.0
    assert (chart["y0"], chart["y1"]) == (281, 1481)  # the bound in the middle
    assert chart["bound"]["shade"].endswith("0,50.0")  # shaded below the line
    above = evolution(points, 100.0, 50.0, {**final, "kind": "above", "lo": 2900, "hi": None,
                                            "text": "above ~2900"})
    assert above["bound"]["shade"].startswith("0,0 ")
    interval = evolution(points, 100.0, 50.0, {"mean": 250, "lo": -420, "hi": 900,
                                               "kind": "interval"})
    assert "band" in interval and "bound" not in interval


def test_a_posterior_with_open_ends_is_drawn_at_its_mean() -> None:
    points = [{"mean": 1500, "lo": None, "hi": 2100}, {"mean": 1600, "lo": 1400, "hi": None},
              {"mean": None, "lo": None, "hi": 900}]
    chart = evolution(points, 100.0, 50.0)
    assert chart["n"] == 2 and (chart["y0"], chart["y1"]) == (1400, 2100)
    # The first point's low end is its mean: 1500 is 1/7 of the way up the 700-Elo range.
    assert chart["band"].split()[-1] == f"0.0,{50 - 50 * 100 / 700:.1f}"


def test_a_result_of_an_older_version_is_listed_without_a_page(site, tmp_path: Path,
                                                               caplog) -> None:
    results, _ = site
    old = tmp_path / "results"
    shutil.copytree(results, old)
    [play] = old.glob("play__*.json")
    data = json.loads(play.read_text(encoding="utf-8"))
    for condition in data["conditions"].values():
        del condition["distinct"]  # a field an earlier version did not write
    play.write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "site"
    assert benchmark.main(["report", "--results", str(old), "--out", str(out),
                           "--puzzles", str(PUZZLES_1K)]) == 0
    assert f"no page for {play.name}" in caplog.text
    assert not (out / "runs" / (play.stem + ".html")).exists()
    index = (out / "index.html").read_text(encoding="utf-8")
    assert f'href="runs/{play.stem}.html"' not in index and "puzzles__" in index


def test_a_play_run_on_a_ladder_with_another_zero_is_marked_and_not_ranked(
        site, tmp_path: Path) -> None:
    results, _ = site
    old = tmp_path / "results"
    shutil.copytree(results, old)
    [play] = old.glob("play__*.json")
    data = json.loads(play.read_text(encoding="utf-8"))
    # As ladder 1 kept it: Stockfish at 1,000 nodes fixed at 2600, the random mover measured.
    data["ladder"] |= {"names": ["random@1", "nodes1k@1"], "elos": [-1, 2600],
                       "cov": [[12700.5, 0.0], [0.0, 0.0]]}
    play.write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "site"
    assert benchmark.main(["report", "--results", str(old), "--out", str(out),
                           "--puzzles", str(PUZZLES_1K)]) == 0
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "earlier ladder, zero nodes1k@1 = 2600" in index  # the runs table's label
    scales = index.split('<section class="scale">')[1:]
    [earlier] = [s for s in scales if "game Elo, earlier ladder" in s]
    assert html.escape(data["model"]) in earlier and "Rank probabilities" not in earlier
    assert not any("game Elo (ladder)" in s for s in scales)  # no run on the current one


def test_the_ladder_page_counts_every_committed_calibration_game_of_its_engine() -> None:
    """Each ladder's page shows the games in its folder, all of its own engine (the 17.1
    ladder's rungs have the same names as the 15.1 ladder's)."""
    for path, engine in ((FIRST_LADDER, "Stockfish 15.1"), (REFERENCE_LADDER, "Stockfish 17.1")):
        with gzip.open(path.with_name(LADDER_GAMES), "rt", encoding="utf-8") as handle:
            rows = [line.rstrip("\n").split(",") for line in handle][1:]
        view = ladder_view(path)
        matrix = np.array(view["matrix"])
        assert view["names"] == [r.name for r in load_ladder(path).rungs]
        assert view["engine"] == engine
        assert (matrix == matrix.T).all() and not matrix.diagonal().any()
        names = set(view["names"])
        mine = [r for r in rows if r[9] == engine]
        on_rungs = sum(r[0] == "standard" and r[1] in names and r[2] in names for r in mine)
        assert matrix.sum() == 2 * on_rungs and view["games"] == len(mine)
        assert view["other_engines"] == len(rows) - len(mine) == 0 and mine
        off = sum(r[1] not in names or r[2] not in names for r in mine)
        assert view["off_ladder"] == off
        assert (matrix.sum(axis=1) > 0).all()  # every rung has played
    assert ladder_view(FIRST_LADDER)["off_ladder"] > 0  # a pilot's dropped rungs


def test_the_runs_table_fits_a_1280_pixel_screen(site) -> None:
    """Every column of the runs table in view at 1280 px, with no scrollbar to find them."""
    _, out = site
    executable = find_chromium()
    assert executable
    with Browser(executable, width=1280, height=900) as wide:
        wide.open((out / "index.html").as_uri())
        table = "document.querySelector('#runs')"
        assert wide.js(f"{table}.rows[0].cells.length") == 14
        assert wide.js(f"{table}.scrollWidth") <= wide.js(f"{table}.parentElement.clientWidth")
        wide.screenshot(SHOTS / "index-1280.png")


def test_charts_have_round_ticks_on_labelled_axes(site, browser: Browser) -> None:
    assert views.nice_ticks(-50, 3158) == [0, 500, 1000, 1500, 2000, 2500, 3000]
    assert views.nice_ticks(0, 1) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert views.nice_ticks(874, 3068) == [1000, 1500, 2000, 2500, 3000]
    _, out = site
    browser.open((out / "index.html").as_uri())
    labels = browser.js("Array.from(document.querySelectorAll('.scale svg .tick-label'))"
                        ".map(t => t.textContent)")
    assert len(labels) >= 3 and all(label.lstrip("-").isdigit() for label in labels)
    [static] = [p for p in _pages(out) if _kind(p) == "static" and "random" in p.name]
    browser.open(static.as_uri())
    assert browser.js("document.querySelectorAll('figure svg .tick-label').length") >= 6


def _width(row) -> int:
    """Cells of an HTML table row, a colspan counted as the columns it spans."""
    return sum(int(cell.get("colspan", "1")) for cell in row
               if cell.tag.rsplit("}", 1)[-1] in ("td", "th"))


def test_every_table_row_has_its_headers_width(site) -> None:
    """In the site and in leaderboard.md, no row has a cell more or fewer than its header."""
    results, out = site
    for page in _pages(out):
        tree = html5lib.parse(page.read_text(encoding="utf-8"), namespaceHTMLElements=False)
        for table in tree.iter("table"):
            rows = list(table.iter("tr"))
            if not rows:
                continue
            head = _width(rows[0])
            assert all(_width(r) == head for r in rows[1:]), (page.name, [
                _width(r) for r in rows])
    assert benchmark.main(["leaderboard", "--results", str(results)]) == 0
    lines = (results / "leaderboard.md").read_text().splitlines()
    tables, current = [], []
    for line in [*lines, ""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    assert len(tables) >= 4
    for table in tables:
        widths = [len(line.strip().strip("|").split("|")) for line in table]
        assert set(widths) == {widths[0]}, table


def test_a_scale_with_no_ranked_entry_draws_no_empty_chart(tmp_path: Path) -> None:
    """A model that forfeits every game is bounded on one side only: the site lists it apart
    and draws no axis holding the rungs' lines alone."""
    results, out = tmp_path / "results", tmp_path / "site"
    with ChatServer(lambda fen, attempt: Response("Final answer: Zz9")) as server:
        assert benchmark.main(["play", "--model", "m", "--base-url", server.base_url,
                               "--retries", "0", "--max-games", "2", "--out",
                               str(results)]) == 0
    assert benchmark.main(["report", "--results", str(results), "--out", str(out),
                           "--puzzles", str(PUZZLES_1K)]) == 0
    tree = html5lib.parse((out / "index.html").read_text(encoding="utf-8"),
                          namespaceHTMLElements=False)
    [games] = [s for s in tree.iter("section") if "scale" in s.get("class", "")]
    assert "below ~" in "".join(games.itertext())  # listed apart, with its bound
    assert not [e for e in games.iter() if str(e.tag).endswith("svg")]  # (its namespace)


REPLAY = ROOT / "tests" / "data" / "replay"  # a committed play run: 2 games, the judge's evals


def _win(cp: int) -> float:
    """Lichess's win% of an eval from the mover's side (cp clamped to +-1000), written here
    apart from the product's chess_eval/grading.py."""
    cp = max(-1000, min(1000, cp))
    return 50 + 50 * (2 / (1 + np.exp(-0.00368208 * cp)) - 1)


def _marks(game: chess.pgn.Game) -> list[str | None]:
    """Each move's mark by Lichess's thresholds: a drop of 15, 10, 5 win% points."""
    scores = [game.eval(), *(n.eval() for n in game.mainline())]
    cps = [s.white().score(mate_score=100_000) if s is not None else
           (-100_000 if n.board().turn == chess.WHITE else 100_000)
           for s, n in zip(scores, [game, *game.mainline()], strict=True)]
    marks: list[str | None] = []
    white = game.board().turn == chess.WHITE
    for before, after in zip(cps, cps[1:], strict=False):
        sign = 1 if white else -1
        loss = max(0.0, _win(sign * before) - _win(sign * after))
        marks.append("blunder" if loss >= 15 else "mistake" if loss >= 10
                     else "inaccuracy" if loss >= 5 else None)
        white = not white
    return marks


def _book(game: chess.pgn.Game) -> list[str]:
    """The book's moves (SAN) that play's PGN names in its first comment, "starts after
    ..." (its [%eval] aside)."""
    text = re.sub(r"\[%[^\]]*\]", "", game.comment).strip()
    assert text.startswith("starts after ")
    return text.removeprefix("starts after ").split()


def _eval_text(score: chess.engine.PovScore) -> str:
    """An eval as Lichess writes one, from python-chess's reading of the PGN."""
    white = score.white()
    mate = white.mate()
    return f"#{mate}" if mate is not None else f"{white.score() / 100:+.2f}"


def _line_breaks(browser: Browser, selector: str) -> list[str]:
    """Where the text of each element matching `selector` wraps: the two characters either
    side of every line break, as the browser lays them out."""
    return browser.js(f"""(() => {{
        const found = [];
        for (const el of document.querySelectorAll({json.dumps(selector)})) {{
          const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
          let last = null, prev = "";
          while (walker.nextNode()) {{
            const node = walker.currentNode;
            for (let k = 0; k < node.length; k++) {{
              const range = document.createRange();
              range.setStart(node, k); range.setEnd(node, k + 1);
              const rect = range.getClientRects()[0];
              if (!rect) continue;
              if (last !== null && rect.top > last + 2) found.push(prev + node.data[k]);
              last = rect.top; prev = node.data[k];
            }}
          }}
        }}
        return found; }})()""")


LONG_NAME = "mix:random=72,nodes=1000:seed=0@Stockfish 17.1 WASM"


def test_the_replay_draws_the_judges_evals_and_marks_each_move(tmp_path: Path,
                                                               browser: Browser) -> None:
    """A committed game's replay as a chess player reads it: every move from the initial
    position (the book's marked book), the opening's name, the judge's eval and best move of
    every move (read here from the PGN: its [%eval]s and the variations beside the moves),
    one graph point per judged position on a graph with axes, a click on a point going to
    that move, each move marked as Lichess's thresholds mark it (recomputed here), each
    side's counts and Lichess's game accuracy (the formula written out in
    tests/test_accuracy.py), a PGN download and a Lichess link that hold the whole game,
    and short player labels with the full name on hover."""
    from tests.test_accuracy import _cps, lila_game_accuracy

    results = tmp_path / "results"
    shutil.copytree(REPLAY, results)
    [result] = results.glob("*.json")
    data = json.loads(result.read_text(encoding="utf-8"))
    data["model"] = LONG_NAME  # a name as long as a rung's, for the index's columns
    result.write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "site"
    assert benchmark.main(["report", "--results", str(results), "--out", str(out),
                           "--puzzles", str(PUZZLES_1K)]) == 0
    [pgn] = results.glob("*.pgn")
    with pgn.open() as handle:
        games = list(iter(lambda: chess.pgn.read_game(handle), None))
    since = len(browser.events)
    browser.open((out / "runs" / f"{pgn.stem}.html").as_uri())
    fen = "document.getElementById('board').dataset.fen"
    assert browser.js("document.getElementById('eval-graph').viewBox.baseVal.width") >= 720
    for index, game in enumerate(games):
        browser.js(f"document.getElementById('game-select').value = '{index}';"
                   "document.getElementById('game-select').dispatchEvent(new Event('change'))")
        book = _book(game)
        nodes = list(game.mainline())
        expected = [None] * len(book) + _marks(game)
        # The model's colour from the game (the rung's side carries its Elo), its moves
        # marked as the model's, the book's as the book's.
        model_white = "WhiteElo" not in game.headers
        info = browser.js("document.getElementById('game-info').textContent")
        assert f"the model plays {'white' if model_white else 'black'}" in info
        kinds = browser.js("Array.from(document.querySelectorAll('#moves li'))"
                           ".map(li => ['book', 'model', 'engine'].find("
                           "k => li.classList.contains('by-' + k)))")
        assert kinds == ["book"] * len(book) + [
            "model" if w == model_white else "engine" for w in _movers(game)]
        sans = browser.js("Array.from(document.querySelectorAll('#moves li button'))"
                          ".map(b => b.firstChild.textContent)")
        assert sans[0] == "1. " + book[0] and sans[1] == "1... " + book[1]
        assert [s.split(" ")[-1] for s in sans] == book + [n.san() for n in nodes]
        # The opening: the name Lichess's table gives the deepest position reached.
        assert browser.js("document.getElementById('game-opening').textContent").startswith(
            "Opening: A00 Hungarian Opening.")
        # The judge's eval after every move and its best move before it (a variation, or the
        # move played where there is none).
        evals = browser.js("Array.from(document.querySelectorAll('#moves li'))"
                           ".map(li => li.dataset.eval || null)")
        assert evals == [None] * len(book) + [
            _eval_text(n.eval()) if n.eval() else "mate" for n in nodes]
        best = browser.js("Array.from(document.querySelectorAll('#moves li'))"
                          ".map(li => li.dataset.best || null)")
        parents = [game, *nodes[:-1]]
        assert best == [None] * len(book) + [
            p.board().san(p.variations[-1].move) for p in parents]
        assert any(p.variations[-1].move != p.variations[0].move for p in parents)
        browser.js("document.querySelectorAll('#moves li button')[" + str(len(book)) +
                   "].click()")
        said = browser.js("document.getElementById('move-info').textContent")
        assert f"eval {_eval_text(nodes[0].eval())}" in said and "best move" in said
        assert browser.js("document.querySelectorAll('#eval-graph circle').length") == \
            len(nodes) + 1
        assert browser.js("document.querySelectorAll('#eval-graph .tick-label').length") >= 7
        shown = browser.js("Array.from(document.querySelectorAll('#moves li'))"
                           ".map(li => li.dataset.mark || null)")
        assert shown == expected and any(expected)
        for ply in (1, len(nodes) // 2, len(nodes)):  # a click on the point goes there
            browser.js(f"(() => {{ const c = document.querySelector("
                       f"'#eval-graph circle[data-ply=\"{len(book) + ply}\"]')"
                       ".getBoundingClientRect();"
                       "document.getElementById('eval-graph').dispatchEvent(new MouseEvent("
                       "'click', {clientX: c.x + c.width / 2, clientY: c.y + c.height / 2,"
                       " bubbles: true})); })()")
            assert browser.js(fen) == nodes[ply - 1].board().fen()
        accuracy = lila_game_accuracy(_cps(game), game.board().turn == chess.WHITE)
        for (colour, white), expected_accuracy in zip((("white", True), ("black", False)),
                                                      accuracy, strict=True):
            row = f"document.querySelector('#game-sides tr[data-side=\"{colour}\"]')"
            cells = browser.js(f"Array.from({row}.cells).map(c => c.textContent)")
            own = [m for m, w in zip(expected[len(book):], _movers(game), strict=True)
                   if w == white]
            assert [int(c) for c in cells[1:4]] == [own.count(k) for k in
                                                    ("inaccuracy", "mistake", "blunder")]
            assert cells[4] == f"{expected_accuracy:.1f}"
            full = game.headers["White" if white else "Black"]
            assert browser.js(f"{row}.cells[0].title") == full
            assert len(cells[0]) < len(full) and "mix:random" not in cells[0]
        # The PGN download: the whole game from the initial position, every eval kept.
        href = browser.js("document.getElementById('pgn-download').href")
        assert href.startswith("data:application/x-chess-pgn;charset=utf-8,")
        download = chess.pgn.read_game(io.StringIO(urllib.parse.unquote(href.split(",", 1)[1])))
        assert download is not None and download.board().fen() == chess.STARTING_FEN
        assert [m.uci() for m in download.mainline_moves()][len(book):] == \
            [m.uci() for m in game.mainline_moves()]
        assert download.end().board().fen() == game.end().board().fen()
        assert [n.eval() for n in download.mainline()][len(book):] == \
            [n.eval() for n in nodes]
        assert download.headers["Opening"] == "Hungarian Opening"
        # Lichess's analysis board, the moves in the link, nothing sent from the page.
        link = browser.js("document.getElementById('lichess-link').href")
        assert link.startswith("https://lichess.org/analysis/pgn/")
        moves = urllib.parse.unquote(link.removeprefix("https://lichess.org/analysis/pgn/")
                                     .split("?")[0])
        replay = chess.pgn.read_game(io.StringIO(moves))
        assert replay is not None and replay.end().board().fen() == game.end().board().fen()
        assert link.endswith("?color=black") != model_white
    assert browser.errors(since) == []
    assert [u for u in browser.requests(since) if not u.startswith(out.as_uri() + "/")] == []
    browser.screenshot(SHOTS / "replay.png")
    # The index breaks a long name only after a separator, never inside a number.
    browser.open((out / "index.html").as_uri())
    breaks = _line_breaks(browser, "#runs td.model > a")
    assert breaks and all(pair[0] in ":,/@ " for pair in breaks), breaks


def _movers(game: chess.pgn.Game) -> list[bool]:
    """For each move of a game, whether White made it."""
    white = game.board().turn == chess.WHITE
    return [(i % 2 == 0) == white for i in range(len(list(game.mainline())))]


def test_a_game_that_ends_in_checkmate_keeps_its_graph(tmp_path: Path) -> None:
    """The PGN has no [%eval] for a mated position (python-chess writes none for mate in 0):
    the replay takes it from the rules, so a game won by mate keeps its graph and marks."""

    from chess_eval.benchmark.arena.game import GameRecord, pgn
    from chess_eval.engine import MATE_CP

    fools = ["f2f3", "e7e5", "g2g4", "d8h4"]
    record = GameRecord("k", "w", "b", {"condition": "standard", "label": "start",
                                        "fen": chess.STARTING_FEN}, moves=fools,
                        evals=[20, -40, -60, -900, -MATE_CP], result="0-1",
                        termination="checkmate")
    game = chess.pgn.read_game(io.StringIO(pgn(record, {})))
    assert game is not None and views.judged(game) == [20, -40, -60, -900, -MATE_CP]
    (tmp_path / "g.pgn").write_text(pgn(record, {}))
    [view] = views.game_views(tmp_path / "g.pgn", tmp_path / "no-traces.jsonl")
    assert [p["mark"] for p in view["plies"]] == ["inaccuracy", None, "blunder", None]
    assert view["sides"]["white"]["blunder"] == 1


def test_the_ladder_page_shows_the_reference_ladder_by_default(tmp_path: Path) -> None:
    """Every game Elo on the site is on the reference ladder, so ladder.html shows it unless
    --ladder says otherwise (before, Stockfish 15.1's: its 32 rungs, nodes1k at 2574)."""
    results, out = tmp_path / "results", tmp_path / "site"
    assert benchmark.main(["run", "--model", "random", "--limit", "4", "--out",
                           str(results)]) == 0
    assert benchmark.main(["report", "--results", str(results), "--out", str(out)]) == 0
    page = (out / "ladder.html").read_text(encoding="utf-8")
    with REFERENCE_LADDER.open(newline="", encoding="utf-8") as handle:
        rungs = list(csv.DictReader(handle))
    for rung in rungs:  # each rung's row holds its Elo as the ladder's file has it
        row = re.search(rf">{re.escape(rung['rung'])}</td>(.*?)</tr>", page)
        elo = round(float(rung["elo"]))
        assert row and re.search(rf">{elo}( \(anchor\))?</td>", row.group(1)), rung
    assert {r["engine"] for r in rungs} == {"Stockfish 17.1"} and "Stockfish 15.1" not in page
    # It names the ladder as a play result records it: folder, version, the file's digest.
    digest = sha256_file(REFERENCE_LADDER)
    with REFERENCE_LADDER.with_name("ladder_versions.csv").open(encoding="utf-8") as handle:
        versions = list(csv.DictReader(handle))
    [number] = [v["version"] for v in versions if v["ladder_sha256"] == digest]
    assert f"stockfish-17.1/ladder.csv, version {number}, sha256 {digest[:12]}" in page

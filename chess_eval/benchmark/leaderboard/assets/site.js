// The report site's only script: sortable tables and the game viewer. Model text reaches the
// page through textContent only, never as HTML.
"use strict";
(function () {
  const SVG_NS = "http://www.w3.org/2000/svg";
  const PIECES = { p: "pawn", n: "knight", b: "bishop", r: "rook", q: "queen", k: "king" };
  const MARGIN = 15; // python-chess's board: a 15-unit frame with coordinates ...
  const SQUARE = 45; // ... and 45-unit squares

  function cellValue(row, index) {
    const cell = row.cells[index];
    if (!cell) return "";
    return cell.dataset.value !== undefined ? cell.dataset.value : cell.textContent.trim();
  }

  function sortBy(table, th, index) {
    const ascending = th.getAttribute("aria-sort") !== "ascending";
    for (const head of table.tHead.rows[0].cells) head.removeAttribute("aria-sort");
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    const numeric = th.dataset.type === "number";
    const body = table.tBodies[0];
    const rows = Array.from(body.rows);
    rows.sort(function (a, b) {
      const x = cellValue(a, index);
      const y = cellValue(b, index);
      if (x === "" || y === "") return (x === "") - (y === ""); // empty cells last
      const d = numeric ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
      return ascending ? d : -d;
    });
    for (const row of rows) body.appendChild(row);
  }

  for (const table of document.querySelectorAll("table.sortable")) {
    if (!table.tHead) continue;
    Array.from(table.tHead.rows[0].cells).forEach(function (th, index) {
      th.tabIndex = 0;
      th.classList.add("sort-head");
      th.addEventListener("click", function () { sortBy(table, th, index); });
      th.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          sortBy(table, th, index);
        }
      });
    });
  }

  const data = document.getElementById("games-data");
  if (!data) return;
  const games = JSON.parse(data.textContent);
  const boardBox = document.getElementById("board");
  const svg = boardBox.querySelector("svg");
  const movesList = document.getElementById("moves");
  const answers = document.getElementById("answers");
  const info = document.getElementById("game-info");
  const select = document.getElementById("game-select");
  let game = games[0];
  let ply = 0;

  function squareXY(file, rank) {
    return [MARGIN + file * SQUARE, MARGIN + (7 - rank) * SQUARE];
  }

  function drawBoard(fen, lastMove) {
    for (const old of svg.querySelectorAll("use, rect.hl")) old.remove();
    if (lastMove) {
      for (const square of [lastMove.slice(0, 2), lastMove.slice(2, 4)]) {
        const [x, y] = squareXY(square.charCodeAt(0) - 97, parseInt(square[1], 10) - 1);
        const rect = document.createElementNS(SVG_NS, "rect");
        rect.setAttribute("class", "hl");
        rect.setAttribute("x", x); rect.setAttribute("y", y);
        rect.setAttribute("width", SQUARE); rect.setAttribute("height", SQUARE);
        svg.appendChild(rect);
      }
    }
    const placement = fen.split(" ")[0].split("/");
    placement.forEach(function (row, r) {
      let file = 0;
      for (const ch of row) {
        if (/[1-8]/.test(ch)) { file += parseInt(ch, 10); continue; }
        const colour = ch === ch.toUpperCase() ? "white" : "black";
        const use = document.createElementNS(SVG_NS, "use");
        const [x, y] = squareXY(file, 7 - r);
        use.setAttribute("href", "#" + colour + "-" + PIECES[ch.toLowerCase()]);
        use.setAttribute("transform", "translate(" + x + ", " + y + ")");
        svg.appendChild(use);
        file += 1;
      }
    });
    boardBox.dataset.fen = fen;
  }

  function label(index) {
    const parts = game.start.split(" ");
    const whiteFirst = parts[1] === "w";
    const number = parseInt(parts[5], 10) + Math.floor((index + (whiteFirst ? 0 : 1)) / 2);
    const white = (index % 2 === 0) === whiteFirst;
    return number + (white ? ". " : "... ") + game.plies[index].san;
  }

  function showTries(tries, heading) {
    const box = document.createElement("div");
    const h = document.createElement("h3");
    h.textContent = heading;
    box.appendChild(h);
    for (const t of tries) {
      const item = document.createElement("div");
      item.className = "try cat-" + t.category;
      const badge = document.createElement("p");
      badge.textContent = t.category + (t.detail && t.detail !== t.category ? ": " + t.detail : "")
        + (t.read ? " (read as " + t.read + ")" : "");
      const raw = document.createElement("pre");
      raw.textContent = t.answer;
      item.appendChild(badge);
      item.appendChild(raw);
      box.appendChild(item);
    }
    answers.appendChild(box);
  }

  const evalBox = document.getElementById("eval-box");
  const graph = document.getElementById("eval-graph");
  const sides = document.getElementById("game-sides");
  const moveInfo = document.getElementById("move-info");
  const opening = document.getElementById("game-opening");
  const links = document.getElementById("game-links");
  const download = document.getElementById("pgn-download");
  const lichess = document.getElementById("lichess-link");
  // The graph's box (SVG units): the plot inside margins that hold the axes' labels.
  const GRAPH_W = 720, GRAPH_H = 240, LEFT = 44, RIGHT = 10, TOP = 10, BOTTOM = 30;
  const SYMBOL = { inaccuracy: "?!", mistake: "?", blunder: "??" };

  function graphX(i) {
    return LEFT + (GRAPH_W - LEFT - RIGHT) * i / Math.max(1, game.plies.length);
  }

  function graphY(win) {
    return TOP + (GRAPH_H - TOP - BOTTOM) * (100 - win) / 100;
  }

  function svgEl(name, attrs, text) {
    const el = document.createElementNS(SVG_NS, name);
    for (const key in attrs) el.setAttribute(key, attrs[key]);
    if (text !== undefined) el.textContent = text;
    graph.appendChild(el);
    return el;
  }

  // The move number of the position after `index` plies, and whether White is to move.
  function moveAt(index) {
    const parts = game.start.split(" ");
    const whiteFirst = parts[1] === "w";
    const white = (index % 2 === 0) === whiteFirst;
    return [parseInt(parts[5], 10) + Math.floor((index + (whiteFirst ? 0 : 1)) / 2), white];
  }

  // The axes: White's win% 0-100 (50 dashed) and the move numbers, at most ten ticks.
  function drawAxes() {
    for (const w of [0, 25, 50, 75, 100]) {
      svgEl("line", { x1: LEFT, x2: GRAPH_W - RIGHT, y1: graphY(w), y2: graphY(w),
        class: w === 50 ? "mid" : "grid" });
      svgEl("text", { x: LEFT - 6, y: graphY(w) + 4, "text-anchor": "end",
        class: "tick-label" }, w + "%");
    }
    const moves = Math.ceil(game.plies.length / 2) || 1;
    const step = [1, 2, 5, 10, 20, 50, 100].find(function (s) { return moves / s <= 10; }) || 200;
    for (let i = 0; i <= game.plies.length; i++) {
      const [number, white] = moveAt(i);
      if (!white || number % step !== 0) continue;
      const x = graphX(i);
      svgEl("line", { x1: x, x2: x, y1: GRAPH_H - BOTTOM, y2: GRAPH_H - BOTTOM + 5,
        class: "axis" });
      svgEl("text", { x: x, y: GRAPH_H - BOTTOM + 17, "text-anchor": "middle",
        class: "tick-label" }, String(number));
    }
    svgEl("line", { x1: LEFT, x2: GRAPH_W - RIGHT, y1: GRAPH_H - BOTTOM,
      y2: GRAPH_H - BOTTOM, class: "axis" });
    svgEl("line", { x1: LEFT, x2: LEFT, y1: TOP, y2: GRAPH_H - BOTTOM, class: "axis" });
    svgEl("text", { x: (LEFT + GRAPH_W) / 2, y: GRAPH_H - 2, "text-anchor": "middle",
      class: "axis-label" }, "move");
    if (game.book) {
      svgEl("rect", { x: LEFT, y: TOP, width: graphX(game.book) - LEFT,
        height: GRAPH_H - TOP - BOTTOM, class: "book" });
      svgEl("text", { x: (LEFT + graphX(game.book)) / 2, y: TOP + 14, "text-anchor": "middle",
        class: "axis-label" }, "book");
    }
  }

  // White's win% after every judged ply (the book's end first), points marked by the
  // mover's loss; a click anywhere goes to the nearest ply.
  function drawGraph() {
    graph.textContent = "";
    const judged = game.start_win !== undefined;
    evalBox.hidden = !judged;
    if (!judged) return;
    drawAxes();
    const first = game.book || 0;
    const points = [[first, game.start_win]];
    for (let i = first; i < game.plies.length; i++) points.push([i + 1, game.plies[i].win]);
    svgEl("polyline", { class: "line", points: points.map(function (p) {
      return graphX(p[0]).toFixed(1) + "," + graphY(p[1]).toFixed(1);
    }).join(" ") });
    for (const [i, w] of points) {
      const p = i > 0 ? game.plies[i - 1] : null;
      const mark = i > first ? p.mark : null;
      const dot = svgEl("circle", { cx: graphX(i).toFixed(1), cy: graphY(w).toFixed(1),
        r: mark ? 4 : 2.2 });
      dot.dataset.ply = String(i);
      if (mark) dot.setAttribute("class", "mark-" + mark);
      const title = document.createElementNS(SVG_NS, "title");
      title.textContent = (i === first ? "start of play" : label(i - 1) +
        (mark ? " " + SYMBOL[mark] : "")) + ": White " + w.toFixed(0) + "%";
      dot.appendChild(title);
    }
    svgEl("line", { class: "now", y1: TOP, y2: GRAPH_H - BOTTOM });
    const body = sides.tBodies[0];
    body.textContent = "";
    for (const colour of ["white", "black"]) {
      const s = game.sides[colour];
      const row = body.insertRow();
      const full = colour === "white" ? game.white : game.black;
      const short = (colour === "white" ? game.white_short : game.black_short) || full;
      const cells = [colour + (short ? ": " + short : ""), s.inaccuracy, s.mistake,
        s.blunder, s.accuracy === null ? "-" : s.accuracy.toFixed(1)];
      cells.forEach(function (text, k) {
        const cell = k === 0 ? document.createElement("th") : row.insertCell();
        if (k === 0) {
          cell.scope = "row";
          cell.title = full;
          row.appendChild(cell);
        }
        cell.textContent = String(text);
      });
      row.dataset.side = colour;
    }
  }

  graph.addEventListener("click", function (event) {
    const box = graph.getBoundingClientRect();
    const x = (event.clientX - box.left) * GRAPH_W / box.width;
    const i = Math.round((x - LEFT) / (GRAPH_W - LEFT - RIGHT) * game.plies.length);
    step(i);
  });

  // What the judge said of the move that led to the position shown.
  function describe() {
    if (ply === 0) {
      return "Start position" + (game.book === 0 && game.start_eval ? ", eval " +
        game.start_eval : "") + ".";
    }
    const p = game.plies[ply - 1];
    const who = { book: "book move", model: "the model's move", engine: "the engine's move",
      puzzle: "the puzzle's move" }[p.by] || p.by;
    let text = label(ply - 1) + " (" + who + ")";
    if (ply === game.book && game.start_eval) text += ": end of the book, eval " + game.start_eval;
    if (p.eval !== undefined) {
      text += ": eval " + p.eval + " (White's win% " + p.win.toFixed(0) + ")";
      if (p.mark) text += ", " + p.mark + " " + SYMBOL[p.mark];
      if (p.best) text += p.best === p.san ? "; the judge's best move" :
        "; the judge's best move was " + p.best;
    }
    return text + ".";
  }

  function render() {
    const now = graph.querySelector("line.now");
    if (now) {
      now.setAttribute("x1", graphX(ply).toFixed(1));
      now.setAttribute("x2", graphX(ply).toFixed(1));
    }
    const fen = ply === 0 ? game.start : game.plies[ply - 1].fen;
    drawBoard(fen, ply === 0 ? null : game.plies[ply - 1].uci);
    answers.textContent = "";
    moveInfo.textContent = describe();
    for (const li of movesList.children) {
      li.classList.toggle("current", parseInt(li.dataset.ply, 10) === ply);
    }
    if (ply > 0) {
      const p = game.plies[ply - 1];
      if (p.tries.length) showTries(p.tries, "The model's replies for " + label(ply - 1));
    }
    if (ply === game.plies.length && game.end.length) {
      showTries(game.end, "Replies after the last move (the game ended on them)");
    }
  }

  function load(index) {
    game = games[index];
    ply = 0;
    movesList.textContent = "";
    game.plies.forEach(function (p, i) {
      const li = document.createElement("li");
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = label(i);
      const illegal = p.tries.filter(function (t) { return t.category !== "legal"; }).length;
      if (illegal) {
        button.textContent += " (" + illegal + " failed)";
        li.classList.add("had-illegal");
      }
      if (p.mark) {
        const mark = document.createElement("span");
        mark.className = "mark mark-" + p.mark;
        mark.textContent = SYMBOL[p.mark];
        mark.title = p.mark + ": White's win% " + p.win.toFixed(0) + " after it, the mover lost " +
          p.loss.toFixed(0) + " points";
        button.appendChild(mark);
        li.dataset.mark = p.mark;
      }
      if (p.eval !== undefined) {
        const ev = document.createElement("small");
        ev.className = "ev";
        ev.textContent = p.eval;
        button.appendChild(ev);
        li.dataset.eval = p.eval;
        button.title = "eval " + p.eval + (p.best ? "; the judge's best move: " + p.best : "");
      }
      if (p.best) li.dataset.best = p.best;
      if (p.by === "book") button.title = "book move";
      li.classList.add("by-" + p.by);
      li.dataset.ply = String(i + 1);
      button.addEventListener("click", function () { ply = i + 1; render(); });
      li.appendChild(button);
      movesList.appendChild(li);
    });
    const who = game.white ? game.white + " - " + game.black + ". " : "";
    info.textContent = who + "Result " + game.result + (game.termination ? ", " +
      game.termination : "") + (game.rung ? "; rung " + game.rung : "") +
      (game.themes ? "; themes: " + game.themes : "") +
      (game.match ? "." : "; the model plays " + game.orientation + ".");
    opening.hidden = !game.opening && !game.book;
    opening.textContent = (game.opening ? "Opening: " + game.opening + ". " : "") +
      (game.book ? "The first " + game.book + " plies are the opening book's (marked book)." : "");
    links.hidden = !game.pgn;
    if (game.pgn) {
      download.href = "data:application/x-chess-pgn;charset=utf-8," +
        encodeURIComponent(game.pgn);
      download.setAttribute("download", "game-" + (index + 1) + ".pgn");
      lichess.href = game.lichess;
    }
    drawGraph();
    render();
  }

  function step(to) {
    ply = Math.max(0, Math.min(game.plies.length, to));
    render();
  }

  document.getElementById("first").addEventListener("click", function () { step(0); });
  document.getElementById("prev").addEventListener("click", function () { step(ply - 1); });
  document.getElementById("next").addEventListener("click", function () { step(ply + 1); });
  document.getElementById("last").addEventListener("click", function () {
    step(game.plies.length);
  });
  select.addEventListener("change", function () { load(parseInt(select.value, 10)); });
  document.addEventListener("keydown", function (event) {
    if (event.target instanceof HTMLSelectElement) return;
    const moves = { ArrowLeft: ply - 1, ArrowRight: ply + 1, Home: 0, End: game.plies.length };
    if (event.key in moves) {
      event.preventDefault();
      step(moves[event.key]);
    }
  });
  load(0);
})();

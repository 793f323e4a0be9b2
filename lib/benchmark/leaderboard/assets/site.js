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
  const GRAPH_W = 360, GRAPH_H = 120, PAD = 6;
  const SYMBOL = { inaccuracy: "?!", mistake: "?", blunder: "??" };

  function graphX(i) {
    return PAD + (GRAPH_W - 2 * PAD) * i / Math.max(1, game.plies.length);
  }

  function graphY(win) {
    return PAD + (GRAPH_H - 2 * PAD) * (100 - win) / 100;
  }

  // White's win% after every ply (the start first), points marked by the mover's loss; a
  // click anywhere goes to the nearest ply.
  function drawGraph() {
    graph.textContent = "";
    const judged = game.start_win !== undefined;
    evalBox.hidden = !judged;
    if (!judged) return;
    const wins = [game.start_win].concat(game.plies.map(function (p) { return p.win; }));
    const mid = document.createElementNS(SVG_NS, "line");
    mid.setAttribute("class", "mid");
    mid.setAttribute("x1", PAD); mid.setAttribute("x2", GRAPH_W - PAD);
    mid.setAttribute("y1", graphY(50)); mid.setAttribute("y2", graphY(50));
    graph.appendChild(mid);
    const line = document.createElementNS(SVG_NS, "polyline");
    line.setAttribute("class", "line");
    line.setAttribute("points", wins.map(function (w, i) {
      return graphX(i).toFixed(1) + "," + graphY(w).toFixed(1);
    }).join(" "));
    graph.appendChild(line);
    wins.forEach(function (w, i) {
      const dot = document.createElementNS(SVG_NS, "circle");
      const mark = i > 0 ? game.plies[i - 1].mark : null;
      dot.setAttribute("cx", graphX(i).toFixed(1));
      dot.setAttribute("cy", graphY(w).toFixed(1));
      dot.setAttribute("r", mark ? 3.5 : 1.8);
      dot.dataset.ply = String(i);
      if (mark) dot.setAttribute("class", "mark-" + mark);
      const title = document.createElementNS(SVG_NS, "title");
      title.textContent = (i === 0 ? "start" : label(i - 1) + (mark ? " " + SYMBOL[mark] : "")) +
        ": White " + w.toFixed(0) + "%";
      dot.appendChild(title);
      graph.appendChild(dot);
    });
    const now = document.createElementNS(SVG_NS, "line");
    now.setAttribute("class", "now");
    now.setAttribute("y1", PAD); now.setAttribute("y2", GRAPH_H - PAD);
    graph.appendChild(now);
    const body = sides.tBodies[0];
    body.textContent = "";
    for (const colour of ["white", "black"]) {
      const s = game.sides[colour];
      const row = body.insertRow();
      const name = colour === "white" ? game.white : game.black;
      const cells = [colour + (name ? " (" + name + ")" : ""), s.inaccuracy, s.mistake,
        s.blunder, s.accuracy === null ? "-" : s.accuracy.toFixed(1)];
      cells.forEach(function (text, k) {
        const cell = k === 0 ? document.createElement("th") : row.insertCell();
        if (k === 0) { cell.scope = "row"; row.appendChild(cell); }
        cell.textContent = String(text);
      });
      row.dataset.side = colour;
    }
  }

  graph.addEventListener("click", function (event) {
    const box = graph.getBoundingClientRect();
    const x = (event.clientX - box.left) * GRAPH_W / box.width;
    const i = Math.round((x - PAD) / (GRAPH_W - 2 * PAD) * game.plies.length);
    step(i);
  });

  function render() {
    const now = graph.querySelector("line.now");
    if (now) {
      now.setAttribute("x1", graphX(ply).toFixed(1));
      now.setAttribute("x2", graphX(ply).toFixed(1));
    }
    const fen = ply === 0 ? game.start : game.plies[ply - 1].fen;
    drawBoard(fen, ply === 0 ? null : game.plies[ply - 1].uci);
    answers.textContent = "";
    for (const li of movesList.children) {
      li.classList.toggle("current", parseInt(li.dataset.ply, 10) === ply);
    }
    if (ply > 0) {
      const p = game.plies[ply - 1];
      if (p.tries.length) showTries(p.tries, "The model's replies for " + label(ply - 1));
      else answers.textContent = label(ply - 1) + " (" + p.by + ")";
    } else {
      answers.textContent = "Start position.";
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

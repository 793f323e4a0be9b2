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

  function render() {
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
      "; the model plays " + game.orientation + ".";
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

"""The layout rules: chess_eval/testset and chess_eval/benchmark import the core, never each
other or upward; inside chess_eval/benchmark, each mode imports the benchmark's core, never
another mode."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.conftest import ROOT

CORE, TESTSET, BENCHMARK = "core", "testset", "benchmark"
# The benchmark's shared layers, lowest first, each importing only those before it: its
# statistics (on numbers only), a question and its answer, the model layer, the players (and
# the protocols a model player is asked by), the core every mode shares (which asks players
# through models), the crosswalk to Lichess ratings (on the core's committed data), and the
# arena where two sides play (games and ladders share it).
SHARED_ORDER = ("benchmark.stats", "benchmark.question", "benchmark.model",
                "benchmark.players", "benchmark.core", "benchmark.human", "benchmark.arena")
STATS, QUESTION, MODEL, PLAYERS, SHARED, HUMAN, ARENA = SHARED_ORDER
SHARED_LAYERS = set(SHARED_ORDER)
MODES = ("static", "games", "ladders", "puzzles", "worldmodel", "leaderboard", "compare",
         "match")
MODE_LAYERS = {f"benchmark.{m}" for m in MODES}
# The modes inside another harness (Inspect's tasks): above the modes, as the entry point is.
INSPECT = "benchmark.inspect_eval"
# Which layers each layer may import from. Entry points count as their half's layer; the
# leaderboard reads result files, so it too sees only the shared layers.
ALLOWED = {CORE: {CORE}, TESTSET: {CORE, TESTSET},
           **{layer: {CORE, *SHARED_ORDER[:i + 1]} for i, layer in enumerate(SHARED_ORDER)},
           BENCHMARK: {CORE, *SHARED_LAYERS, BENCHMARK, *MODE_LAYERS, INSPECT},
           INSPECT: {CORE, *SHARED_LAYERS, INSPECT, *MODE_LAYERS},
           **{mode: {CORE, *SHARED_LAYERS, mode} for mode in MODE_LAYERS}}
ENTRY_POINTS = {"generate.py": TESTSET, "print.py": TESTSET, "benchmark.py": BENCHMARK}
# The package's own entry points: Inspect's (pyproject's inspect_ai entry point) and the
# chess-eval command's (its script and the parser benchmark.py starts).
PACKAGE_ENTRY_POINTS = {"chess_eval.tasks": "benchmark.inspect_eval",
                        "chess_eval.launch": BENCHMARK, "chess_eval.commands": BENCHMARK}


def _layer_of_module(name: str) -> str | None:
    """The layer of a dotted module name under chess_eval, or None for anything outside it."""
    parts = name.split(".")
    if parts[0] != "chess_eval":
        return None
    if name in PACKAGE_ENTRY_POINTS:
        return PACKAGE_ENTRY_POINTS[name]
    if len(parts) > 2 and parts[1] == BENCHMARK and f"benchmark.{parts[2]}" in (
            MODE_LAYERS | SHARED_LAYERS | {INSPECT}):
        return f"benchmark.{parts[2]}"
    if len(parts) > 1 and parts[1] in (TESTSET, BENCHMARK):
        return parts[1]
    return CORE


def _layer_of_file(root: Path, path: Path) -> str | None:
    """The layer a source file belongs to, or None when the rule does not cover it."""
    rel = path.relative_to(root)
    if rel.parts[0] == "chess_eval":
        return _layer_of_module(".".join(rel.with_suffix("").parts))
    if rel.parts[0] == "steps":
        return TESTSET
    return ENTRY_POINTS.get(str(rel))


def _package_of(root: Path, path: Path) -> list[str]:
    """The dotted package a file sits in, as parts (for resolving relative imports)."""
    return list(path.relative_to(root).parent.parts)


def _imported(root: Path, path: Path, tree: ast.AST) -> list[tuple[int, str]]:
    """Every module a file imports, with its line, relative imports resolved."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module.split(".") if node.module else []
            if node.level:
                package = _package_of(root, path)
                base = package[:len(package) - node.level + 1] + base
            # `from chess_eval import x`: its members
            if base in (["chess_eval"], ["chess_eval", BENCHMARK]):
                found += [(node.lineno, ".".join([*base, alias.name])) for alias in node.names]
            else:
                found.append((node.lineno, ".".join(base)))
    return found


def violations(root: Path) -> list[str]:
    """Imports under root that break the layout rule, as 'file:line imports module'."""
    files = sorted(root.glob("chess_eval/**/*.py")) + sorted(root.glob("steps/*.py"))
    files += [root / name for name in ENTRY_POINTS if (root / name).is_file()]
    out = []
    for path in files:
        layer = _layer_of_file(root, path)
        if layer is None:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, module in _imported(root, path, tree):
            target = _layer_of_module(module)
            if target is not None and target not in ALLOWED[layer]:
                out.append(f"{path.relative_to(root)}:{line} imports {module}")
    return sorted(set(out))


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_checker_finds_every_kind_of_violation(tmp_path: Path) -> None:
    """The checker itself: each way of breaking the rule is caught, allowed imports are not."""
    for package in ("chess_eval", "chess_eval/testset", "chess_eval/benchmark",
                    *(f"chess_eval/benchmark/{m}"
                      for m in (*(x.split(".")[1] for x in SHARED_LAYERS), *MODES,
                                "inspect_eval"))):
        _write(tmp_path, f"{package}/__init__.py", "")
    _write(tmp_path, "chess_eval/engine.py", "import chess\nfrom chess_eval.errors import X\n")
    _write(tmp_path, "chess_eval/grading.py", "from chess_eval.benchmark.core.scoring import f\n")
    _write(tmp_path, "chess_eval/phase.py", "def f():\n    from chess_eval import testset\n")
    _write(tmp_path, "chess_eval/testset/tree.py",
           "from chess_eval.engine import E\nfrom . import pgn\n")
    _write(tmp_path, "chess_eval/testset/pgn.py", "from ..benchmark import core\n")
    _write(tmp_path, "chess_eval/benchmark/core/chat.py", "import chess_eval.testset.fetch\n")
    _write(tmp_path, "chess_eval/benchmark/core/runner.py",
           "from chess_eval.benchmark.core import chat\n"
           "from chess_eval.benchmark.games import play\n")
    _write(tmp_path, "chess_eval/benchmark/stats/btd.py",
           "from chess_eval.benchmark.core import turns\n")
    _write(tmp_path, "chess_eval/benchmark/model/metered.py",
           "from chess_eval.benchmark.question import answers\n"
           "from chess_eval.benchmark.players import player\n")
    _write(tmp_path, "chess_eval/benchmark/players/player.py",
           "from chess_eval.benchmark.model import metered\n"
           "from chess_eval.benchmark.core.data import DATA\n")
    _write(tmp_path, "chess_eval/benchmark/games/play.py",
           "from chess_eval.benchmark.core.turns import Side\nfrom ..puzzles import line\n")
    _write(tmp_path, "chess_eval/benchmark/puzzles/line.py",
           "from chess_eval.benchmark.core.turns import Side\nfrom . import sampler\n")
    _write(tmp_path, "chess_eval/benchmark/leaderboard/board.py",
           "from chess_eval.benchmark.core.results import load_results\n"
           "from chess_eval.benchmark.static.run import run_static\n")
    _write(tmp_path, "chess_eval/benchmark/worldmodel/run.py",
           "from chess_eval.benchmark import static\n")
    _write(tmp_path, "chess_eval/benchmark/inspect_eval/games.py",
           "from chess_eval.benchmark.games.play import play\n"
           "from chess_eval.benchmark.core import cli\n")
    _write(tmp_path, "chess_eval/benchmark/compare/cli.py",
           "from chess_eval.benchmark.inspect_eval import x\n")
    _write(tmp_path, "steps/06_evaluate.py", "from chess_eval.benchmark.core.results import load\n")
    _write(tmp_path, "print.py", "from chess_eval.testset.tree import T\n")
    _write(tmp_path, "benchmark.py", "from chess_eval.testset import questions\n"
           "from chess_eval.benchmark.games import cli\n")
    assert violations(tmp_path) == [
        "benchmark.py:1 imports chess_eval.testset",
        "chess_eval/benchmark/compare/cli.py:1 imports chess_eval.benchmark.inspect_eval",
        "chess_eval/benchmark/core/chat.py:1 imports chess_eval.testset.fetch",
        "chess_eval/benchmark/core/runner.py:2 imports chess_eval.benchmark.games",
        "chess_eval/benchmark/games/play.py:2 imports chess_eval.benchmark.puzzles",
        "chess_eval/benchmark/leaderboard/board.py:2 imports chess_eval.benchmark.static.run",
        "chess_eval/benchmark/model/metered.py:2 imports chess_eval.benchmark.players",
        "chess_eval/benchmark/players/player.py:2 imports chess_eval.benchmark.core.data",
        "chess_eval/benchmark/stats/btd.py:1 imports chess_eval.benchmark.core",
        "chess_eval/benchmark/worldmodel/run.py:1 imports chess_eval.benchmark.static",
        "chess_eval/grading.py:1 imports chess_eval.benchmark.core.scoring",
        "chess_eval/phase.py:2 imports chess_eval.testset",
        "chess_eval/testset/pgn.py:1 imports chess_eval.benchmark.core",
        "steps/06_evaluate.py:1 imports chess_eval.benchmark.core.results",
    ]


def test_no_two_layers_may_import_each_other() -> None:
    """The rule itself has no back edge: where one layer may import another, the other may
    not import it (the layers are an order, lowest first)."""
    both = sorted((a, b) for a in ALLOWED for b in ALLOWED[a]
                  if a < b and a in ALLOWED.get(b, set()))
    assert both == []


def test_the_repository_follows_the_layout_rule() -> None:
    """No module of chess_eval/, no step and no entry point imports across the two halves."""
    assert violations(ROOT) == []


def test_every_package_says_what_lives_there() -> None:
    """Each package of chess_eval/ opens with a docstring that names every module and sub-package
    in it, so a reader finds a concept's home from the package's own page."""
    for init in sorted(ROOT.glob("chess_eval/**/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert len(doc.splitlines()) >= 3, f"{init} needs a docstring of a few lines"
        assert unnamed(init.parent, doc) == [], f"{init}'s docstring does not name these"


def unnamed(package: Path, doc: str) -> list[str]:
    """The modules and sub-packages of one package its docstring does not name as a word."""
    names = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    names |= {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}
    return sorted(n for n in names if not re.search(rf"\b{re.escape(n)}\b", doc))


def test_a_package_docstring_that_skips_a_module_is_caught(tmp_path: Path) -> None:
    """The check above fails for a package whose docstring leaves one of its modules out."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "__init__.py").write_text("")
    for name in ("board.py", "rules.py"):
        (tmp_path / name).write_text("")
    assert unnamed(tmp_path, "Holds board (the position) and sub.") == ["rules"]


def test_the_benchmark_has_no_flat_modules() -> None:
    """Every module of chess_eval/benchmark/ sits in a shared layer or in one mode's sub-package."""
    flat = [p.name for p in (ROOT / "chess_eval" / "benchmark").glob("*.py")
            if p.name != "__init__.py"]
    packages = {p.name for p in (ROOT / "chess_eval" / "benchmark").iterdir()
                if (p / "__init__.py").is_file()}
    assert flat == []
    assert packages == {layer.split(".")[1] for layer in SHARED_LAYERS | {INSPECT}} | set(MODES)


def import_graph(root: Path) -> dict[str, set[str]]:
    """Each module of chess_eval/ and the modules of chess_eval/ it imports (anywhere in the file: a
    function's import or one for type checking only counts too)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(root.glob("chess_eval/**/*.py")):
        rel = path.relative_to(root).with_suffix("")
        name = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        graph[name] = set()
        for _, module in _imported(root, path, tree):
            if module.startswith("chess_eval."):
                graph[name].add(module)
    known = set(graph)
    # `from chess_eval.x import y` names a module when chess_eval/x/y.py exists, else a member
    # of chess_eval.x.
    return {m: {t if t in known else t.rsplit(".", 1)[0] for t in targets} - {m}
            for m, targets in graph.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import circle in the graph (its modules, in import order), by depth-first search."""
    found, done, path = [], set(), []

    def visit(module: str) -> None:
        if module in path:
            found.append(path[path.index(module):] + [module])
            return
        if module in done:
            return
        path.append(module)
        for target in sorted(graph.get(module, ())):
            visit(target)
        path.pop()
        done.add(module)
    for module in sorted(graph):
        visit(module)
    return found


def test_the_circle_finder_finds_a_circle(tmp_path: Path) -> None:
    """Two modules importing each other (one only for type checking) are a circle."""
    _write(tmp_path, "chess_eval/__init__.py", "")
    _write(tmp_path, "chess_eval/a.py", "from chess_eval.b import f\n")
    _write(tmp_path, "chess_eval/b.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
           "    from chess_eval.a import g\n")
    _write(tmp_path, "chess_eval/c.py", "from chess_eval import a\n")
    assert circles(import_graph(tmp_path)) == [["chess_eval.a", "chess_eval.b", "chess_eval.a"]]


def test_the_import_graph_has_no_circle() -> None:
    """No module of chess_eval/ imports itself through others."""
    graph = import_graph(ROOT)
    assert "chess_eval.benchmark.players.protocols" in graph
    assert circles(graph) == []


def test_no_package_is_a_grab_bag() -> None:
    """No package of chess_eval/ holds more than 3,000 lines of its own files (a newcomer reads a
    package whole)."""
    sizes = {str(d.relative_to(ROOT)): sum(len(f.read_text(encoding="utf-8").splitlines())
                                           for f in d.glob("*.py"))
             for d in [ROOT / "chess_eval", *ROOT.glob("chess_eval/**/")]
             if (d / "__init__.py").is_file()}
    assert sizes and {d: n for d, n in sizes.items() if n > 3000} == {}


def test_no_module_outside_the_model_layer_branches_on_a_backend() -> None:
    """A backend's defaults (base URL, key variables) live in its own file, reached through
    the prefix registry (model/backends.py): no other module names a backend to branch on
    it (the Inspect tasks, which are Inspect's, aside)."""
    allowed = (ROOT / "chess_eval" / "benchmark" / "model",
               ROOT / "chess_eval" / "benchmark" / "inspect_eval", ROOT / "chess_eval" / "tasks.py")
    found = [p.relative_to(ROOT).as_posix() for p in (ROOT / "chess_eval").rglob("*.py")
             if not any(p.is_relative_to(a) for a in allowed)
             and re.search(r"\bis_inspect\(|model\.inspect_backend import",
                           p.read_text(encoding="utf-8"))]
    assert found == []

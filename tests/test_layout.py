"""The layout rules: lib/testset and lib/benchmark import the core, never each other or upward;
inside lib/benchmark, each mode imports the benchmark's core, never another mode."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

CORE, TESTSET, BENCHMARK = "core", "testset", "benchmark"
# The benchmark's own layers: its shared core, and one sub-package per mode.
SHARED = "benchmark.core"
MODES = ("static", "games", "puzzles", "worldmodel", "leaderboard", "compare")
MODE_LAYERS = {f"benchmark.{m}" for m in MODES}
# The modes inside another harness (Inspect's tasks): above the modes, as the entry point is.
INSPECT = "benchmark.inspect_eval"
# Which layers each layer may import from. Entry points count as their half's layer; the
# leaderboard reads result files, so it too sees only the core.
ALLOWED = {CORE: {CORE}, TESTSET: {CORE, TESTSET}, SHARED: {CORE, SHARED},
           BENCHMARK: {CORE, SHARED, BENCHMARK, *MODE_LAYERS, INSPECT},
           INSPECT: {CORE, SHARED, INSPECT, *MODE_LAYERS},
           **{mode: {CORE, SHARED, mode} for mode in MODE_LAYERS}}
ENTRY_POINTS = {"generate.py": TESTSET, "print.py": TESTSET, "benchmark.py": BENCHMARK}


def _layer_of_module(name: str) -> str | None:
    """The layer of a dotted module name under lib, or None for anything outside lib."""
    parts = name.split(".")
    if parts[0] != "lib":
        return None
    if len(parts) > 2 and parts[1] == BENCHMARK and f"benchmark.{parts[2]}" in (
            MODE_LAYERS | {SHARED, INSPECT}):
        return f"benchmark.{parts[2]}"
    if len(parts) > 1 and parts[1] in (TESTSET, BENCHMARK):
        return parts[1]
    return CORE


def _layer_of_file(root: Path, path: Path) -> str | None:
    """The layer a source file belongs to, or None when the rule does not cover it."""
    rel = path.relative_to(root)
    if rel.parts[0] == "lib":
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
            if base in (["lib"], ["lib", BENCHMARK]):  # `from lib import testset`: members
                found += [(node.lineno, ".".join([*base, alias.name])) for alias in node.names]
            else:
                found.append((node.lineno, ".".join(base)))
    return found


def violations(root: Path) -> list[str]:
    """Imports under root that break the layout rule, as 'file:line imports module'."""
    files = sorted(root.glob("lib/**/*.py")) + sorted(root.glob("steps/*.py"))
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
    for package in ("lib", "lib/testset", "lib/benchmark",
                    *(f"lib/benchmark/{m}" for m in ("core", *MODES, "inspect_eval"))):
        _write(tmp_path, f"{package}/__init__.py", "")
    _write(tmp_path, "lib/engine.py", "import chess\nfrom lib.errors import X\n")
    _write(tmp_path, "lib/grading.py", "from lib.benchmark.core.scoring import f\n")
    _write(tmp_path, "lib/phase.py", "def f():\n    from lib import testset\n")
    _write(tmp_path, "lib/testset/tree.py", "from lib.engine import E\nfrom . import pgn\n")
    _write(tmp_path, "lib/testset/pgn.py", "from ..benchmark import core\n")
    _write(tmp_path, "lib/benchmark/core/chat.py", "import lib.testset.fetch\n")
    _write(tmp_path, "lib/benchmark/core/runner.py",
           "from lib.benchmark.core import chat\nfrom lib.benchmark.games import play\n")
    _write(tmp_path, "lib/benchmark/games/play.py",
           "from lib.benchmark.core.turns import Side\nfrom ..puzzles import line\n")
    _write(tmp_path, "lib/benchmark/puzzles/line.py",
           "from lib.benchmark.core.turns import Side\nfrom . import sampler\n")
    _write(tmp_path, "lib/benchmark/leaderboard/board.py",
           "from lib.benchmark.core.results import load_results\n"
           "from lib.benchmark.static.run import run_static\n")
    _write(tmp_path, "lib/benchmark/worldmodel/run.py", "from lib.benchmark import static\n")
    _write(tmp_path, "lib/benchmark/inspect_eval/games.py",
           "from lib.benchmark.games.play import play\nfrom lib.benchmark.core import cli\n")
    _write(tmp_path, "lib/benchmark/compare/cli.py", "from lib.benchmark.inspect_eval import x\n")
    _write(tmp_path, "steps/06_evaluate.py", "from lib.benchmark.core.results import load\n")
    _write(tmp_path, "print.py", "from lib.testset.tree import T\n")
    _write(tmp_path, "benchmark.py", "from lib.testset import questions\n"
           "from lib.benchmark.games import cli\n")
    assert violations(tmp_path) == [
        "benchmark.py:1 imports lib.testset",
        "lib/benchmark/compare/cli.py:1 imports lib.benchmark.inspect_eval",
        "lib/benchmark/core/chat.py:1 imports lib.testset.fetch",
        "lib/benchmark/core/runner.py:2 imports lib.benchmark.games",
        "lib/benchmark/games/play.py:2 imports lib.benchmark.puzzles",
        "lib/benchmark/leaderboard/board.py:2 imports lib.benchmark.static.run",
        "lib/benchmark/worldmodel/run.py:1 imports lib.benchmark.static",
        "lib/grading.py:1 imports lib.benchmark.core.scoring",
        "lib/phase.py:2 imports lib.testset",
        "lib/testset/pgn.py:1 imports lib.benchmark.core",
        "steps/06_evaluate.py:1 imports lib.benchmark.core.results",
    ]


def test_the_repository_follows_the_layout_rule() -> None:
    """No module of lib/, no step and no entry point imports across the two halves."""
    assert violations(ROOT) == []


def test_every_package_says_what_lives_there() -> None:
    """Each package of lib/ opens with a docstring of a few lines."""
    for init in [ROOT / "lib" / "__init__.py", *sorted(ROOT.glob("lib/*/__init__.py"))]:
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc and len(doc.splitlines()) >= 3, f"{init} needs a docstring of a few lines"


def test_the_benchmark_has_no_flat_modules() -> None:
    """Every module of lib/benchmark/ sits in its core or in one mode's sub-package."""
    flat = [p.name for p in (ROOT / "lib" / "benchmark").glob("*.py") if p.name != "__init__.py"]
    packages = {p.name for p in (ROOT / "lib" / "benchmark").iterdir()
                if (p / "__init__.py").is_file()}
    assert flat == []
    assert packages == {"core", *MODES, INSPECT.split(".")[1]}

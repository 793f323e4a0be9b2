"""The figures the README quotes from committed files, generated from those files.

A block of README.md between `<!-- figures:NAME -->` and `<!-- /figures:NAME -->` is written
by the generator NAME below from the committed files it reads; nothing else writes it.
`python -m bench.doc_figures` rewrites every block; `--check` rewrites nothing and exits 1,
naming the blocks, when one differs from what the files give (a test runs it, so the README
cannot drift from the files).
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

from lib.benchmark.core import btd
from lib.benchmark.core.cli import LADDER_GAMES
from lib.benchmark.games import design
from lib.benchmark.games.calibration import read_games, usable
from lib.benchmark.games.ladder import RUNG_SPACING, load_ladder

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def ladder_block(root: Path = ROOT) -> str:
    """The committed ladder: every rung with its interval, goal, games and next gap."""
    ladder = load_ladder(root / "ladder.csv")
    games = read_games(root / LADDER_GAMES)
    mine = [g for g in games if g.engine == ladder.engine]
    use = usable(ladder.rungs, games, ladder.engine)
    goal = design.goals(ladder.elos)
    head = (f"`{LADDER_GAMES}`: {len(games):,} games, {len(mine):,} of them with "
            f"{ladder.engine}; {len(use.weak):,} between rungs of this ladder (the rest are "
            f"earlier ladders' rungs, kept and left out of the fit). Joint BTD fit, nu = "
            f"{ladder.nu:.3f}; the random mover is the zero, exactly; intervals relative to "
            "it.")
    lines = [*textwrap.wrap(head, 95), "",
             "| rung | player | Elo | 90% interval | half-width (goal) | games | gap to next "
             "(expected) |", "|---|---|---|---|---|---|---|"]
    for i, r in enumerate(ladder.rungs):
        half = (r.hi - r.lo) / 2
        nxt = ""
        if i + 1 < len(ladder.rungs):
            gap = ladder.rungs[i + 1].elo - r.elo
            flag = "" if RUNG_SPACING[0] <= gap <= RUNG_SPACING[1] else " !"
            nxt = f"{gap:.0f} ({btd.expected_score(-gap, ladder.nu):.0%}){flag}"
        lines.append(f"| {r.name} | `{r.spec}` | {r.elo:.0f} | {r.lo:.0f} to {r.hi:.0f} | "
                     f"{half:.0f} ({goal[i]:.0f}){'' if half <= goal[i] else ' *'} | "
                     f"{r.games:,} | {nxt} |")
    met = sum((r.hi - r.lo) / 2 <= g for r, g in zip(ladder.rungs, goal, strict=True))
    lines += ["", f"{met} of {len(ladder.rungs)} rungs meet their goal (`*`: missed); `!`: a "
              f"gap outside {RUNG_SPACING[0]:.0f}-{RUNG_SPACING[1]:.0f} Elo."]
    return "\n".join(lines)


BLOCKS: dict[str, Callable[[], str]] = {"ladder": ladder_block}


def rewrite(text: str) -> tuple[str, list[str]]:
    """The README with every block regenerated, and the names of those that changed."""
    changed = []
    for name, make in BLOCKS.items():
        pattern = re.compile(rf"(<!-- figures:{name} -->\n)(.*?)(<!-- /figures:{name} -->)",
                             re.S)
        match = pattern.search(text)
        if match is None:
            raise SystemExit(f"README.md has no block figures:{name}")
        body = make() + "\n"
        if match[2] != body:
            changed.append(name)
            text = text[:match.start(2)] + body + text[match.end(2):]
    return text, changed


def main() -> None:
    """Rewrite the README's blocks, or with --check say which would change."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 when a block differs from the files")
    args = p.parse_args()
    text, changed = rewrite(README.read_text(encoding="utf-8"))
    if args.check:
        if changed:
            sys.exit(f"README.md is out of date with the committed files: {', '.join(changed)}"
                     " (run python -m bench.doc_figures)")
        return
    README.write_text(text, encoding="utf-8")
    print(f"README.md: {', '.join(changed) or 'nothing'} rewritten")


if __name__ == "__main__":
    main()

"""Target-versus-achieved tables of the tree, for logs, JSON reports and print.py."""

from __future__ import annotations

from lib.testset.tree import Leaf


def leaf_rows(targets: dict[Leaf, int], achieved: dict[Leaf, int]) -> list[dict[str, object]]:
    """One row per leaf: its path, target, achieved count and shortfall."""
    return [
        {"elo_bucket": leaf[0], "phase": leaf[1], "type": leaf[2], "side": leaf[3],
         "target": target, "achieved": achieved.get(leaf, 0),
         "shortfall": max(target - achieved.get(leaf, 0), 0)}
        for leaf, target in targets.items()
    ]


def shortfall_lines(rows: list[dict[str, object]]) -> list[str]:
    """Human-readable lines for the leaves that fell short."""
    return [
        f"  {r['elo_bucket']:<13} {r['phase']:<10} {r['type']:<9} {r['side']:<5} "
        f"{r['achieved']:>3}/{r['target']:<3} short {r['shortfall']}"
        for r in rows if r["shortfall"]
    ]

"""Target-versus-achieved tables of the tree, for logs, JSON reports and print.py."""

from __future__ import annotations

from chess_eval.testset.tree import Leaf


def leaf_rows(targets: dict[Leaf, int], achieved: dict[Leaf, int],
              player_capped: dict[Leaf, int] | None = None) -> list[dict[str, object]]:
    """One row per leaf: its path, target, achieved count and shortfall.

    With `player_capped` (candidates the per-player cap turned away, by predicted leaf) a
    row also says how much of its shortfall the cap caused: at most that many candidates,
    and never more than the shortfall.
    """
    rows = []
    for leaf, target in targets.items():
        short = max(target - achieved.get(leaf, 0), 0)
        row: dict[str, object] = {
            "elo_bucket": leaf[0], "phase": leaf[1], "type": leaf[2], "side": leaf[3],
            "target": target, "achieved": achieved.get(leaf, 0), "shortfall": short}
        if player_capped is not None:
            row["player_capped"] = player_capped.get(leaf, 0)
            row["shortfall_from_player_cap"] = min(short, player_capped.get(leaf, 0))
        rows.append(row)
    return rows


def shortfall_lines(rows: list[dict[str, object]]) -> list[str]:
    """Human-readable lines for the leaves that fell short."""
    return [
        f"  {r['elo_bucket']:<13} {r['phase']:<10} {r['type']:<9} {r['side']:<5} "
        f"{r['achieved']:>3}/{r['target']:<3} short {r['shortfall']}"
        + (f" (up to {r['shortfall_from_player_cap']} from the player cap)"
           if r.get("shortfall_from_player_cap") else "")
        for r in rows if r["shortfall"]
    ]


def achieved_from_questions(rows: list[dict[str, str]], source: str) -> dict[Leaf, int]:
    """Questions per leaf of one source ('game' or 'puzzle'), from questions.csv rows."""
    counts: dict[Leaf, int] = {}
    for row in rows:
        if row["source"] == source:
            leaf = (row["elo_bucket"], row["phase"], row["type"], row["color"])
            counts[leaf] = counts.get(leaf, 0) + 1
    return counts


def render_tree(sources: dict[str, tuple[dict[Leaf, int], dict[Leaf, int]]]) -> list[str]:
    """The seed's tree drawing ('|--' branches) with target, achieved and shortfall per node.

    `sources` maps a top-level name ("Games", "Puzzles") to (targets, achieved) by leaf.
    """
    def total(counts: dict[Leaf, int], prefix: tuple[str, ...]) -> int:
        return sum(n for leaf, n in counts.items() if leaf[: len(prefix)] == prefix)

    lines: list[str] = []

    def node(label: str, target: int, got: int, indent: str, last: bool | None) -> None:
        branch = "" if last is None else ("`-- " if last else "|-- ")
        text = f"{indent}{branch}{label} ({target})"
        short = f"  SHORT {target - got}" if got < target else ""
        lines.append(f"{text:<52} achieved {got}{short}")

    def children(targets: dict[Leaf, int], got: dict[Leaf, int], prefix: tuple[str, ...],
                 indent: str) -> None:
        names = list(dict.fromkeys(leaf[len(prefix)] for leaf in targets
                                   if leaf[: len(prefix)] == prefix))
        for i, name in enumerate(names):
            last = i == len(names) - 1
            path = (*prefix, name)
            label = f"{name} ELO" if len(path) == 1 else name
            node(label, total(targets, path), total(got, path), indent, last)
            if len(path) < 4:
                children(targets, got, path, indent + ("    " if last else "|   "))

    all_target = sum(sum(t.values()) for t, _ in sources.values())
    all_got = sum(sum(g.values()) for _, g in sources.values())
    node("All", all_target, all_got, "", None)
    for i, (name, (targets, got)) in enumerate(sources.items()):
        last = i == len(sources) - 1
        node(name, sum(targets.values()), sum(got.values()), "", last)
        children(targets, got, (), "    " if last else "|   ")
    return lines

"""The seed's stratification tree: Elo bucket x phase x type x side, and its scaling."""

from __future__ import annotations

import math

ELO_BUCKETS = ("(0, 1400)", "[1400, 1800)", "[1800, 2200)", "[2200, 2600)", "[2600, inf)")
ELO_EDGES = (1400, 1800, 2200, 2600)  # lower edges of every bucket but the first
PHASES = ("Opening", "Middlegame", "Endgame")
TYPES = ("Tactical", "Quiet")
SIDES = ("White", "Black")

Leaf = tuple[str, str, str, str]  # (elo_bucket, phase, type, side)

# Per bucket and phase: (Tactical White, Tactical Black, Quiet White, Quiet Black),
# exactly as in ../shared/seeds/000 (games 800, puzzles 200).
_GAMES = {
    "(0, 1400)": {"Opening": (1, 1, 3, 3), "Middlegame": (4, 3, 8, 9), "Endgame": (1, 2, 2, 3)},
    "[1400, 1800)": {
        "Opening": (5, 4, 11, 12), "Middlegame": (14, 14, 34, 34), "Endgame": (5, 4, 12, 11)},
    "[1800, 2200)": {
        "Opening": (8, 8, 20, 20), "Middlegame": (24, 24, 60, 60), "Endgame": (8, 8, 20, 20)},
    "[2200, 2600)": {
        "Opening": (6, 5, 15, 14), "Middlegame": (17, 17, 43, 43), "Endgame": (6, 5, 14, 15)},
    "[2600, inf)": {
        "Opening": (3, 4, 9, 8), "Middlegame": (11, 10, 25, 26), "Endgame": (4, 3, 9, 8)},
}
_PUZZLES = {
    "(0, 1400)": {"Opening": (1, 1, 0, 0), "Middlegame": (3, 2, 1, 0), "Endgame": (1, 1, 0, 0)},
    "[1400, 1800)": {
        "Opening": (4, 3, 1, 0), "Middlegame": (10, 10, 2, 2), "Endgame": (3, 4, 1, 0)},
    "[1800, 2200)": {
        "Opening": (6, 6, 1, 1), "Middlegame": (18, 18, 3, 3), "Endgame": (6, 6, 1, 1)},
    "[2200, 2600)": {
        "Opening": (5, 4, 1, 0), "Middlegame": (13, 13, 2, 2), "Endgame": (4, 5, 1, 0)},
    "[2600, inf)": {"Opening": (3, 2, 0, 1), "Middlegame": (8, 7, 2, 1), "Endgame": (2, 3, 0, 1)},
}


def _leaves(table: dict[str, dict[str, tuple[int, int, int, int]]]) -> dict[Leaf, int]:
    out: dict[Leaf, int] = {}
    for bucket in ELO_BUCKETS:
        for phase_name in PHASES:
            counts = iter(table[bucket][phase_name])
            for type_name in TYPES:
                for side in SIDES:
                    out[(bucket, phase_name, type_name, side)] = next(counts)
    return out


GAME_TARGETS: dict[Leaf, int] = _leaves(_GAMES)
PUZZLE_TARGETS: dict[Leaf, int] = _leaves(_PUZZLES)


def leaf_order(row: dict[str, object], tiebreak: str) -> tuple[int, int, int, int, str]:
    """Sort key of an output row: its leaf in the tree's order, then a tiebreak column."""
    return (ELO_BUCKETS.index(str(row["elo_bucket"])), PHASES.index(str(row["phase"])),
            TYPES.index(str(row["type"])), SIDES.index(str(row["side"])), str(row[tiebreak]))


def elo_bucket(rating: float) -> str:
    """Bucket label of an average Elo or a puzzle rating."""
    for label_, edge in zip(ELO_BUCKETS, ELO_EDGES, strict=False):
        if rating < edge:
            return label_
    return ELO_BUCKETS[-1]


def _apportion(total: int, weights: list[int]) -> list[int]:
    """Split `total` in proportion to `weights`, largest remainder first, ties by order."""
    weight_sum = sum(weights)
    if weight_sum == 0:
        return [0] * len(weights)
    exact = [total * w / weight_sum for w in weights]
    shares = [math.floor(x) for x in exact]
    by_remainder = sorted(range(len(weights)), key=lambda i: (-(exact[i] - shares[i]), i))
    for i in by_remainder[: total - sum(shares)]:
        shares[i] += 1
    return shares


def _scale_level(
    leaves: dict[Leaf, int], total: int, depth: int, prefix: tuple[str, ...]
) -> dict[Leaf, int]:
    if depth == 4:
        bucket, phase, kind, side = prefix  # four levels down: a whole leaf
        return {(bucket, phase, kind, side): total}
    children = sorted({leaf[depth] for leaf in leaves if leaf[:depth] == prefix},
                      key=lambda name: _order(depth).index(name))
    weights = [sum(n for leaf, n in leaves.items() if leaf[: depth + 1] == prefix + (c,))
               for c in children]
    out: dict[Leaf, int] = {}
    for child, share in zip(children, _apportion(total, weights), strict=True):
        out.update(_scale_level(leaves, share, depth + 1, prefix + (child,)))
    return out


def _order(depth: int) -> tuple[str, ...]:
    return (ELO_BUCKETS, PHASES, TYPES, SIDES)[depth]


def scale_targets(leaves: dict[Leaf, int], scale: float) -> dict[Leaf, int]:
    """Leaf counts shrunk by `scale`, rounded level by level so each level's total scales too."""
    if scale <= 0:
        raise ValueError("scale must be positive")
    if scale == 1:
        return dict(leaves)
    total = round(sum(leaves.values()) * scale)
    return _scale_level(leaves, total, 0, ())


def totals(leaves: dict[Leaf, int], depth: int) -> dict[tuple[str, ...], int]:
    """Sum of leaf counts grouped by the first `depth` levels of the tree."""
    out: dict[tuple[str, ...], int] = {}
    for leaf, n in leaves.items():
        out[leaf[:depth]] = out.get(leaf[:depth], 0) + n
    return out

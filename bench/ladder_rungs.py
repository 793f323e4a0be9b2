"""Rungs chosen from measurements: where a calibrated ladder's rungs should be.

Reads a ladder (default: the committed one), fits a monotone curve of Elo against the
random-move share of its mix rungs (the random mover is 100%, Stockfish at MIX_NODES 0%) and
a line of Elo against log2(nodes) for its Stockfish rungs, and reads both at steps of RUNG_GAP
from the random mover to above --top: the mix percents and node counts a ladder with
adjacent gaps of about RUNG_GAP would have. Measured neighbours closer than the spacing's
lower end are merged (their mean) before the curve is drawn, so that noise cannot fold it.
It also lists every adjacent gap of the ladder outside RUNG_SPACING. The default ladder's
MIX_PERCENTS are this script's output on ladder 1 (`git show 7edc642:ladder.csv`); its
NODE_COUNTS step by 1.3x, a little under the 1.34x this script reads from ladder 1 (300 Elo
per doubling up to 4,000 nodes), so that noise in the slope leaves every gap inside the
spacing.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np
from scipy.interpolate import PchipInterpolator

from chess_eval.benchmark.arena.ladder import MIX_NODES, RUNG_GAP, RUNG_SPACING, Ladder, load_ladder
from chess_eval.benchmark.core.data import FIRST_LADDER, ladder_path
from chess_eval.cli import run_cli

ROOT = Path(__file__).resolve().parents[1]
NODE_REACH = 4  # the Stockfish rungs' slope is read up to this many times MIX_NODES


def measured_curves(ladder: Ladder) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(random shares, their Elos) and (log2 nodes, their Elos), relative to the random mover."""
    zero = next(r.elo for r in ladder.rungs if r.spec == "random")
    share, share_elo, nodes, nodes_elo = [100.0], [0.0], [], []
    for r in ladder.rungs:
        mix = re.fullmatch(rf"mix:random=(\d+),nodes={MIX_NODES}", r.spec)
        sf = re.fullmatch(r"stockfish:nodes=(\d+)", r.spec)
        if mix:
            share.append(float(mix[1]))
            share_elo.append(r.elo - zero)
        elif sf:
            nodes.append(np.log2(int(sf[1])))
            nodes_elo.append(r.elo - zero)
            if int(sf[1]) == MIX_NODES:
                share.append(0.0)
                share_elo.append(r.elo - zero)
    return np.array(share), np.array(share_elo), np.array(nodes), np.array(nodes_elo)


def merged(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Points sorted by y with neighbours closer than RUNG_SPACING[0] in y merged."""
    order = np.argsort(y)
    xs, ys = [x[order[0]]], [y[order[0]]]
    for i in order[1:]:
        if y[i] - ys[-1] < RUNG_SPACING[0]:
            xs[-1], ys[-1] = (xs[-1] + x[i]) / 2, (ys[-1] + y[i]) / 2
        else:
            xs.append(x[i])
            ys.append(y[i])
    return np.array(xs), np.array(ys)


def choose_shares(share: np.ndarray, elo: np.ndarray, gap: float) -> list[int]:
    """Whole random-move percents from 100 down to 0 at steps of about `gap` Elo."""
    s, e = merged(share, elo)
    curve = PchipInterpolator(s[::-1], e[::-1])  # Elo rises as the share falls
    chosen = [100]
    while chosen[-1] > 0:
        left = range(chosen[-1] - 1, -1, -1)
        best = min(left, key=lambda p: abs(curve(p) - curve(chosen[-1]) - gap))
        if curve(0) - curve(best) < RUNG_SPACING[0] or best == 0:
            chosen.append(0)
            break
        chosen.append(best)
    return chosen[1:-1]  # without the random mover and Stockfish itself


def choose_nodes(log_nodes: np.ndarray, elo: np.ndarray, gap: float, top: float) -> list[int]:
    """Node counts from MIX_NODES up, in equal steps of about `gap` Elo, past `top` (the
    slope measured on the rungs up to NODE_REACH times MIX_NODES, the range a ladder to 3000
    needs)."""
    near = log_nodes <= np.log2(NODE_REACH * MIX_NODES)
    slope, _ = np.polyfit(log_nodes[near], elo[near], 1)
    factor = 2 ** (gap / slope)
    print(f"  {slope:.0f} Elo per doubling of nodes: steps of {factor:.2f}x")
    start = float(np.interp(np.log2(MIX_NODES), log_nodes, elo))
    count = int(np.ceil((top - start) / gap)) + 1
    return [int(round(MIX_NODES * factor ** k, -2)) for k in range(count + 1)]


def main() -> None:
    """Print the proposed rungs and the ladder's gaps outside the spacing."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ladder", type=ladder_path, default=FIRST_LADDER)
    p.add_argument("--gap", type=float, default=RUNG_GAP)
    p.add_argument("--top", type=float, default=3050.0,
                   help="the strongest rung's Elo at least (default 3050)")
    args = p.parse_args()
    ladder = load_ladder(args.ladder)
    share, share_elo, nodes, nodes_elo = measured_curves(ladder)
    print(f"{args.ladder}: {len(ladder.rungs)} rungs")
    for a, b in zip(ladder.rungs, ladder.rungs[1:], strict=False):
        if not RUNG_SPACING[0] <= b.elo - a.elo <= RUNG_SPACING[1]:
            print(f"  {a.name} -> {b.name}: {b.elo - a.elo:.0f} Elo, outside "
                  f"{RUNG_SPACING[0]:.0f}-{RUNG_SPACING[1]:.0f}")
    print(f"mix percents at ~{args.gap:.0f} Elo: {choose_shares(share, share_elo, args.gap)}")
    print(f"node counts at ~{args.gap:.0f} Elo up to {args.top:.0f}: "
          f"{choose_nodes(nodes, nodes_elo, args.gap, args.top)}")


if __name__ == "__main__":
    sys.exit(run_cli(main))

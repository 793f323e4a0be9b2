"""The figures of a `play` session, as PNG files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from chess_eval.benchmark.question.answers import FAILED_ANSWERS
from chess_eval.figures import save_figure


def figures(result: dict[str, Any], stem: Path) -> list[Path]:
    """Posterior evolution, rungs chosen, illegal answers, conditions' posteriors."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    conditions = result["conditions"]
    fig, axes = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    for name, c in conditions.items():
        ev = c["evolution"]
        if not ev:
            continue
        n = [e["games"] for e in ev]
        axes[0].plot(n, [e["mean"] for e in ev], label=name)
        axes[0].fill_between(n, [e["lo"] for e in ev], [e["hi"] for e in ev], alpha=0.2)
        axes[1].scatter(n, [result["ladder"]["elos"][e["rung"]] for e in ev], s=10, label=name)
    axes[0].set(title="Posterior as games accrue (mean and 90% interval)", ylabel="Elo")
    axes[1].set(title="Rung chosen for each game (Thompson sampling)", xlabel="games",
                ylabel="rung Elo")
    for ax in axes:
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="best")
    paths.append(save_figure(fig, _named(stem, "posterior")))
    tax = result["taxonomy"]
    kinds = list(FAILED_ANSWERS)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.bar(kinds, [tax.get(k, 0) for k in kinds], color="tab:red")
    ax.set(title=f"Illegal answers by category ({tax['attempts']} attempts)",
           ylabel="answers")
    paths.append(save_figure(fig, _named(stem, "illegal")))
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, c in conditions.items():
        mean, sd = c["posterior"]["mean"], c["posterior"]["sd"]
        x = np.linspace(mean - 4 * sd, mean + 4 * sd, 200)
        ax.plot(x, np.exp(-0.5 * ((x - mean) / sd) ** 2) / (sd * np.sqrt(2 * np.pi)),
                label=f"{name} ({c['elo']['text']})")
    ax.set(title="Posterior of the game Elo per start condition", xlabel="Elo",
           ylabel="density")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="best", fontsize=8)
    paths.append(save_figure(fig, _named(stem, "conditions")))
    return paths


def _named(stem: Path, what: str) -> Path:
    """A figure's path: stem-what.png."""
    return stem.with_name(f"{stem.name}-{what}.png")

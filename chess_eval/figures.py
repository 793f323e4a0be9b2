"""Saving a matplotlib figure: laid out, written atomically in each format asked, closed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chess_eval.files import atomic_write

DPI = 100  # every figure of the project, so PNG sizes agree across reports
# No creation date and a fixed salt for SVG element ids: the same data draws the same bytes.
METADATA = {"png": {"Software": None}, "svg": {"Date": None}}
SVG_SALT = "chess-llm-bench"


def save_figure(fig: Any, *paths: Path) -> Path:
    """Write `fig` to each path in the format its suffix names (png, svg), then close it;
    returns the first path."""
    import matplotlib
    import matplotlib.pyplot as plt  # only runs that draw pay for importing matplotlib

    matplotlib.rcParams["svg.hashsalt"] = SVG_SALT
    fig.tight_layout()
    try:
        for path in paths:
            fmt = path.suffix.lstrip(".")
            text = fmt == "svg"
            with atomic_write(path, "w" if text else "wb",
                              **({"encoding": "utf-8"} if text else {})) as handle:
                fig.savefig(handle, format=fmt, dpi=DPI, metadata=METADATA.get(fmt))
    finally:
        plt.close(fig)
    return paths[0]

"""A result's `human` block (its statement on each time control), its one line for a summary
or a table, and its flat metrics (the leaderboard's columns and Inspect's metrics)."""

from __future__ import annotations

from typing import Any

from chess_eval.benchmark.core.data import LADDER_MAP
from chess_eval.benchmark.human.anchors import HUMAN_DIR
from chess_eval.benchmark.human.crosswalk import Crosswalk, Reference, load_crosswalks
from chess_eval.benchmark.human.statement import Kind, state
from chess_eval.benchmark.stats.ladder_map import LadderMap, load_map
from chess_eval.engine import REFERENCE_ENGINE


def human_block(elo: dict[str, Any], engine: str, crosswalks: list[Crosswalk],
                ladder_map: LadderMap | None,
                ladder: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """A result's `human` block: its statement on each time control. A run on the reference
    ladder is read as it is (`ladder`: its condition's ladder part); one on a ladder the
    measured map converts from is converted first (its interval widened, its error its own);
    any other ladder, or no game Elo, gets none."""
    if not crosswalks:
        return None
    scale = "reference"
    if not engine.startswith(REFERENCE_ENGINE):
        if ladder_map is None or not engine.startswith(ladder_map.source):
            return None
        elo, ladder = ladder_map.convert_elo(elo), None
        scale = f"converted from {ladder_map.source}"
    said = [state(c, elo, ladder) for c in crosswalks]
    places = [s for s in said if s is not None]
    return {"scale": scale, "time_controls": places} if places else None


def human_text(block: dict[str, Any] | None) -> str:
    """The block in one line ('Lichess blitz ~1,450 [1,420, 1,560]; ...'), '' for none."""
    if not block:
        return ""
    places = block["time_controls"]
    # A score against one net, the same on every time control (the score is on the
    # reference scale): said once, with that net's rating on each.
    same = {(tc["kind"], tc["anchor"], repr(tc["expected_score"]), tc["text"].split(
        ", Lichess ", 1)[0]) for tc in places}
    plain = all(tc["kind"] == Kind.SCORE and tc["text"].endswith(")") and
                "; " not in tc["text"] for tc in places)
    if len(places) > 1 and len(same) == 1 and plain:
        ratings = ", ".join(f"{tc['time_control']} {tc['anchor_rating']:,}" for tc in places)
        return f"{str(places[0]['text']).split(', Lichess ', 1)[0]}, Lichess {ratings})"
    return "; ".join(tc["text"] for tc in places)


def human_metrics(place: dict[str, Any]) -> dict[str, float | None]:
    """One time control's statement as flat metrics (Inspect's), each named for what it is:
    lichess_TC (_lo, _hi) for a figure, lichess_TC_at_most / _at_least for a one-sided one,
    lichess_TC_expected_score (_lo, _hi) against the anchor lichess_TC_anchor_rating, and
    lichess_TC_figure_half_width / _figure_games: what a figure would take."""
    name = f"lichess_{place['time_control']}"
    bound = place.get("bound") or {}
    score = place.get("expected_score") or {}
    needs = place.get("figure_needs") or {}
    return {name: place["value"], f"{name}_lo": place["lo"], f"{name}_hi": place["hi"],
            f"{name}_at_most": bound.get("value") if bound.get("side") == Kind.AT_MOST
            else None,
            f"{name}_at_least": bound.get("value") if bound.get("side") == Kind.AT_LEAST
            else None,
            f"{name}_expected_score": score.get("value"),
            f"{name}_expected_score_lo": score.get("lo"),
            f"{name}_expected_score_hi": score.get("hi"),
            f"{name}_anchor_rating": place.get("anchor_rating"),
            f"{name}_figure_half_width": needs.get("half_width"),
            f"{name}_figure_games": needs.get("games")}


def committed_block(elo: dict[str, Any], engine: str, reference: Reference | None,
                    ladder: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """human_block with the committed anchors, readings and map (`reference`: the loaded
    reference ladder; `ladder`: the run's condition's ladder part)."""
    return human_block(elo, engine, load_crosswalks(HUMAN_DIR, reference), load_map(LADDER_MAP),
                       ladder)

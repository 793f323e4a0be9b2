"""A build's summary: what each source gave, what the selection achieved and why a leaf is short.

Written beside the committed questions.csv (`print.py --build output --summary FILE`), so a
fresh clone, which has no build, can still say why a leaf fell short. Every value comes
from the build's own files (games.db, the step reports, questions.csv): no time, no path.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

from chess_eval.errors import DataError
from chess_eval.files import sha256_file
from chess_eval.testset.tree import ELO_BUCKETS

SUMMARY_VERSION = 1


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise DataError(f"{path} does not exist: the build is not complete (python generate.py)")
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def sources(games_db: Path) -> list[dict[str, Any]]:
    """Per source file, in the order read: games kept and drops by reason."""
    with sqlite3.connect(f"file:{games_db}?mode=ro", uri=True) as conn:
        names = [row[0] for row in conn.execute("SELECT source FROM sources ORDER BY position")]
        kept = dict(conn.execute("SELECT source, kept FROM sources"))
        drops: dict[str, dict[str, int]] = {name: {} for name in names}
        for name, reason, n in conn.execute(
                "SELECT source, reason, count FROM drops ORDER BY source, reason"):
            drops[name][reason] = n
    return [{"file": name, "kept": kept[name], "dropped": drops[name]} for name in names]


def bucket_supply(games_db: Path) -> dict[str, dict[str, Any]]:
    """Per Elo bucket: kept games, distinct players, and the four players with most games
    (the per-player cap binds where a few players hold most of a bucket's games)."""
    out: dict[str, dict[str, Any]] = {}
    with sqlite3.connect(f"file:{games_db}?mode=ro", uri=True) as conn:
        for bucket in ELO_BUCKETS:
            seats: Counter[str] = Counter()
            games = 0
            for white, black in conn.execute(
                    "SELECT white, black FROM games WHERE elo_bucket = ?", (bucket,)):
                games += 1
                seats.update(n.lower() for n in (white, black) if n not in ("", "?"))
            top = seats.most_common(4)
            out[bucket] = {"games": games, "players": len(seats),
                           "top_players_games": sum(n for _, n in top)}
    return out


def build_summary(out: Path, questions: Path) -> dict[str, Any]:
    """The summary of the build in `out` whose step 06 wrote `questions`."""
    selection = _read_json(out / "positions_report.json")
    puzzles = _read_json(out / "puzzles_report.json")
    short = [row for row in selection["leaves"] if row["shortfall"]]
    return {
        "version": SUMMARY_VERSION,
        "questions_sha256": sha256_file(questions),
        "engine": selection["engine"],
        "sources": sources(out / "games.db"),
        "buckets": bucket_supply(out / "games.db"),
        "selection": {key: selection[key] for key in (
            "seed", "ply_draw", "target", "selected", "max_per_player", "largest_player",
            "counts")},
        "short_game_leaves": short,
        "short_puzzle_leaves": [row for row in puzzles["leaves"] if row["shortfall"]],
        "puzzles": {key: puzzles[key] for key in puzzles if key != "leaves"},
        # Rows step 06 dropped to keep the mate cap when puzzle leaves fell short.
        "mates_dropped_for_cap": _read_json(out / "evaluation_report.json").get(
            "mates_dropped_for_cap", 0),
    }


def why_short(summary: dict[str, Any]) -> list[str]:
    """One line per Elo bucket with short game leaves: how short, and why, from the build."""
    lines = []
    by_bucket: dict[str, list[dict[str, Any]]] = {}
    for row in summary["short_game_leaves"]:
        by_bucket.setdefault(row["elo_bucket"], []).append(row)
    cap = summary["selection"]["max_per_player"]
    for bucket, rows in by_bucket.items():
        supply = summary["buckets"][bucket]
        short = sum(r["shortfall"] for r in rows)
        capped = sum(r["shortfall_from_player_cap"] for r in rows)
        lines.append(
            f"{bucket}: {short} short in {len(rows)} leaves. The sources hold "
            f"{supply['games']:,} games of this bucket from {supply['players']:,} players "
            f"(the four most frequent in {supply['top_players_games']:,} of their "
            f"{2 * supply['games']:,} seats); at most {cap} positions a player, up to "
            f"{capped} of the shortfall is the cap's, the rest is games that ran out.")
    puzzles = summary.get("short_puzzle_leaves", [])
    if puzzles:
        names = "; ".join(" ".join((r["elo_bucket"], r["phase"], r["type"], r["side"]))
                          for r in puzzles)
        lines.append(f"puzzles: {sum(r['shortfall'] for r in puzzles)} short ({names}): the "
                     "puzzle file holds no puzzle of these leaves that step 05 could keep "
                     "(verified, within the mate and motif caps).")
    if summary.get("mates_dropped_for_cap"):
        lines.append(f"mates: step 06 dropped {summary['mates_dropped_for_cap']} mate row(s) "
                     "to keep the mate cap of the file as built (puzzle leaves short, so the "
                     "cap's share of the smaller file is smaller); those leaves are short by "
                     "as many.")
    return lines


def load_summary(path: Path, questions: Path) -> dict[str, Any] | None:
    """The committed summary when it describes `questions` (same SHA-256), else None."""
    if not path.is_file() or not questions.is_file():
        return None
    summary: dict[str, Any] = json.loads(path.read_text())
    return summary if summary.get("questions_sha256") == sha256_file(questions) else None

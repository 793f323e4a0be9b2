"""bench/ladder_refit.py: each reference-ladder version's figures, kept for the docs'
before/after table, and the current version's held to the committed files."""

from pathlib import Path

from bench.ladder_refit import TABLE, current_rows, markdown, read_table, write


def test_the_current_version_s_kept_figures_are_the_committed_files_figures() -> None:
    """A refit whose dependents were regenerated without `ladder_refit --write` (or a file
    edited since) fails here: the docs' table would show another version's figures."""
    now = current_rows()
    kept = [r for r in read_table(TABLE) if r["version"] == now[0]["version"]]
    assert kept == now, "run: python -m bench.ladder_refit --write"


def test_a_write_replaces_its_own_version_and_keeps_the_others(tmp_path: Path) -> None:
    """Two versions side by side, in the newer one's order (a rung it adds sits in its
    place), then what only the older has; a figure one version lacks reads '-'."""
    table = tmp_path / "refit.csv"

    def row(version: str, item: str, value: str, lo: str = "", hi: str = "") -> dict[str, str]:
        return {"version": version, "games": str(1000 * int(version)), "quantity": "rung",
                "item": item, "value": value, "lo": lo, "hi": hi}
    write([row("1", "a", "100", "60", "140"), row("1", "b", "7")], table)
    write([row("2", "a", "101", "80", "122")], table)
    write([row("2", "a", "102", "81", "123"), row("2", "c", "9")], table)
    rows = read_table(table)
    assert [(r["version"], r["item"], r["value"]) for r in rows] == \
        [("1", "a", "100"), ("1", "b", "7"), ("2", "a", "102"), ("2", "c", "9")]
    text = markdown(rows).splitlines()
    assert text[0] == "| figure | item | version 1 (1,000 games) | version 2 (2,000 games) |"
    assert text[2:] == ["| rung | a | 100 [60, 140] | 102 [81, 123] |", "| rung | c | - | 9 |",
                        "| rung | b | 7 | - |"]

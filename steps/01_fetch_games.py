"""Step 01: stream a Lichess games dump (or local PGN), cut a slice at game boundaries."""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tqdm import tqdm

from chess_eval.cli import add_out_arg, non_negative_float, positive_float, step_main
from chess_eval.errors import FetchError
from chess_eval.files import atomic_write
from chess_eval.testset.fetch import (
    add_fetch_args,
    decompressed_blocks,
    fetch_config,
    is_url,
    slice_games,
)
from chess_eval.testset.pipeline import StepSpec
from chess_eval.testset.sources import SOURCES_FILE, SourceRange, write_sources

log = logging.getLogger(__name__)

VERSION = "2"  # 2: games_sources.json, each source's byte range
NAME = "01_fetch_games"
DUMP_URL = "https://database.lichess.org/standard/lichess_db_standard_rated_{month}.pgn.zst"
MB = 1 << 20


def last_complete_month(today: dt.date | None = None) -> str:
    """YYYY-MM of the month before `today`: the newest monthly dump that can be complete."""
    today = today or dt.datetime.now(dt.UTC).date()
    first = today.replace(day=1)
    return (first - dt.timedelta(days=1)).strftime("%Y-%m")


def build_parser() -> argparse.ArgumentParser:
    """Command-line options of step 01."""
    parser = argparse.ArgumentParser(
        prog="01_fetch_games.py",
        description="Download (streaming) a Lichess standard rated dump or read a local "
        "PGN/PGN.zst, skip --offset-mb of decompressed data, keep about --chunk-mb, cut at a "
        "game boundary, and write OUT/games.pgn through a temporary name.",
    )
    parser.add_argument("--source", action="append", default=None, metavar="URL_OR_PATH",
                        help="a URL or a local .pgn/.pgn.zst path; repeat to concatenate "
                        "several (offset and chunk apply to each). Default: the Lichess dump "
                        "of --month")
    parser.add_argument("--month", default=None, metavar="YYYY-MM",
                        help="month of the default Lichess dump (default: the last complete "
                        "month, i.e. the one before today in UTC)")
    parser.add_argument("--offset-mb", type=non_negative_float, default=0.0,
                        help="decompressed MB to skip at the start of each source (default 0)")
    parser.add_argument("--chunk-mb", type=positive_float, default=2048.0,
                        help="decompressed MB to keep from each source, extended to the end "
                        "of the game it stops in (default 2048)")
    add_fetch_args(parser)
    add_out_arg(parser)
    return parser


def sources(args: argparse.Namespace) -> list[str]:
    """The sources to read, in order."""
    if args.source:
        return list(args.source)
    month = args.month or last_complete_month()
    try:
        dt.datetime.strptime(month, "%Y-%m")
    except ValueError as exc:
        raise FetchError(f"--month must look like 2025-01, got {month!r}") from exc
    return [DUMP_URL.format(month=month)]


def spec(args: argparse.Namespace) -> StepSpec:
    """Inputs, outputs and parameters of this run."""
    return StepSpec(
        name=NAME, version=VERSION, inputs=tuple(sources(args)),
        outputs=(args.out / "games.pgn", args.out / SOURCES_FILE),
        params={"offset_mb": args.offset_mb, "chunk_mb": args.chunk_mb},
    )


def run(args: argparse.Namespace) -> None:
    """Fetch every source into OUT/games.pgn."""
    config = fetch_config(args)
    target = args.out / "games.pgn"
    total = 0
    ranges: list[SourceRange] = []
    with atomic_write(target, "wb") as handle:
        for source in sources(args):
            log.info("reading %s", source)
            written = 0
            limit = int(args.chunk_mb * MB)
            # A local file's progress is its bytes read (its decompressed size is unknown);
            # a download's is the decompressed MB kept, against --chunk-mb.
            local = not is_url(source) and Path(source).is_file()
            size = Path(source).stat().st_size if local else limit
            with tqdm(total=size / MB, unit="MB", desc=Path(source).name[:40],
                      bar_format="{l_bar}{bar}| {n:.1f}/{total:.1f} MB [{elapsed}<{remaining}]",
                      disable=None) as bar:
                blocks = decompressed_blocks(
                    source, config, (lambda n: bar.update(n / MB)) if local else None)
                for piece in slice_games(blocks, int(args.offset_mb * MB), limit):
                    handle.write(piece)
                    written += len(piece)
                    if not local:
                        bar.update(len(piece) / MB)
            if written == 0:
                where = "remote" if is_url(source) else "local"
                raise FetchError(f"no games read from {where} source {source} "
                                 f"(empty, or --offset-mb beyond its end)")
            ranges.append(SourceRange(name=Path(source).name, start=total, end=total + written))
            handle.write(b"\n\n")
            total += written + 2
    # Written after games.pgn: a sidecar that exists always describes the games file beside it.
    write_sources(args.out / SOURCES_FILE, ranges)
    log.info("wrote %s (%.1f MB) and %s", target, total / MB, SOURCES_FILE)


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    return step_main(build_parser, run, argv)


if __name__ == "__main__":
    sys.exit(main())

"""Streaming sources: HTTP with retries and resume, local files, zstd, cutting at game starts."""

from __future__ import annotations

import argparse
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import requests
import zstandard

from chess_eval.cli import positive_float
from chess_eval.errors import FetchError

log = logging.getLogger(__name__)

BLOCK = 1 << 20  # bytes read at a time from a local source
# Bytes read at a time from HTTP: a dropped connection loses at most this much progress.
HTTP_BLOCK = 1 << 16
GAME_MARK = b"\n[Event "  # a game starts at "[Event " at the beginning of a line


@dataclass(frozen=True)
class FetchConfig:
    """How remote sources are read."""

    retries: int = 5  # reconnections allowed after a connection error, timeout or 5xx
    backoff_s: float = 1.0  # first wait before a retry; doubles each time
    timeout_s: float = 60.0  # connect and read timeout of one request


def add_fetch_args(parser: argparse.ArgumentParser) -> None:
    """The options of a step that reads a remote source: retries, their wait, the timeout."""
    parser.add_argument("--retries", type=int, default=5,
                        help="reconnections after dropped connections, timeouts or HTTP 5xx "
                        "(default 5)")
    parser.add_argument("--retry-wait", type=positive_float, default=1.0,
                        help="seconds before the first retry; doubles each time (default 1)")
    parser.add_argument("--timeout", type=positive_float, default=60.0,
                        help="seconds to wait for the server on connect and on each read "
                        "(default 60)")


def fetch_config(args: argparse.Namespace) -> FetchConfig:
    """The FetchConfig of the options add_fetch_args declared."""
    return FetchConfig(retries=args.retries, backoff_s=args.retry_wait, timeout_s=args.timeout)


def is_url(source: str) -> bool:
    """Whether a source is an http(s) URL rather than a local path."""
    return source.startswith(("http://", "https://"))


def _raw_blocks(source: str, config: FetchConfig) -> Iterator[bytes]:
    if is_url(source):
        yield from _http_blocks(source, config)
        return
    path = Path(source)
    if not path.is_file():
        raise FetchError(f"source not found: {source}")
    with open(path, "rb") as handle:
        while block := handle.read(BLOCK):
            yield block


def _open(session: requests.Session, url: str, pos: int, config: FetchConfig) -> requests.Response:
    headers = {"Range": f"bytes={pos}-"} if pos else {}
    response = session.get(url, stream=True, timeout=config.timeout_s, headers=headers)
    if response.status_code == 404:
        response.close()
        raise FetchError(f"{url}: 404 Not Found (is the month published yet? try --month)")
    if response.status_code >= 500:
        response.close()
        raise requests.ConnectionError(f"{url}: HTTP {response.status_code}")
    if response.status_code >= 400:
        response.close()
        raise FetchError(f"{url}: HTTP {response.status_code}")
    return response


def _http_blocks(url: str, config: FetchConfig) -> Iterator[bytes]:
    """Bytes of `url`, reconnecting with a Range request after a dropped connection."""
    pos = 0
    failures = 0
    with requests.Session() as session:
        while True:
            try:
                response = _open(session, url, pos, config)
                with response:
                    # A server that ignores Range sends everything again: skip what we have.
                    skip = pos if pos and response.status_code != 206 else 0
                    expected = response.headers.get("Content-Length")
                    received = 0
                    for chunk in response.iter_content(HTTP_BLOCK):
                        received += len(chunk)
                        if skip:
                            cut = min(skip, len(chunk))
                            chunk, skip = chunk[cut:], skip - cut
                        if chunk:
                            pos += len(chunk)
                            failures = 0
                            yield chunk
                    if expected is not None and received < int(expected):
                        raise requests.ConnectionError(f"stream ended at {received}/{expected}")
                return
            except (requests.ConnectionError, requests.Timeout,
                    requests.exceptions.ChunkedEncodingError) as exc:
                failures += 1
                if failures > config.retries:
                    raise FetchError(
                        f"{url}: giving up after {config.retries} retries: {exc}") from exc
                wait = config.backoff_s * 2 ** (failures - 1)
                log.warning("%s: %s; retry %d in %.1fs from byte %d", url, exc, failures, wait, pos)
                time.sleep(wait)


class _Zstd:
    """Incremental zstd decoder across frames that notices a truncated stream."""

    def __init__(self) -> None:
        self._new()

    def _new(self) -> None:
        self._obj = zstandard.ZstdDecompressor().decompressobj()
        self._in_frame = False

    def feed(self, data: bytes) -> bytes:
        out = []
        while data:
            try:
                out.append(self._obj.decompress(data))
            except zstandard.ZstdError as exc:
                raise FetchError(f"corrupt zstd data: {exc}") from exc
            self._in_frame = True
            if self._obj.eof:
                data = self._obj.unused_data
                self._new()
            else:
                data = b""
        return b"".join(out)

    def finish(self) -> None:
        if self._in_frame:
            raise FetchError("truncated zstd stream: the source ended inside a frame")


def decompressed_blocks(source: str, config: FetchConfig,
                        on_raw: Callable[[int], None] | None = None) -> Iterator[bytes]:
    """Blocks of a source's content, decompressed when its name ends in .zst; `on_raw` is
    told the size of every raw block read (for progress over a compressed file)."""
    raw = _raw_blocks(source, config)
    if on_raw is not None:
        raw = _tap(raw, on_raw)
    if not source.split("?")[0].endswith(".zst"):
        yield from raw
        return
    decoder = _Zstd()
    for block in raw:
        if out := decoder.feed(block):
            yield out
    decoder.finish()


def _tap(blocks: Iterator[bytes], on_raw: Callable[[int], None]) -> Iterator[bytes]:
    for block in blocks:
        on_raw(len(block))
        yield block


def _game_start(data: bytes, pos: int, at_least: int) -> int | None:
    """Absolute offset of the first game start >= at_least in `data` (which begins at `pos`)."""
    if pos == 0 and at_least == 0 and data.startswith(GAME_MARK[1:]):
        return 0
    i = data.find(GAME_MARK, max(at_least - pos - 1, 0))
    return None if i < 0 else pos + i + 1


def slice_games(blocks: Iterable[bytes], offset: int, limit: int | None) -> Iterator[bytes]:
    """From the first game start at or after `offset`, about `limit` bytes cut at a game start."""
    carry = len(GAME_MARK) - 1  # bytes kept back so a mark split across blocks is still found
    pos, data, start = 0, b"", None
    for block in blocks:
        data += block
        if start is None:
            start = _game_start(data, pos, offset)
            if start is None:
                pos, data = pos + max(len(data) - carry, 0), data[-carry:]
                continue
            data, pos = data[start - pos:], start
        if limit is not None and pos + len(data) > start + limit:
            end = _game_start(data, pos, max(start + limit, pos + 1))
            if end is not None:
                yield data[: end - pos]
                return
        if len(data) > carry:
            yield data[:-carry]
            pos, data = pos + len(data) - carry, data[-carry:]
    if start is not None and data:
        yield data

"""Progress of a run by outcome, with an ETA: a bar on a terminal, else periodic log lines."""

from __future__ import annotations

import logging
import time
from collections import Counter
from contextvars import ContextVar

from tqdm import tqdm

log = logging.getLogger(__name__)

LOG_EVERY_S = 30.0  # seconds between progress lines when stderr is not a terminal
# Whether progress is drawn as a bar in this context (False: log lines only, even on a
# terminal: each chess_eval task's sample says so, as Inspect's display owns the terminal). A
# context variable, so a process that runs an eval and then a CLI command keeps its bars.
BARS: ContextVar[bool] = ContextVar("chess_eval_bars", default=True)


ANSWER_KINDS = ("legal", "illegal", "truncated", "infra")


class Progress:
    """Counts outcomes by kind (answers: legal, illegal, truncated, infra; any category not
    among the kinds counts as the second); cached outcomes count as done, not in the ETA."""

    def __init__(self, total: int, desc: str, every_s: float = LOG_EVERY_S,
                 kinds: tuple[str, ...] = ANSWER_KINDS, unit: str = "q", stored: int = 0,
                 where: str = "") -> None:
        # A rerun's resume is said first, before the bar (`stored` answers found in `where`).
        self.announced = bool(stored)
        if stored:
            log.info("resuming: %d of %d answers already stored in %s", stored, total, where)
        self.total = total
        self.kinds = kinds
        self.counts: Counter[str] = Counter()
        self.asked = 0  # answers that needed a request (the ETA's rate)
        self.desc = desc
        self.bar = tqdm(total=total, desc=desc, unit=unit, disable=None if BARS.get() else True)
        self.every_s = every_s
        self.start = self.last = time.monotonic()
        self.logged = 0  # `done` at the last progress line

    @property
    def done(self) -> int:
        """Questions with an outcome so far."""
        return sum(self.counts.values())

    def update(self, category: str, cached: bool) -> None:
        """Count one outcome (category: legal, infra, truncated, or an illegal category)."""
        kind = category if category in self.kinds else self.kinds[1]
        self.counts[kind] += 1
        self.asked += not cached
        if self.done > self.total:  # an adaptive run's last batch went past its estimate
            self.expect(self.done)
        self.bar.set_postfix_str(self._counts(), refresh=False)
        self.bar.update()
        now = time.monotonic()
        if self.bar.disable and (now - self.last >= self.every_s or self.done == self.total):
            self.last = now
            self._line()

    def _line(self) -> None:
        self.logged = self.done
        log.info("%d/%d done (%s), ETA %s", self.done, self.total, self._counts(), self.eta())

    def _counts(self) -> str:
        return ", ".join(f"{k} {self.counts[k]}" for k in self.kinds)

    def eta(self) -> str:
        """Time left at the rate of the answers asked so far."""
        left = self.total - self.done
        if left == 0:
            return "0s"
        if self.asked == 0:
            return "unknown"
        seconds = (time.monotonic() - self.start) / self.asked * left
        return time.strftime("%H:%M:%S", time.gmtime(seconds))

    def expect(self, total: int) -> None:
        """A new estimate of everything the run will do (adaptive runs learn it as they go),
        never below what is done."""
        self._set_total(max(total, self.done))

    def finish(self) -> None:
        """An adaptive run ended normally: what is done is its total, whichever way the
        estimate was off, and the last line (or the bar) says so."""
        self._set_total(self.done)
        if self.bar.disable and self.logged != self.done:
            self._line()

    def _set_total(self, total: int) -> None:
        self.total = self.bar.total = total
        self.bar.refresh()

    def close(self) -> None:
        """Close the bar; say how much of the work an earlier invocation had done (a rerun
        after Ctrl-C resumes, and should say so), unless the run said it at the start."""
        self.bar.close()
        stored = self.done - self.asked
        if stored and not self.announced:
            log.info("%s: %d of %d done before and resumed from the store (not asked again)",
                     self.desc, stored, self.done)

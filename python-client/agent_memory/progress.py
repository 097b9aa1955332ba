"""Progress of long work on stderr: done / total, rate and time left. Redrawn in place on a terminal,
a line every few seconds otherwise (logs, CI)."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    def __init__(self, what: str, total: int | None, unit: str, stream: TextIO = sys.stderr, every: float = 5.0):
        self.what, self.total, self.unit, self.stream = what, total, unit, stream
        self.done = 0
        self.started = self.shown = time.monotonic()
        self.every = 0.2 if stream.isatty() else every

    def line(self) -> str:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        rate = self.done / elapsed
        if self.total:
            left = (self.total - self.done) / rate if rate else 0.0
            width = 24
            filled = int(width * self.done / self.total)
            bar = "#" * filled + "." * (width - filled)
            return f"{self.what} [{bar}] {self.done}/{self.total} {self.unit} {rate:.1f}/s, {left:.0f} s left"
        return f"{self.what}: {self.done} {self.unit} {rate:.1f}/s"

    def advance(self, count: int = 1) -> None:
        self.done += count
        now = time.monotonic()
        if now - self.shown >= self.every:
            self.shown = now
            self._show(final=False)

    def finish(self) -> None:
        self._show(final=True)

    def _show(self, final: bool) -> None:
        if self.stream.isatty():
            self.stream.write("\r" + self.line() + ("\n" if final else ""))
        else:
            self.stream.write(self.line() + "\n")
        self.stream.flush()

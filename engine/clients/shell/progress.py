"""The embedding progress line on stderr: chunks done / total, rate and ETA.

The engine calls ``update(done, total)`` (through ``Connection.set_progress``) after each batch it
embeds, from the thread running the statement. Nothing is shown until the statement has run for
``delay`` seconds. On a terminal the line redraws in place and is erased when the statement ends;
otherwise (a log file, a pipe) a line is written at most once per ``interval`` seconds, plus a last one.
"""
from __future__ import annotations

import threading
import time
from typing import TextIO


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def line(done: int, total: int, elapsed: float, rate: float | None = None) -> str:
    if rate is None:
        rate = done / elapsed if elapsed > 0 else 0.0
    percent = 100.0 * done / total if total else 100.0
    eta = _clock((total - done) / rate) if rate > 0 and total > done else "0:00"
    return (f"Embedding: {done:,}/{total:,} chunks ({percent:.0f}%), {rate:,.1f} chunks/s, "
            f"ETA {eta}, elapsed {_clock(elapsed)}")


class Progress:
    def __init__(self, stream: TextIO, *, enabled: bool, delay: float = 1.0, interval: float = 1.0):
        self.stream = stream
        self.enabled = enabled
        self.delay = delay
        self.tty = _isatty(stream)
        self.interval = 0.1 if self.tty else interval
        self._lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self.started = time.monotonic()
        self.base = 0              # chunks of earlier embedding passes of this statement
        self.last_done = 0
        self.last_total = 0
        self.last_draw = 0.0
        self.shown = False
        self.closed = False        # finished (or cancelled): late reports draw nothing
        self.pending: str | None = None
        self.first: tuple[float, int] | None = None   # (time, chunks) of the first report: the rate
                                                     # leaves out the model's start-up

    def start(self) -> None:
        """A statement begins."""
        with self._lock:
            self._reset()

    def update(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        with self._lock:
            if self.closed:
                return
            finished = self.last_total > 0 and self.last_done >= self.last_total
            if done < self.last_done or finished:   # a new embedding pass of the same statement
                self.base += self.last_total
            self.last_done, self.last_total = done, total
            now = time.monotonic()
            elapsed = now - self.started
            if self.first is None:
                self.first = (now, self.base + done)
            rate = None
            if now - self.first[0] > 0.5:
                rate = (self.base + done - self.first[1]) / (now - self.first[0])
            text = line(self.base + done, self.base + total, elapsed, rate)
            if elapsed < self.delay:
                self.pending = text if self.shown else None
                return
            if self.shown and now - self.last_draw < self.interval and done < total:
                self.pending = text
                return
            self._draw(text, now)

    def _draw(self, text: str, now: float) -> None:
        if self.tty:
            self.stream.write("\r" + text + "\x1b[K")
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
        self.shown, self.last_draw, self.pending = True, now, None

    def finish(self) -> None:
        """The statement ended: erase the line on a terminal, or write the last state to a log."""
        with self._lock:
            self.closed = True
            if not self.shown:
                return
            if self.tty:
                self.stream.write("\r\x1b[K")
            elif self.pending:
                self.stream.write(self.pending + "\n")
            self.stream.flush()
            self.shown = False


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False

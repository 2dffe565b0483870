"""Where the shell's output goes: the terminal, a pager (``pager less``) and a tee file (``tee log``).

Like the mysql client, a pager gets the output of one statement at a time (its rows and its summary
line), run through ``sh -c`` so that ``pager less -S`` or ``pager grep x > hits.txt`` work; a tee
file gets everything: the statements typed, their results and the errors, appended.
"""
from __future__ import annotations

import os
import subprocess
from contextlib import contextmanager
from collections.abc import Iterator
from typing import TextIO


class Sink:
    def __init__(self, out: TextIO, err: TextIO):
        self.out, self.err = out, err
        self.pager: str | None = None        # shell command results are piped through
        self.tee: TextIO | None = None
        self.tee_path: str | None = None
        self._capture: list[str] | None = None

    # -- writing ------------------------------------------------------------------------------------
    def write(self, text: str) -> None:
        if self._capture is not None:
            self._capture.append(text)
        else:
            self.out.write(text)
        self._to_tee(text)

    def error(self, text: str) -> None:
        self.flush()
        self.err.write(text)
        self.err.flush()
        self._to_tee(text)

    def echo(self, text: str) -> None:
        """Input typed at the prompt: only the tee file records it."""
        self._to_tee(text)

    def flush(self) -> None:
        if self._capture is None:
            self.out.flush()

    def _to_tee(self, text: str) -> None:
        if self.tee is not None:
            self.tee.write(text)
            self.tee.flush()

    # -- pager ----------------------------------------------------------------------------------------
    @contextmanager
    def paged(self, enabled: bool) -> Iterator[None]:
        """Collect what is written inside the block and hand it to the pager at its end."""
        if not enabled or self.pager is None or self._capture is not None:
            yield
            return
        self._capture = []
        try:
            yield
        finally:
            text, self._capture = "".join(self._capture), None
            self._page(text)

    def _page(self, text: str) -> None:
        self.out.flush()
        try:
            proc = subprocess.Popen(self.pager or "cat", shell=True, stdin=subprocess.PIPE,
                                    encoding="utf-8", errors="replace")
        except OSError as exc:
            self.err.write(f"ERROR: cannot start pager '{self.pager}': {exc.strerror}\n")
            self.out.write(text)
            return
        try:
            assert proc.stdin is not None
            proc.stdin.write(text)
            proc.stdin.close()
        except BrokenPipeError:              # the user left the pager before reading everything
            pass
        proc.wait()

    # -- tee ----------------------------------------------------------------------------------------
    def open_tee(self, path: str) -> None:
        """Append to ``path`` from now on (raises OSError)."""
        handle = open(os.path.expanduser(path), "a", encoding="utf-8")
        self.close_tee()
        self.tee, self.tee_path = handle, path

    def close_tee(self) -> None:
        if self.tee is not None:
            self.tee.close()
        self.tee, self.tee_path = None, None

"""Drive the installed ``tessera`` console script: subprocess for batch mode, pexpect for a terminal."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

TESSERA = str(Path(sys.executable).parent / "tessera")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][AB0-2]|\r")
PROMPT = r"\x1b\[\?2004h"     # prompt_toolkit turns bracketed paste on as each new prompt starts


def clean(text: str) -> str:
    """Terminal output without escape sequences and carriage returns."""
    return ANSI.sub("", text)


@pytest.fixture
def shell_env(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home), TESSERA_HISTORY=str(tmp_path / "history"),
               PROMPT_TOOLKIT_NO_CPR="1", TERM="xterm", COLUMNS="200", LINES="50")
    if "TESSERA_CACHE_DIR" not in os.environ:      # keep using the model built under the real home
        env["TESSERA_CACHE_DIR"] = str(Path.home() / ".cache" / "tesseradb")
    return env


@pytest.fixture
def run(shell_env, tmp_path):
    """run(*args, input=None) -> CompletedProcess of ``tessera`` in batch mode (cwd = tmp_path)."""
    def _run(*args: str, input: str | None = None, cwd: str | os.PathLike | None = None,
             timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run([TESSERA, *args], input=input, capture_output=True, text=True,
                              env=shell_env, cwd=cwd or tmp_path, timeout=timeout)
    return _run


class Terminal:
    """A tessera session in a pseudo-terminal."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path):
        self.child = pexpect.spawn(TESSERA, args, env=env, cwd=str(cwd), encoding="utf-8",
                                   dimensions=(50, 200), timeout=120)
        self.log: list[str] = []
        self.expect(PROMPT)

    def expect(self, pattern, timeout: float | None = None) -> str:
        """Wait for ``pattern`` (a regex) in the cleaned output; return the cleaned text before it."""
        self.child.expect(pattern, timeout=timeout if timeout is not None else -1)
        before = clean(self.child.before)
        self.log.append(before + clean(str(self.child.after)))
        return before

    def run(self, sql: str, until: str = PROMPT) -> str:
        """Type a line, press Enter, return the output up to the next prompt."""
        self.child.sendline(sql)
        return self.expect(until)

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)


@pytest.fixture
def terminal(shell_env, tmp_path):
    opened: list[Terminal] = []

    def _open(*args: str) -> Terminal:
        term = Terminal(list(args), shell_env, tmp_path)
        opened.append(term)
        return term
    yield _open
    for term in opened:
        term.close()

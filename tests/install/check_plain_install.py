"""CI (issue 10): a venv with a plain `pip install .` (no extras) opens the interactive shell.

    .venv/bin/python tests/install/check_plain_install.py PLAIN_VENV

The outer environment's pexpect drives PLAIN_VENV/bin/tessera under a pseudo-terminal: the prompt
appears, a statement runs, `exit` leaves with status 0. Exits non-zero (with the screen) otherwise.
"""
from __future__ import annotations

import os
import re
import sys
import tempfile

import pexpect


PROMPT = r"\x1b\[\?2004h"     # prompt_toolkit turns bracketed paste on as each new prompt starts
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][AB0-2]|\r")


def main(venv: str) -> int:
    tessera = os.path.join(venv, "bin", "tessera")
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "HOME": home, "TESSERA_HISTORY": os.path.join(home, "history"), "TERM": "xterm",
               "PROMPT_TOOLKIT_NO_CPR": "1",
               "TESSERA_CACHE_DIR": os.environ.get("TESSERA_CACHE_DIR",
                                                   os.path.expanduser("~/.cache/tesseradb"))}
        child = pexpect.spawn(tessera, [os.path.join(home, "t.db")], env=env, encoding="utf-8",
                              timeout=120, dimensions=(40, 120))
        try:
            child.expect(PROMPT)
            child.sendline("SELECT 6 * 7 AS answer;")
            child.expect(PROMPT)
            if not re.search(r"\| +42 \|", ANSI.sub("", child.before)):
                print("no answer in:", ANSI.sub("", child.before), file=sys.stderr)
                return 1
            child.sendline("exit")
            child.expect(pexpect.EOF)
        except (pexpect.TIMEOUT, pexpect.EOF):
            print("the shell of the plain install did not answer as expected:\n", ANSI.sub("", child.before or ""),
                  file=sys.stderr)
            return 1
        child.close()
        if child.exitstatus != 0:
            print(f"tessera exited with {child.exitstatus}", file=sys.stderr)
            return 1
    print("plain install: the interactive shell opened, ran a statement and exited")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

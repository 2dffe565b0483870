"""CI (issue 10): a venv with a plain `pip install .` (no extras) opens the interactive shell.

    .venv/bin/python tests/install/check_plain_install.py PLAIN_VENV

The outer environment's pexpect drives PLAIN_VENV/bin/tessera under a pseudo-terminal: the prompt
appears, a statement runs, `exit` leaves with status 0. Exits non-zero (with the screen) otherwise.
"""
from __future__ import annotations

import os
import sys
import tempfile

import pexpect


def main(venv: str) -> int:
    tessera = os.path.join(venv, "bin", "tessera")
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "HOME": home, "TESSERA_HISTORY": os.path.join(home, "history"), "TERM": "xterm"}
        child = pexpect.spawn(tessera, [os.path.join(home, "t.db")], env=env, encoding="utf-8",
                              timeout=120, dimensions=(40, 120))
        try:
            child.expect("tessera> ")
            child.sendline("SELECT 6 * 7 AS answer;")
            child.expect(r"\| +42 \|")
            child.expect("tessera> ")
            child.sendline("exit")
            child.expect(pexpect.EOF)
        except (pexpect.TIMEOUT, pexpect.EOF):
            print("the shell of the plain install did not answer as expected:\n", child.before, file=sys.stderr)
            return 1
        child.close()
        if child.exitstatus != 0:
            print(f"tessera exited with {child.exitstatus}", file=sys.stderr)
            return 1
    print("plain install: the interactive shell opened, ran a statement and exited")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

"""A database file that did not exist is kept only when something was written to it (sqlite3's habit):
``tessera tt.db -e "SHOW TABLES"`` with a mistyped name leaves neither ``tt.db`` nor ``tt.db.tessera/``
behind. The engine creates the file when it opens it; the shell removes what it created when the
session ends with no table or view in it."""
from __future__ import annotations

import os
import shutil
from typing import Any

SIDE_FILES = ("-wal", "-shm", "-journal")


class Creation:
    def __init__(self, path: str):
        self.path = None if path == ":memory:" else os.path.abspath(path)
        self.new = self.path is not None and not os.path.exists(self.path)
        self.new_dir = self.path is not None and not os.path.exists(self.path + ".tessera")
        self.unused = False

    def forget_if_unused(self, con: Any) -> None:
        """Before the connection closes: does the new file hold anything?"""
        if not self.new:
            return
        try:
            self.unused = not con.execute("SHOW FULL TABLES").fetchall()
        except Exception:  # noqa: BLE001 - when in doubt, keep the file
            self.unused = False

    def remove_if_unused(self) -> None:
        if not (self.new and self.unused and self.path):
            return
        for suffix in ("", *SIDE_FILES):
            try:
                os.remove(self.path + suffix)
            except FileNotFoundError:
                pass
        if self.new_dir:
            shutil.rmtree(self.path + ".tessera", ignore_errors=True)

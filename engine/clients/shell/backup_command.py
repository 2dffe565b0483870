"""``tessera backup DB DEST``: a consistent copy of a database (its vector indexes included) into a
new file, while other programs go on using it: SQL's ``BACKUP TO 'DEST'`` (docs/backup.md)."""
from __future__ import annotations

import argparse
import os
import sys

import tesseradb


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tessera backup", description="Copy a tesseradb database into a new "
                                "file, consistently, while others read and write it (BACKUP TO).")
    p.add_argument("database", help="the database file to copy")
    p.add_argument("dest", help="the new file (never overwritten)")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    if not os.path.isfile(args.database):
        sys.stderr.write(f"tessera backup: no database file '{args.database}'\n")
        return 1
    try:
        con = tesseradb.connect(args.database, autocommit=True)
        try:
            message = con.backup(args.dest)
        finally:
            con.close()
    except tesseradb.Error as exc:
        sys.stderr.write(f"tessera backup: {exc}\n")
        return 1
    sys.stdout.write(f"{args.database}: {message}\n")
    return 0

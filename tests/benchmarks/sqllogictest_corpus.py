"""Run SQLite's public sqllogictest corpus (https://sqlite.org/sqllogictest, mirrored on GitHub as
gregrahn/sqllogictest) against tesseradb "raw as MySQL": every record runs as written, ``skipif mysql``
records are skipped and ``onlyif mysql`` records run (``onlyif`` another engine: skipped), as
sqllogictest's own MySQL driver does. Prints the records that pass, per file and in total.

    python tests/benchmarks/sqllogictest_corpus.py DIR_OR_FILE... [--max-records N] [--failures K]

The corpus itself is not in this repository (it is about 1 GB); docs/compatibility.md says which files
were run and the figure. Results are compared as sqllogictest does: ``I`` as an integer, ``R`` with three
decimals, ``T`` as text, NULL as ``NULL``, the empty string as ``(empty)``; ``rowsort`` / ``valuesort``
sort before comparing, and ``N values hashing to H`` compares the MD5 of the values, one per line.
"""
from __future__ import annotations

import argparse
import hashlib
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import tesseradb

ENGINE = "mysql"


@dataclass
class Record:
    kind: str                       # statement / query
    line: int
    sql: str
    ok: bool = True                 # statement ok / statement error
    types: str = ""
    sort: str = "nosort"
    expected: list[str] = field(default_factory=list)


def _skipped(conditions: list[list[str]]) -> bool:
    for cond in conditions:
        if cond[0] == "skipif" and cond[1] == ENGINE:
            return True
        if cond[0] == "onlyif" and cond[1] != ENGINE:
            return True
    return False


def parse(text: str) -> list[Record]:
    lines = text.split("\n")
    records: list[Record] = []
    i, conditions = 0, []
    while i < len(lines):
        words = lines[i].split()
        i += 1
        if not words or words[0].startswith("#"):
            continue
        if words[0] in ("skipif", "onlyif"):
            conditions.append(words)
            continue
        if words[0] == "halt":
            if _skipped(conditions):
                conditions = []
                continue
            break
        if words[0] == "hash-threshold":
            continue
        start, body = i, []
        while i < len(lines) and lines[i].strip() and lines[i].strip() != "----":
            body.append(lines[i])
            i += 1
        rec = Record(words[0], start, "\n".join(body))
        if words[0] == "statement":
            rec.ok = words[1] == "ok"
        elif words[0] == "query":
            rec.types, rec.sort = words[1], words[2] if len(words) > 2 else "nosort"
            if i < len(lines) and lines[i].strip() == "----":
                i += 1
                while i < len(lines) and lines[i].strip():
                    rec.expected.append(lines[i].strip())
                    i += 1
        if not _skipped(conditions):
            records.append(rec)
        conditions = []
    return records


def _number(value, integer: bool):
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value) if integer else float(value)
    if isinstance(value, bool):
        return int(value)
    try:
        return int(float(str(value))) if integer else float(str(value))
    except ValueError:
        return 0


def render(value, kind: str) -> str:
    if value is None:
        return "NULL"
    if kind == "I":
        return str(_number(value, True))
    if kind == "R":
        return f"{_number(value, False):.3f}"
    text = str(value)
    if text == "":
        return "(empty)"
    return "".join(c if " " <= c <= "~" else "@" for c in text)


def _values(rows: list, rec: Record) -> list[str]:
    table = [[render(v, t) for v, t in zip(row, rec.types)] for row in rows]
    if rec.sort == "rowsort":
        table.sort()
    flat = [v for row in table for v in row]
    if rec.sort == "valuesort":
        flat.sort()
    return flat


def _matches(values: list[str], expected: list[str]) -> bool:
    if len(expected) == 1 and " values hashing to " in expected[0]:
        count, digest = expected[0].split(" values hashing to ")
        md5 = hashlib.md5("".join(v + "\n" for v in values).encode()).hexdigest()
        return int(count) == len(values) and md5 == digest
    return values == expected


def run_record(cur, rec: Record) -> str | None:
    """None when the record passes, else a short reason."""
    try:
        result = cur.execute(rec.sql)
        rows = result.fetchall() if rec.kind == "query" else None
    except tesseradb.Error as exc:
        return None if rec.kind == "statement" and not rec.ok else f"error: {exc}"
    if rec.kind == "statement":
        return None if rec.ok else "expected an error"
    if rows and len(rows[0]) != len(rec.types):
        return f"{len(rows[0])} columns, expected {len(rec.types)}"
    return None if _matches(_values(rows, rec), rec.expected) else "wrong result"


def run_file(path: Path, max_records: int | None) -> tuple[int, int, list[tuple[int, str, str]]]:
    records = parse(path.read_text(errors="replace"))[:max_records]
    con = tesseradb.connect(":memory:", autocommit=True)
    cur = con.cursor()
    failures = []
    try:
        for rec in records:
            reason = run_record(cur, rec)
            if reason is not None:
                failures.append((rec.line, reason, rec.sql))
    finally:
        con.close()
    return len(records) - len(failures), len(records), failures


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", type=Path)
    ap.add_argument("--max-records", type=int, default=None, help="first N records of each file")
    ap.add_argument("--failures", type=int, default=0, help="print the first K failures of each file")
    args = ap.parse_args(argv)
    files = sorted(f for p in args.paths for f in ([p] if p.is_file() else p.rglob("*.test")))
    passed = total = 0
    started = time.perf_counter()
    for f in files:
        ok, n, failures = run_file(f, args.max_records)
        passed, total = passed + ok, total + n
        print(f"{ok:7d} / {n:7d}  {100 * ok / max(n, 1):6.2f}%  {f}", flush=True)
        for line, reason, sql in failures[:args.failures]:
            print(f"    line {line}: {reason[:200]}\n        {sql[:300]!r}")
    print(f"total: {passed} / {total} records pass ({100 * passed / max(total, 1):.2f}%), "
          f"{len(files)} files, {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

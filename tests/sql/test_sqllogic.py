"""A small sqllogictest-style runner for the SQL surface, over the files in tests/sql/*.test.

Each file runs on a fresh in-memory database (``# database: file`` at the top runs it on a temporary
file instead). Records, separated by blank lines:

    statement ok
    <SQL, one or more lines>

    statement error <substring of the error, as str(exc): "ERROR 1062 (23000): duplicate id '1'">
    <SQL>

    query <types> [rowsort]
    <SQL>
    ----
    <expected rows, values separated by one tab>

``types`` has one letter per column: ``I`` integer, ``R`` real (printed with 6 significant digits),
``T`` text, ``B`` bool (true/false), ``J`` json, vectors and anything else (compact JSON). NULL prints
as ``NULL``, the empty string as ``(empty)`` and a newline inside a value as ``\\n``. ``rowsort`` compares the rows sorted as text.
Lines starting with ``#`` outside SQL are comments. A failure names the file and line of the record.
"""
from __future__ import annotations

import datetime
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import tesseradb
from tesseradb.clients.shell.render import time_text
SQL_DIR = Path(__file__).parent
FILES = sorted(SQL_DIR.rglob("*.test"))    # subfolders too: tests/sql/manticore/*.test


@dataclass
class Record:
    kind: str                    # statement / query
    line: int
    sql: str
    expect_error: str | None = None
    types: str = ""
    rowsort: bool = False
    expected: list[str] = field(default_factory=list)


def parse(path: Path) -> list[Record]:
    lines = path.read_text().split("\n")
    records: list[Record] = []
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        if not line or line.startswith("#"):
            i += 1
            continue
        head, start = line.split(), i + 1
        i += 1
        body: list[str] = []
        while i < len(lines) and lines[i].strip() and lines[i].rstrip() != "----":
            body.append(lines[i])
            i += 1
        sql = "\n".join(body)
        if head[0] == "statement" and head[1] == "ok":
            records.append(Record("statement", start, sql))
        elif head[0] == "statement" and head[1] == "error":
            records.append(Record("statement", start, sql, expect_error=line.split("error", 1)[1].strip()))
        elif head[0] == "query":
            rec = Record("query", start, sql, types=head[1], rowsort="rowsort" in head[2:])
            if i < len(lines) and lines[i].rstrip() == "----":
                i += 1
                while i < len(lines) and lines[i].strip():
                    rec.expected.append(lines[i].rstrip("\n"))
                    i += 1
            records.append(rec)
        else:
            raise ValueError(f"{path.name}:{start}: unknown record {line!r}")
    return records


def render(value, kind: str) -> str:
    if value is None:
        return "NULL"
    if kind == "R" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return "0" if value == 0 else f"{value:.6g}" if math.isfinite(value) else str(value)
    if kind == "J":
        return json.dumps(value, separators=(",", ":"))
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    if value == "":
        return "(empty)"
    if isinstance(value, datetime.timedelta):
        return time_text(value)                      # MySQL's TIME text: 838:59:59
    return str(value).replace("\n", "\\n")       # one row per line: a newline prints as \n


def run_file(path: Path, tmp_path: Path) -> None:
    text = path.read_text()
    target = str(tmp_path / "sqllogic.db") if text.startswith("# database: file") else ":memory:"
    con = tesseradb.connect(target)
    cur = con.cursor()
    try:
        for rec in parse(path):
            where = f"{path.name}:{rec.line}"
            if rec.kind == "statement":
                if rec.expect_error is None:
                    try:
                        cur.execute(rec.sql)
                    except tesseradb.Error as exc:
                        pytest.fail(f"{where}: expected success, got {exc}\n{rec.sql}")
                else:
                    with pytest.raises(tesseradb.Error) as info:
                        cur.execute(rec.sql)
                    assert rec.expect_error in str(info.value), \
                        f"{where}: expected error containing {rec.expect_error!r}, got {info.value}"
                continue
            try:
                rows = cur.execute(rec.sql).fetchall()
            except tesseradb.Error as exc:
                pytest.fail(f"{where}: query failed: {exc}\n{rec.sql}")
            got = []
            for row in rows:
                assert len(row) == len(rec.types), f"{where}: {len(row)} columns, types say {rec.types!r}"
                got.append("\t".join(render(v, t) for v, t in zip(row, rec.types)))
            expected = list(rec.expected)
            if rec.rowsort:
                got, expected = sorted(got), sorted(expected)
            assert got == expected, f"{where}: rows differ\n{rec.sql}\n--- expected\n" + \
                "\n".join(expected) + "\n--- got\n" + "\n".join(got)
    finally:
        con.close()


def test_there_are_sql_files():
    assert len(FILES) >= 5


@pytest.mark.parametrize("path", FILES, ids=[f.relative_to(SQL_DIR).with_suffix("").as_posix() for f in FILES])
def test_sql_file(path, tmp_path):
    run_file(path, tmp_path)


def test_runner_reports_a_wrong_row(tmp_path):
    bad = tmp_path / "bad.test"
    bad.write_text("query I\nSELECT 1\n----\n2\n")
    with pytest.raises(AssertionError, match="bad.test:1: rows differ"):
        run_file(bad, tmp_path)


def test_runner_reports_a_missing_error(tmp_path):
    bad = tmp_path / "bad.test"
    bad.write_text("statement error 1064\nSELECT 1\n")
    with pytest.raises(BaseException, match="DID NOT RAISE"):
        run_file(bad, tmp_path)

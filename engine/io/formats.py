"""Reading .csv, .tsv, .jsonl and .parquet files in batches (pyarrow streams them) and converting
each file value to its column's type. A bad value names the file, the line and the column. Used by
LOAD DATA (``tesseradb.sql.statements.load_data``)."""
from __future__ import annotations

import csv
import datetime
import json
import math
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from tesseradb import errors
from tesseradb.catalog import temporal_values
from tesseradb.catalog.tables import Column, Table
from tesseradb.grammar import ast

BATCH_ROWS = 1000               # rows per write_rows call ...
BATCH_BYTES = 4 << 20           # ... or fewer, once their text passes this many bytes
CSV_BLOCK = 1 << 20             # bytes pyarrow's CSV reader parses at a time
NULL_MARK = "\\N"               # NULL in .tsv (as mysql writes it) and, besides an empty field, in .csv

def extension(path: str, verb: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".csv", ".tsv", ".jsonl", ".ndjson", ".parquet"):
        shown = ext or "(none)"
        raise errors.NotSupportedError(f"{verb}: unsupported file type '{shown}' of '{path}'; "
                                       "use .csv, .tsv, .jsonl or .parquet")
    return ".jsonl" if ext == ".ndjson" else ext


# -- reading files in batches -------------------------------------------------------------------------
@dataclass
class Batch:
    names: list[str]        # the file's field name at each position
    rows: list[list[Any]]
    lines: list[int]        # the line (row, for parquet) of the file each row came from
    done: float             # fraction of the file read once this batch is written


class BadRow(Exception):
    """A value that does not fit its column; the loader adds the file, line and column."""

    def __init__(self, msg: str, line: int | None = None, column: str | None = None,
                 kind: type[errors.Error] = errors.DataError):
        super().__init__(msg)
        self.msg, self.line, self.column, self.kind = msg, line, column, kind


def _fields_of_header(path: str, delimiter: str) -> list[str]:
    with open(path, newline="", encoding="utf-8-sig") as f:
        if delimiter == "\t":
            header = f.readline().rstrip("\r\n").split("\t")
        else:
            header = next(csv.reader(f), [])
    if not header or header == [""]:
        raise BadRow("the file is empty; its first line must name the columns", 1)
    return [name.strip() for name in header]


def _csv_lines(rows: list[list[Any]], first: int) -> tuple[list[int], int]:
    """The line each record starts on: records span one line plus the newlines inside their values."""
    lines, at = [], first
    for row in rows:
        lines.append(at)
        at += 1 + sum(v.count("\n") for v in row if isinstance(v, str))
    return lines, at


def _first_bad_record(path: str, delimiter: str, width: int) -> BadRow:
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f, delimiter=delimiter, quoting=csv.QUOTE_NONE if delimiter == "\t" else
                            csv.QUOTE_MINIMAL)
        for record in reader:
            if record and len(record) != width:
                return BadRow(f"expected {width} fields, found {len(record)}", reader.line_num)
    return BadRow(f"a line does not have {width} fields")


def read_delimited(path: str, delimiter: str) -> Iterator[Batch]:
    import pyarrow.csv as pcsv
    names = _fields_of_header(path, delimiter)
    tsv = delimiter == "\t"
    invalid: list[Any] = []
    parse = pcsv.ParseOptions(delimiter=delimiter, newlines_in_values=not tsv, quote_char=False if tsv else '"',
                              invalid_row_handler=lambda row: invalid.append(row) or "skip")
    convert = pcsv.ConvertOptions(column_types={n: pa.string() for n in _positional(len(names))},
                                  strings_can_be_null=not tsv,
                                  quoted_strings_can_be_null=False, null_values=["", NULL_MARK])
    size = max(os.path.getsize(path), 1)
    line = 2
    with open(path, "rb") as raw:
        reader = pcsv.open_csv(raw, read_options=pcsv.ReadOptions(block_size=CSV_BLOCK,
                                                                   column_names=_positional(len(names)),
                                                                   skip_rows=1),
                               parse_options=parse, convert_options=convert)
        for record_batch in reader:
            if invalid:
                raise _first_bad_record(path, delimiter, len(names))
            rows = [list(r) for r in zip(*(col.to_pylist() for col in record_batch.columns))]
            if tsv:
                rows = [[_tsv_value(v) for v in row] for row in rows]
            lines, line = _csv_lines(rows, line) if not tsv else (list(range(line, line + len(rows))),
                                                                  line + len(rows))
            yield from _split(Batch(names, rows, lines, min(raw.tell() / size, 1.0)))
    if invalid:
        raise _first_bad_record(path, delimiter, len(names))


def _positional(n: int) -> list[str]:
    return [f"f{i}" for i in range(n)]


_TSV_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", "b": "\b", "Z": "\x1a"}


def _tsv_value(value: str | None) -> str | None:
    """Undo mysql's batch escaping: \\N is NULL, \\n \\t \\\\ ... are characters."""
    if value is None or value == NULL_MARK:
        return None
    if "\\" not in value:
        return value
    return re.sub(r"\\(.)", lambda m: _TSV_ESCAPES.get(m.group(1), m.group(1)), value)


def _split(batch: Batch) -> Iterator[Batch]:
    """Cut a parsed block into write batches of at most BATCH_ROWS rows and about BATCH_BYTES."""
    start, size = 0, 0
    for n, row in enumerate(batch.rows):
        size += sum(len(v) for v in row if isinstance(v, str))
        if n + 1 - start >= BATCH_ROWS or size >= BATCH_BYTES:
            yield Batch(batch.names, batch.rows[start:n + 1], batch.lines[start:n + 1],
                        batch.done if n + 1 == len(batch.rows) else batch.done * 0.999)
            start, size = n + 1, 0
    if start < len(batch.rows):
        yield Batch(batch.names, batch.rows[start:], batch.lines[start:], batch.done)


def read_jsonl(path: str) -> Iterator[Batch]:
    size = max(os.path.getsize(path), 1)
    records: list[dict[str, Any]] = []
    lines: list[int] = []
    text_bytes, read = 0, 0
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            read += len(raw)
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except (ValueError, UnicodeDecodeError) as exc:
                raise BadRow(f"invalid JSON: {exc}", number) from None
            if not isinstance(record, dict):
                raise BadRow("each line must be one JSON object", number)
            records.append(record)
            lines.append(number)
            text_bytes += len(raw)
            if len(records) >= BATCH_ROWS or text_bytes >= BATCH_BYTES:
                yield _jsonl_batch(records, lines, read / size)
                records, lines, text_bytes = [], [], 0
    if records:
        yield _jsonl_batch(records, lines, 1.0)


def _jsonl_batch(records: list[dict[str, Any]], lines: list[int], done: float) -> Batch:
    names: dict[str, None] = {}
    for record in records:
        names.update(dict.fromkeys(record))
    order = list(names)
    return Batch(order, [[r.get(n) for n in order] for r in records], lines, done)


def read_parquet(path: str, columns: list[str] | None) -> Iterator[Batch]:
    import pyarrow.parquet as pq
    try:
        pf = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise BadRow(f"not a Parquet file: {exc}") from None
    names = pf.schema_arrow.names
    if columns is not None:
        lower = {n.lower(): n for n in names}
        missing = [c for c in columns if c.lower() not in lower]
        if missing:
            raise BadRow(f"the file has no column '{missing[0]}'")
        names = [lower[c.lower()] for c in columns]
    total = max(pf.metadata.num_rows, 1)
    row = 1
    for record_batch in pf.iter_batches(batch_size=BATCH_ROWS, columns=names):
        rows = [list(r) for r in zip(*(col.to_pylist() for col in record_batch.columns))]
        lines = list(range(row, row + len(rows)))
        row += len(rows)
        yield from _split(Batch(list(names), rows, lines, (row - 1) / total))


# -- converting file values to column values ---------------------------------------------------------
def _show(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return "'" + (text if len(text) <= 60 else text[:57] + "...") + "'"


def _to_text(value: Any, native_json: bool) -> Any:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise BadRow(f"Incorrect string value: {_show(value)}")


def _to_int(value: Any, native_json: bool) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
        return int(value)
    raise BadRow(f"Incorrect integer value: {_show(value)}")


def _to_float(value: Any, native_json: bool) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if math.isfinite(number):
            return number
    raise BadRow(f"Incorrect float value: {_show(value)}")


_TRUE = {"1", "true", "t", "yes", "y", "on"}
_FALSE = {"0", "false", "f", "no", "n", "off"}


def _to_bool(value: Any, native_json: bool) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise BadRow(f"Incorrect boolean value: {_show(value)}")


def _to_json(value: Any, native_json: bool) -> Any:
    if native_json or not isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    try:
        json.loads(value)
    except ValueError:
        raise BadRow(f"Invalid JSON text: {_show(value)}") from None
    return value


_TIME_FORMATS = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%dT%H:%M:%S.%f",
                 "%Y-%m-%d")


def _to_timestamp(value: Any, native_json: bool) -> Any:
    if isinstance(value, datetime.datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=datetime.timezone.utc)
        return int(aware.timestamp())
    if isinstance(value, datetime.date):
        return _to_timestamp(datetime.datetime(value.year, value.month, value.day), native_json)
    if isinstance(value, str):
        text = value.strip().rstrip("Z")
        for fmt in _TIME_FORMATS:
            try:
                return _to_timestamp(datetime.datetime.strptime(text, fmt), native_json)
            except ValueError:
                continue
    try:
        return _to_int(value, native_json)
    except BadRow:
        raise BadRow(f"Incorrect timestamp value: {_show(value)}") from None


def _to_vector(value: Any, native_json: bool) -> Any:
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in "([" and text[-1:] in ")]":
            text = text[1:-1]
        try:
            return [float(x) for x in text.split(",")] if text.strip() else []
        except ValueError:
            pass
    raise BadRow(f"incompatible value specified for a float vector column: {_show(value)}")


def _to_vector_array(value: Any, native_json: bool) -> Any:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise BadRow(f"float_vector_array requires an array of vectors, e.g. [[1,2],[3,4]]: "
                         f"{_show(value)}") from None
    if isinstance(value, (list, tuple)):
        return [list(v) if isinstance(v, (list, tuple)) else v for v in value]
    raise BadRow(f"float_vector_array requires an array of vectors, e.g. [[1,2],[3,4]]: {_show(value)}")


CONVERTERS: dict[str, Callable[[Any, bool], Any]] = {
    "text": _to_text, "string": _to_text, "int": _to_int, "bigint": _to_int, "float": _to_float,
    "bool": _to_bool, "json": _to_json, "timestamp": _to_timestamp, "float_vector": _to_vector,
    "float_vector_array": _to_vector_array,
    **{kind: (lambda write: lambda value, native_json: write(value))(write)
       for kind, write in temporal_values.WRITERS.items()},
}
TEXT_TYPES = ("text", "string")


def convert(columns: list[Column], batch: Batch, native_json: bool) -> list[list[Any]]:
    converters = [CONVERTERS[c.type] for c in columns]
    out = []
    for row, line in zip(batch.rows, batch.lines):
        values = []
        for col, conv, value in zip(columns, converters, row):
            if value is None or (value == "" and col.type not in TEXT_TYPES):
                values.append(None)
                continue
            try:
                values.append(conv(value, native_json))
            except BadRow as bad:
                raise BadRow(bad.msg, line, col.name) from None
        out.append(values)
    return out


# -- choosing the file's columns for LOAD DATA --------------------------------------------------------------------------------------------
def batches(path: str, ext: str, stmt: ast.LoadData) -> Iterator[Batch]:
    if ext in (".csv", ".tsv"):
        return read_delimited(path, "\t" if ext == ".tsv" else ",")
    if ext == ".jsonl":
        return read_jsonl(path)
    return read_parquet(path, list(stmt.columns) if stmt.columns else None)


def columns_for(table: Table, batch: Batch, stmt: ast.LoadData, ext: str) -> tuple[list[Column], list[int]]:
    """The table columns the batch's fields go to, and which field positions feed them."""
    if stmt.columns and ext in (".csv", ".tsv"):
        if len(stmt.columns) != len(batch.names):
            raise BadRow(f"the file has {len(batch.names)} fields per line but the column list names "
                         f"{len(stmt.columns)}", 1)
        wanted = list(stmt.columns)
        positions = list(range(len(wanted)))
    elif stmt.columns:
        lower = [n.lower() for n in batch.names]
        wanted = list(stmt.columns)
        positions = [lower.index(c.lower()) if c.lower() in lower else -1 for c in wanted]
    else:
        wanted, positions = list(batch.names), list(range(len(batch.names)))
    header = 1 if ext in (".csv", ".tsv") and not stmt.columns else None
    columns = []
    for name in wanted:
        col = table.column(name)
        if col is None:
            raise BadRow(f"Unknown column '{name}' in 'field list'", header, kind=errors.NoSuchColumn)
        if col in columns:
            raise BadRow(f"Column '{name}' specified twice", header, kind=errors.ProgrammingError)
        columns.append(col)
    return columns, positions


def pick(batch: Batch, positions: list[int]) -> Batch:
    if positions == list(range(len(batch.names))):
        return batch
    rows = [[row[p] if p >= 0 else None for p in positions] for row in batch.rows]
    return Batch([batch.names[p] if p >= 0 else "" for p in positions], rows, batch.lines, batch.done)



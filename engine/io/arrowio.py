"""Columnar data in and out through pyarrow: results as Arrow tables, ``LOAD DATA INFILE`` and
``SELECT ... INTO OUTFILE`` for .csv, .tsv, .jsonl and .parquet files.

Loading streams the file in batches; each batch is converted to the table's column types (a bad
value names the file, the line and the column) and goes through :func:`tesseradb.sql.dml.write_rows`, the
one write path, which embeds model-backed columns batched across the rows. The engine runs the whole
statement in one transaction, so a bad row anywhere loads nothing.
"""
from __future__ import annotations

import csv
import datetime
import json
import math
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from tesseradb import errors
from tesseradb.errors import UserError

if TYPE_CHECKING:
    from tesseradb.grammar import ast

    from tesseradb.sql.database import Database, Result
    from tesseradb.catalog.tables import Column, Table

BATCH_ROWS = 1000               # rows per write_rows call ...
BATCH_BYTES = 4 << 20           # ... or fewer, once their text passes this many bytes
CSV_BLOCK = 1 << 20             # bytes pyarrow's CSV reader parses at a time
NULL_MARK = "\\N"               # NULL in .tsv (as mysql writes it) and, besides an empty field, in .csv


# -- results as Arrow -----------------------------------------------------------------------------
def result_to_arrow(result: "Result") -> pa.Table:
    return _arrow_table(result, flat=False)


def _unique(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n}_{seen[n]}")
    return out


def _result(**kw) -> "Result":
    from tesseradb.sql.database import Result
    return Result(**kw)


def _extension(path: str, verb: str) -> str:
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
}
TEXT_TYPES = ("text", "string")


def _convert(columns: list["Column"], batch: Batch, native_json: bool) -> list[list[Any]]:
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


# -- LOAD DATA --------------------------------------------------------------------------------------------
def _batches(path: str, ext: str, stmt: "ast.LoadData") -> Iterator[Batch]:
    if ext in (".csv", ".tsv"):
        return read_delimited(path, "\t" if ext == ".tsv" else ",")
    if ext == ".jsonl":
        return read_jsonl(path)
    return read_parquet(path, list(stmt.columns) if stmt.columns else None)


def _columns_for(table: "Table", batch: Batch, stmt: "ast.LoadData", ext: str) -> tuple[list["Column"], list[int]]:
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


def _pick(batch: Batch, positions: list[int]) -> Batch:
    if positions == list(range(len(batch.names))):
        return batch
    rows = [[row[p] if p >= 0 else None for p in positions] for row in batch.rows]
    return Batch([batch.names[p] if p >= 0 else "" for p in positions], rows, batch.lines, batch.done)


class _Progress:
    """Chunks embedded across all batches (and all model columns), as one count that only grows;
    the total is estimated from the part of the file read and is exact at the last batch."""

    def __init__(self, report: Callable[[int, int], None]):
        self.report, self.base, self.fraction = report, 0, 0.0
        self.last_done = self.last_total = 0

    def batch(self, fraction: float) -> None:
        self.base += self.last_total
        self.last_done = self.last_total = 0
        self.fraction = fraction

    def __call__(self, done: int, total: int) -> None:
        if done < self.last_done or (self.last_total and self.last_done >= self.last_total):
            self.base += self.last_total           # the next model column of the same batch
        self.last_done, self.last_total = done, total
        known = self.base + total
        estimate = known if self.fraction >= 1.0 or self.fraction <= 0 else round(known / self.fraction)
        self.report(self.base + done, max(estimate, self.base + done + 1))   # done == total: finish()

    def finish(self) -> None:
        if self.base + self.last_total:
            self.report(self.base + self.last_total, self.base + self.last_total)


def _place(exc: UserError, path: str, batch: Batch, rows: list[list[Any]], columns: list["Column"]) -> UserError:
    """Rewrite a write_rows error ('row N, ...', "duplicate id 'X'") to name the file and line."""
    msg = exc.msg
    match = re.match(r"row (\d+)(?: \(id -?\d+\))?", msg)
    if match and 0 < int(match.group(1)) <= len(batch.lines):
        return UserError(f"'{path}' line {batch.lines[int(match.group(1)) - 1]}{msg[match.end():]}", exc.kind)
    match = re.fullmatch(r"duplicate id '(-?\d+)'", msg)
    names = [c.name.lower() for c in columns]
    if match and "id" in names:
        pos, wanted = names.index("id"), int(match.group(1))
        hits = [line for row, line in zip(rows, batch.lines) if _same_id(row[pos], wanted)]
        if hits:
            line = hits[1] if len(hits) > 1 else hits[0]
            return UserError(f"'{path}' line {line}: {msg}", exc.kind)
    return UserError(f"'{path}' lines {batch.lines[0]}-{batch.lines[-1]}: {msg}", exc.kind)


def _same_id(value: Any, wanted: int) -> bool:
    try:
        return int(value) == wanted
    except (TypeError, ValueError):
        return False


def load_data(db: "Database", stmt: "ast.LoadData") -> "Result":
    """``LOAD DATA INFILE 'file' [REPLACE] INTO TABLE t [(col, ...)]``, inside the statement's transaction."""
    from tesseradb.sql.dml import write_rows
    path = stmt.path
    ext = _extension(path, "LOAD DATA")
    table = db.table(stmt.table)
    if not os.path.isfile(path):
        raise errors.OperationalError(f"File '{path}' not found (Errcode: 2 - No such file or directory)",
                                      errno=29)
    progress = _Progress(db.on_progress) if db.on_progress is not None else None
    saved, written = db.on_progress, 0
    db.on_progress = progress
    try:
        for batch in _batches(path, ext, stmt):
            if db.check_cancelled():
                raise errors.Interrupted("Query execution was interrupted")
            columns, positions = _columns_for(table, batch, stmt, ext)
            batch = _pick(batch, positions)
            rows = _convert(columns, batch, native_json=ext == ".jsonl")
            if progress is not None:
                progress.batch(batch.done)
            try:
                written += write_rows(db, table, columns, rows, replace=stmt.replace).rowcount
            except UserError as exc:
                raise _place(exc, path, batch, rows, columns) from None
        if progress is not None:
            progress.finish()
    except BadRow as bad:
        where = f"'{path}'" + (f" {'row' if ext == '.parquet' else 'line'} {bad.line}" if bad.line else "")
        where += f", column '{bad.column}'" if bad.column else ""
        raise UserError(f"{where}: {bad.msg}", bad.kind) from None
    except (OSError, UnicodeDecodeError, pa.ArrowException) as exc:
        raise UserError(f"'{path}': cannot read the file: {exc}", errors.DataError) from None
    finally:
        db.on_progress = saved
    return _result(rowcount=written)


# -- SELECT ... INTO OUTFILE ---------------------------------------------------------------------------------
def _arrow_column(values: list[Any], decl: str | None, flat: bool) -> pa.Array:
    """One result column as Arrow; ``flat`` (csv) turns vectors and JSON into JSON text."""
    kind = (decl or "").upper()
    if kind in ("FLOAT_VECTOR_BLOB", "FLOAT_VECTOR_ARRAY_BLOB", "JSON_TEXT") and (flat or kind == "JSON_TEXT"):
        return pa.array([None if v is None else json.dumps(v, ensure_ascii=False) for v in values], pa.string())
    if kind == "FLOAT_VECTOR_BLOB":
        return pa.array(values, pa.list_(pa.float32()))
    if kind == "FLOAT_VECTOR_ARRAY_BLOB":
        return pa.array(values, pa.list_(pa.list_(pa.float32())))
    if kind == "BOOL_INT" or all(v is None or isinstance(v, bool) for v in values):
        column = pa.array([None if v is None else bool(v) for v in values], pa.bool_())
        return column.cast(pa.int8()) if flat else column
    try:
        return pa.array(values)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return pa.array([None if v is None else str(v) for v in values], pa.string())


def _arrow_table(result: "Result", flat: bool) -> pa.Table:
    names = _unique([name for name, _ in result.columns])
    columns = list(zip(*result.rows)) if result.rows else [() for _ in names]
    return pa.table({name: _arrow_column(list(col), decl, flat)
                     for name, (_, decl), col in zip(names, result.columns, columns)})


def _tsv_cell(value: Any, decl: str | None = None) -> str:
    if value is None:
        return NULL_MARK
    if (decl or "").upper() == "JSON_TEXT":
        text = json.dumps(value, ensure_ascii=False)
    elif isinstance(value, bool):
        text = "1" if value else "0"
    elif isinstance(value, (list, dict)):
        text = json.dumps(value, ensure_ascii=False)
    elif isinstance(value, bytes):
        text = value.hex()
    else:
        text = str(value)
    return (text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
            .replace("\r", "\\r").replace("\0", "\\0"))


def _write_csv(f, result: "Result") -> None:
    import pyarrow.csv as pcsv
    pcsv.write_csv(_arrow_table(result, flat=True), f,
                   pcsv.WriteOptions(quoting_style="needed", quoting_header="needed"))


def _write_tsv(f, result: "Result") -> None:
    names = _unique([name for name, _ in result.columns])
    f.write(("\t".join(_tsv_cell(n) for n in names) + "\n").encode())
    decls = [decl for _, decl in result.columns]
    for row in result.rows:
        f.write(("\t".join(_tsv_cell(v, d) for v, d in zip(row, decls)) + "\n").encode())


def _json_value(value: Any) -> Any:
    return value.hex() if isinstance(value, bytes) else value


def _write_jsonl(f, result: "Result") -> None:
    names = _unique([name for name, _ in result.columns])
    for row in result.rows:
        record = {n: _json_value(v) for n, v in zip(names, row)}
        f.write((json.dumps(record, ensure_ascii=False) + "\n").encode())


def _write_parquet(f, result: "Result") -> None:
    import pyarrow.parquet as pq
    pq.write_table(_arrow_table(result, flat=False), f)


WRITERS = {".csv": _write_csv, ".tsv": _write_tsv, ".jsonl": _write_jsonl, ".parquet": _write_parquet}


def write_outfile(path: str, result: "Result") -> "Result":
    """Write a SELECT's rows to ``path`` (format from the extension), atomically; vectors as lists."""
    writer = WRITERS[_extension(path, "INTO OUTFILE")]
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tessera-", suffix=".part", dir=folder)
    except OSError as exc:
        raise errors.OperationalError(f"Can't create/write to file '{path}' (Errcode: {exc.errno} - "
                                      f"{exc.strerror})", errno=1) from None
    try:
        with os.fdopen(fd, "wb") as f:
            writer(f, result)
        os.replace(tmp, path)
    except OSError as exc:
        raise errors.OperationalError(f"Can't create/write to file '{path}' (Errcode: {exc.errno} - "
                                      f"{exc.strerror})", errno=1) from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return _result(rowcount=len(result.rows))

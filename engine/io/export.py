"""Results out: as Arrow tables (``Cursor.fetch_arrow_table``) and ``SELECT ... INTO OUTFILE`` for
.csv, .tsv, .jsonl and .parquet files (written to a temporary file, then renamed)."""
from __future__ import annotations

import json
import os
import tempfile
from typing import Any

import pyarrow as pa

from tesseradb import errors
from tesseradb.io.file_access import UNRESTRICTED, FileAccess
from tesseradb.io.formats import NULL_MARK, extension
from tesseradb.results import Result


def result_to_arrow(result: Result) -> pa.Table:
    return _arrow_table(result, flat=False)


def _unique(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n}_{seen[n]}")
    return out



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


def _arrow_table(result: Result, flat: bool) -> pa.Table:
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


def _write_csv(f, result: Result) -> None:
    import pyarrow.csv as pcsv
    pcsv.write_csv(_arrow_table(result, flat=True), f,
                   pcsv.WriteOptions(quoting_style="needed", quoting_header="needed"))


def _write_tsv(f, result: Result) -> None:
    names = _unique([name for name, _ in result.columns])
    f.write(("\t".join(_tsv_cell(n) for n in names) + "\n").encode())
    decls = [decl for _, decl in result.columns]
    for row in result.rows:
        f.write(("\t".join(_tsv_cell(v, d) for v, d in zip(row, decls)) + "\n").encode())


def _json_value(value: Any) -> Any:
    return value.hex() if isinstance(value, bytes) else value


def _write_jsonl(f, result: Result) -> None:
    names = _unique([name for name, _ in result.columns])
    for row in result.rows:
        record = {n: _json_value(v) for n, v in zip(names, row)}
        f.write((json.dumps(record, ensure_ascii=False) + "\n").encode())


def _write_parquet(f, result: Result) -> None:
    import pyarrow.parquet as pq
    pq.write_table(_arrow_table(result, flat=False), f)


WRITERS = {".csv": _write_csv, ".tsv": _write_tsv, ".jsonl": _write_jsonl, ".parquet": _write_parquet}


def write_outfile(path: str, result: Result, access: FileAccess = UNRESTRICTED, shown: str | None = None) -> Result:
    """Write a SELECT's rows to ``path`` (format from the extension), atomically; vectors as lists.
    ``access`` (secure_file_priv) decides whether an existing file may be replaced."""
    writer = WRITERS[extension(path, "INTO OUTFILE")]
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tessera-", suffix=".part", dir=folder)
    except OSError as exc:
        raise errors.OperationalError(f"Can't create/write to file '{shown or path}' (Errcode: {exc.errno} - "
                                      f"{exc.strerror})", errno=1) from None
    try:
        with os.fdopen(fd, "wb") as f:
            writer(f, result)
        access.publish(tmp, path, shown or path)
    except OSError as exc:
        raise errors.OperationalError(f"Can't create/write to file '{shown or path}' (Errcode: {exc.errno} - "
                                      f"{exc.strerror})", errno=1) from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return Result(rowcount=len(result.rows))


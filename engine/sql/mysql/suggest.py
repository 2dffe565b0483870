"""Unknown table and column errors name the closest existing name, DuckDB-style (issue 22):
``table 'prodcts' does not exist; did you mean 'products'?``; columns in knn() and hybrid_match() and
function names too (issue 36). Close means difflib's ratio of at least
0.6 on lower-cased names (a typo, a missing or doubled letter); nothing close, nothing added."""
from __future__ import annotations

import difflib

from tesseradb import errors
from tesseradb.sql.database import Database


def _closest(name: str, candidates: list[str]) -> str | None:
    lowered = {c.lower(): c for c in candidates}
    hits = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.6)
    return lowered[hits[0]] if hits and hits[0] != name.lower() else None


def _columns(db: Database) -> list[str]:
    return sorted({c.name for t in db.tables.values() for c in t.columns})


def _functions(db: Database) -> list[str]:
    """SQLite's functions (the engine's own are registered with it), upper-cased as MySQL names them."""
    return sorted({str(r[0]).upper() for r in db.store.execute("PRAGMA function_list")
                   if str(r[0]).replace("_", "a").isalnum() and not str(r[0]).startswith(("_", "fts5", "tessera"))})


def with_suggestion(db: Database, error: BaseException) -> BaseException:
    """The same error with "; did you mean 'x'?" added when a close name exists."""
    if isinstance(error, errors.NoSuchTable):
        wanted, names = error.fields.get("table"), [t.name for t in db.tables.values()]
    elif isinstance(error, errors.NoSuchColumn):
        wanted, names = error.fields.get("column"), _columns(db)
    elif isinstance(error, errors.NoSuchFunction):
        wanted, names = error.fields.get("function"), _functions(db)
    else:
        return error
    if not isinstance(wanted, str) or "suggestion" in error.fields:
        return error
    best = _closest(wanted.split(".")[-1], names)
    if best is None:
        return error
    return type(error)(f"{error.msg}; did you mean '{best}'?", error.errno, error.sqlstate,
                       fields={**error.fields, "suggestion": best})

"""Statement nodes. Extension statements (DDL and friends) are frozen dataclasses; standard SQL is
carried as a sqlglot expression inside :class:`Query`.

The nodes every statement's path meets (:class:`Query`, EXPLAIN, SET, transactions, SHOW WARNINGS)
are defined here; the others live in ``grammar/nodes.py`` and load when first named
(``ast.CreateTable``, PEP 562): each frozen dataclass costs about half a millisecond to create, and
a plain query should not pay for forty of them at start-up. Add a new statement's node there."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class QualifiedName(str):
    """A table name written ``db.table``: equal to the table's name, carrying the database's (the engine
    accepts only its own database's name, or ``main``)."""
    schema: str

    def __new__(cls, name: str, schema: str) -> "QualifiedName":
        obj = super().__new__(cls, name)
        obj.schema = schema
        return obj


@dataclass(frozen=True)
class ShowWarnings:
    pass


@dataclass(frozen=True)
class Transaction:
    verb: str                      # begin, commit, rollback


@dataclass(frozen=True)
class Query:
    """SELECT / INSERT / REPLACE / UPDATE / DELETE, parsed by sqlglot (MySQL dialect)."""
    expr: Any                      # sqlglot.exp.Expression
    kind: str                      # select, insert, update, delete
    replace: bool = False
    outfile: str | None = None
    options: tuple = ()            # SELECT ... OPTION name=value, ...: ((lower-cased name, value), ...)


@dataclass(frozen=True)
class Explain:
    statement: Any


@dataclass(frozen=True)
class Placeholder:
    """A ``?`` in an extension statement: the ``index``-th parameter (0-based)."""
    index: int


@dataclass(frozen=True)
class SetStatement:
    """SET NAMES / CHARACTER SET / [SESSION|GLOBAL] var = v / @user = v, as parsed by sqlglot."""
    expr: Any                      # sqlglot.exp.Set


Statement = Any


def __getattr__(name: str) -> Any:
    """The other statement nodes (grammar/nodes.py), imported when first named."""
    from . import nodes
    try:
        value = getattr(nodes, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value

"""MySQL's column constraints, table-level keys and table options inside CREATE TABLE: the Transformer
rules for them (grammar in ddl.lark). Expressions stay MySQL text; the engine translates them."""
from __future__ import annotations

from dataclasses import dataclass

from lark import Token

from . import ast


@dataclass(frozen=True)
class Constraint:
    kind: str
    value: object = None


@dataclass(frozen=True)
class MysqlTableOption:
    key: str
    value: str


def _text(item) -> str:
    """A NAME or STRING token as its value (quotes removed)."""
    text = str(item)
    if len(text) >= 2 and text[0] in "'\"" and text[-1] == text[0]:
        return text[1:-1].replace(text[0] * 2, text[0])
    return text


def _names(items) -> list[str]:
    return [i for i in items if isinstance(i, str) and not isinstance(i, Token)]


class MysqlDdlRules:
    """Mixed into the DDL Transformer."""

    # -- column constraints ----------------------------------------------------------------------
    def not_null(self, items):
        return Constraint("not_null")

    def nullable(self, items):
        return Constraint("null")

    def default(self, items):
        return Constraint("default", items[-1])

    def default_string(self, items):
        return str(items[0])                      # MySQL literal text, quotes kept

    def default_number(self, items):
        return str(items[0])

    def default_null(self, items):
        return "NULL"

    def default_word(self, items):
        return "".join(str(i) for i in items)      # CURRENT_TIMESTAMP, TRUE, now()

    def default_expr(self, items):
        return str(items[0])

    def unique(self, items):
        return Constraint("unique")

    def primary_key(self, items):
        return Constraint("primary_key")

    def auto_increment(self, items):
        return Constraint("auto_increment")

    def comment(self, items):
        return Constraint("comment", self.string([items[-1]]))

    def check(self, items):
        name = next(iter(_names(items)), None)
        return Constraint("check", (name, str(items[-1])))

    def collate(self, items):
        return Constraint("collate", _text(items[-1]))

    def charset(self, items):
        return Constraint("charset", _text(items[-1]))

    def charset_kw(self, items):
        return "charset_kw"

    def on_update(self, items):
        return Constraint("on_update", str(items[2]))

    # -- table-level keys -------------------------------------------------------------------------
    def key_part(self, items):
        return items[0]

    def key_columns(self, items):
        return tuple(items)

    def fk_action(self, items):
        return None

    def _key(self, kind: str, items) -> ast.TableKey:
        columns = next(i for i in items if isinstance(i, tuple))
        names = [i for i in _names(items) if i != "charset_kw"]
        return ast.TableKey(kind, name=names[0] if names else None, columns=columns)

    def primary_key_clause(self, items):
        return self._key("primary", items)

    def unique_clause(self, items):
        return self._key("unique", items)

    def index_clause(self, items):
        return self._key("index", items)

    def foreign_key_clause(self, items):
        return ast.TableKey("foreign", columns=next(i for i in items if isinstance(i, tuple)))

    def check_clause(self, items):
        names = _names(items)
        return ast.TableKey("check", name=names[0] if names else None, expr=str(items[-1]))

    # -- table options ----------------------------------------------------------------------------
    def table_charset(self, items):
        return MysqlTableOption("charset", _text(items[-1]))

    def table_collate(self, items):
        return MysqlTableOption("collate", _text(items[-1]))

    def table_auto_increment(self, items):
        return MysqlTableOption("auto_increment", str(items[-1]))

    def table_comment(self, items):
        return MysqlTableOption("comment", self.string([items[-1]]))

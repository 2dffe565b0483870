"""The Lark grammar for extension statements and its Transformer into :mod:`grammar.ast` nodes."""
from __future__ import annotations

import functools
from dataclasses import dataclass

from lark import Lark, Token, Transformer, UnexpectedEOF, UnexpectedInput
from lark.exceptions import VisitError

from . import ast
from .errors import GrammarError
from .sql import parse_query
from .load_set import load_set
from .type_names import TYPE_ALIASES
from .manticore import flagged_type
from .session import SessionRules
from .mysql_ddl import Constraint, MysqlDdlRules, MysqlTableOption
from .chat import ChatRules


@functools.cache
def _parser() -> Lark:
    """The LALR parser of ddl.lark, built at the first extension statement (building it is most of
    what importing the package would otherwise cost)."""
    return Lark.open("ddl.lark", rel_to=__file__, parser="lalr", maybe_placeholders=False)


def _unquote_string(tok: str) -> str:
    quote = tok[0]
    body = tok[1:-1].replace(quote * 2, quote)
    out, i = [], 0
    escapes = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", "'": "'", '"': '"'}
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            out.append(escapes.get(body[i + 1], body[i + 1]))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


class _LoadPart:
    """A clause of LOAD DATA on its way into ast.LoadData."""


@dataclass(frozen=True)
class _Charset(_LoadPart):
    name: str


@dataclass(frozen=True)
class _Ignore(_LoadPart):
    count: int


@dataclass(frozen=True)
class _Targets(_LoadPart):
    names: tuple


@dataclass(frozen=True)
class _Flag:
    value: str


@dataclass(frozen=True)
class _Columns:
    items: list


@dataclass(frozen=True)
class _TableOption:
    key: str
    value: str


class _ToAst(SessionRules, MysqlDdlRules, ChatRules, Transformer):
    def ident(self, items):
        return str(items[0])

    def qualified_name(self, items):
        return ast.QualifiedName(items[1], items[0])

    def quoted_ident(self, items):
        return str(items[0])[1:-1].replace("``", "`")

    def string(self, items):
        return _unquote_string(str(items[0]))

    def number(self, items):
        return str(items[0])

    def bare(self, items):
        return str(items[0])

    def option_key(self, items):
        return str(items[0]).lower()

    def option(self, items):
        return (items[0], items[1])

    def type_args(self, items):
        return "(" + ",".join(str(i) for i in items) + ")"

    def type_spec(self, items):
        base = str(items[0])
        canonical = TYPE_ALIASES.get(base.lower())
        if canonical is None:
            raise GrammarError(f"unknown column type '{base}'")
        flags = [i.value for i in items if isinstance(i, _Flag)]
        items = [i for i in items if not isinstance(i, _Flag)]
        text = "".join(str(i) if not isinstance(i, Token) or i.type != "UNSIGNED" else " unsigned" for i in items)
        text += "".join(f" {flag}" for flag in flags)
        return flagged_type(canonical, flags), text

    def field_flag(self, items):
        return _Flag(str(items[0]).lower())

    def column_defs(self, items):
        return _Columns(items)

    def table_option(self, items):
        return _TableOption(items[0], items[1])

    def alter_rebuild(self, items):
        target = next(str(i).lower() for i in items if isinstance(i, Token) and i.type == "REBUILD_TARGET")
        names = [i for i in items if not isinstance(i, Token)]
        return ast.AlterRebuild(table=names[0], target=target, column=names[1] if len(names) > 1 else None)

    def column_def(self, items):
        name, (canonical, text), *options = items
        constraints = tuple((c.kind, c.value) for c in options if isinstance(c, Constraint))
        options = [o for o in options if not isinstance(o, Constraint)]
        return ast.ColumnDef(name=name, type=canonical, type_text=text, options=tuple(options),
                             constraints=constraints)

    def if_not_exists(self, _):
        return "if_not_exists"

    def if_exists(self, _):
        return "if_exists"

    def create_table(self, items):
        flag = items[0] == "if_not_exists"
        rest = items[1:] if flag else items
        elements = next((tuple(i.items) for i in rest if isinstance(i, _Columns)), ())
        columns = tuple(e for e in elements if isinstance(e, ast.ColumnDef))
        keys = tuple(e for e in elements if isinstance(e, ast.TableKey))
        options = tuple((o.key, o.value) for o in rest if isinstance(o, (_TableOption, MysqlTableOption)))
        return ast.CreateTable(table=rest[0], columns=columns, if_not_exists=flag, options=options, keys=keys)

    def index_column(self, items):
        order = str(items[1]).upper() if len(items) > 1 else "ASC"
        return (items[0], order)

    def create_index(self, items):
        unique = any(isinstance(i, Token) and i.type == "UNIQUE_KW" for i in items)
        flag = "if_not_exists" in items
        rest = [i for i in items if not isinstance(i, Token) and i != "if_not_exists"]
        name, table, *columns = rest
        return ast.CreateIndex(name=name, table=table, columns=tuple(columns), unique=unique, if_not_exists=flag)

    def drop_index(self, items):
        flag = items[0] == "if_exists"
        rest = items[1:] if flag else items
        return ast.DropIndex(name=rest[0], table=rest[1] if len(rest) > 1 else None, if_exists=flag)

    def drop_table(self, items):
        flag = items[0] == "if_exists"
        names = items[1:] if flag else items
        return ast.DropTable(tables=tuple(names), if_exists=flag)

    def alter_add(self, items):
        items = [i for i in items if not isinstance(i, Token)]
        return ast.AlterAddColumn(table=items[0], column=items[1])

    def alter_drop(self, items):
        items = [i for i in items if not isinstance(i, Token)]
        return ast.AlterDropColumn(table=items[0], column=items[1])

    def table_command(self, items):
        verb = str(items[0]).lower()
        return ast.TableCommand(verb=verb, table=items[-1])

    def describe(self, items):
        return ast.TableCommand(verb="describe", table=items[-1])

    def show_index(self, items):
        names = [i for i in items if isinstance(i, str) and not isinstance(i, Token)]
        table = ast.QualifiedName(names[0], names[1]) if len(names) > 1 else names[0]
        return ast.TableCommand(verb="show_index", table=table)

    def show_create(self, items):
        return ast.TableCommand(verb="show_create", table=items[-1])

    def show_tables(self, items):
        strings = [i for i in items if isinstance(i, Token) and i.type == "STRING"]
        names = [i for i in items if isinstance(i, str) and not isinstance(i, Token)]
        return ast.ShowTables(like=_unquote_string(str(strings[0])) if strings else None,
                              database=names[0] if names else None)

    def show_warnings(self, _):
        return ast.ShowWarnings()

    def show_models(self, items):
        return ast.ShowModels(like=_unquote_string(str(items[0])) if items else None)

    def backup(self, items):
        return ast.Backup(path=_unquote_string(str(items[0])))

    def transaction(self, _):
        return ast.Transaction("begin")

    def begin(self, _):
        return ast.Transaction("begin")

    def commit(self, _):
        return ast.Transaction("commit")

    def rollback(self, _):
        return ast.Transaction("rollback")

    def load_data(self, items):
        kinds = {i.type for i in items if isinstance(i, Token)}
        clauses = {type(i): i for i in items if isinstance(i, (ast.LoadFields, ast.LoadLines, _LoadPart))}
        names = [i for i in items if not isinstance(i, Token) or i.type == "STRING"]
        names = [i for i in names if not isinstance(i, (ast.LoadFields, ast.LoadLines, _LoadPart))]
        path = names[0] if isinstance(names[0], ast.Placeholder) else _unquote_string(str(names[0]))
        setting = [i for i in items if isinstance(i, Token) and i.type == "LOAD_SET"]
        return ast.LoadData(path=path, table=names[1], columns=clauses.get(_Targets, _Targets(())).names,
                            replace="REPLACE_KW" in kinds, sync="SYNC_KW" in kinds, ignore="IGNORE_KW" in kinds,
                            fields=clauses.get(ast.LoadFields), lines=clauses.get(ast.LoadLines),
                            ignore_lines=clauses[_Ignore].count if _Ignore in clauses else None,
                            assignments=load_set(str(setting[0])) if setting else (),
                            charset=clauses[_Charset].name if _Charset in clauses else None)

    def load_charset(self, items):
        return _Charset(str(items[-1]).strip("'\"").lower())

    def fields_terminated(self, items):
        return ("terminated", _unquote_string(str(items[-1])))

    def fields_enclosed(self, items):
        return ("enclosed", _unquote_string(str(items[-1])), len(items) > 1)

    def fields_escaped(self, items):
        return ("escaped", _unquote_string(str(items[-1])))

    lines_terminated = fields_terminated

    def lines_starting(self, items):
        return ("starting", _unquote_string(str(items[-1])))

    def load_fields(self, items):
        options = {o[0]: o[1] for o in items if isinstance(o, tuple)}
        optionally = any(o[0] == "enclosed" and o[2] for o in items if isinstance(o, tuple))
        return ast.LoadFields(**options, optionally=optionally)

    def load_lines(self, items):
        return ast.LoadLines(**{o[0]: o[1] for o in items if isinstance(o, tuple)})

    def load_ignore(self, items):
        return _Ignore(int(next(i for i in items if isinstance(i, Token) and i.type == "INT")))

    def load_columns(self, items):
        return _Targets(tuple(items))

    def user_var(self, items):
        text = str(items[0])[1:]
        return ast.UserVar((text[1:-1].replace("``", "`") if text.startswith("`") else text).lower())

    # -- chunks: SHOW CHUNKS, CALL CHUNKS, ALTER TABLE ... MODIFY COLUMN -----------------------------
    def show_chunks(self, items):
        tail = [i for i in items if getattr(i, "type", None) == "CHUNKS_TAIL"]
        table, *rest = [i for i in items if getattr(i, "type", None) != "CHUNKS_TAIL"]
        column = rest[0] if rest else ""          # SHOW CHUNKS FROM t: the table's one vector column
        quoted = "`" + table.replace("`", "``") + "`"
        documents = parse_query(f"SELECT id FROM {quoted} {tail[0] if tail else ''}").expr
        return ast.ShowChunks(table=table, column=column, documents=documents)

    def placeholder(self, _):
        self._placeholders = getattr(self, "_placeholders", 0) + 1
        return ast.Placeholder(self._placeholders - 1)

    def call_arg(self, items):
        return (str(items[2]).lower(), items[0]) if len(items) == 3 else items[0]

    def call_chunks(self, items):
        args = tuple(i for i in items if not isinstance(i, tuple))
        options = tuple(i for i in items if isinstance(i, tuple))
        return ast.CallChunks(args=args, options=options)

    def call_evaluate(self, items):
        return ast.CallEvaluate(args=tuple(i for i in items if not isinstance(i, tuple)),
                                options=tuple(i for i in items if isinstance(i, tuple)))

    def alter_modify(self, items):
        items = [i for i in items if not isinstance(i, Token)]
        return ast.AlterModifyColumn(table=items[0], column=items[1])

    def start(self, items):
        return items[0]


def parse_extension(text: str) -> ast.Statement:
    """Parse one extension statement; raise GrammarError with position and context."""
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as exc:
        pos = exc.pos_in_stream
        at_end = isinstance(exc, UnexpectedEOF) or getattr(getattr(exc, "token", None), "type", "") == "$END"
        if at_end and getattr(exc, "expected", None) == {"EQUAL"}:   # a trailing word read as a table option
            at_end = False
        near = text[pos:].strip() if pos is not None and pos >= 0 and not at_end else ""
        msg = f"syntax error near '{near[:80]}'" if near else "syntax error, unexpected end of statement"
        raise GrammarError(msg, exc.line, exc.column, exc.get_context(text)) from None
    try:
        return _ToAst().transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, GrammarError):
            raise exc.orig_exc from None
        raise

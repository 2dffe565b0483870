"""The tools, their JSON schemas and descriptions, on the official SDK's MCPServer.

Every call runs on one of a pool of worker threads, each with its own connections (a connection
belongs to one thread); the event loop only waits, so a slow call does not hold the others. A call
that outlives ``--timeout`` (its statements are stopped by the engine's own time limit first) is
answered with an error and its connections are interrupted. Errors an agent can act on (a
ToolFailure, a MySQL error) become tool errors with their message; the server keeps answering."""
from __future__ import annotations

import inspect

import asyncio
import concurrent.futures
import json
from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resources import FunctionResource
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError

import tesseradb
from tesseradb.clients.mcp import ask, documents, overview, tools, writes
from tesseradb.clients.mcp.limits import (MAX_CHUNKS_PER_DOC, MAX_DOCUMENTS, MAX_QUERY_CHARS, MAX_SQL_CHARS,
                                          MAX_WINDOW, MAX_WRITE_DOCUMENTS, WORKERS)
from tesseradb.clients.mcp.session import Session, ToolFailure

WRITE_TOOLS = ("add", "update", "delete", "sync")
INSTRUCTIONS = ("A tesseradb database of documents. Start with describe() to see the tables, then search() "
                "for passages, read() a document, a section or a passage with its neighbours, similar() and "
                "context() to explore. sql() runs one read-only MySQL-dialect statement.")


TIMEOUT_GRACE = 10.0            # seconds past --timeout before a call is answered as timed out


class Worker:
    """The worker threads (``WORKERS``), each with its own connections (``Session.open_thread``)."""

    def __init__(self, session: Session | None = None, workers: int = WORKERS) -> None:
        self.session = session
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix="tessera-mcp",
            initializer=session.open_thread if session is not None else None)

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        running: list[Any] = []

        def job() -> Any:
            if self.session is not None:
                running.extend(self.session.connections())
            return fn(*args)

        future = asyncio.wrap_future(self._pool.submit(job))
        timeout = self.session.timeout if self.session is not None else None
        try:
            if timeout is None:
                return await future
            return await asyncio.wait_for(asyncio.shield(future), timeout + TIMEOUT_GRACE)
        except (ToolFailure, tesseradb.Error) as exc:
            raise ToolError(str(exc)) from None
        except asyncio.TimeoutError:
            for con in running:
                con.interrupt()
            raise ToolError(f"the call took longer than --timeout ({timeout:g} seconds) and was stopped; "
                            "ask for less (a LIMIT, a narrower WHERE, a section or a passage)") from None

    async def answer(self, fn: Callable[..., Any], *args: Any) -> CallToolResult:
        """A tool's answer: the structured result, and the same as compact JSON text (an agent's
        context window pays for every indentation space). The SDK passes a CallToolResult through,
        checking its structured content against the output schema of the tool's ``dict`` annotation."""
        result = await self.run(fn, *args)
        text = json.dumps(result, ensure_ascii=False, separators=(",", ":"))
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=result)

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        return self._pool.submit(fn, *args).result()

    def submit(self, fn: Callable[..., Any], *args: Any) -> concurrent.futures.Future:
        return self._pool.submit(fn, *args)

    def close(self) -> None:
        self._pool.shutdown(wait=True)


class TesseraServer(MCPServer):
    """A write tool called on a read-only server is an error that says how to allow writes."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        if name in WRITE_TOOLS and self._tool_manager.get_tool(name) is None:
            raise ToolError(f"tool '{name}' changes the database and this server is read-only: "
                            "start tessera mcp with --allow-writes" + (" --allow-sync DIR" if name == "sync" else ""))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(argument_errors(name, exc.__cause__)) from None
            raise


def argument_errors(tool: str, error: ValidationError) -> str:
    """pydantic's validation report in plain words, one clause per argument, without its URL or the
    rejected value (issue 36): ``invalid arguments for search: 'limit' must be less than or equal to 50``."""
    parts = []
    for err in error.errors(include_url=False, include_input=False):
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        if err["type"] == "missing":
            parts.append(f"'{where}' is required")
        else:
            text = str(err["msg"])
            text = text.replace("Input should be", "must be", 1) if text.startswith("Input should be") else text
            parts.append(f"'{where}' {text[0].lower() + text[1:]}")
    return f"invalid arguments for {tool}: " + "; ".join(parts)


READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
# ask reads the database but calls the operator's chat endpoint: not idempotent, open world
ASK = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=False, open_world_hint=True)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False)

Table = Annotated[str, Field(description="table name (describe() lists them)", max_length=256)]
OptionalTable = Annotated[str | None, Field(description="table name; may be omitted when only one table "
                                            "can be searched", max_length=256)]
DocId = Annotated[int, Field(description="the document's id")]
Filters = Annotated[dict[str, Any] | None, Field(description=(
    "conditions on the table's filterable columns, all of which must hold: {column: value} for equality "
    "(null for IS NULL) or {column: {op: value}} with op one of eq, ne, lt, lte, gt, gte, like, in, not_in "
    "(in / not_in take a list). Keys of a json column (front matter) too: \"meta.owner\", or just \"tags\" "
    "when the table has one json column; a list value matches when one of its elements does; dates are ISO "
    "text. Example: {\"team\": \"ops\", \"year\": {\"gte\": 2023}, \"tags\": \"ops\", "
    "\"meta.date\": {\"gte\": \"2026-01-01\"}}"))]


def build(session: Session, worker: Worker) -> TesseraServer:
    # WARNING: a refused tool call is the agent's business (it gets the error), not a log line per call
    server = TesseraServer("tesseradb", instructions=INSTRUCTIONS, version=tesseradb.__version__,
                           log_level="WARNING")
    _read_tools(server, session, worker)
    if session.allow_writes:
        _write_tools(server, session, worker)
    for info in session.tables.values():
        server.add_resource(FunctionResource(
            uri=f"tessera://schema/{info.name}", name=f"{info.name} schema", mime_type="text/plain",
            description=f"CREATE TABLE statement of {info.name}",
            fn=_schema_reader(session, worker, info.name)))
    return server


def _schema_reader(session: Session, worker: Worker, name: str):
    async def read() -> str:
        return await worker.run(overview.schema_text, session, name)
    return read


def _read_tools(server: MCPServer, s: Session, w: Worker) -> None:
    async def search(
        query: Annotated[str, Field(description="what to look for, in natural language", min_length=1,
                                    max_length=MAX_QUERY_CHARS)],
        table: OptionalTable = None,
        limit: Annotated[int, Field(ge=1, le=MAX_DOCUMENTS, description="documents to return")] = 10,
        mode: Annotated[Literal["hybrid", "semantic", "keyword"], Field(description=(
            "hybrid: meaning and exact words fused (best default); semantic: meaning only; keyword: words only"))] = "hybrid",
        chunks_per_doc: Annotated[int, Field(ge=1, le=MAX_CHUNKS_PER_DOC,
                                             description="best passages returned per document")] = 2,
        filters: Filters = None,
    ) -> dict[str, Any]:
        """Search documents; returns the best documents first (limit counts documents), each with its id,
        title, score (higher is better) and its best passages [{heading, text, chunk, score}]. Pass a
        passage's chunk to read(table, id, chunk=, window=) for the text around it."""
        return await w.answer(tools.search, s, query, table, limit, mode, chunks_per_doc, filters)

    async def read(
        table: Table, id: DocId,
        section: Annotated[str | None, Field(description="a heading (or a path 'A > B'): return that section "
                                             "with its sub-sections", max_length=1000)] = None,
        chunk: Annotated[int | None, Field(ge=1, description="a passage's chunk number (from search)")] = None,
        window: Annotated[int | None, Field(ge=0, le=MAX_WINDOW, description=(
            "with chunk: neighbouring chunks to include on each side (default 1)"))] = None,
    ) -> dict[str, Any]:
        """Read a document: all its fields, one section by heading, or a passage (chunk) with its neighbours.
        Long text is cut (the answer says which fields were)."""
        return await w.answer(documents.read, s, table, id, section, chunk, window)

    async def similar(
        table: Table, id: DocId,
        limit: Annotated[int, Field(ge=1, le=MAX_DOCUMENTS, description="documents to return")] = 10,
    ) -> dict[str, Any]:
        """Documents like this one (compared by all of its chunks), best first, the document itself left out."""
        return await w.answer(tools.similar, s, table, id, limit)

    async def context(table: Table, id: DocId) -> dict[str, Any]:
        """A document's metadata (long values cut), its outline (headings, when the chunks record them)
        and the documents most like it with one passage each."""
        return await w.answer(documents.context, s, table, id)

    async def describe() -> dict[str, Any]:
        """The tables: columns (which are searchable and filterable), row and chunk counts, the models,
        and the state of the indexes. Call this first."""
        return await w.answer(overview.describe, s)

    async def sql(query: Annotated[str, Field(description="one MySQL-dialect statement", min_length=1,
                                              max_length=MAX_SQL_CHARS)]) -> dict[str, Any]:
        """Run one read-only SQL statement (SELECT, SHOW, DESCRIBE, EXPLAIN; knn(), MATCH(), hybrid_match()
        work). Writes and file statements are refused by the database. At most 200 rows come back (the
        answer says when there were more); errors are MySQL error texts."""
        return await w.answer(overview.sql, s, query)

    for fn in (search, read, similar, context, describe, sql):
        server.add_tool(_dedented(fn), annotations=READ, structured_output=True)
    if s.chat_model is not None:
        _ask_tool(server, s, w)


def _ask_tool(server: MCPServer, s: Session, w: Worker) -> None:
    async def ask_(
        question: Annotated[str, Field(description="the question, in natural language", min_length=1,
                                       max_length=MAX_QUERY_CHARS)],
        table: OptionalTable = None,
        conversation: Annotated[str | None, Field(description=(
            "the conversation id of an earlier answer, to ask a follow-up; omit to start a new one"),
            max_length=200)] = None,
    ) -> dict[str, Any]:
        """Ask a question about the documents: an answer written by the server's chat model from the
        passages that search finds, citing them as [ref:<id>], with those sources (id, title or path,
        heading, passage, cited). Pass the returned conversation to ask a follow-up."""
        return await w.answer(ask.ask, s, question, table, conversation)

    ask_.__name__ = "ask"
    server.add_tool(_dedented(ask_), name="ask", annotations=ASK, structured_output=True)


def _write_tools(server: MCPServer, s: Session, w: Worker) -> None:
    async def add(table: Table, documents: Annotated[list[dict[str, Any]], Field(
            min_length=1, max_length=MAX_WRITE_DOCUMENTS,
            description="documents as {column: value}; the database embeds them itself")]) -> dict[str, Any]:
        """Add documents to a table (one transaction); returns their ids."""
        return await w.answer(writes.add, s, table, documents)

    async def update(table: Table, id: DocId, values: Annotated[dict[str, Any], Field(
            description="{column: new value}")]) -> dict[str, Any]:
        """Change columns of one document (its vectors are re-embedded when their text changes)."""
        return await w.answer(writes.update, s, table, id, values)

    async def delete(table: Table, ids: Annotated[list[int], Field(
            min_length=1, max_length=MAX_WRITE_DOCUMENTS, description="ids of the documents to delete")]) -> dict[str, Any]:
        """Delete documents by id."""
        return await w.answer(writes.delete, s, table, ids)

    for fn in (add, update, delete):
        server.add_tool(_dedented(fn), annotations=WRITE, structured_output=True)
    if s.sync_root is not None:
        async def sync(table: Table, path: Annotated[str, Field(max_length=4096, description=(
                "a folder or file inside the directory the server was started with (--allow-sync)"))] = ".") -> dict[str, Any]:
            """Bring a table up to date with a folder of documents: new files added, changed ones
            replaced, deleted ones removed (LOAD DATA ... SYNC)."""
            return await w.answer(writes.sync, s, table, path)
        server.add_tool(_dedented(sync), annotations=WRITE, structured_output=True)


def _dedented(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The tool's description is its docstring: without the source's indentation (agents pay for
    every space)."""
    fn.__doc__ = inspect.cleandoc(fn.__doc__ or "")
    return fn

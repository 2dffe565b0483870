"""The ASGI application (Starlette): routes, authentication, body limits, and errors in Manticore's
shapes. Every request borrows one engine connection (:mod:`pool`) and runs on its thread.

Endpoints (docs/http.md): ``/sql`` ``/cli`` ``/cli_json`` ``/search`` ``/insert`` ``/replace``
(``/index``) ``/update`` ``/delete`` ``/bulk`` ``/_bulk`` ``/<table>/_doc[/<id>]``
``/<table>/_create/<id>`` ``/<table>/_update/<id>`` ``/<table>/_bulk``; anything else is 501.
"""
from __future__ import annotations

import base64
import hmac
import importlib.metadata
import json
import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from tesseradb import errors
from tesseradb.clients.http import bulk, search, sql_endpoint, writes
from tesseradb.clients.http.fields import RequestError, load_object
from tesseradb.clients.http.pool import Pool
from tesseradb.clients.http.responses import PARSE, REFUSED, ApiError, engine_message, plain, typed

LOOPBACK_HOSTS = ["localhost", "127.0.0.1", "::1", "[::1]"]


@dataclass
class Access:
    """Who may call: nobody needs credentials on loopback without a password; with one, HTTP Basic
    (the configured user and the password, as mcp-manticore sends them) or ``Bearer <password>``."""
    user: str | None = None
    password: str | None = None

    def allows(self, header: str) -> bool:
        if not self.password:
            return True
        kind, _, value = header.partition(" ")
        if kind.lower() == "bearer":
            return hmac.compare_digest(value.strip().encode(), self.password.encode())
        if kind.lower() != "basic":
            return False
        try:
            user, _, password = base64.b64decode(value.strip(), validate=True).decode("utf-8").partition(":")
        except (ValueError, UnicodeDecodeError):
            return False
        user_ok = self.user is None or hmac.compare_digest(user.encode(), self.user.encode())
        return user_ok & hmac.compare_digest(password.encode(), self.password.encode())


class Api:
    def __init__(self, pool: Pool, access: Access, max_body: int):
        self.pool, self.access, self.max_body = pool, access, max_body

    # -- plumbing -----------------------------------------------------------------------------
    async def body(self, request: Request) -> bytes:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body:
            raise plain(f"request body of {declared} bytes is larger than the limit of {self.max_body} bytes", 413)
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > self.max_body:
                raise plain(f"request body larger than the limit of {self.max_body} bytes", 413)
            chunks.append(chunk)
        return b"".join(chunks)

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        async with self.pool.worker() as worker:
            return await worker.run(fn, *args)

    def endpoint(self, handler: Callable[[Request], Awaitable[Response]]):
        async def guarded(request: Request) -> Response:
            if not self.access.allows(request.headers.get("authorization", "")):
                return JSONResponse({"error": "access denied: wrong or missing credentials"}, 401,
                                    headers={"WWW-Authenticate": 'Basic realm="tesseradb"'})
            try:
                return await handler(request)
            except ApiError as exc:
                return JSONResponse(exc.body, exc.status)
        return guarded

    # -- SQL ----------------------------------------------------------------------------------
    async def sql(self, request: Request) -> Response:
        req = sql_endpoint.read_request(await self.body(request), dict(request.query_params))
        if not req.query.strip():
            raise plain("query missing", 400)
        try:
            if req.raw:
                return JSONResponse(await self.run(sql_endpoint.run_raw, req.query))
            return JSONResponse(await self.run(sql_endpoint.run_select, req.query))
        except errors.Error as exc:
            raise plain(engine_message(exc), 500) from None

    async def cli(self, request: Request) -> Response:
        body = await self.body(request)
        text = body.decode("utf-8", "replace") if body else urllib.parse.unquote_plus(request.url.query)
        if not text.strip():
            raise plain("query missing", 400)
        try:
            return PlainTextResponse(await self.run(sql_endpoint.run_cli, text))
        except errors.Error as exc:
            return PlainTextResponse(f"ERROR {exc.errno} ({exc.sqlstate}): {engine_message(exc)}\n", 500)

    async def cli_json(self, request: Request) -> Response:
        body = await self.body(request)
        text = body.decode("utf-8", "replace") if body else urllib.parse.unquote_plus(request.url.query)
        if not text.strip():
            raise plain("query missing", 400)
        try:
            return JSONResponse(await self.run(sql_endpoint.run_raw, text))
        except errors.Error as exc:
            raise plain(engine_message(exc), 500) from None

    # -- JSON endpoints -------------------------------------------------------------------------
    async def search(self, request: Request) -> Response:
        try:
            req = load_object(await self.body(request))
            return JSONResponse(await self.run(search.search, req))
        except RequestError as exc:
            raise plain(exc.message, 400) from None
        except errors.Error as exc:
            raise plain(engine_message(exc), 500) from None

    async def _document(self, request: Request, fn: Callable[..., Any], *args: Any) -> Response:
        req: Any = None
        try:
            req = load_object(await self.body(request))
            out = await self.run(fn, req, *args)
            return JSONResponse(out)
        except RequestError as exc:
            raise typed(exc.message, PARSE, 400, _table_of(req)) from None
        except errors.Error as exc:
            raise typed(engine_message(exc), REFUSED, 409, _table_of(req)) from None

    async def insert(self, request: Request) -> Response:
        return await self._document(request, writes.insert, False)

    async def replace(self, request: Request) -> Response:
        return await self._document(request, writes.insert, True)

    async def update(self, request: Request) -> Response:
        return await self._document(request, writes.update)

    async def delete(self, request: Request) -> Response:
        return await self._document(request, writes.delete)

    async def bulk(self, request: Request) -> Response:
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/x-ndjson":
            raise typed("Content-Type must be application/x-ndjson", PARSE, 400)
        out, status = await self.run(bulk.bulk, await self.body(request))
        return JSONResponse(out, status)

    async def es_bulk(self, request: Request) -> Response:
        body = await self.body(request)
        default = request.path_params.get("table")
        if default:
            body = _default_index(body, default)
        return JSONResponse(await self.run(bulk.es_bulk, body))

    async def es_doc(self, request: Request) -> Response:
        table, doc_id = request.path_params["table"], request.path_params.get("id")
        action = request.path_params.get("action", "_doc")
        if action not in ("_doc", "_create", "_update") or (request.method == "DELETE" and action != "_doc"):
            raise plain(f"{request.url.path} - unsupported endpoint", 501)
        try:
            if request.method == "DELETE":
                out = await self.run(writes.es_delete, table, doc_id)
                return JSONResponse(out, out["status"])
            body = load_object(await self.body(request), "document")
            if action == "_update":
                return JSONResponse(await self.run(writes.es_update, table, doc_id, body))
            replace = action == "_doc" and doc_id is not None
            out = await self.run(writes.es_document, table, doc_id, body, replace)
            return JSONResponse(out, out["status"])
        except RequestError as exc:
            raise typed(exc.message, PARSE, 400, table) from None
        except errors.Error as exc:
            raise typed(engine_message(exc), REFUSED, 409, table) from None

    async def root(self, request: Request) -> Response:
        version = importlib.metadata.version("tesseradb")
        return JSONResponse({"name": "tesseradb", "version": {"number": version, "build_flavor": "tesseradb"},
                             "tagline": "Manticore's HTTP JSON API over a tesseradb file"})

    async def unsupported(self, request: Request) -> Response:
        raise plain(f"/{request.path_params.get('path', '')} - unsupported endpoint", 501)


def _table_of(req: Any) -> str | None:
    if isinstance(req, dict):
        name = req.get("table", req.get("index"))
        return name if isinstance(name, str) else None
    return None


def _default_index(body: bytes, table: str) -> bytes:
    """``POST /<table>/_bulk``: action lines without ``_index`` act on ``table``."""
    out = []
    expect_action = True
    for line in body.split(b"\n"):
        if not line.strip():
            continue
        if expect_action:
            try:
                action = json.loads(line)
            except ValueError:
                out.append(line)
                continue
            if isinstance(action, dict) and len(action) == 1:
                name, meta = next(iter(action.items()))
                if isinstance(meta, dict):
                    meta.setdefault("_index", table)
                line = json.dumps(action).encode()
                expect_action = name == "delete"
            out.append(line)
        else:
            out.append(line)
            expect_action = True
    return b"\n".join(out)


def create_app(pool: Pool, access: Access, max_body: int, loopback_only: bool) -> Starlette:
    api = Api(pool, access, max_body)
    e = api.endpoint
    routes = [
        Route("/", e(api.root), methods=["GET", "HEAD"]),
        Route("/sql", e(api.sql), methods=["GET", "POST"]),
        Route("/cli", e(api.cli), methods=["GET", "POST"]),
        Route("/cli_json", e(api.cli_json), methods=["GET", "POST"]),
        Route("/search", e(api.search), methods=["POST"]),
        Route("/json/search", e(api.search), methods=["POST"]),
        Route("/insert", e(api.insert), methods=["POST", "PUT"]),
        Route("/create", e(api.insert), methods=["POST", "PUT"]),
        Route("/replace", e(api.replace), methods=["POST", "PUT"]),
        Route("/index", e(api.replace), methods=["POST", "PUT"]),
        Route("/update", e(api.update), methods=["POST"]),
        Route("/delete", e(api.delete), methods=["POST", "DELETE"]),
        Route("/bulk", e(api.bulk), methods=["POST"]),
        Route("/_bulk", e(api.es_bulk), methods=["POST", "PUT"]),
        Route("/{table}/_bulk", e(api.es_bulk), methods=["POST", "PUT"]),
        Route("/{table}/_doc", e(api.es_doc), methods=["POST"]),
        Route("/{table}/{action:str}/{id}", e(api.es_doc), methods=["POST", "PUT", "DELETE"]),
        Route("/{path:path}", e(api.unsupported), methods=["GET", "POST", "PUT", "DELETE", "HEAD", "PATCH"]),
    ]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=LOOPBACK_HOSTS)] if loopback_only else []
    return Starlette(routes=routes, middleware=middleware)

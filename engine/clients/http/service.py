"""``tessera serve --http``: the HTTP JSON API served by uvicorn on the MySQL server's event loop.

Bound before anything is served (port 0 picks a free one). Stopping it stops accepting, interrupts
running requests, waits for them, then rolls back and closes every engine connection it opened
(which saves the vector indexes they loaded).
"""
from __future__ import annotations

import asyncio
import logging
import socket
import ssl
from typing import Any

import uvicorn

from tesseradb.clients.http.app import Access, create_app
from tesseradb.clients.http.pool import EngineRules, Pool
from tesseradb.clients.network import is_loopback

DEFAULT_HTTP_PORT = 9308            # Manticore's HTTP port
KEEP_ALIVE = 28800                  # seconds, without --idle-timeout (MySQL's wait_timeout)
POOL_SIZE = 8                       # requests run at once; more wait for a free engine connection
log = logging.getLogger("tesseradb.http")


def listen(host: str, port: int) -> socket.socket:
    """The listening socket. Made with IPPROTO_TCP named: asyncio switches Nagle's algorithm off
    (TCP_NODELAY) only on sockets whose protocol says TCP, and the accepted ones inherit it from this
    one; with Nagle on, a response written as headers then body waited 40 ms for the client's
    delayed ACK."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


class HttpService:
    def __init__(self, rules: EngineRules, *, host: str, port: int, user: str | None, password: str | None,
                 ssl_cert: str | None, ssl_key: str | None, max_body: int, idle_timeout: float | None = None,
                 pool_size: int = POOL_SIZE):
        self.pool = Pool(rules, pool_size)
        self.host, self.requested_port = host, port
        self.app = create_app(self.pool, Access(user, password), max_body,
                              loopback_only=is_loopback(host) and not password)
        self.ssl_cert, self.ssl_key = ssl_cert, ssl_key
        self.idle_timeout = idle_timeout
        self.port: int | None = None
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task | None = None

    async def start(self) -> None:
        sock = listen(self.host, self.requested_port)
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(self.app, log_level="warning", access_log=False, lifespan="off",
                                ssl_certfile=self.ssl_cert, ssl_keyfile=self.ssl_key,
                                ssl_version=ssl.PROTOCOL_TLS_SERVER, timeout_graceful_shutdown=30,
                                # a keep-alive connection idle this long is closed: --idle-timeout, as MySQL's
                                timeout_keep_alive=int(self.idle_timeout) if self.idle_timeout else KEEP_ALIVE)
        self._server = uvicorn.Server(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        while not self._server.started and not self._task.done():
            await asyncio.sleep(0.01)
        if self._task.done():
            self._task.result()         # the error that stopped it
            raise OSError(f"the HTTP server on {self.host}:{self.port} stopped at once")

    async def stop(self) -> None:
        if self._server is None:
            return
        self._server.should_exit = True
        self.pool.stopping = True
        self.pool.interrupt_all()
        if self._task is not None:
            try:
                await self._task
            except Exception:  # noqa: BLE001 - shutting down: the server's own error is logged, not raised
                log.debug("the HTTP server ended with an error", exc_info=True)
        await asyncio.get_running_loop().run_in_executor(None, self.pool.close)
        self._server = None

    @property
    def url(self) -> str:
        scheme = "https" if self.ssl_cert else "http"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{host}:{self.port}"


def rules(connect: Any, path: str, *, read_only: bool, statement_timeout: float | None,
          secure_file_priv: str | None, max_execution_time: int) -> EngineRules:
    return EngineRules(connect, path, read_only, statement_timeout, secure_file_priv, max_execution_time)

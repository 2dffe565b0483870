"""Engine connections for HTTP requests: each on its own thread, lent to one request at a time.

A tesseradb connection is used by one thread only (as the MySQL side's sessions do): every worker
is a single-thread executor with its connection, opened on first use with the server's rules
(read-only, secure_file_priv, statement timeout, max_execution_time). A request borrows a worker for
its whole life, so one request is one engine session; what it leaves open is rolled back.
"""
from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any


@dataclass
class EngineRules:
    """How every engine connection of the HTTP side is opened (the MySQL side's rules)."""
    connect: Callable[..., Any]                 # tesseradb.connect (handed in: clients sit above it)
    path: str
    read_only: bool = False
    statement_timeout: float | None = None
    secure_file_priv: str | None = ""
    max_execution_time: int = 0                 # ms a SELECT may run (0: no limit)


class Worker:
    def __init__(self, rules: EngineRules, name: str):
        self.rules = rules
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        self.con: Any = None
        self.running = threading.Event()

    def _open(self) -> Any:
        r = self.rules
        con = r.connect(r.path, autocommit=True, statement_timeout=r.statement_timeout,
                        read_only=r.read_only, secure_file_priv=r.secure_file_priv)
        con.set_variable("max_execution_time", r.max_execution_time)
        return con

    def _call(self, fn: Callable[..., Any], args: tuple) -> Any:
        if self.con is None:
            self.con = self._open()
        self.running.set()
        try:
            return fn(self.con, *args)
        finally:
            self.running.clear()
            if self.con.in_transaction:        # a failed request never leaves a transaction open
                self.con.rollback()

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, self._call, fn, args)

    def interrupt(self) -> None:
        if self.con is not None and self.running.is_set():
            self.con.interrupt()

    def close(self) -> None:
        def _close() -> None:
            if self.con is not None:
                try:
                    self.con.rollback()
                finally:
                    self.con.close()
                    self.con = None
        self.executor.submit(_close).result()
        self.executor.shutdown(wait=True)


class Pool:
    """At most ``size`` requests run at once; the others wait for a worker."""

    def __init__(self, rules: EngineRules, size: int):
        self.rules = rules
        self.size = size
        self.workers: list[Worker] = []
        self._idle: asyncio.Queue[Worker] | None = None
        self.stopping = False

    @asynccontextmanager
    async def worker(self):
        if self._idle is None:
            self._idle = asyncio.Queue()
        if self._idle.empty() and len(self.workers) < self.size:
            self.workers.append(Worker(self.rules, f"tessera-http-{len(self.workers)}"))
            self._idle.put_nowait(self.workers[-1])
        worker = await self._idle.get()
        try:
            yield worker
        finally:
            self._idle.put_nowait(worker)

    def interrupt_all(self) -> None:
        for worker in self.workers:
            worker.interrupt()

    def close(self) -> None:
        """Roll back, close (saving the vector indexes each connection loaded)."""
        for worker in self.workers:
            worker.close()
        self.workers.clear()

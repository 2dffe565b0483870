"""Helpers for the tessera mcp tests: a real database with the real model, and the SDK's own client
driven from synchronous tests (a background event loop holds the connected client)."""
from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import re
import signal
import subprocess
import sys
import threading

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

import tesseradb

TESSERA = os.path.join(os.path.dirname(sys.executable), "tessera")
DDL = ("CREATE TABLE docs (title text, body text, team string, year int, "
       "v float_vector_array knn_type='hnsw' hnsw_similarity='cosine' model_name='Xenova/all-MiniLM-L6-v2' "
       "from='title,body' chunk_strategy='sentence' max_tokens='32')")
DOCS = [
    ("Database operations", "Backups run every night at two and are kept for seven days. Restores start from "
     "the newest snapshot in the archive bucket. The primary and the standby replicate over TLS; to rotate the "
     "replication certificate, request a new one from the internal authority, copy it to both hosts and restart "
     "replication on the standby first. Disk alerts fire when free space drops below twenty percent.", "ops", 2024),
    ("Web site", "The public web site renews its TLS certificates automatically. Deployments go out on Tuesdays "
     "after the tests pass. Caches are purged after every deployment.", "web", 2023),
    ("Office", "Coffee is served at eight. The kitchen closes at six; label your food in the fridge.", "office", 2022),
    ("Log rotation", "Send USR1 to the daemon, or run FLUSH LOGS, and it reopens its log files. Old logs are "
     "compressed after a day and deleted after thirty.", "ops", 2021),
    ("Holidays", "The office is closed between Christmas and New Year. Book leave in the calendar two weeks ahead.",
     "office", 2024),
    ("Incident review", "Every outage gets a written review within five days: timeline, cause, and the changes "
     "that stop it from happening again. Reviews never blame a person.", "ops", 2023),
]


def make_database(path: str) -> str:
    con = tesseradb.connect(path, autocommit=True)
    con.execute(DDL)
    con.executemany("INSERT INTO docs (title, body, team, year) VALUES (?, ?, ?, ?)", DOCS)
    con.execute("CREATE TABLE labels (name string, weight int)")       # nothing to search in it
    con.execute("INSERT INTO labels (name, weight) VALUES ('urgent', 3)")
    con.close()
    return path


def files_of(folder: str) -> dict[str, bytes]:
    out = {}
    for root, _, names in os.walk(folder):
        for name in names:
            full = os.path.join(root, name)
            with open(full, "rb") as f:
                out[os.path.relpath(full, folder)] = f.read()
    return out


class Live:
    """A connected SDK Client on a background event loop; ``call`` and friends are synchronous."""

    def __init__(self, transport_factory, timeout: float = 600):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.timeout = timeout
        connected: concurrent.futures.Future = concurrent.futures.Future()
        self.holder = asyncio.run_coroutine_threadsafe(self._hold(transport_factory, connected), self.loop)
        self.client: Client = connected.result(timeout)

    async def _hold(self, transport_factory, connected) -> None:
        """One task enters and leaves the client (anyio's cancel scopes must), in between it waits."""
        self.done = asyncio.Event()
        try:
            async with Client(transport_factory(), read_timeout_seconds=self.timeout) as client:
                connected.set_result(client)
                await self.done.wait()
        except BaseException as exc:
            if not connected.done():
                connected.set_exception(exc)
            raise

    def _run(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(self.timeout)

    def call(self, name: str, arguments: dict | None = None):
        return self._run(self.client.call_tool(name, arguments or {}))

    def ok(self, name: str, arguments: dict | None = None) -> dict:
        result = self.call(name, arguments)
        assert not result.is_error, result.content[0].text
        assert json.loads(result.content[0].text) == result.structured_content
        return result.structured_content

    def error(self, name: str, arguments: dict | None = None) -> str:
        result = self.call(name, arguments)
        assert result.is_error, result.structured_content
        return result.content[0].text

    def __getattr__(self, name):          # list_tools, list_resources, read_resource, ...
        method = getattr(self.client, name)
        return lambda *a, **kw: self._run(method(*a, **kw))

    def close(self) -> None:
        try:
            self.loop.call_soon_threadsafe(self.done.set)
            self.holder.result(self.timeout)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)


def stdio(db: str, *args: str) -> Live:
    return Live(lambda: _stdio_transport(db, args))


def _stdio_transport(db: str, args: tuple[str, ...]):
    from mcp.client.stdio import stdio_client
    return stdio_client(StdioServerParameters(command=TESSERA, args=["mcp", db, *args]))


def http(url: str, token: str | None) -> Live:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return Live(lambda: streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers, timeout=600)))


class HttpProcess:
    """``tessera mcp DB --http --port 0 ...`` in its own process; reads the address it prints."""

    def __init__(self, db: str, *args: str):
        self.proc = subprocess.Popen([TESSERA, "mcp", db, "--http", "--port", "0", *args],
                                     stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        seen = []
        for line in self.proc.stderr:
            seen.append(line)
            match = re.search(r"serving \S+ on (http://\S+)", line)
            if match:
                break
        else:
            self.stop(signal.SIGKILL)
            raise AssertionError(f"tessera mcp did not start: {''.join(seen)}")
        self.url = match.group(1)
        self.log = seen
        self.drain = threading.Thread(target=lambda: self.log.extend(self.proc.stderr), daemon=True)
        self.drain.start()           # the SDK logs every tool call: a full pipe would stop the server

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60) -> tuple[int, str]:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if hasattr(self, "drain"):
            self.drain.join(10)
        return self.proc.returncode, "".join(getattr(self, "log", []))

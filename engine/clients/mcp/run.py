"""Start the worker, open the database, serve over stdio or HTTP, and shut down cleanly."""
from __future__ import annotations

import argparse
import os
import sys

import anyio

from tesseradb.clients.mcp import web
from tesseradb.clients.mcp.server import Worker, build
from tesseradb.clients.mcp.session import Session


def run(args: argparse.Namespace, token: str | None) -> int:
    from tesseradb.clients.mcp.cli import DEFAULT_PORT
    worker = Worker()
    session = Session(args.database, only=args.table, allow_writes=args.allow_writes,
                      sync_root=os.path.realpath(args.allow_sync) if args.allow_sync else None,
                      timeout=args.timeout)
    try:
        worker.call(session.open)           # the connections belong to the worker thread
        server = build(session, worker)
        if args.http:
            host = args.host or "127.0.0.1"
            sock = web.listen(host, args.port if args.port is not None else DEFAULT_PORT)
            shown = f"[{host}]" if ":" in host else host
            sys.stderr.write(f"tessera mcp: serving {session.name} on http://{shown}:{sock.getsockname()[1]}/mcp\n")
            sys.stderr.flush()
            anyio.run(web.serve, server, sock, token)
        else:
            anyio.run(server.run_stdio_async)
    except KeyboardInterrupt:
        pass                                # Ctrl-C: stop cleanly, like EOF on stdin
    finally:
        try:
            worker.call(session.close)
        finally:
            worker.close()
    return 0

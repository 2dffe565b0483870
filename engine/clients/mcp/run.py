"""Start the worker, open the database, serve over stdio or HTTP, and shut down cleanly."""
from __future__ import annotations

import argparse
import os
import signal
import sys

import anyio

from tesseradb.clients.mcp import ask, web
from tesseradb.clients.mcp.server import Worker, build
from tesseradb.clients.mcp.session import Session


CLOSE_TIMEOUT = 30.0


def _stopper(worker: Worker, session: Session):
    """Ctrl-C and SIGTERM: let the running statement finish, close the connections, exit 0. (The
    SDK reads stdin in a thread that no cancellation reaches, so waiting for the loop to end could
    hang; uvicorn handles the signal first over HTTP, then hands it on here.)"""
    def stop(signum, frame) -> None:
        try:
            worker.submit(session.close).result(CLOSE_TIMEOUT)
        except BaseException:  # noqa: BLE001 - exiting anyway
            pass
        finally:
            sys.stderr.flush()
            os._exit(0)
    return stop


def run(args: argparse.Namespace, token: str | None) -> int:
    session = Session(args.database, only=args.table, allow_writes=args.allow_writes,
                      sync_root=os.path.realpath(args.allow_sync) if args.allow_sync else None,
                      timeout=args.timeout, allow_remote=tuple(getattr(args, "allow_remote", ())),
                      allow_env=tuple(getattr(args, "allow_env", ())), chat_model=getattr(args, "chat_model", None))
    worker = Worker(session)
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _stopper(worker, session))
    try:
        worker.call(session.open)           # a worker's connections belong to its thread
        worker.call(ask.check_model, session)
        server = build(session, worker)
        if args.http:
            host = args.host or "127.0.0.1"
            sock = web.listen(host, args.port)
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

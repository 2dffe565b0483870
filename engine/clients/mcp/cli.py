"""``tessera mcp DB [options]``: the command line of the MCP server."""
from __future__ import annotations

import argparse
import os
import sys

import tesseradb
from tesseradb.clients.network import is_loopback

DEFAULT_PORT = 8765


class ConfigError(ValueError):
    """The server was asked to start in a way it refuses."""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tessera mcp", description="Serve a tesseradb database as Model Context Protocol tools for LLM "
        "agents (search, read, similar, context, describe, sql; ask with --chat-model), read-only unless "
        "--allow-writes.")
    p.add_argument("database", help="an existing database file")
    p.add_argument("--table", action="append", metavar="T", help="show only this table (repeatable)")
    p.add_argument("--allow-writes", action="store_true", help="add the add, update and delete tools")
    p.add_argument("--allow-sync", metavar="DIR", help="with --allow-writes: the sync tool, for folders inside DIR")
    p.add_argument("--http", action="store_true", help="streamable HTTP instead of stdio")
    p.add_argument("--host", help="with --http: address to listen on (default 127.0.0.1; any other needs --token-file)")
    p.add_argument("--port", type=int, help=f"with --http: TCP port (default {DEFAULT_PORT})")
    p.add_argument("--token-file", metavar="FILE", help="with --http: file whose first line is the bearer token "
                   "clients must send (Authorization: Bearer ...)")
    p.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                   help="interrupt any statement running longer than this (default 30)")
    p.add_argument("--allow-remote", action="append", default=[], metavar="URL-PREFIX",
                   help="a remote model endpoint the tables' models may call (repeatable); without it remote "
                   "models are refused (docs/models.md)")
    p.add_argument("--chat-model", metavar="NAME", help="add the ask tool: answers from the chat model NAME "
                   "(CREATE CHAT MODEL) over the passages search finds, with citations (docs/chat.md)")
    p.add_argument("--allow-env", action="append", default=[], metavar="NAME",
                   help="an environment variable api_key='env:NAME' may read (repeatable; default: none)")
    return p


def check(args: argparse.Namespace) -> None:
    if args.database in ("", ":memory:"):
        raise ConfigError("tessera mcp needs a database file: an in-memory database would be empty")
    if not args.http and (args.host or args.port is not None or args.token_file):
        raise ConfigError("--host, --port and --token-file need --http (the default transport is stdio)")
    host = args.host or "127.0.0.1"
    if args.http and not is_loopback(host) and not args.token_file:
        raise ConfigError(f"refusing to listen on {host} without a token: anyone who can reach it could read "
                          "the database. Give --token-file, or listen on 127.0.0.1 (the default)")
    if args.allow_sync and not args.allow_writes:
        raise ConfigError("--allow-sync needs --allow-writes (sync changes the table)")
    if args.allow_sync and not os.path.isdir(args.allow_sync):
        raise ConfigError(f"--allow-sync {args.allow_sync}: not a directory")
    if args.timeout is not None and args.timeout <= 0:
        raise ConfigError("--timeout must be a positive number of seconds")


def read_token(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            token = f.readline().strip()
    except OSError as exc:
        raise ConfigError(f"cannot read the token file {path}: {exc.strerror}") from None
    if len(token) < 16:
        raise ConfigError(f"the token in {path} is shorter than 16 characters")
    return token


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    try:
        check(args)
        token = read_token(args.token_file) if args.token_file else None
    except ConfigError as exc:
        sys.stderr.write(f"tessera mcp: {exc}\n")
        return 2
    if args.port is None:
        args.port = DEFAULT_PORT
    try:
        from tesseradb.clients.mcp import run
    except ImportError as exc:
        sys.stderr.write(f"tessera mcp: the MCP SDK is missing ({exc.name}): pip install 'tesseradb[mcp]'\n")
        return 1
    try:
        return run.run(args, token)
    except tesseradb.Error as exc:
        sys.stderr.write(f"tessera mcp: {exc}\n")
        return 1
    except LookupError as exc:
        sys.stderr.write(f"tessera mcp: {exc.args[0]}\n")
        return 1
    except OSError as exc:
        sys.stderr.write(f"tessera mcp: cannot listen on {args.host or '127.0.0.1'}:{args.port}: {exc.strerror}\n")
        return 1

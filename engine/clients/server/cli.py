"""``tessera serve DB [options]``: the command line of the server."""
from __future__ import annotations

import argparse
import sys
import warnings

import tesseradb
from tesseradb.clients.server import config
from tesseradb.clients.server.app import serve

HTTP_PORT = 9308                # Manticore's HTTP port (tesseradb.clients.http.service.DEFAULT_HTTP_PORT)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tessera serve", description="Serve a tesseradb database over the MySQL protocol, so any "
        "MySQL client or driver can connect (mysql -h 127.0.0.1 -P 9306), and with --http Manticore's HTTP "
        "JSON API beside it (curl 127.0.0.1:9308/sql -d 'SHOW TABLES').")
    p.add_argument("database", help="database file (created if missing)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; any other needs a password)")
    p.add_argument("--port", type=int, default=config.DEFAULT_PORT,
                   help=f"TCP port (default {config.DEFAULT_PORT}, Manticore's; 0 picks a free one)")
    p.add_argument("--user", help="the one user name accepted (default root when a password is set; "
                   "any name without one)")
    p.add_argument("--password-file", metavar="FILE", help="file whose first line is the password")
    p.add_argument("--ssl-cert", metavar="PEM", help="TLS certificate (with --ssl-key)")
    p.add_argument("--ssl-key", metavar="PEM", help="TLS private key")
    p.add_argument("--max-connections", type=int, default=config.DEFAULT_MAX_CONNECTIONS, metavar="N",
                   help=f"clients connected at once (default {config.DEFAULT_MAX_CONNECTIONS})")
    p.add_argument("--idle-timeout", type=float, default=config.DEFAULT_IDLE_TIMEOUT, metavar="SECONDS",
                   help="disconnect a client silent this long (default 28800, MySQL's wait_timeout)")
    p.add_argument("--statement-timeout", type=float, default=None, metavar="SECONDS",
                   help="interrupt any statement running longer than this")
    p.add_argument("--max-allowed-packet", type=int, default=config.DEFAULT_MAX_PACKET, metavar="BYTES",
                   help="largest packet a client may send (default 64 MiB, MySQL 8's)")
    p.add_argument("--read-only", action="store_true", help="refuse every statement that writes")
    p.add_argument("--max-execution-time", type=int, default=config.DEFAULT_MAX_EXECUTION_TIME, metavar="MS",
                   help="milliseconds a SELECT may run before it stops with error 3024 (default 60000; 0: no "
                   "limit; a session changes it with SET max_execution_time)")
    p.add_argument("--secure-file-priv", metavar="DIR", default="",
                   help="the one directory LOAD DATA and SELECT ... INTO OUTFILE may use (default: none, "
                   "every file statement is refused)")
    p.add_argument("--http-port", type=int, default=None, metavar="N",
                   help="also serve Manticore's HTTP JSON API (/sql, /search, /insert, /bulk ...) on port N "
                   "of the same address (0 picks a free one); docs/http.md")
    p.add_argument("--http", dest="http_port", action="store_const", const=HTTP_PORT,
                   help=f"the same on Manticore's HTTP port, {HTTP_PORT}")
    p.add_argument("--allow-remote", action="append", default=[], metavar="URL-PREFIX",
                   help="a remote model endpoint clients may use (repeatable; e.g. http://127.0.0.1:11434/ or "
                   "https://api.openai.com/v1/); without it remote models are refused (docs/models.md)")
    p.add_argument("--allow-env", action="append", default=[], metavar="NAME",
                   help="an environment variable api_key='env:NAME' may read (repeatable; default: none)")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    warnings.filterwarnings("ignore", category=tesseradb.DataTruncatedWarning)   # clients get SHOW WARNINGS
    try:
        password = config.read_password(args.password_file) if args.password_file else None
        return serve(args.database, connect=tesseradb.connect, redact=tesseradb.redact_statement, host=args.host, port=args.port, user=args.user, password=password,
                     ssl_cert=args.ssl_cert, ssl_key=args.ssl_key, max_connections=args.max_connections,
                     idle_timeout=args.idle_timeout, read_only=args.read_only,
                     statement_timeout=args.statement_timeout, max_packet=args.max_allowed_packet,
                     secure_file_priv=args.secure_file_priv, max_execution_time=args.max_execution_time,
                     http_port=args.http_port, allow_remote=tuple(args.allow_remote), allow_env=tuple(args.allow_env))
    except config.ConfigError as exc:
        sys.stderr.write(f"tessera serve: {exc}\n")
        return 2
    except tesseradb.Error as exc:
        sys.stderr.write(f"tessera serve: {exc}\n")
        return 1
    except OSError as exc:
        sys.stderr.write(f"tessera serve: cannot listen on {args.host}:{args.port}: {exc.strerror}\n")
        return 1

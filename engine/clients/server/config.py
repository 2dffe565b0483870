"""``tessera serve`` options, their defaults and the checks made before anything listens."""
from __future__ import annotations

import os
import ssl
from dataclasses import dataclass

from tesseradb.clients.network import is_loopback

DEFAULT_PORT = 9306                 # Manticore's MySQL-protocol port
DEFAULT_IDLE_TIMEOUT = 28800.0      # MySQL's wait_timeout
DEFAULT_MAX_CONNECTIONS = 151       # MySQL's max_connections
DEFAULT_MAX_PACKET = 64 * 1024 * 1024   # MySQL 8's max_allowed_packet
DEFAULT_MAX_EXECUTION_TIME = 60_000     # ms a SELECT may run (MySQL's max_execution_time; 0: no limit)


class ConfigError(ValueError):
    """The server was asked to start in a way it refuses."""


@dataclass
class ServerOptions:
    database: str
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    user: str | None = None
    password: str | None = None
    ssl_cert: str | None = None
    ssl_key: str | None = None
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT
    read_only: bool = False
    max_packet: int = DEFAULT_MAX_PACKET
    statement_timeout: float | None = None
    secure_file_priv: str | None = ""   # "": every file statement refused; a directory: confined to it
    max_execution_time: int = DEFAULT_MAX_EXECUTION_TIME
    http_port: int | None = None        # Manticore's HTTP JSON API beside the MySQL protocol (None: off)
    allow_remote: tuple[str, ...] = ()  # URL prefixes remote models may call (none: remote models refused)
    allow_env: tuple[str, ...] = ()     # environment variables api_key='env:NAME' may read

    @property
    def name(self) -> str:
        """The database name clients see: the file's name without its extension."""
        stem = os.path.splitext(os.path.basename(self.database))[0]
        return stem or "tessera"


def check(options: ServerOptions) -> None:
    if options.database in ("", ":memory:"):
        raise ConfigError("tessera serve needs a database file: an in-memory database would be a "
                          "different, empty database for every client")
    if not is_loopback(options.host) and not options.password:
        raise ConfigError(f"refusing to listen on {options.host} without a password: anyone who can "
                          "reach it could read and change the database. Give --user and --password-file, "
                          "or listen on 127.0.0.1 (the default)")
    if (options.ssl_cert is None) != (options.ssl_key is None):
        raise ConfigError("TLS needs both --ssl-cert and --ssl-key")
    if options.max_connections < 1:
        raise ConfigError("--max-connections must be at least 1")
    if options.max_packet < 1024:
        raise ConfigError("--max-allowed-packet must be at least 1024 bytes")
    if options.secure_file_priv and not os.path.isdir(options.secure_file_priv):
        raise ConfigError(f"--secure-file-priv {options.secure_file_priv}: not a directory")
    if options.max_execution_time < 0:
        raise ConfigError("--max-execution-time must be 0 (no limit) or a number of milliseconds")
    if options.http_port is not None and not 0 <= options.http_port <= 65535:
        raise ConfigError("--http-port must be a TCP port (0 picks a free one)")
    if options.idle_timeout is not None and options.idle_timeout <= 0:
        raise ConfigError("--idle-timeout must be a positive number of seconds")


def read_password(path: str) -> str:
    """The first line of the file, without its line ending."""
    try:
        with open(path, encoding="utf-8") as f:
            line = f.readline().rstrip("\r\n")
    except OSError as exc:
        raise ConfigError(f"cannot read the password file {path}: {exc.strerror}") from None
    if not line:
        raise ConfigError(f"the password file {path} is empty")
    return line


def ssl_context(options: ServerOptions) -> ssl.SSLContext | None:
    if options.ssl_cert is None:
        return None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(options.ssl_cert, options.ssl_key)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"cannot load the TLS certificate or key: {exc}") from None
    return context

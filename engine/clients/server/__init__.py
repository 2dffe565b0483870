"""``tessera serve``: the MySQL wire protocol, so any MySQL client, driver or BI tool can connect.

mysql-mimic speaks the protocol; this package gives every client connection its own tesseradb
connection on its own thread, and fixes what mysql-mimic gets wrong for a database (see protocol.py
and session.py). Only the public tesseradb API is used: the server is a client like the shell.
"""
from tesseradb.clients.server.app import Background, Server, serve
from tesseradb.clients.server.config import ConfigError, ServerOptions

__all__ = ["serve", "Server", "Background", "ServerOptions", "ConfigError"]

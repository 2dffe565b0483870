"""Which endpoints and environment variables remote models may use: the operator's allow-list.

In-process (``tesseradb.connect``) the program is the operator: any URL, any ``env:`` name
(:data:`UNRESTRICTED`). Over a server (``tessera serve``, ``tessera mcp``), a client must neither
point the server at a URL of its choosing nor read the server's environment: remote models are
refused unless the operator allows their endpoint (``--allow-remote URL-PREFIX``, repeatable) and
``api_key='env:NAME'`` reads only the names the operator lists (``--allow-env NAME``).

A prefix matches by parts, not by characters: same scheme, host and port, and the URL's path at or
below the prefix's path at a ``/`` boundary; so ``http://127.0.0.1:8080/v1`` allows
``http://127.0.0.1:8080/v1/embeddings`` but neither ``http://127.0.0.1:80801/`` nor
``http://127.0.0.1:8080@evil.example/`` nor ``http://127.0.0.1:8080/v10``.
Refusals are MySQL's error 1290 (ER_OPTION_PREVENTS_STATEMENT).
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from tesseradb import errors
from tesseradb.embed.remote import secrets

_DEFAULT_PORTS = {"http": 80, "https": 443}


class RemoteRefused(errors.OperationalError):
    """The operator's allow-list refused an endpoint or an environment variable."""

    errno, sqlstate = 1290, "HY000"

    def __init__(self, option: str, what: str):
        super().__init__(f"The server is running without {option} for this {what} so it cannot execute this "
                         "statement")
        self.option = option
        self.what = what


def _parts(url: str) -> tuple[str, str, int, str] | None:
    try:
        split = urlsplit(url.strip())
        port = split.port
    except ValueError:
        return None
    if split.scheme not in _DEFAULT_PORTS or not split.hostname or split.username or split.password:
        return None
    return split.scheme, split.hostname.lower(), port or _DEFAULT_PORTS[split.scheme], split.path.rstrip("/")


def url_allowed(url: str, prefix: str) -> bool:
    """``url`` lies under ``prefix`` (scheme, host and port equal; path at a segment boundary)."""
    have, allow = _parts(url), _parts(prefix)
    if have is None or allow is None or have[:3] != allow[:3]:
        return False
    return have[3] == allow[3] or have[3].startswith(allow[3] + "/")


@dataclass(frozen=True)
class RemoteAccess:
    """``urls``: allowed URL prefixes (None: any); ``env``: readable variable names (None: any)."""

    urls: tuple[str, ...] | None = None
    env: frozenset[str] | None = None

    @classmethod
    def for_server(cls, urls: Iterable[str] = (), env: Iterable[str] = ()) -> RemoteAccess:
        """What a server allows: only what its operator listed (nothing by default)."""
        return cls(tuple(urls), frozenset(env))

    @property
    def restricted(self) -> bool:
        return self.urls is not None

    def check_url(self, url: str) -> None:
        """Raise :class:`RemoteRefused` unless ``url`` is allowed."""
        if self.urls is not None and not any(url_allowed(url, p) for p in self.urls):
            raise RemoteRefused("--allow-remote", "endpoint")

    def api_key(self, value: str | None) -> str | None:
        """The key to send for the option value ``value``: literal, or read from ``env:NAME`` now."""
        if not secrets.is_env_ref(value):
            return value or None
        name = secrets.env_name(value or "")
        if self.env is not None and name not in self.env:
            raise RemoteRefused("--allow-env", "environment variable")
        key = os.environ.get(name)
        if not key:
            raise errors.OperationalError(f"api_key='env:{name}': the environment variable {name} is not set")
        return key


UNRESTRICTED = RemoteAccess()

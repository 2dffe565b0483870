"""One retrying JSON POST to a remote model's endpoint (httpx), with failures as typed errors.

``JsonEndpoint(url, timeout=..., retry=...).post(payload, headers=...)`` sends ``payload`` as JSON
and returns the decoded JSON answer. It is the one HTTP path of remote models (embeddings here,
chat in conversational search), so every caller gets the same behaviour:

- connections are pooled (one ``httpx.Client`` per process, thread-safe), so a batch after the first
  costs no TCP/TLS handshake;
- 408, 429, 500, 502, 503 and 504 and connection failures are retried with exponential backoff
  (``Retry.backoff`` doubling, with jitter), at most ``Retry.attempts`` tries in all; a ``Retry-After``
  header (seconds or an HTTP date) is honoured, and one longer than ``Retry.max_wait`` fails at once
  instead of blocking the statement;
- each try is bounded by ``timeout`` seconds (Manticore's ``api_timeout``; connect, read and write);
  a timeout is retried like a 503, and the whole call never takes more than ``attempts`` timeouts
  plus the waits;
- any other status, an answer that is not JSON, a refused connection after the last try: a
  :class:`RemoteError` whose fields say what happened (``kind``, ``url``, ``status``, ``attempts``,
  ``detail``). Its message never holds a secret: the key and the endpoint's echo of it are redacted.
"""
from __future__ import annotations

import email.utils
import json
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from tesseradb import errors
from tesseradb.embed.remote import secrets

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
DEFAULT_TIMEOUT = 10.0      # seconds per try: Manticore's default (api_timeout=0 means "the default")
DETAIL_CHARS = 300          # how much of an error answer a message quotes

_client = None
_client_lock = threading.Lock()


@dataclass(frozen=True)
class Retry:
    attempts: int = 4          # tries in all (1: no retry)
    backoff: float = 0.5       # seconds before the second try; doubled before each next one
    max_backoff: float = 8.0   # cap of the doubling
    max_wait: float = 30.0     # a Retry-After longer than this is not waited for: the call fails


class RemoteError(errors.OperationalError):
    """A remote endpoint failed. Fields, not sentences: ``kind`` is one of ``timeout``, ``connect``,
    ``status``, ``malformed`` (not the JSON expected) or ``mismatch`` (vectors of the wrong width or
    count; raised by the providers); ``status`` the last HTTP status or None; ``attempts`` tries made."""

    errno, sqlstate = 1105, "HY000"

    def __init__(self, kind: str, url: str, detail: str, *, status: int | None = None, attempts: int = 1,
                 retry_after: float | None = None):
        self.kind, self.url, self.detail = kind, url, detail
        self.status, self.attempts, self.retry_after = status, attempts, retry_after
        where = f"remote model endpoint {url}"
        tries = f" (after {attempts} attempts)" if attempts > 1 else ""
        super().__init__(f"{where}: {detail}{tries}")


def _http_client() -> Any:
    """The process's pooled httpx client (created on first use: httpx loads with the first remote model)."""
    global _client
    if _client is None:
        with _client_lock:
            if _client is None:
                import httpx
                _client = httpx.Client(limits=httpx.Limits(max_connections=32, max_keepalive_connections=16),
                                       follow_redirects=False, trust_env=False)
    return _client


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """``Retry-After`` as seconds: a number, or an HTTP date (RFC 9110); None when absent or unreadable."""
    if not value:
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _detail(response: Any) -> str:
    """The error message an endpoint gave (OpenAI's ``{"error": {"message"}}``, Ollama's
    ``{"error": "..."}``, ``{"detail": ...}``), else the start of its body."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        err = body.get("error", body.get("detail", body.get("message")))
        if isinstance(err, dict):
            err = err.get("message", err)
        if err is not None:
            return str(err)[:DETAIL_CHARS]
    return response.text[:DETAIL_CHARS]


class JsonEndpoint:
    """A JSON endpoint: ``post(payload, headers=...)`` -> decoded JSON, or :class:`RemoteError`."""

    def __init__(self, url: str, *, timeout: float | None = None, retry: Retry = Retry(),
                 sleep: Callable[[float], None] = time.sleep):
        self.url = url
        self.timeout = timeout or DEFAULT_TIMEOUT
        self.retry = retry
        self._sleep = sleep

    def post(self, payload: Mapping[str, Any], *, headers: Mapping[str, str] | None = None,
             secrets_: Iterable[str | None] = ()) -> Any:
        """POST ``payload``; ``secrets_`` are redacted from any message (the key is, from headers)."""
        hidden = [*secrets_, *_header_secrets(headers)]
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        sent = {"Content-Type": "application/json", "Accept": "application/json", **(headers or {})}
        attempt = 0
        while True:
            attempt += 1
            failure, wait = self._try(body, sent, attempt, hidden)
            if isinstance(failure, RemoteError):
                if wait is None or attempt >= self.retry.attempts:
                    raise failure
                self._sleep(wait)
                continue
            return failure

    def stream(self, payload: Mapping[str, Any], *, headers: Mapping[str, str] | None = None,
               secrets_: Iterable[str | None] = ()) -> Iterator[Any]:
        """POST ``payload`` and yield the decoded JSON of each server-sent event (``data: {...}``) until
        ``data: [DONE]`` or the end of the answer: a chat model's streamed answer. A failure before the
        first event is retried as :meth:`post` retries; one after it is raised at once (part of the answer
        was already shown)."""
        import httpx
        hidden = [*secrets_, *_header_secrets(headers)]
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        sent = {"Content-Type": "application/json", "Accept": "text/event-stream", **(headers or {})}
        attempt, started = 0, False
        while True:
            attempt += 1
            try:
                with _http_client().stream("POST", self.url, content=body, headers=sent,
                                           timeout=httpx.Timeout(self.timeout)) as response:
                    if response.status_code >= 400:
                        response.read()
                        failure, wait = self._status_error(response, attempt, hidden)
                    else:
                        for event in self._events(response, hidden):
                            started = True
                            yield event
                        return
            except httpx.TimeoutException:
                failure = RemoteError("timeout", self.url, f"no answer within api_timeout={self.timeout:g} seconds",
                                      attempts=attempt)
                wait = self._backoff(attempt)
            except httpx.HTTPError as exc:
                detail = secrets.redact_text(f"cannot connect ({type(exc).__name__}: {exc})", hidden)
                failure, wait = RemoteError("connect", self.url, detail, attempts=attempt), self._backoff(attempt)
            if started or wait is None or attempt >= self.retry.attempts:
                raise failure
            self._sleep(wait)

    def _events(self, response: Any, hidden: list[str | None]) -> Iterator[Any]:
        for line in response.iter_lines():
            if not line.startswith("data:"):
                continue            # blank separators, comments (":"), event: and id: fields
            data = line[5:].strip()
            if data == "[DONE]":
                return
            try:
                yield json.loads(data)
            except ValueError:
                snippet = secrets.redact_text(data[:80], hidden)
                raise RemoteError("malformed", self.url, f"a streamed event is not JSON ({snippet!r})",
                                  status=response.status_code) from None

    def _try(self, body: bytes, headers: Mapping[str, str], attempt: int,
             hidden: list[str | None]) -> tuple[Any, float | None]:
        """(decoded answer, None), or (RemoteError, seconds to wait before a retry or None: final)."""
        import httpx
        try:
            response = _http_client().post(self.url, content=body, headers=headers,
                                           timeout=httpx.Timeout(self.timeout))
        except httpx.TimeoutException:
            return (RemoteError("timeout", self.url, f"no answer within api_timeout={self.timeout:g} seconds",
                                attempts=attempt), self._backoff(attempt))
        except httpx.HTTPError as exc:
            detail = secrets.redact_text(f"cannot connect ({type(exc).__name__}: {exc})", hidden)
            return RemoteError("connect", self.url, detail, attempts=attempt), self._backoff(attempt)
        if response.status_code >= 400:
            return self._status_error(response, attempt, hidden)
        try:
            return response.json(), None
        except ValueError:
            snippet = secrets.redact_text(response.text[:80], hidden)
            return RemoteError("malformed", self.url, f"the answer is not JSON ({snippet!r})",
                               status=response.status_code, attempts=attempt), None

    def _status_error(self, response: Any, attempt: int, hidden: list[str | None]) -> tuple[RemoteError, float | None]:
        status = response.status_code
        after = retry_after_seconds(response.headers.get("retry-after"))
        detail = secrets.redact_text(_detail(response), hidden)
        error = RemoteError("status", self.url, f"HTTP {status}: {detail}", status=status, attempts=attempt,
                            retry_after=after)
        if status not in RETRY_STATUSES:
            return error, None
        if after is not None and after > self.retry.max_wait:
            return RemoteError("status", self.url, f"HTTP {status}: {detail} (Retry-After {after:g} s is longer "
                               f"than the {self.retry.max_wait:g} s a statement waits)", status=status,
                               attempts=attempt, retry_after=after), None
        return error, after if after is not None else self._backoff(attempt)

    def _backoff(self, attempt: int) -> float:
        base = min(self.retry.max_backoff, self.retry.backoff * (2 ** (attempt - 1)))
        return base * (0.5 + random.random() / 2)     # jitter: clients that failed together spread out


def _header_secrets(headers: Mapping[str, str] | None) -> list[str]:
    """The credentials in headers (``Authorization: Bearer K`` -> K), redacted from messages."""
    out = []
    for name, value in (headers or {}).items():
        if name.lower() in ("authorization", "api-key", "x-api-key"):
            out.append(value.split(" ", 1)[-1])
    return out

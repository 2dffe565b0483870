"""The shared remote layer (tesseradb.embed.remote: http, secrets, access) against a loopback server."""
from __future__ import annotations

import numpy as np
import pytest

import standin  # tests/embed/remote/standin.py
from tesseradb import errors
from tesseradb.embed.remote import access, secrets
from tesseradb.embed.remote.http import JsonEndpoint, RemoteError, Retry, retry_after_seconds


def _fake(texts: list[str]) -> np.ndarray:
    return np.ones((len(texts), 4), np.float32) / 2


@pytest.fixture
def server():
    with standin.StandIn(_fake) as s:
        yield s


def _endpoint(server, **kw) -> tuple[JsonEndpoint, list[float]]:
    waits: list[float] = []
    return JsonEndpoint(server.base + "/v1/embeddings", sleep=waits.append, **kw), waits


def test_post_returns_the_decoded_answer(server):
    ep, waits = _endpoint(server)
    answer = ep.post({"input": ["a", "b"], "model": "m"})
    assert [d["index"] for d in answer["data"]] == [0, 1] and waits == []


def test_429_is_retried_after_the_seconds_retry_after_gives(server):
    server.faults = [{"status": 429, "headers": {"Retry-After": "2"}}, {"status": 503}]
    ep, waits = _endpoint(server)
    assert ep.post({"input": ["a"]})["data"]
    assert waits[0] == 2.0 and 0 < waits[1] <= Retry().backoff * 2 and len(server.requests) == 3


def test_a_retry_after_longer_than_a_statement_waits_fails_at_once(server):
    server.faults = [{"status": 429, "headers": {"Retry-After": "3600"}}]
    ep, waits = _endpoint(server)
    with pytest.raises(RemoteError) as info:
        ep.post({"input": ["a"]})
    assert info.value.status == 429 and info.value.retry_after == 3600 and waits == []
    assert "Retry-After 3600 s" in info.value.msg and len(server.requests) == 1


def test_5xx_is_retried_then_reported_with_the_attempts(server):
    server.faults = [{"status": 500, "message": "overloaded"}] * 3
    ep, waits = _endpoint(server, retry=Retry(attempts=3))
    with pytest.raises(RemoteError) as info:
        ep.post({"input": ["a"]})
    err = info.value
    assert (err.kind, err.status, err.attempts, len(waits)) == ("status", 500, 3, 2)
    assert "HTTP 500: overloaded (after 3 attempts)" in str(err) and err.errno == 1105


def test_4xx_other_than_408_and_429_is_not_retried(server):
    server.faults = [{"status": 400, "message": "bad input"}]
    ep, waits = _endpoint(server)
    with pytest.raises(RemoteError, match="HTTP 400: bad input$"):
        ep.post({"input": ["a"]})
    assert waits == [] and len(server.requests) == 1


def test_a_timeout_is_a_timeout_error(server):
    server.faults = [{"delay": 1.0}]
    ep, _ = _endpoint(server, timeout=0.2, retry=Retry(attempts=1))
    with pytest.raises(RemoteError, match="no answer within api_timeout=0.2 seconds") as info:
        ep.post({"input": ["a"]})
    assert info.value.kind == "timeout"


def test_an_answer_that_is_not_json_is_malformed(server):
    server.faults = [{"raw": b"<html>gateway</html>"}]
    ep, _ = _endpoint(server)
    with pytest.raises(RemoteError, match="the answer is not JSON") as info:
        ep.post({"input": ["a"]})
    assert info.value.kind == "malformed" and info.value.status == 200


def test_a_refused_connection_is_a_connect_error():
    ep = JsonEndpoint("http://127.0.0.1:9/v1/embeddings", retry=Retry(attempts=2), sleep=lambda s: None)
    with pytest.raises(RemoteError) as info:
        ep.post({"input": ["a"]})
    assert info.value.kind == "connect" and info.value.attempts == 2


def test_the_key_never_appears_in_an_error_even_when_the_server_echoes_it(server):
    server.faults = [{"status": 401, "message": "Incorrect API key provided: sk-live-123456"}]
    ep, _ = _endpoint(server)
    with pytest.raises(RemoteError) as info:
        ep.post({"input": ["a"]}, headers={"Authorization": "Bearer sk-live-123456"})
    assert "sk-live-123456" not in str(info.value) and "<redacted>" in str(info.value)


def test_retry_after_as_an_http_date():
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:10 GMT", now=1445412480.0) == 10.0
    assert retry_after_seconds("soon") is None and retry_after_seconds("1.5") == 1.5


@pytest.mark.parametrize("sql, shown", [
    ("CREATE TABLE t (v float_vector api_key='sk-1')", "CREATE TABLE t (v float_vector api_key='<redacted>')"),
    ("x API_KEY = \"sk-2\" y", "x API_KEY = '<redacted>' y"),
    ("x api_key='it''s \\' secret', api_url='u'", "x api_key='<redacted>', api_url='u'"),
    ("x api_key='env:OPENAI_API_KEY'", "x api_key='env:OPENAI_API_KEY'"),
    ("x api_key='unterminated sk-3", "x api_key='<redacted>'"),
    ("SELECT 'no key here'", "SELECT 'no key here'"),
])
def test_redact_statement(sql, shown):
    assert secrets.redact_statement(sql) == shown


def test_a_redacted_key_given_back_is_refused():
    with pytest.raises(errors.UserError, match="SHOW CREATE TABLE hides the key"):
        secrets.check_not_redacted("<redacted>")
    secrets.check_not_redacted("env:K")


@pytest.mark.parametrize("url, prefix, allowed", [
    ("http://127.0.0.1:8080/v1/embeddings", "http://127.0.0.1:8080/v1", True),
    ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1/", True),
    ("http://127.0.0.1:8080/v10/embeddings", "http://127.0.0.1:8080/v1", False),
    ("http://127.0.0.1:80801/v1", "http://127.0.0.1:8080", False),
    ("http://127.0.0.1:8080@evil.example/v1", "http://127.0.0.1:8080", False),
    ("https://api.openai.com/v1/embeddings", "https://api.openai.com", True),
    ("https://api.openai.com:443/v1/embeddings", "https://API.openai.com/", True),
    ("http://api.openai.com/v1/embeddings", "https://api.openai.com", False),
    ("file:///etc/passwd", "file:///", False),
])
def test_url_prefixes_match_by_parts(url, prefix, allowed):
    assert access.url_allowed(url, prefix) is allowed


def test_a_server_allows_only_what_its_operator_lists(monkeypatch):
    monkeypatch.setenv("K_OK", "sk-ok")
    monkeypatch.setenv("K_NO", "sk-no")
    server = access.RemoteAccess.for_server(["http://127.0.0.1:1/v1"], ["K_OK"])
    server.check_url("http://127.0.0.1:1/v1/embeddings")
    with pytest.raises(access.RemoteRefused) as info:
        server.check_url("http://127.0.0.1:2/v1/embeddings")
    assert info.value.errno == 1290 and "--allow-remote" in info.value.msg
    assert server.api_key("env:K_OK") == "sk-ok" and server.api_key("literal") == "literal"
    with pytest.raises(access.RemoteRefused, match="--allow-env"):
        server.api_key("env:K_NO")
    assert access.UNRESTRICTED.api_key("env:K_NO") == "sk-no"
    with pytest.raises(errors.OperationalError, match="environment variable MISSING_K is not set"):
        access.UNRESTRICTED.api_key("env:MISSING_K")

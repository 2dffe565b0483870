"""The stand-in follows OpenAI's published chat-completions API: the official ``openai`` client reads its
answers, plain and streamed, and its errors, as it reads OpenAI's."""
from __future__ import annotations

import openai
import pytest

from tests.chat.standin import ChatStandIn


def test_the_official_client_reads_a_completion():
    with ChatStandIn(key="sk-test") as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        reply = client.chat.completions.create(model="gpt-4o-mini", messages=[
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "Sources:\n\n[ref:7] Backups\nSnapshots run nightly at two.\n\nQuestion: when?"}])
        assert reply.choices[0].message.content == "[ref:7] says: Snapshots run nightly at two.."
        assert reply.choices[0].finish_reason == "stop"
        assert server.requests[0]["headers"]["authorization"] == "Bearer sk-test"


def test_the_official_client_reads_a_stream():
    with ChatStandIn() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="none", max_retries=0)
        stream = client.chat.completions.create(model="m", stream=True, messages=[
            {"role": "user", "content": "[ref:3] T\nalpha beta gamma"}])
        text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
        assert text == "[ref:3] says: alpha beta gamma."


def test_the_official_client_sees_scripted_errors():
    with ChatStandIn(key="right") as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="wrong", max_retries=0)
        with pytest.raises(openai.AuthenticationError):
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        ok = openai.OpenAI(base_url=server.base_url, api_key="right", max_retries=0)
        server.fail(429, headers={"Retry-After": "0"})
        with pytest.raises(openai.RateLimitError):
            ok.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])

"""Fixtures of the remote-model tests: the local model behind a loopback stand-in of the hosted APIs."""
from __future__ import annotations

import pytest

import standin  # tests/embed/remote/standin.py
from tesseradb import embed

from standin import KEY


@pytest.fixture(scope="session")
def local_model():
    return embed.get_model("all-MiniLM-L6-v2")


@pytest.fixture
def server(local_model):
    """A stand-in that wants ``KEY`` and serves the local model's vectors."""
    with standin.StandIn(lambda texts: local_model.embed(texts), api_key=KEY) as s:
        yield s


@pytest.fixture
def open_server(local_model):
    """A stand-in that takes any key (Manticore's documented DDL gives API_KEY='...')."""
    with standin.StandIn(lambda texts: local_model.embed(texts)) as s:
        yield s

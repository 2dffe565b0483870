"""Servers for the HTTP JSON API tests: ``tesseradb.serve(..., http_port=0, background=True)`` in this
process (the OS picks both ports), over a database file of the test's own."""
from __future__ import annotations

import pytest

import tesseradb
from tests.http.support import Served


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("http") / "docs.db")
    handle = tesseradb.serve(path, port=0, http_port=0, background=True)
    yield Served(handle, path)
    handle.stop()


@pytest.fixture
def fresh(tmp_path):
    """A server of its own (tests that change the database in ways others must not see)."""
    path = str(tmp_path / "own.db")
    handle = tesseradb.serve(path, port=0, http_port=0, background=True)
    yield Served(handle, path)
    handle.stop()

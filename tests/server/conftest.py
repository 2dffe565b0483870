"""Servers for the wire-protocol tests (tests/server/support.py has the client helpers).

``server`` runs ``tesseradb.serve(..., background=True)`` in this process on port 0 (the OS picks a
free one); ``start_process`` runs ``tessera serve`` as its own process (signals, crashes).
"""
from __future__ import annotations

import signal

import pytest

import tesseradb
from tests.server.support import Process


@pytest.fixture
def db_file(tmp_path):
    return str(tmp_path / "docs.db")


@pytest.fixture
def server(db_file):
    srv = tesseradb.serve(db_file, port=0, background=True)
    yield srv
    srv.stop()


@pytest.fixture
def start_process():
    started: list[Process] = []

    def start(db: str, *args: str) -> Process:
        p = Process(db, *args)
        started.append(p)
        return p
    yield start
    for p in started:
        p.stop(signal.SIGKILL)

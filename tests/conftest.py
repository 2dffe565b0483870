"""Shared fixtures: a fresh connection per test."""
from __future__ import annotations

import pytest

import tesseradb
@pytest.fixture
def con():
    connection = tesseradb.connect(":memory:")
    yield connection
    connection.close()


@pytest.fixture
def cur(con):
    return con.cursor()


@pytest.fixture
def db_path(tmp_path):
    return str(tmp_path / "test.db")

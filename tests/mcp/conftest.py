"""Fixtures of the tessera mcp tests: one database (real model) and one stdio server per module."""
from __future__ import annotations

import pytest

from tests.mcp.support import make_database, stdio


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return make_database(str(tmp_path_factory.mktemp("mcp") / "docs.db"))


@pytest.fixture(scope="module")
def live(db):
    client = stdio(db)
    yield client
    client.close()

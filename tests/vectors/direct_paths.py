"""What the direct-form tests share (test_knn_direct.py, test_hybrid_direct.py): ``taken`` counts the
statements the direct form answered (``cached``: the executor's cached-read path), ``both`` runs one statement by the direct form and by the
general path (the plan's direct form taken away)."""
from __future__ import annotations

import pytest

from tesseradb.sql import executor
from tesseradb.sql.statements import query


def _counting(monkeypatch, owner, name: str) -> list[int]:
    """``owner.name`` replaced by a spy that counts the calls that returned a result."""
    count = [0]
    inner = getattr(owner, name)

    def spy(*args):
        result = inner(*args)
        count[0] += result is not None
        return result
    monkeypatch.setattr(owner, name, spy)
    return count


@pytest.fixture
def taken(monkeypatch):
    """How many statements the direct form answered (``taken[0]``)."""
    return _counting(monkeypatch, query, "run_direct")


@pytest.fixture
def cached(monkeypatch):
    """How many statements the executor's cached-read path answered (``cached[0]``), direct form or not."""
    return _counting(monkeypatch, executor, "_direct")


def plan_of(con, sql):
    cache = con.db.statements
    return cache.plan_for(cache.parse(sql).expr)


def both(con, sql, params, taken):
    """(direct result, general result), each as (rows, description)."""
    con.execute(sql, params).fetchall()              # planned; the general path's columns learnt
    before = taken[0]
    cur = con.execute(sql, params)
    direct = (cur.fetchall(), cur.description)
    assert taken[0] == before + 1, sql
    plan = plan_of(con, sql)
    keep, plan.direct = plan.direct, None
    try:
        cur = con.execute(sql, params)
        general = (cur.fetchall(), cur.description)
    finally:
        plan.direct = keep
    assert taken[0] == before + 1
    return direct, general

"""Fixtures shared by the vector index tests."""
from __future__ import annotations

import pytest

from tesseradb.storage import vector_plan


@pytest.fixture(params=["exact", "graph"])
def path(request, monkeypatch):
    """Run a test on one search path, forced by moving the exact/graph threshold."""
    if request.param == "graph":
        monkeypatch.setattr(vector_plan, "EXACT_MIN_CHUNKS", 0)
        monkeypatch.setattr(vector_plan, "EXACT_COST_RATIO", 0.0)
    else:
        monkeypatch.setattr(vector_plan, "EXACT_MIN_CHUNKS", 10**12)
    return request.param

"""Fixtures shared by the vector index tests."""
from __future__ import annotations

import faiss
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


@pytest.fixture
def one_thread():
    """FAISS single-threaded: graphs built deterministically (so graph-path results are too), and no
    OpenMP team waiting on a busy machine."""
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    yield
    faiss.omp_set_num_threads(before)

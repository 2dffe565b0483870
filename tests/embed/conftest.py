"""Fixtures for the embedding tests: the real default model, built once per session."""
from __future__ import annotations

import pytest

from tesseradb import embed
from tesseradb.embed import default

MODEL = "all-MiniLM-L6-v2"


@pytest.fixture(scope="session")
def model() -> embed.Model:
    """The default model from the normal cache (built there on the very first run)."""
    m = embed.get_model(MODEL)
    m.session()  # load now, so that tests which point TESSERA_CACHE_DIR elsewhere do not affect it
    return m


@pytest.fixture(scope="session")
def package_files():
    """The verified directory of the installed model package."""
    return default.verify_model_files()


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A private, empty TESSERA_CACHE_DIR for tests that observe caching."""
    path = tmp_path / "cache"
    monkeypatch.setenv("TESSERA_CACHE_DIR", str(path))
    return path

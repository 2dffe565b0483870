"""langchain-tests' async standard tests carry no asyncio marker (the suite expects pytest-asyncio's
auto mode). The rest of our suite keeps pytest-asyncio's default strict mode: here, and only for the
coroutine tests collected from this folder, the marker is added as they are collected (innermost, so
that pytest-asyncio's own collection hook sees it). Suite tests must not be overridden (the suite's
test_no_overrides_DO_NOT_OVERRIDE checks), so they cannot be re-marked in the test classes."""
from __future__ import annotations

import inspect
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_pycollect_makeitem(collector, name, obj):
    outcome = yield
    if not inspect.iscoroutinefunction(obj) or HERE not in Path(str(collector.path)).resolve().parents:
        return
    items = outcome.get_result()
    for item in items if isinstance(items, list) else [items]:
        if isinstance(item, pytest.Function) and item.get_closest_marker("asyncio") is None:
            item.add_marker(pytest.mark.asyncio)

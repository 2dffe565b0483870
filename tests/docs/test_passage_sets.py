"""The question sets of tests/benchmarks/bench_passages.py (issue 32) keep their shape: every row has
its question, page and quote; a page is in one set only (a tuning quote on a held-out page would let
the tuning see it); held-out 3, kept for one final read, has no row of any kind in the tuning file.
That each quote is verbatim in its page needs the manual, outside the repository:
``TESSERA_BENCH_CORPUS=... python tests/benchmarks/bench_passages.py --check-sets`` checks it."""
from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "tests" / "benchmarks"


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(BENCH))
    try:
        yield importlib.import_module("bench_passages")
    finally:
        sys.path.remove(str(BENCH))


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_every_row_has_a_question_a_page_and_a_short_quote(bench):
    for path in (bench.QUOTES, *bench.HELD_OUT_SETS.values()):
        rows = _rows(path)
        assert rows, path.name
        for row in rows:
            assert {"question", "page", "quote"} <= set(row), (path.name, row)
            assert row["question"].strip() and row["quote"].strip(), (path.name, row)
            assert row["page"].endswith(".md") and not row["page"].startswith("/") and ".." not in row["page"]
            assert len(row["quote"]) <= 240, (path.name, row)
        if path != bench.QUOTES:        # written by hand: the three fields only, each question once per page
            assert all(set(row) == {"question", "page", "quote"} for row in rows), path.name
            assert len({(r["question"], r["page"]) for r in rows}) == len(rows), path.name


def test_the_sets_load_and_no_page_is_in_two(bench):
    sets = bench.sets()
    assert list(sets) == ["tuning", "held-out", "held-out 2", "held-out 3"]
    assert all(sets.values())
    seen: dict[str, str] = {}
    for label, quotes in sets.items():
        for page in {q["page"] for q in quotes}:
            assert page not in seen, f"{page} in {seen.get(page)} and {label}"
            seen[page] = label


def test_held_out_3_is_measured_only_when_asked(bench):
    assert "held-out 3" not in bench.sets(final=False)
    assert set(bench.sets(final=False)) | {"held-out 3"} == set(bench.sets(final=True))


def test_held_out_3_pages_have_no_row_in_the_tuning_file(bench):
    held3 = {r["page"] for r in _rows(bench.HELD_OUT_3)}
    assert len(held3) >= 20
    assert sorted(held3 & {r["page"] for r in _rows(bench.QUOTES)}) == []


def test_a_page_in_two_sets_stops_the_run(bench, tmp_path, monkeypatch):
    tuning_row = next(r for r in _rows(bench.QUOTES) if r.get("review") != "unreviewed")
    clash = tmp_path / "clash.jsonl"
    clash.write_text(json.dumps({"question": "q?", "page": tuning_row["page"], "quote": "x"}) + "\n", encoding="utf-8")
    monkeypatch.setitem(bench.HELD_OUT_SETS, "held-out 3", clash)
    with pytest.raises(SystemExit, match="two question sets"):
        bench.sets()

"""The search defaults of the quantized indexes (storage/vector_plan.py: oversampling per quantization and
the search breadth on RaBitQ codes, chosen from the 1M-vector measurements of issue 37) are the ones
docs/knn.md and docs/vector_index.md state."""
from __future__ import annotations

from pathlib import Path

from tesseradb.storage import vector_plan

ROOT = Path(__file__).resolve().parents[2]
O = vector_plan.OVERSAMPLING


def _f(x: float) -> str:
    return f"{x:.1f}"


def test_rabitq_defaults_come_in_the_groups_the_docs_name():
    assert O["rabitq2"] == O["rabitq3"] == O["rabitq4"]
    assert len({O[f"rabitq{n}"] for n in range(5, 9)}) == 1
    assert O["rabitq1"] == O["1bit"]            # one bit is one bit, whichever name


def test_knn_page_states_the_default_oversampling():
    row = next(line for line in (ROOT / "docs" / "knn.md").read_text(encoding="utf-8").splitlines()
               if line.startswith("| `oversampling` |"))
    assert (f"default {_f(O['8bit'])} with `quantization='8bit'`, {_f(O['1bit'])} with `'1bit'`, "
            f"{_f(O['1bitsimple'])} with `'1bitsimple'`; with `'rabitq'` {_f(O['rabitq1'])} at `rabitq_bits='1'`, "
            f"{_f(O['rabitq2'])} at 2 to 4, {_f(O['rabitq5'])} at 5 and more; 1.0 without") in row


def test_vector_index_page_states_the_default_oversampling():
    text = " ".join((ROOT / "docs" / "vector_index.md").read_text(encoding="utf-8").split())
    assert (f"default oversampling {_f(O['8bit'])} on an 8bit index, {_f(O['1bit'])} on a 1bit one "
            f"({_f(O['1bitsimple'])} on 1bitsimple), on `rabitq` {_f(O['rabitq1'])} at 1 bit, {_f(O['rabitq2'])} "
            f"at 2 to 4 bits and {_f(O['rabitq5'])} from 5 bits on") in text


def test_the_documented_search_breadth_on_rabitq_codes_is_the_engines():
    factors = vector_plan.EF_PER_CHUNK_CODES
    assert set(factors) == {f"rabitq{n}" for n in range(1, 9)} | {"1bit"} and vector_plan.EF_PER_CHUNK == 2
    assert factors["rabitq2"] == factors["rabitq3"] == 8 and {factors[f"rabitq{n}"] for n in range(4, 9)} == {16}
    assert factors["1bit"] == factors["rabitq1"] == 4 and "1bitsimple" not in factors
    index_page = " ".join((ROOT / "docs" / "vector_index.md").read_text(encoding="utf-8").split())
    assert "on `rabitq` codes of 2 or 3 bits 8 × fetch and of 4 bits or more 16 × fetch instead of 2 × fetch" in index_page
    assert "on 1-bit codes (`1bit`, `rabitq` at 1 bit) 4 × fetch" in index_page
    knn_page = " ".join((ROOT / "docs" / "knn.md").read_text(encoding="utf-8").split())
    assert "eight times on a `rabitq` column of 2 or 3 bits, sixteen times from 4 bits" in knn_page
    assert "four times on a 1-bit one (`1bit`, `rabitq_bits='1'`)" in knn_page

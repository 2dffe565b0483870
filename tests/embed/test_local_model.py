"""A model directory in the Hugging Face "Xenova" layout resolves and embeds like the built-in one."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from tesseradb import embed
from tesseradb.embed import default

TEXTS = ["hello world", "", "café 机器学习 🚀",
         "a somewhat longer sentence about vector search in SQL " * 8]


@pytest.fixture(scope="module")
def xenova_dir(tmp_path_factory, package_files, model):
    root = tmp_path_factory.mktemp("xenova")
    (root / "onnx").mkdir()
    shutil.copyfile(default.load_graph().path, root / "onnx" / "model.onnx")
    shutil.copyfile(package_files / default.TOKENIZER, root / "tokenizer.json")
    return root


def test_local_directory_resolves(xenova_dir):
    info = embed.resolve(str(xenova_dir))
    assert info.name == str(xenova_dir.resolve())
    assert info.dims == 384  # no config.json: measured from the graph
    assert info.window == 510
    assert len(info.fingerprint) == 64 and info.fingerprint != default.FINGERPRINT
    assert embed.resolve(str(xenova_dir)) == info


def test_local_directory_gives_the_same_vectors(xenova_dir, model):
    local = embed.get_model(str(xenova_dir))
    assert local is embed.get_model(str(xenova_dir))
    assert local is not model
    np.testing.assert_allclose(local.embed(TEXTS), model.embed(TEXTS), atol=1e-6)
    assert local.token_offsets("café 机器学习") == model.token_offsets("café 机器学习")


def test_flat_layout_with_config_sets_the_window(tmp_path, xenova_dir, model):
    shutil.copyfile(xenova_dir / "onnx" / "model.onnx", tmp_path / "model.onnx")
    shutil.copyfile(xenova_dir / "tokenizer.json", tmp_path / "tokenizer.json")
    (tmp_path / "config.json").write_text(json.dumps({"max_position_embeddings": 128, "hidden_size": 384}))
    local = embed.get_model(str(tmp_path))
    assert (local.window, local.dims) == (126, 384)
    text = " ".join(["vector"] * 400)
    head = text[: model.token_offsets(text)[125][1]]
    np.testing.assert_allclose(local.embed([text]), model.embed([head]), atol=1e-5)


def test_unreadable_graph_is_a_model_error(tmp_path, package_files):
    (tmp_path / "model.onnx").write_bytes(b"this is not an onnx graph")
    shutil.copyfile(package_files / default.TOKENIZER, tmp_path / "tokenizer.json")
    with pytest.raises(embed.ModelError, match="cannot load the graph"):
        embed.resolve(str(tmp_path))

"""The built ONNX graph is cached once, verified on load, rebuilt when damaged, safe under concurrency."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import numpy as np

from tesseradb.embed import cache, default
from tesseradb.embed.integrity import sha256_bytes

REPO = Path(__file__).resolve().parents[2]


def sidecar(path):
    return json.loads(path.with_suffix(".json").read_text())


def test_cache_dir_comes_from_the_environment(cache_dir, monkeypatch):
    assert cache.cache_root() == cache_dir
    assert default.graph_path().is_relative_to(cache_dir)
    monkeypatch.delenv("TESSERA_CACHE_DIR")
    assert cache.cache_root() == Path.home() / ".cache" / "tesseradb"


def test_graph_is_built_once_then_reused(cache_dir):
    first = default.load_graph()
    assert first.built
    assert first.path == default.graph_path() and first.path.is_file()
    meta = sidecar(first.path)
    assert meta["onnx_sha256"] == sha256_bytes(first.path.read_bytes())
    assert meta["weights_fingerprint"] == default.EXPECTED_SHA256[default.WEIGHTS]
    assert meta["variant"] == "fused"
    stat = first.path.stat()

    second = default.load_graph()
    assert not second.built
    assert second.data == first.data
    assert first.path.stat().st_mtime_ns == stat.st_mtime_ns and first.path.stat().st_ino == stat.st_ino
    assert not list(cache_dir.rglob("*.tmp"))


def test_a_fresh_model_uses_the_cache(cache_dir, model):
    default.load_graph()
    before = default.graph_path().stat().st_mtime_ns
    fresh = default.open_model()  # not through the registry: a second load in this process
    np.testing.assert_allclose(fresh.embed(["hello world"]), model.embed(["hello world"]), atol=1e-6)
    assert default.graph_path().stat().st_mtime_ns == before


def test_corrupted_graph_is_detected_and_rebuilt(cache_dir):
    good = default.load_graph()
    data = bytearray(good.data)
    data[len(data) // 3] ^= 0x55  # flip bits inside the weights: still loadable, silently wrong
    good.path.write_bytes(bytes(data))
    rebuilt = default.load_graph()
    assert rebuilt.built and rebuilt.data == good.data
    assert not default.load_graph().built


def counting_builder(payload, calls):
    return lambda: (calls.append(payload) or payload, {"note": "x"})


def test_torn_graph_and_broken_sidecar_are_rebuilt(tmp_path):
    path, calls = tmp_path / "g.onnx", []
    payload = bytes(range(256)) * 64
    build = counting_builder(payload, calls)
    assert cache.load_or_build(path, "fp", build).built
    path.write_bytes(payload[:1000])  # a torn write
    assert cache.load_or_build(path, "fp", build).built
    path.with_suffix(".json").write_text("{not json")
    assert cache.load_or_build(path, "fp", build).built
    path.with_suffix(".json").write_text("[1, 2]")
    assert cache.load_or_build(path, "fp", build).built
    path.with_suffix(".json").unlink()
    again = cache.load_or_build(path, "fp", build)
    assert again.built and again.data == payload
    assert not cache.load_or_build(path, "fp", build).built
    assert len(calls) == 5 and path.read_bytes() == payload


def test_stale_weights_fingerprint_is_rebuilt(tmp_path):
    path, calls = tmp_path / "g.onnx", []
    assert cache.load_or_build(path, "fp-1", counting_builder(b"one", calls)).data == b"one"
    assert cache.load_or_build(path, "fp-1", counting_builder(b"unused", calls)).data == b"one"
    assert cache.load_or_build(path, "fp-2", counting_builder(b"two", calls)).data == b"two"
    assert calls == [b"one", b"two"]
    assert sidecar(path)["weights_fingerprint"] == "fp-2"


def test_unwritable_cache_still_gives_a_graph(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    graph = cache.load_or_build(blocker / "sub" / "g.onnx", "fp", lambda: (b"graph", {}))
    assert graph.built and graph.data == b"graph"


BUILD_SCRIPT = """
import sys
from tesseradb.embed import default
graph = default.load_graph()
print(int(graph.built), graph.meta["onnx_sha256"])
"""


@pytest.mark.slow                   # a process of its own
def test_concurrent_processes_build_once_without_corruption(cache_dir):
    env = {**os.environ, "TESSERA_CACHE_DIR": str(cache_dir), "PYTHONPATH": str(REPO)}
    procs = [subprocess.Popen([sys.executable, "-c", BUILD_SCRIPT], env=env, cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        results.append(out.split())
    assert sorted(built for built, _ in results) == ["0", "0", "1"]  # one built, the others waited
    digests = {digest for _, digest in results}
    path = default.graph_path()
    assert digests == {sha256_bytes(path.read_bytes())} == {sidecar(path)["onnx_sha256"]}
    assert not list(cache_dir.rglob("*.tmp"))

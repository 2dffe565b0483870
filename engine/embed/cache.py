"""The on-disk cache of built ONNX graphs.

Each graph is one ``NAME.onnx`` plus a ``NAME.json`` sidecar that records the SHA-256 of the graph
bytes and the fingerprint of the weights it was built from. Both are written atomically (temp file
in the same directory, fsync, ``os.replace``), under an exclusive lock on ``NAME.lock`` so that
processes building at once queue up instead of racing. A reader never trusts the graph file alone:
it hashes the bytes it read and compares them with the sidecar, so a torn, truncated or corrupted
file (or a stale sidecar) is simply rebuilt.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tesseradb.embed.integrity import sha256_bytes, sha256_file

CACHE_ENV = "TESSERA_CACHE_DIR"
log = logging.getLogger(__name__)


def cache_root() -> Path:
    """``$TESSERA_CACHE_DIR`` if set, else ``~/.cache/tesseradb``."""
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "tesseradb"


@dataclass(frozen=True)
class CachedGraph:
    """Verified graph bytes, where they live, and whether this call had to build them."""

    data: bytes
    path: Path
    built: bool
    meta: dict


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive inter-process lock held for the duration of the block."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if os.name == "nt":  # pragma: no cover - exercised on Windows only
            import msvcrt

            while True:
                try:
                    msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
                    break
                except OSError:
                    continue
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see either the old file or the whole new one."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp creates 0600
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _sidecar(path: Path) -> Path:
    return path.with_suffix(".json")


def read_valid(path: Path, weights_fingerprint: str) -> CachedGraph | None:
    """The cached graph if its sidecar matches the weights and its bytes match the sidecar."""
    try:
        meta = json.loads(_sidecar(path).read_text(encoding="utf-8"))
        if not isinstance(meta, dict) or meta.get("weights_fingerprint") != weights_fingerprint:
            return None
        data = path.read_bytes()
    except (OSError, ValueError):
        return None
    if sha256_bytes(data) != meta.get("onnx_sha256"):
        return None
    return CachedGraph(data, path, False, meta)


def is_cached(path: Path, weights_fingerprint: str) -> bool:
    """Whether ``path`` holds a valid graph for these weights (the check ``read_valid`` makes,
    streamed and memoized per file version instead of reading the graph into memory)."""
    try:
        meta = json.loads(_sidecar(path).read_text(encoding="utf-8"))
        if not isinstance(meta, dict) or meta.get("weights_fingerprint") != weights_fingerprint:
            return False
        return sha256_file(path) == meta.get("onnx_sha256")
    except (OSError, ValueError):
        return False


def _remove_stale_temps(directory: Path, stem: str) -> None:
    """Delete temp files a crashed builder left behind (called with the lock held)."""
    for tmp in directory.glob(f".{stem}.*.tmp"):
        with contextlib.suppress(OSError):
            tmp.unlink()


Builder = Callable[[], tuple[bytes, dict]]


def load_or_build(path: Path, weights_fingerprint: str, build: Builder) -> CachedGraph:
    """Return the verified graph at ``path``, building and caching it first if needed.

    ``build()`` returns the graph bytes and extra metadata for the sidecar. It runs at most once
    across concurrent processes: the others wait on the lock and then read what it wrote. If the
    cache directory is not writable the graph is built in memory for this process only.
    """
    cached = read_valid(path, weights_fingerprint)
    if cached is not None:
        return cached
    built: list[CachedGraph] = []

    def build_once() -> CachedGraph:
        if not built:
            started = time.perf_counter()
            data, extra = build()
            meta = {"onnx_sha256": sha256_bytes(data), "weights_fingerprint": weights_fingerprint,
                    "build_seconds": round(time.perf_counter() - started, 3), **extra}
            built.append(CachedGraph(data, path, True, meta))
        return built[0]

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with file_lock(path.with_suffix(".lock")):
            cached = read_valid(path, weights_fingerprint)
            if cached is not None:
                return cached
            _remove_stale_temps(path.parent, path.stem)
            graph = build_once()
            write_atomic(path, graph.data)
            write_atomic(_sidecar(path), json.dumps(graph.meta, indent=2, sort_keys=True).encode())
            return graph
    except OSError as exc:
        log.warning("cannot write the model cache at %s (%s); set %s to a writable directory. "
                    "Building the graph in memory for this process.", path.parent, exc, CACHE_ENV)
        return build_once()

"""SHA-256 of model files, and verification of a model directory against pinned hashes."""
from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Mapping
from pathlib import Path

from tesseradb.embed.errors import ModelError

_CHUNK = 1 << 20
_memo: dict[tuple[str, int, int, int], str] = {}
_memo_lock = threading.Lock()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 of a file. Memoized per process on (path, inode, size, mtime_ns)."""
    real = os.path.realpath(path)
    st = os.stat(real)
    key = (real, st.st_ino, st.st_size, st.st_mtime_ns)
    with _memo_lock:
        if key in _memo:
            return _memo[key]
    digest = hashlib.sha256()
    with open(real, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    value = digest.hexdigest()
    with _memo_lock:
        _memo[key] = value
    return value


def verify_files(directory: str | os.PathLike[str], expected: Mapping[str, str], *, label: str) -> None:
    """Raise ModelError unless every ``expected`` file under ``directory`` has the pinned SHA-256."""
    root = Path(directory)
    for rel, want in expected.items():
        path = root / rel
        if not path.is_file():
            raise ModelError(f"model '{label}': file {rel} is missing from {root}")
        got = sha256_file(path)
        if got != want:
            raise ModelError(
                f"model '{label}': {rel} in {root} failed verification "
                f"(sha256 {got}, expected {want}); reinstall the package that provides it"
            )

"""The format of a saved vector index: one byte stream, written atomically, verified on load.

The stream lives inside the database file (``index_cache``: :func:`save_stream` / :func:`load_stream`);
a plain file (:func:`save` / :func:`load`) is what release 0.2 kept beside the database in
``<db>.tessera/``, read once to migrate it.

Layout: a fixed prefix (magic, format version, header length, payload length, sha256 of everything
after the prefix), then a JSON header, then the caller's arrays (raw bytes, in the caller's order),
then the FAISS graph as ``faiss.write_index`` writes it. A save goes to a temp file in the same
folder, is fsynced, renamed over the old file, and the folder is fsynced: a crash leaves the old
file or the new one, never a torn one. A load checks magic, version, length and checksum before it
trusts a byte; anything wrong is :class:`IndexCorrupt` (the index is a cache, the caller rebuilds).

Opening never blocks and never follows a link: the name is examined with ``lstat`` first, and a
directory, FIFO, socket, device or symbolic link in the file's place is :class:`IndexCorrupt` (a
FIFO opened for reading would wait for a writer forever); the open itself is non-blocking and
``O_NOFOLLOW``, and the opened file must be a regular one. An unreadable file is IndexCorrupt too.
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
import struct
import tempfile
from collections.abc import Callable
from typing import Any, BinaryIO

import faiss

from .errors import IndexCorrupt

FORMAT_VERSION = 1
MAGIC = b"TSRVIDX\0"
PREFIX = struct.Struct("<8sIIQ32s")  # magic, version, header length, payload length, sha256
BLOCK = 1 << 20

#: bytes, or a memoryview of bytes (format "B": its len() is its length in bytes)
Buffer = bytes | memoryview

#: ``array_sizes(header) -> [bytes of array 0, bytes of array 1, ...]`` for a header being loaded.
ArraySizes = Callable[[dict[str, Any]], list[int]]


def save(path: str, header: dict[str, Any], arrays: list[Buffer], graph: Any) -> None:
    """Write ``header``, ``arrays`` and the FAISS ``graph`` to ``path`` atomically."""
    data = json.dumps(header).encode()
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            _write(f, data, arrays, graph)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    _fsync_dir(folder)


def save_stream(f: Any, header: dict[str, Any], arrays: list[Buffer], graph: Any) -> None:
    """Write ``header``, ``arrays`` and ``graph`` to the stream ``f`` (``index_cache.CacheWriter``)."""
    _write(f, json.dumps(header).encode(), arrays, graph)


def _write(f: BinaryIO, header: bytes, arrays: list[Buffer], graph: Any) -> None:
    f.write(b"\0" * PREFIX.size)
    digest = hashlib.sha256()
    size = 0

    def emit(data: Buffer) -> int:
        nonlocal size
        digest.update(data)
        f.write(data)
        size += len(data)
        return len(data)

    for part in [header, *arrays]:
        emit(part)
    writer = faiss.PyCallbackIOWriter(emit)
    faiss.write_index(graph, writer)
    del writer  # flushes
    f.seek(0)
    f.write(PREFIX.pack(MAGIC, FORMAT_VERSION, len(header), size - len(header), digest.digest()))
    f.flush()
    if hasattr(f, "fileno"):
        os.fsync(f.fileno())


def load(path: str, array_sizes: ArraySizes) -> tuple[dict[str, Any], list[bytearray], Any] | None:
    """``(header, arrays, graph)``, or None when no file exists; IndexCorrupt when it cannot be trusted.

    ``array_sizes(header)`` gives the byte length of each array stored after the header.
    """
    f = open_regular(path)
    if f is None:
        return None
    with f:
        return load_stream(f, os.fstat(f.fileno()).st_size, path, array_sizes)


def load_stream(f: Any, size: int, path: str, array_sizes: ArraySizes) -> tuple[dict[str, Any], list[bytearray], Any]:
    """``(header, arrays, graph)`` from the stream ``f`` of ``size`` bytes; IndexCorrupt when it
    cannot be trusted (``path`` names the index in the error). Each array is read straight into a
    writable buffer of its own, which the caller may keep as its numpy array's memory (no copy)."""
    header, payload_len = _read_verified(f, size, path)
    try:
        sizes = array_sizes(header)
    except (KeyError, TypeError, ValueError) as e:
        raise IndexCorrupt(path, f"bad header: {e}") from e
    if any(s < 0 for s in sizes) or sum(sizes) > payload_len:
        raise IndexCorrupt(path, "count does not fit the file")
    arrays = [read_into(f, size, path) for size in sizes]
    reader = faiss.PyCallbackIOReader(f.read)
    try:
        graph = faiss.read_index(reader)
    except RuntimeError as e:
        raise IndexCorrupt(path, f"unreadable graph: {e}") from e
    return header, arrays, graph


KINDS = [(stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
         (stat.S_ISLNK, "a symbolic link (not followed)"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device")]


def kind_of(mode: int) -> str | None:
    """What a non-regular file is ('a FIFO' ...), or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in KINDS if test(mode)), "not a regular file")


def open_regular(path: str) -> BinaryIO | None:
    """The file at ``path`` opened for reading, None when nothing is there; IndexCorrupt when the
    name holds anything but a readable regular file. Never blocks, never follows a symlink."""
    try:
        kind = kind_of(os.lstat(path).st_mode)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise IndexCorrupt(path, f"cannot be examined ({exc.strerror})") from None
    if kind is not None:
        raise IndexCorrupt(path, f"is {kind}, not an index file")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise IndexCorrupt(path, f"cannot be read ({exc.strerror})") from None
    kind = kind_of(os.fstat(fd).st_mode)      # swapped between lstat and open
    if kind is not None:
        os.close(fd)
        raise IndexCorrupt(path, f"is {kind}, not an index file")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def read_into(f: Any, n: int, path: str) -> bytearray:
    """``n`` bytes of ``f`` read into a new bytearray (``readinto``: no intermediate bytes object)."""
    data = bytearray(n)
    view, got = memoryview(data), 0
    while got < n:
        step = f.readinto(view[got:])
        if not step:
            raise IndexCorrupt(path, "file is truncated")
        got += step
    return data


def read_exactly(f: BinaryIO, n: int, path: str) -> bytes:
    data = f.read(n)
    if len(data) != n:
        raise IndexCorrupt(path, "file is truncated")
    return data


def _read_verified(f: BinaryIO, size: int, path: str) -> tuple[dict[str, Any], int]:
    """Check magic, version, length and checksum; return the header and the payload length, and
    leave ``f`` at the start of the arrays."""
    magic, version, header_len, payload_len, digest = PREFIX.unpack(read_exactly(f, PREFIX.size, path))
    if magic != MAGIC:
        raise IndexCorrupt(path, "not a tesseradb vector index")
    if version != FORMAT_VERSION:
        raise IndexCorrupt(path, f"format version {version}, expected {FORMAT_VERSION}")
    if size != PREFIX.size + header_len + payload_len:
        raise IndexCorrupt(path, f"file is {size} bytes, expected {PREFIX.size + header_len + payload_len}")
    actual = hashlib.sha256()
    while block := f.read(BLOCK):
        actual.update(block)
    if actual.digest() != digest:
        raise IndexCorrupt(path, "checksum mismatch")
    f.seek(PREFIX.size)
    try:
        header = json.loads(read_exactly(f, header_len, path))
        if not isinstance(header, dict):
            raise ValueError("the header is not an object")
    except ValueError as e:
        raise IndexCorrupt(path, f"bad header: {e}") from e
    return header, payload_len


def _fsync_dir(folder: str) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)

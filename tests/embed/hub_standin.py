"""A loopback stand-in of the Hugging Face Hub's HTTP API, for the download path ``huggingface_hub`` takes.

Two ``http.server`` instances on 127.0.0.1 (port 0), as the Hub answers (``huggingface_hub`` 2.x's
``snapshot_download`` / ``hf_hub_download`` / ``HfApi``; see ``file_download.py``, ``hf_api.py``):

- the Hub (``base``, what ``HF_ENDPOINT`` or ``endpoint=`` names):
  - ``GET /api/models/ORG/NAME[/revision/REV]``: the model's info, ``sha`` the commit REV resolves to
    (a branch, a tag or a full commit hash), ``siblings`` its files;
  - ``GET /api/models/ORG/NAME/tree/REV[/PATH]?recursive=...``: its files and folders; a file has
    ``oid`` (git's blob sha1) and ``size``, an LFS file also ``lfs: {oid: sha256, size, pointerSize}``;
  - ``HEAD|GET /ORG/NAME/resolve/REV/PATH``: a small file is served here with ``ETag`` (its git blob
    sha1) and ``X-Repo-Commit``; an LFS file (``*.onnx``, ``*.safetensors``, ``*.bin``) answers 302 to
    the CDN with ``X-Linked-Etag`` (its sha256), ``X-Linked-Size`` and ``X-Repo-Commit``;
  - errors as the Hub gives them: ``X-Error-Code: RepoNotFound`` (401), ``RevisionNotFound`` (404),
    ``EntryNotFound`` (404, with ``X-Repo-Commit``).
- the CDN (another origin, as the Hub's is): ``GET /blobs/SHA256?X-Amz-Signature=...``.

``add(repo, folder, ref=..., tags=...)`` publishes a folder's files as a commit; ``corrupt`` is a set of
file paths whose bytes the CDN alters (same length: only a hash check can see it); ``requests`` records
``(method, path)`` of every request to either server.
"""
from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

LFS_SUFFIXES = (".onnx", ".safetensors", ".bin")


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Repo:
    refs: dict[str, str] = field(default_factory=dict)                # branch or tag -> commit
    commits: dict[str, dict[str, bytes]] = field(default_factory=dict)  # commit -> path -> bytes


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, hub: HubStandIn, role: str):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.hub, self.role = hub, role

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that closed its socket mid-answer is not an error here."""


class HubStandIn:
    def __init__(self) -> None:
        self.repos: dict[str, Repo] = {}
        self.corrupt: set[str] = set()
        self.requests: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        self.api = _Server(self, "api")
        self.cdn = _Server(self, "cdn")
        self.threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in (self.api, self.cdn)]

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.api.server_address[1]}"

    @property
    def cdn_base(self) -> str:
        return f"http://127.0.0.1:{self.cdn.server_address[1]}"

    def __enter__(self) -> HubStandIn:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for s in (self.api, self.cdn):
            s.shutdown()
            s.server_close()

    def add(self, repo: str, folder: Path, *, ref: str = "main", tags: tuple[str, ...] = ()) -> str:
        """Publish every file under ``folder`` as a new commit that ``ref`` (and ``tags``) point to."""
        files = {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
        digest = hashlib.sha1(repo.encode())
        for path, data in files.items():
            digest.update(path.encode() + b"\0" + hashlib.sha256(data).digest())
        commit = digest.hexdigest()
        entry = self.repos.setdefault(repo, Repo())
        entry.commits[commit] = files
        for name in (ref, *tags):
            entry.refs[name] = commit
        return commit

    def blob(self, sha256: str) -> tuple[str, bytes] | None:
        for repo in self.repos.values():
            for files in repo.commits.values():
                for path, data in files.items():
                    if hashlib.sha256(data).hexdigest() == sha256:
                        return path, data
        return None

    def is_corrupt(self, sha256: str) -> bool:
        return any(hashlib.sha256(files[p]).hexdigest() == sha256
                   for repo in self.repos.values() for files in repo.commits.values() for p in self.corrupt if p in files)


def _is_lfs(path: str) -> bool:
    return path.endswith(LFS_SUFFIXES)


def _tree(files: dict[str, bytes], under: str, recursive: bool) -> list[dict]:
    prefix = under.strip("/") + "/" if under.strip("/") else ""
    entries: dict[str, dict] = {}
    for path, data in sorted(files.items()):
        if not path.startswith(prefix):
            continue
        rest = path[len(prefix):].split("/")
        for depth in range(1, len(rest)):                      # the folders on the way
            folder = prefix + "/".join(rest[:depth])
            if depth == 1 or recursive:
                entries.setdefault(folder, {"type": "directory", "oid": hashlib.sha1(folder.encode()).hexdigest(),
                                            "size": 0, "path": folder})
            if not recursive:
                break
        if len(rest) > 1 and not recursive:
            continue
        item = {"type": "file", "oid": git_blob_sha1(data), "size": len(data), "path": path}
        if _is_lfs(path):
            pointer = _pointer(data)
            item["oid"] = git_blob_sha1(pointer)
            item["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": len(pointer)}
        entries[path] = item
    return list(entries.values())


def _pointer(data: bytes) -> bytes:
    return (f"version https://git-lfs.github.com/spec/v1\noid sha256:{hashlib.sha256(data).hexdigest()}\n"
            f"size {len(data)}\n").encode()


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_HEAD(self) -> None:
        self._route(head=True)

    def do_GET(self) -> None:
        self._route(head=False)

    # -- answers -------------------------------------------------------------------------------
    def _send(self, status: int, body: bytes = b"", headers: dict | None = None, head: bool = False,
              content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _json(self, obj: object, head: bool = False) -> None:
        self._send(200, json.dumps(obj).encode(), head=head)

    def _error(self, status: int, code: str, message: str, head: bool, extra: dict | None = None) -> None:
        self._send(status, json.dumps({"error": message}).encode(),
                   {"X-Error-Code": code, "X-Error-Message": message, **(extra or {})}, head=head)

    def _route(self, head: bool) -> None:
        url = urlsplit(self.path)
        path = unquote(url.path)
        hub = self.server.hub
        with hub.lock:
            hub.requests.append((self.command, self.path))
        if self.server.role == "cdn":
            return self._cdn(path, head)
        parts = path.strip("/").split("/")
        if parts[:2] == ["api", "models"] and len(parts) >= 4:
            return self._api(parts[2] + "/" + parts[3], parts[4:], parse_qs(url.query), head)
        if len(parts) >= 5 and parts[2] == "resolve":
            return self._resolve(parts[0] + "/" + parts[1], parts[3], "/".join(parts[4:]), head)
        self._error(404, "NotFound", f"no route {path}", head)

    def _lookup(self, repo_id: str, revision: str, head: bool) -> tuple[str, dict[str, bytes]] | None:
        repo = self.server.hub.repos.get(repo_id)
        if repo is None:
            self._error(401, "RepoNotFound", "Repository not found", head)
            return None
        commit = revision if revision in repo.commits else repo.refs.get(revision)
        if commit is None:
            self._error(404, "RevisionNotFound", "Invalid rev id: " + revision, head)
            return None
        return commit, repo.commits[commit]

    def _api(self, repo_id: str, rest: list[str], query: dict, head: bool) -> None:
        if not rest or rest[0] == "revision":
            found = self._lookup(repo_id, rest[1] if len(rest) > 1 else "main", head)
            if found:
                commit, files = found
                self._json({"id": repo_id, "modelId": repo_id, "sha": commit, "private": False, "gated": False,
                            "disabled": False, "tags": [], "siblings": [{"rfilename": p} for p in sorted(files)]},
                           head)
        elif rest[0] == "tree" and len(rest) >= 2:
            found = self._lookup(repo_id, rest[1], head)
            if found:
                recursive = query.get("recursive", ["false"])[0].lower() in ("true", "1")
                self._json(_tree(found[1], "/".join(rest[2:]), recursive), head)
        else:
            self._error(404, "NotFound", "no route", head)

    def _resolve(self, repo_id: str, revision: str, file: str, head: bool) -> None:
        found = self._lookup(repo_id, revision, head)
        if not found:
            return
        commit, files = found
        if file not in files:
            return self._error(404, "EntryNotFound", f"{file} does not exist on \"{revision}\"", head,
                               {"X-Repo-Commit": commit})
        data = files[file]
        if _is_lfs(file):
            sha = hashlib.sha256(data).hexdigest()
            location = f"{self.server.hub.cdn_base}/blobs/{sha}?X-Amz-Signature=standin"
            return self._send(302, b"", {"Location": location, "X-Repo-Commit": commit,
                                         "ETag": f'"{git_blob_sha1(_pointer(data))}"',
                                         "X-Linked-Etag": f'"{sha}"', "X-Linked-Size": str(len(data))}, head)
        self._send(200, data, {"ETag": f'"{git_blob_sha1(data)}"', "X-Repo-Commit": commit,
                               "Accept-Ranges": "bytes"}, head, content_type="application/octet-stream")

    def _cdn(self, path: str, head: bool) -> None:
        parts = path.strip("/").split("/")
        found = self.server.hub.blob(parts[1]) if len(parts) == 2 and parts[0] == "blobs" else None
        if found is None:
            return self._send(404, b"NoSuchKey", head=head, content_type="text/plain")
        _, data = found
        if self.server.hub.is_corrupt(parts[1]):
            data = bytes([data[0] ^ 0xFF]) + data[1:]
        self._send(200, data, {"ETag": f'"{parts[1]}"'}, head, content_type="application/octet-stream")

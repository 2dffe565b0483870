"""Hugging Face ids: found offline in the caches, fetched only by an explicit pull.

``model_name='BAAI/bge-small-en-v1.5'`` (optionally ``@REVISION``) resolves, without any network, to
the folder the Hugging Face cache holds for it (the one ``hf download`` fills: ``$HF_HUB_CACHE``, else
``$HF_HOME/hub``, else ``~/.cache/huggingface/hub``), else to tesseradb's own model folder
(``$TESSERA_CACHE_DIR/models/hub/ORG/NAME``: a folder copied there by hand). Nothing is downloaded at
INSERT or query time: a missing model is an error that prints the pull command.

:func:`pull` (``tessera model pull NAME[@REVISION]``, ``tesseradb.pull_model``) fetches the files a
model needs with ``huggingface_hub`` into the Hugging Face cache and records, in
``$TESSERA_CACHE_DIR/pulled/ORG--NAME.json``, the commit it resolved to and every file's SHA-256,
after checking every file against the hashes the hub publishes (a corrupt download is refused).
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from tesseradb.embed.cache import cache_root, write_atomic
from tesseradb.embed.errors import ModelError
from tesseradb.embed.integrity import sha256_file

_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*")
#: what a pull fetches: the graph (either place), the weights, the tokenizer and the small json files
PULL_PATTERNS = ["*.json", "onnx/model.onnx", "model.onnx", "model.safetensors", "*/config.json",
                 "vocab.txt", "sentencepiece.bpe.model", "README.md"]


def split(name: str) -> tuple[str, str | None]:
    """``ORG/NAME@REVISION`` -> (``ORG/NAME``, ``REVISION`` or None)."""
    repo, _, revision = name.partition("@")
    return repo.strip(), (revision.strip() or None)


def is_hub_id(name: str) -> bool:
    repo, _ = split(name)
    return bool(_ID.fullmatch(repo)) and not os.path.exists(name)


def hub_cache() -> Path:
    """The Hugging Face hub cache, read from the environment at each call."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME")
    return (Path(home).expanduser() if home else Path.home() / ".cache" / "huggingface") / "hub"


def own_folder(repo: str) -> Path:
    return cache_root() / "models" / "hub" / repo


def _record_path(repo: str) -> Path:
    return cache_root() / "pulled" / (repo.replace("/", "--") + ".json")


def find(name: str) -> Path | None:
    """The folder of a Hugging Face id on this machine, or None; never touches the network."""
    repo, revision = split(name)
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError
    try:
        return Path(snapshot_download(repo, revision=revision, cache_dir=hub_cache(), local_files_only=True,
                                      allow_patterns=PULL_PATTERNS))
    except (LocalEntryNotFoundError, HFValidationError, OSError, ValueError):
        pass
    record = read_record(repo)
    if record is not None and (revision is None or revision in (record.revision, record.requested)):
        folder = Path(record.folder)
        if folder.is_dir():
            return folder
    folder = own_folder(repo)
    return folder if revision is None and folder.is_dir() else None


def missing(name: str) -> ModelError:
    return ModelError(f"unknown model '{name}': not a built-in model name, and not on this machine "
                      f"(nothing is downloaded implicitly); fetch it once with: tessera model pull {name}")


@dataclass(frozen=True)
class PullRecord:
    repo: str
    requested: str | None
    revision: str            # the commit the revision resolved to
    folder: str
    files: dict              # path inside the folder -> sha256


def read_record(repo: str) -> PullRecord | None:
    path = _record_path(repo)
    try:
        return PullRecord(**json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def pulled() -> list[PullRecord]:
    folder = cache_root() / "pulled"
    records = [read_record(p.stem.replace("--", "/", 1)) for p in sorted(folder.glob("*.json"))] if folder.is_dir() else []
    return [r for r in records if r is not None]


def pull(name: str, *, token: str | None = None, endpoint: str | None = None) -> PullRecord:
    """Fetch ``ORG/NAME[@REVISION]`` into the Hugging Face cache, check every file against the hashes
    the hub publishes (sha256 of LFS files, git's blob sha1 of the others), and record its commit and
    file hashes. ``endpoint``: a hub mirror (else ``$HF_ENDPOINT``, else huggingface.co)."""
    repo, revision = split(name)
    if not _ID.fullmatch(repo):
        raise ModelError(f"'{name}' is not a Hugging Face model id (ORG/NAME, optionally @REVISION)")
    from huggingface_hub import HfApi, snapshot_download
    from huggingface_hub.errors import (HfHubHTTPError, LocalEntryNotFoundError, RepositoryNotFoundError,
                                        RevisionNotFoundError)
    try:
        folder = Path(snapshot_download(repo, revision=revision, cache_dir=hub_cache(), token=token,
                                        endpoint=endpoint, allow_patterns=PULL_PATTERNS))
        check = HfApi(endpoint=endpoint, token=token).verify_repo_checksums(
            repo, revision=folder.name, cache_dir=hub_cache())
    except RepositoryNotFoundError as exc:
        raise ModelError(f"model '{repo}' does not exist on the Hugging Face hub (or needs a token)") from exc
    except RevisionNotFoundError as exc:
        raise ModelError(f"model '{repo}' has no revision '{revision}' on the Hugging Face hub") from exc
    except (LocalEntryNotFoundError, HfHubHTTPError, OSError, ValueError) as exc:
        raise ModelError(f"cannot pull '{name}': {type(exc).__name__}: {str(exc).splitlines()[0]}") from exc
    if check.mismatches:
        _discard(folder, [m["path"] for m in check.mismatches])
        bad = check.mismatches[0]
        raise ModelError(f"pull of '{name}' refused: '{bad['path']}' does not match the hub's {bad['algorithm']} "
                         f"(expected {bad['expected']}, got {bad['actual']}); "
                         f"{len(check.mismatches)} corrupt file(s) removed from the cache, nothing recorded")
    files = {p.relative_to(folder).as_posix(): sha256_file(p) for p in sorted(folder.rglob("*")) if p.is_file()}
    record = PullRecord(repo, revision, folder.name, str(folder), files)
    path = _record_path(repo)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(asdict(record), indent=2, sort_keys=True).encode())
    return record


def _discard(folder: Path, paths: list[str]) -> None:
    """Remove corrupt files (the snapshot's link and the blob it points to) so a new pull fetches them."""
    for rel in paths:
        link = folder / rel
        target = link.resolve()
        for p in (link, target):
            try:
                p.unlink()
            except OSError:
                pass

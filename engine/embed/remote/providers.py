"""Remote embedding providers as Manticore names them, one table row each.

``model_name`` spellings (Manticore's): ``openai/<model>``, ``voyage/<model>``, ``jina/<model>`` and the
explicit ``provider:model`` form (``openai:<model>``, ``voyage:``, ``jina:``, and ``ollama:`` for Ollama's
native API); the part after ``/`` or ``:`` is sent unchanged. ``api_url`` is the full endpoint as
Manticore's manual gives it (``…/v1/embeddings``, Ollama's ``…/api/embed``) or a base URL (``…/v1``,
``http://localhost:11434``) that the provider's path is added to; any OpenAI-compatible server (vLLM,
LM Studio, llama.cpp's server, Ollama's ``/v1``) is ``openai`` with its ``api_url``.

Limits come from each provider's API reference: inputs per request, tokens per input (the window)
and per request; a batch stays within them whatever ``batch_size`` asks.
"""
from __future__ import annotations

import base64
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tesseradb.embed.remote.http import RemoteError


@dataclass(frozen=True)
class Provider:
    name: str
    url: str                       # the default endpoint
    path: str                      # added to a base URL
    endpoints: tuple[str, ...]     # an api_url ending so is a full endpoint
    max_inputs: int                # texts per request (the API's limit)
    window: int                    # tokens per input
    request_tokens: int            # tokens per request
    batch: int                     # texts per request by default
    payload: Callable[[str, list[str], bool], dict]
    vectors: Callable[[Any], list]   # the answer -> one vector (list or base64 float32) per input, in order

    def endpoint(self, api_url: str | None) -> str:
        """The URL requests go to: ``api_url`` (full or base), else the base URL the provider's own
        client reads from the environment (``OPENAI_BASE_URL``, ``OLLAMA_HOST``), else the default."""
        if not api_url:
            env = os.environ.get(ENV_BASE_URL.get(self.name, ""), "").strip()
            if not env:
                return self.url
            api_url = env if "://" in env else f"http://{env}"
        url = api_url.rstrip("/")
        if url.endswith(self.endpoints):
            return url
        if self.name == "ollama" and url.endswith("/api"):
            return url + "/embed"
        return url + self.path


def _openai_payload(model: str, texts: list[str], query: bool) -> dict:
    return {"model": model, "input": texts, "encoding_format": "float"}


def _voyage_payload(model: str, texts: list[str], query: bool) -> dict:
    return {"model": model, "input": texts, "input_type": "query" if query else "document", "truncation": True}


def _jina_payload(model: str, texts: list[str], query: bool) -> dict:
    payload = {"model": model, "input": texts, "embedding_type": "float"}
    if "embeddings-v3" in model or "embeddings-v4" in model:      # the task adapters of v3/v4
        payload["task"] = "retrieval.query" if query else "retrieval.passage"
    return payload


def _ollama_payload(model: str, texts: list[str], query: bool) -> dict:
    return {"model": model, "input": texts, "truncate": True}


def _data_vectors(answer: Any) -> list:
    """OpenAI's shape (Voyage and Jina answer the same): ``data[i].embedding``, ordered by ``index``."""
    data = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(data, list) or not all(isinstance(d, dict) and "embedding" in d for d in data):
        raise ValueError("no data[].embedding in the answer")
    if all(isinstance(d.get("index"), int) for d in data):
        data = sorted(data, key=lambda d: d["index"])
        if [d["index"] for d in data] != list(range(len(data))):
            raise ValueError("the answer's data[].index values are not 0..n-1")
    return [d["embedding"] for d in data]


def _ollama_vectors(answer: Any) -> list:
    vectors = answer.get("embeddings") if isinstance(answer, dict) else None
    if not isinstance(vectors, list):
        raise ValueError("no embeddings in the answer")
    return vectors


PROVIDERS = {p.name: p for p in (
    Provider("openai", "https://api.openai.com/v1/embeddings", "/embeddings", ("/embeddings",),
             2048, 8192, 300_000, 64, _openai_payload, _data_vectors),
    Provider("voyage", "https://api.voyageai.com/v1/embeddings", "/embeddings", ("/embeddings",),
             1000, 32_000, 120_000, 64, _voyage_payload, _data_vectors),
    Provider("jina", "https://api.jina.ai/v1/embeddings", "/embeddings", ("/embeddings",),
             512, 8192, 500_000, 64, _jina_payload, _data_vectors),
    Provider("ollama", "http://localhost:11434/api/embed", "/api/embed", ("/api/embed",),
             512, 2048, 1_000_000, 64, _ollama_payload, _ollama_vectors),
)}
#: where each provider's official client reads a base URL from (the tests' loopback stand-ins use them)
ENV_BASE_URL = {"openai": "OPENAI_BASE_URL", "ollama": "OLLAMA_HOST"}
#: provider/model spellings (Manticore's); ollama/ is ours (Ollama names its models with a colon)
SLASH_PROVIDERS = ("openai", "voyage", "jina", "ollama")


def parse(model_name: str) -> tuple[Provider, str] | None:
    """``(provider, model sent)`` for a remote model name, None for anything else."""
    if not isinstance(model_name, str):
        return None
    for sep in (":", "/"):
        head, found, rest = model_name.partition(sep)
        key = head.strip().lower()
        if found and rest.strip() and key in PROVIDERS and (sep == ":" or key in SLASH_PROVIDERS):
            return PROVIDERS[key], rest.strip()
    return None


def decode(vectors: Sequence[Any], count: int, width: int | None, url: str) -> np.ndarray:
    """The answer's vectors as float32 rows, checked: ``count`` of them, each ``width`` wide."""
    if len(vectors) != count:
        raise RemoteError("mismatch", url, f"the endpoint returned {len(vectors)} vectors for {count} texts")
    rows = []
    for vector in vectors:
        try:
            row = (np.frombuffer(base64.b64decode(vector), dtype="<f4") if isinstance(vector, str)
                   else np.asarray(vector, dtype=np.float32))
        except (ValueError, TypeError) as exc:
            raise RemoteError("malformed", url, f"a vector is not a list of numbers ({exc})") from None
        if row.ndim != 1 or not len(row) or not np.all(np.isfinite(row)):
            raise RemoteError("malformed", url, "a vector is not a non-empty list of finite numbers")
        rows.append(row)
    widths = {len(r) for r in rows}
    if len(widths) > 1 or (width is not None and widths != {width}):
        got = ", ".join(str(w) for w in sorted(widths))
        raise RemoteError("mismatch", url, f"the endpoint returned {got}-number vectors, the column holds {width}"
                          if width is not None else f"the endpoint returned vectors of widths {got}")
    return np.vstack(rows) if rows else np.empty((0, width or 0), np.float32)

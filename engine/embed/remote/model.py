"""A remote embedding model: the same surface as a local ``Model``, its vectors from an endpoint.

Tokens: a remote model has no tokenizer here, so chunk budgets are counted with the tokenizer the
column names (``tokenizer='all-MiniLM-L6-v2'`` or a folder/Hugging Face id; window = the provider's
limit less 2) or, by default, by a conservative estimate: **one token per character**, with a
window of a quarter of the provider's limit. A UTF-8 character is at most 4 bytes and a byte-level
BPE token at least one byte, so a text within that window never exceeds the provider's limit
(docs/models.md#token-budgets).

Embedding (:meth:`RemoteModel.embed`): the prompt goes before each text, each text is cut to the
window, empty texts are never sent (their vector is all zeros: they match nothing), the others go in
batches within the provider's limits through the shared :class:`~.http.JsonEndpoint` (retries,
timeouts), and every answer is checked: as many vectors as texts, each of the model's width. Then
``dims`` truncation and L2 normalisation. A model must be *bound* to the connection's
:class:`~.access.RemoteAccess` (:meth:`bound`) before it sends anything: the allow-list is checked
and the key (``env:`` read now) attached.
"""
from __future__ import annotations

import copy
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from tesseradb.embed.errors import EmbeddingCancelled, ModelError
from tesseradb.embed.integrity import sha256_bytes
from tesseradb.embed.model import ModelInfo, Prompts
from tesseradb.embed.options import ModelOptions
from tesseradb.embed.pooling import l2_normalize
from tesseradb.embed.remote.access import RemoteAccess
from tesseradb.embed.remote.http import JsonEndpoint, RemoteError, Retry
from tesseradb.embed.remote.providers import Provider, decode

if TYPE_CHECKING:
    from tokenizers import Tokenizer

ESTIMATE_CHARS_PER_LIMIT = 4    # window (characters) = provider limit / 4: a character is at most 4 bytes
QUERY_CACHE_SIZE = 1024
PROBE_TEXT = "tesseradb dimension probe"


def char_tokenizer() -> Tokenizer:
    """One token per character (the estimate), as a ``tokenizers`` pipeline: offsets come from Rust."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers
    tok = Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    return tok


class RemoteModel:
    splits_on_whitespace = False
    threads: int | None = None

    def __init__(self, provider: Provider, model: str, options: ModelOptions,
                 tokenizer: Tokenizer | None = None, name: str | None = None):
        self.provider, self.model, self.options = provider, model, options
        self.name = name or f"{provider.name}:{model}"
        self.url = provider.endpoint(options.api_url)
        self.prompts = Prompts(options.query_prefix or "", options.document_prefix or "")
        self._tokenizer = tokenizer or char_tokenizer()
        self._estimated = tokenizer is None
        base = provider.window // ESTIMATE_CHARS_PER_LIMIT if self._estimated else provider.window - 2
        self._base_window = base
        self.window = base - self._count(self.prompts.document)
        if self.window < 1:
            raise ModelError(f"model '{self.name}': document_prefix leaves no room in its window")
        self.batch = min(options.batch_size or provider.batch, provider.max_inputs)
        self.endpoint = JsonEndpoint(self.url, timeout=options.api_timeout or None, retry=Retry())
        self.width: int | None = None     # what the endpoint returns, learned by probe()
        self.dims = 0
        self.fingerprint = ""
        self._access: RemoteAccess | None = None
        self._key: str | None = None
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"RemoteModel(name={self.name!r}, url={self.url!r}, dims={self.dims})"

    @property
    def info(self) -> ModelInfo:
        return ModelInfo(self.name, self.fingerprint, self.dims, self.window)

    # -- binding -----------------------------------------------------------------------------------
    def bound(self, access: RemoteAccess) -> RemoteModel:
        """This model ready to send for a connection: its endpoint allowed, its key read."""
        access.check_url(self.url)
        key = access.api_key(self.options.api_key)
        view = copy.copy(self)
        view._access, view._key = access, key
        return view

    def probe(self) -> int:
        """The width of the endpoint's vectors, by one request (as Manticore checks at CREATE)."""
        return int(self._send([PROBE_TEXT], query=False).shape[1])

    def learn(self, width: int) -> None:
        """Set the width (from :meth:`probe` of a bound view) and so dims and the fingerprint."""
        if self.options.dims is not None and self.options.dims > width:
            raise ModelError(f"dims={self.options.dims} is above the width of model '{self.name}' ({width}); "
                             f"dims keeps the first N numbers of a {width}-number vector")
        self.width, self.dims = width, self.options.dims or width
        self.fingerprint = sha256_bytes(json.dumps({
            "provider": self.provider.name, "model": self.model, "url": self.url, "width": width,
            "query_prefix": self.prompts.query, "document_prefix": self.prompts.document,
            "dims": self.options.dims, "window": self.window}, sort_keys=True).encode())

    # -- tokens ------------------------------------------------------------------------------------
    def _count(self, text: str) -> int:
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids) if text else 0

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        return list(self._tokenizer.encode(text, add_special_tokens=False).offsets)

    def count_tokens(self, text: str, start: int = 0) -> int:
        return self._count(text[start:])

    def _cut(self, text: str, window: int) -> str:
        if self._estimated:
            return text[:window]
        offsets = self._tokenizer.encode(text, add_special_tokens=False).offsets
        return text if len(offsets) <= window else text[:offsets[window - 1][1]]

    # -- embedding ---------------------------------------------------------------------------------
    def embed(self, texts: Sequence[str], *, on_progress: Callable[[int, int], None] | None = None,
              should_stop: Callable[[], bool] | None = None, query: bool = False) -> np.ndarray:
        prompt = self.prompts.query if query else self.prompts.document
        items = [prompt + self._cut(t, self._base_window - self._count(prompt)) if t.strip() else "" for t in texts]
        out = np.zeros((len(items), self.dims), np.float32)
        todo = [i for i, t in enumerate(items) if t]         # empty (or blank) texts are never sent
        todo.sort(key=lambda i: len(items[i]))     # batches of like lengths: a server pads each batch to its longest
        done = 0
        for batch in self._batches([items[i] for i in todo]):
            if should_stop is not None and should_stop():
                raise EmbeddingCancelled(f"embedding cancelled after {done} of {len(todo)} texts")
            rows = todo[batch.start:batch.stop]
            out[rows] = self._finish(self._send([items[i] for i in rows], query=query))
            done += len(rows)
            if on_progress is not None:
                on_progress(done, len(todo))
        return out

    def _batches(self, texts: list[str]) -> list[range]:
        """Consecutive ranges within ``batch`` texts and the provider's tokens per request."""
        cost = [len(t.encode("utf-8")) if self._estimated else self._count(t) for t in texts]
        out, start, total = [], 0, 0
        for i, c in enumerate(cost):
            if i > start and (i - start >= self.batch or total + c > self.provider.request_tokens):
                out.append(range(start, i))
                start, total = i, 0
            total += c
        if start < len(texts):
            out.append(range(start, len(texts)))
        return out

    def _send(self, texts: list[str], *, query: bool) -> np.ndarray:
        if self._access is None:
            raise ModelError(f"model '{self.name}': a remote model must be bound to a connection before use")
        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        answer = self.endpoint.post(self.provider.payload(self.model, texts, query), headers=headers)
        try:
            vectors = self.provider.vectors(answer)
        except ValueError as exc:
            raise RemoteError("malformed", self.url, f"unexpected answer: {exc}") from None
        return decode(vectors, len(texts), self.width, self.url)

    def _finish(self, vectors: np.ndarray) -> np.ndarray:
        if self.options.dims is not None:
            vectors = vectors[:, :self.options.dims]
        return l2_normalize(vectors)

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            hit = self._queries.get(text)
            if hit is not None:
                self._queries.move_to_end(text)
                return hit.copy()
        vector = self.embed([text], query=True)[0]
        with self._lock:
            self._queries[text] = vector
            while len(self._queries) > QUERY_CACHE_SIZE:
                self._queries.popitem(last=False)
        return vector.copy()

"""A loaded embedding model: tokenizer, lazy onnxruntime sessions, batched embedding pooled as the model says."""
from __future__ import annotations

import contextlib
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:      # onnxruntime and tokenizers load with the first model (docs/architecture.md)
    import onnxruntime as ort
    from tokenizers import Encoding, Tokenizer

from tesseradb.embed import token_ids
from tesseradb.embed.errors import EmbeddingCancelled, ModelError
from tesseradb.embed.pooling import Head

# Batching, chosen by measurement (tests/benchmarks/bench_embed.py; 2-vCPU EPYC, CPU time per token):
# short texts want several rows per call (32 tokens: 16 rows beat 1 row by ~15%), long ones lose
# 10-15% once a batch passes ~4k padded tokens (attention scores fall out of cache). 2048 padded
# tokens keeps 4-8 rows of a typical 256-512-token chunk for the intra-op threads to share.
TOKEN_BUDGET = 2048
MAX_ROWS = 64
# Rows in one batch differ in length by at most this factor (plus a small slack), to limit padding.
BUCKET_RATIO = 1.25
BUCKET_SLACK = 8
# Token counts of long texts are made in pieces this long, this many pieces per tokenizer call
# (measured on a 20 MB text: 32k x 4 grows RSS by ~50 MB, 128k x 8 by ~170 MB, and is no faster).
COUNT_PIECE_CHARS = 1 << 15
COUNT_PIECES_PER_CALL = 4
# A text at least this long is tokenized through ``encode_batch``, which lets go of the GIL while the
# tokenizer runs (``encode`` holds it to the end: the manual's 440K-character page held it 0.4 s, while the
# model's worker threads, done with their batches, waited for it to go on to the next); a shorter one
# through ``encode`` on the calling thread (no hand-off to the tokenizer's pool). The same Encoding.
RELEASE_GIL_CHARS = 4096
CUT_SEARCH_CHARS = 4096     # how far back a cut looks for whitespace before looking forward
HEAD_CHARS_PER_TOKEN = 16   # a text longer than this many characters per window token is cut first
# Characters a BERT pre-tokenizer always splits on (after its normalizer maps \t\n\r to spaces).
CUT_AFTER = " \t\n\r"
_SPACE = re.compile(r"[ \t\n\r]")
# onnxruntime's intra-op pool threads spin while waiting for work by default. Measured on 2 vCPUs shared
# with busy processes (load average 15-19), first-time query texts, sessions alternating in one process
# (400 calls each): p50 20.5 ms spinning, 7.7 ms not, and a knn query's own work after the model waited
# less; the fastest call (a quiet moment) was 2.0 ms spinning, 3.1 ms not. docs/benchmarks.md#queries-at-the-models-limit-issue-37
ALLOW_SPINNING = "0"
# A bulk embedding of at least this many batches runs them several at once (embed/runner.py), on a
# single-thread session of its own: a second copy of the weights (float32: ~90 MB), which a statement
# of a few batches does not pay for.
PARALLEL_MIN_BATCHES = 4
# onnxruntime fusions a session skips. SkipLayerNormFusion would turn Add + LayerNormalization back
# into SkipLayerNormalization, whose CPU kernel (onnxruntime 1.32) took 5x the time of the split form
# on a [7, 258, 384] batch (bert_onnx.split_skip_layer_norm; graphs that hold the fused node keep it).
DISABLED_OPTIMIZERS = ("SkipLayerNormFusion",)
QUERY_CACHE_SIZE = 1024
QUERY_CACHE_MAX_CHARS = 8192  # longer query texts are embedded every time rather than kept

GraphSource = Callable[[], "bytes | str"]


@dataclass(frozen=True)
class Prompts:
    """Text put before what the model reads: every query, every document chunk (e5's ``query: ``)."""

    query: str = ""
    document: str = ""


@dataclass(frozen=True)
class ModelInfo:
    """What CREATE TABLE records about a model column."""

    name: str
    fingerprint: str
    dims: int
    window: int


def load_tokenizer(path: str) -> Tokenizer:
    """The tokenizer with its packaged truncation and padding switched off."""
    from tokenizers import Tokenizer
    try:
        tok = Tokenizer.from_file(path)
    except Exception as exc:  # tokenizers raises a bare Exception for malformed files
        raise ModelError(f"cannot read tokenizer {path}: {exc}") from exc
    tok.no_truncation()
    tok.no_padding()
    return tok


def plan_batches(lengths: Sequence[int], *, token_budget: int = TOKEN_BUDGET, max_rows: int = MAX_ROWS,
                 ratio: float = BUCKET_RATIO, slack: int = BUCKET_SLACK) -> list[range]:
    """Cut ascending ``lengths`` into consecutive batches (ranges of positions).

    A batch grows while its padded size (rows x longest) stays within ``token_budget``, it has
    fewer than ``max_rows`` rows, and its longest row is within ``ratio`` (+``slack``) of its shortest.
    """
    batches: list[range] = []
    start = 0
    for i, length in enumerate(lengths):
        rows = i - start + 1
        fits = (rows <= max_rows and rows * length <= token_budget
                and length <= lengths[start] * ratio + slack)
        if not fits and i > start:
            batches.append(range(start, i))
            start = i
    if start < len(lengths):
        batches.append(range(start, len(lengths)))
    return batches


class Model:
    """One embedding model. Thread-safe; the session is created on first use and kept."""

    def __init__(self, info: ModelInfo, tokenizer_path: str, graph: GraphSource, *, head: Head = Head(),
                 prompts: Prompts = Prompts(), max_rows: int = MAX_ROWS) -> None:
        """``info.window``: the model's content tokens; a document prompt's tokens come off it, so
        that chunk budgets (``self.window``) leave room for the prompt. ``max_rows``: texts per
        onnxruntime call (1: every text alone, so its vector never depends on the others)."""
        self.name = info.name
        self.fingerprint = info.fingerprint
        self.dims = info.dims
        self.head = head
        self.prompts = prompts
        self._graph = graph
        self._tokenizer = load_tokenizer(tokenizer_path)
        self._specials = self._tokenizer.num_special_tokens_to_add(is_pair=False)
        self.window = info.window - self.prompt_tokens(prompts.document)
        if self.window < 1:
            raise ModelError(f"model '{info.name}': document_prefix leaves no room in a {info.window}-token window")
        # a text cut after whitespace tokenizes to the same tokens only under a BERT-style pre-tokenizer
        from tokenizers.pre_tokenizers import BertPreTokenizer
        self.splits_on_whitespace = isinstance(self._tokenizer.pre_tokenizer, BertPreTokenizer)
        self._embed_tokenizer = load_tokenizer(tokenizer_path)
        self._embed_tokenizer.enable_truncation(max_length=info.window + self._specials)
        # chunks cut at word boundaries bring their ids from the page's tokens (embed/token_ids.py)
        self._template = None if prompts.document else token_ids.template(self._tokenizer, self._embed_tokenizer)
        self.token_budget = TOKEN_BUDGET  # batching knobs, per instance (the benchmark varies them)
        self.max_rows = max_rows
        self.threads: int | None = None  # onnxruntime intra-op threads; None: every CPU this process may use
        self.workers: int | None = None  # batches a bulk embed runs at once (embed/runner.py); None: ``threads``
        self._session: ort.InferenceSession | None = None
        self._bulk_session: ort.InferenceSession | None = None   # single-thread, shared by the workers
        self._session_lock = threading.Lock()
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._queries_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Model(name={self.name!r}, dims={self.dims}, window={self.window})"

    @property
    def info(self) -> ModelInfo:
        return ModelInfo(self.name, self.fingerprint, self.dims, self.window)

    # -- tokens ---------------------------------------------------------------------------------
    def prompt_tokens(self, prompt: str) -> int:
        return len(self._tokenizer.encode(prompt, add_special_tokens=False).ids) if prompt else 0

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        """Character offsets of every content token of the whole text (no specials, no truncation)."""
        return list(self._content(_check_text(text)).offsets)

    def page_tokens(self, text: str) -> token_ids.PageTokens:
        """The whole text's content tokens: their offsets, and the ids of chunks cut on them."""
        return token_ids.PageTokens(self._content(_check_text(text)))

    def _content(self, text: str) -> Encoding:
        """The text's content tokens (no specials, no truncation); a long text's with the GIL let go
        while they are made (:data:`RELEASE_GIL_CHARS`): the chunk planner tokenizes pages beside the
        model's batches (a LOAD DATA's read-ahead), whose threads need the GIL between batches."""
        if len(text) < RELEASE_GIL_CHARS:
            return self._tokenizer.encode(text, add_special_tokens=False)
        return self._tokenizer.encode_batch([text], add_special_tokens=False)[0]

    @property
    def reads_ids(self) -> bool:
        """Whether :meth:`embed` takes a chunk's ids from its page's tokens (:func:`chunk_text`)."""
        return self._template is not None

    def chunk_text(self, text: str, ids: np.ndarray | None) -> str:
        """A chunk's text for :meth:`embed`, with its ids from the page's tokens (None: none)."""
        return token_ids.tokenized(text, ids if self._template is not None else None, self._tokenizer)

    def _given(self, text: str) -> token_ids.Tokenized | None:
        """What :meth:`embed` runs for a chunk that brings its ids (none: tokenize its text)."""
        if isinstance(text, token_ids.Tokenized) and text.tokenizer is self._tokenizer and \
                self._template is not None and 0 < len(text.ids) <= self.window:
            return self._template.wrap(text.ids)
        return None

    def count_tokens(self, text: str, start: int = 0) -> int:
        """Content tokens of ``text[start:]`` (``start`` at a whitespace cut), without holding them.

        The text is tokenized in pieces cut just after whitespace (the tokenizer never joins
        characters across whitespace, so the count is the whole text's), a few pieces at a time:
        memory stays at a few pieces' tokens however long the text is.
        """
        _check_text(text)
        if not self.splits_on_whitespace:
            return len(self._content(text[start:]).ids)
        spans = whitespace_pieces(text, start, COUNT_PIECE_CHARS)
        total = 0
        for at in range(0, len(spans), COUNT_PIECES_PER_CALL):
            pieces = [text[a:b] for a, b in spans[at:at + COUNT_PIECES_PER_CALL]]
            total += sum(len(e.ids) for e in self._tokenizer.encode_batch(pieces, add_special_tokens=False))
        return total

    # -- embedding ------------------------------------------------------------------------------
    def embed(self, texts: Sequence[str], *, on_progress: Callable[[int, int], None] | None = None,
              should_stop: Callable[[], bool] | None = None, query: bool = False) -> np.ndarray:
        """float32 vectors (normalised as the model says), shape (len(texts), dims), in input order.

        Each text (after the document prompt, or the query prompt when ``query``) is truncated to
        the model's window. Texts are sorted by token length and
        run in padded batches, several at once when there are several (``bulk_workers``,
        embed/runner.py; the same batches, so the same vectors); ``on_progress(done, total)`` follows
        each batch and ``should_stop()`` is asked before each one is started and after each one ends
        (true -> :class:`EmbeddingCancelled`, once the batches already running have ended).
        """
        prompt = self.prompts.query if query else self.prompts.document
        out = np.empty((len(texts), self.dims), dtype=np.float32)
        if not texts:
            return out
        encodings = [None if query else self._given(t) for t in texts]
        todo = [n for n, e in enumerate(encodings) if e is None]
        items = [prompt + self._head(_check_text(texts[n])) for n in todo]
        # one text (a query): encode() on this thread; encode_batch hands even one text to the
        # tokenizer's thread pool and waits for it (the same Encoding either way)
        tok = self._embed_tokenizer
        for n, encoding in zip(todo, tok.encode_batch(items) if len(items) > 1 else map(tok.encode, items)):
            encodings[n] = encoding
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
        order = np.argsort(lengths, kind="stable")
        done = 0
        batches = [order[b.start:b.stop] for b in plan_batches(lengths[order].tolist(), token_budget=self.token_budget,
                                                                max_rows=self.max_rows)]
        with contextlib.closing(self._run_batches(batches, encodings, should_stop)) as results:
            for rows, vectors in results:
                out[rows] = vectors
                done += len(rows)
                if on_progress is not None:
                    on_progress(done, len(texts))
                if should_stop is not None and should_stop():   # batches still running are waited for
                    break
        if done < len(texts) or (should_stop is not None and should_stop()):   # the last batch counts too
            raise EmbeddingCancelled(f"embedding cancelled after {done} of {len(texts)} texts")
        return out

    def bulk_workers(self) -> int:
        """Batches a bulk embedding runs at once, each on one thread (embed/runner.py)."""
        return max(1, self.workers or self.threads or cpu_count())

    def _run_batches(self, batches: list[np.ndarray], encodings: list[Encoding],
                     should_stop: Callable[[], bool] | None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(rows, vectors) per batch: several batches at once on a single-thread session when there are
        ``PARALLEL_MIN_BATCHES`` or more and more than one worker; otherwise one after another on the
        model's session."""
        workers = self.bulk_workers()
        if len(batches) >= PARALLEL_MIN_BATCHES and workers > 1:
            from tesseradb.embed.runner import run_parallel
            session = self.bulk_session()
            yield from run_parallel(batches, lambda rows: self._run([encodings[i] for i in rows], session=session),
                                    workers=workers, should_stop=should_stop)
            return
        for rows in batches:
            if should_stop is not None and should_stop():
                return
            yield rows, self._run([encodings[i] for i in rows])

    def _head(self, text: str) -> str:
        """The part of a long text that holds its first ``window`` tokens, cut after whitespace.

        The model truncates to the window anyway, but the tokenizer would first encode the whole
        text (and keep the rest as overflow): a stretched last chunk of a 20 MB page cost GBs.
        """
        reach = (self.window + 1) * HEAD_CHARS_PER_TOKEN
        if len(text) <= reach or not self.splits_on_whitespace:
            return text
        while reach < len(text):
            cut = whitespace_cut(text, reach)
            if len(self._content(text[:cut]).ids) > self.window:
                return text[:cut]
            reach = 2 * cut
        return text

    def embed_query(self, text: str) -> np.ndarray:
        """One vector, shape (dims,); repeats are served from an LRU cache."""
        key = _check_text(text)
        with self._queries_lock:
            hit = self._queries.get(key)
            if hit is not None:
                self._queries.move_to_end(key)
                return hit.copy()
        vector = self.embed([key], query=True)[0]
        if len(key) > QUERY_CACHE_MAX_CHARS:
            return vector
        with self._queries_lock:
            self._queries[key] = vector
            while len(self._queries) > QUERY_CACHE_SIZE:
                self._queries.popitem(last=False)
        return vector.copy()

    # -- session --------------------------------------------------------------------------------
    def session(self) -> ort.InferenceSession:
        """The model's onnxruntime session, created on first call (builds the graph if needed)."""
        if self._session is None:
            with self._session_lock:
                if self._session is None:
                    self._session = _create_session(self._graph(), self.name, self.threads)
        return self._session

    def bulk_session(self) -> ort.InferenceSession:
        """A single-thread session of the same graph, run by several workers at once (embed/runner.py)."""
        if self._bulk_session is None:
            with self._session_lock:
                if self._bulk_session is None:
                    self._bulk_session = _create_session(self._graph(), self.name, 1)
        return self._bulk_session

    def measure_dims(self) -> int:
        """The width of the vectors the graph produces, by embedding the empty string once."""
        return int(self._run([self._embed_tokenizer.encode("")], check_dims=False).shape[1])

    def _run(self, encodings: list[Encoding], *, check_dims: bool = True,
             session: ort.InferenceSession | None = None) -> np.ndarray:
        session = self.session() if session is None else session
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        types = np.zeros_like(ids)
        for row, enc in enumerate(encodings):
            n = len(enc.ids)
            ids[row, :n] = enc.ids
            mask[row, :n] = 1
            types[row, :n] = enc.type_ids
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        inputs = {i.name: i for i in session.get_inputs()}
        feed = {name: _as_input(feeds[name], inputs[name].type) for name in inputs if name in feeds}
        output = _pick_output(session)
        (result,) = session.run([output.name], feed)
        vectors = self.head.apply(result, mask)
        if check_dims and vectors.shape[1] != self.dims:
            raise ModelError(f"model '{self.name}' produced {vectors.shape[1]}-dimensional vectors, "
                             f"expected {self.dims}")
        return vectors


def whitespace_cut(text: str, pos: int) -> int:
    """A cut at or before ``pos`` just after a whitespace character (no token spans it); else the
    first such cut after ``pos``; ``len(text)`` when there is none."""
    if pos >= len(text):
        return len(text)
    for i in range(pos, max(0, pos - CUT_SEARCH_CHARS), -1):
        if text[i - 1] in CUT_AFTER:
            return i
    match = _SPACE.search(text, pos)
    return match.end() if match else len(text)


def whitespace_pieces(text: str, start: int, size: int) -> list[tuple[int, int]]:
    """``text[start:]`` as consecutive spans of about ``size`` characters, cut after whitespace."""
    spans, at = [], start
    while at < len(text):
        end = whitespace_cut(text, at + size)
        end = end if end > at else len(text)
        spans.append((at, end))
        at = end
    return spans


def _check_text(text: object) -> str:
    if not isinstance(text, str):
        raise TypeError(f"embedding input must be str, not {type(text).__name__}")
    return text


def _as_input(array: np.ndarray, onnx_type: str) -> np.ndarray:
    return array.astype(np.int32) if onnx_type == "tensor(int32)" else array


def _pick_output(session: ort.InferenceSession) -> ort.NodeArg:
    outputs = session.get_outputs()
    for wanted in ("last_hidden_state", "token_embeddings", "sentence_embedding"):
        for out in outputs:
            if out.name == wanted:
                return out
    return outputs[0]


def cpu_count() -> int:
    """CPUs this process may run on (``os.cpu_count()`` narrowed by the affinity mask, if any)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def session_options(threads: int | None = None) -> ort.SessionOptions:
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads or cpu_count()
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    # Idle pool threads block instead of spinning: a spinning one keeps a core busy after each run,
    # which the query's own work (the vector scan, the full-text side, the server's reply) and
    # every other process then wait for (ALLOW_SPINNING)
    options.add_session_config_entry("session.intra_op.allow_spinning", ALLOW_SPINNING)
    return options


def _create_session(graph: bytes | str, name: str, threads: int | None = None) -> ort.InferenceSession:
    import onnxruntime as ort
    try:
        session = ort.InferenceSession(graph, session_options(threads), providers=["CPUExecutionProvider"],
                                       disabled_optimizers=list(DISABLED_OPTIMIZERS))
    except Exception as exc:  # onnxruntime raises its own exception types, not exported uniformly
        raise ModelError(f"model '{name}': onnxruntime cannot load the graph: {exc}") from exc
    names = {i.name for i in session.get_inputs()}
    if not {"input_ids", "attention_mask"} <= names:
        raise ModelError(f"model '{name}': the ONNX graph must take input_ids and attention_mask, "
                         f"it takes {sorted(names)}")
    return session

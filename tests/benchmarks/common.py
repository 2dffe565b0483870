"""Shared pieces of the manual benchmarks (bench_ingest, bench_recall, bench_query, make_report).

Not collected by pytest (no ``test_`` prefix). The corpus is Manticore's English manual (189 markdown
pages), read at run time from the folder ``TESSERA_BENCH_CORPUS`` names and never copied into this
repository; ``scripts/get_bench_corpus.sh`` clones it on a machine with internet (docs/benchmarks.md).

* :func:`corpus` - the corpus folder (``TESSERA_BENCH_CORPUS``; a clear exit when it is unset).

* :func:`pages` - the 189 pages, in path order, as :class:`Page` (relative path + text as is).
* :func:`heading_queries` - the section headings that are unique across the manual, each with its
  page and whether it is "deep" (starts after the first 1,200 characters of its page).
* :class:`EmbeddingCache` - chunk text -> vector, kept in SQLite under the cache directory, so that
  the recall grid embeds each distinct chunk once across runs and configurations (the vectors are
  the engine's own model's: ``tesseradb.embed.get_model(...).embed``).
* :func:`plan` - the chunks the engine makes of a text for one configuration (the engine's own
  ``tesseradb.embed.chunking.plan_chunks`` on the model's own token offsets, exactly as engine/embedding.py).
* :func:`score` - recall@1/5/10 and MRR of ranked page lists, split deep / head.
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import sqlite3
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tesseradb.embed import chunking  # noqa: E402
from tesseradb.embed import Model, get_model  # noqa: E402

MODEL_NAME = "all-MiniLM-L6-v2"
DEEP_AFTER = 1200  # a heading starting at or after this character offset of its page is "deep"
GET_CORPUS = "bash scripts/get_bench_corpus.sh <folder>"
RESULTS = Path(__file__).resolve().parent / "results"
CACHE = Path(os.environ.get("TESSERA_BENCH_CACHE", Path.home() / ".cache" / "tesseradb-bench"))


# -- corpus -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Page:
    doc_id: int      # 1-based, in path order
    path: str        # relative to the corpus root
    text: str        # the page as is (headings included)


def corpus() -> Path:
    """The benchmark corpus: the folder ``TESSERA_BENCH_CORPUS`` names (Manticore's manual)."""
    folder = os.environ.get("TESSERA_BENCH_CORPUS")
    if not folder:
        raise SystemExit("TESSERA_BENCH_CORPUS is not set: point it at a copy of Manticore's manual "
                         f"(the folder of its markdown pages); {GET_CORPUS} clones one")
    path = Path(folder)
    if not path.is_dir():
        raise SystemExit(f"TESSERA_BENCH_CORPUS={folder}: no such folder ({GET_CORPUS} clones the manual)")
    return path


def pages(folder: Path | None = None) -> list[Page]:
    folder = corpus() if folder is None else folder
    files = sorted(p for p in folder.rglob("*.md") if p.name != "SOURCE.md")
    if not files:
        raise SystemExit(f"no pages under {folder}: set TESSERA_BENCH_CORPUS to the manual's folder")
    return [Page(n, str(p.relative_to(folder)), p.read_text(encoding="utf-8", errors="replace"))
            for n, p in enumerate(files, start=1)]


@dataclass(frozen=True)
class Query:
    text: str        # the heading text, without the #'s
    doc_id: int      # the page it heads a section of
    offset: int      # where its line starts in the page
    deep: bool


_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")


def headings(page: Page) -> list[tuple[str, int]]:
    """(text, line offset) of every markdown heading outside fenced code blocks."""
    out, pos, fenced = [], 0, False
    for line in page.text.splitlines(keepends=True):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            m = _HEADING.match(line.rstrip("\r\n"))
            if m and re.search(r"\w", m.group(2)):
                out.append((m.group(2).strip(), pos))
        pos += len(line)
    return out


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def heading_queries(docs: Sequence[Page]) -> list[Query]:
    """Headings whose text (case and spacing ignored) occurs once across all pages' headings."""
    found = [(h, off, p.doc_id) for p in docs for h, off in headings(p)]
    counts = Counter(_norm(h) for h, _, _ in found)
    return [Query(h, doc, off, off >= DEEP_AFTER) for h, off, doc in found if counts[_norm(h)] == 1]


def strip_heading_lines(text: str) -> str:
    """The page with its heading lines blanked (same length, so offsets still hold)."""
    out, fenced = [], False
    for line in text.splitlines(keepends=True):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and _HEADING.match(line.rstrip("\r\n")):
            body = line.rstrip("\r\n")
            line = " " * len(body) + line[len(body):]
        out.append(line)
    return "".join(out)


# -- configurations ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Config:
    strategy: str
    max_tokens: int = 0
    overlap: int = 0

    @property
    def name(self) -> str:
        if self.strategy in ("truncate", "mean"):
            return self.strategy
        return f"{self.strategy} {self.max_tokens}/{self.overlap}"

    @property
    def key(self) -> str:
        return self.name.replace(" ", "-").replace("/", "-")

    @staticmethod
    def parse(text: str) -> "Config":
        """'truncate', 'mean', 'recursive-256-32' or 'recursive 256/32'."""
        parts = re.split(r"[\s/\-:]+", text.strip())
        if parts[0] in ("truncate", "mean") and len(parts) == 1:
            return Config(parts[0])
        if len(parts) != 3 or parts[0] not in ("fixed", "recursive", "sentence"):
            raise ValueError(f"bad configuration {text!r}: expected truncate, mean or STRATEGY-MAX-OVERLAP")
        return Config(parts[0], int(parts[1]), int(parts[2]))


def plan(model: Model, text: str, config: Config,
         offsets: Sequence[tuple[int, int]] | None = None) -> list[str]:
    """The chunk strings the engine embeds for ``text`` under ``config`` (mean: the pieces it averages)."""
    if offsets is None:
        offsets = model.token_offsets(text)
    planned = chunking.plan_chunks(text, offsets, strategy=config.strategy, max_tokens=config.max_tokens,
                                   overlap_tokens=config.overlap, max_chunks=0, window=model.window)
    return [text[c.start:c.end] for c in planned.chunks]


def model_tokens(model: Model, pieces: Iterable[str]) -> int:
    """Tokens the model runs on for these pieces: content tokens cut to the window, plus [CLS] [SEP]."""
    return sum(min(len(model.token_offsets(p)), model.window) + 2 for p in pieces)


# -- embedding cache --------------------------------------------------------------------------------
class EmbeddingCache:
    """Chunk text -> the engine model's vector, persisted in SQLite; keyed by model fingerprint."""

    def __init__(self, model: Model, root: Path = CACHE):
        root.mkdir(parents=True, exist_ok=True)
        self.model = model
        self.path = root / f"embeddings-{model.fingerprint[:16]}.sqlite"
        self.db = sqlite3.connect(self.path, timeout=300)
        self.db.execute("CREATE TABLE IF NOT EXISTS v (k BLOB PRIMARY KEY, vec BLOB NOT NULL)")
        self.embed_seconds = 0.0
        self.embedded_tokens = 0

    @staticmethod
    def key(text: str) -> bytes:
        return hashlib.sha1(text.encode("utf-8", "surrogatepass")).digest()

    def put(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        self.db.executemany("INSERT OR REPLACE INTO v VALUES (?, ?)",
                            [(self.key(t), np.asarray(v, "<f4").tobytes()) for t, v in zip(texts, vectors)])
        self.db.commit()

    def get(self, texts: Sequence[str], *, batch: int = 2000,
            progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        """Vectors for ``texts``; the missing ones are embedded now (in slices, saved as they come)."""
        keys = [self.key(t) for t in texts]
        have: dict[bytes, np.ndarray] = {}
        unique = list(dict.fromkeys(keys))
        for s in range(0, len(unique), 500):
            part = unique[s:s + 500]
            for k, blob in self.db.execute(f"SELECT k, vec FROM v WHERE k IN ({','.join('?' * len(part))})", part):
                have[k] = np.frombuffer(blob, "<f4")
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys) if k not in have))
        for s in range(0, len(missing), batch):
            part = missing[s:s + batch]
            started = time.perf_counter()
            vecs = self.model.embed(part)
            self.embed_seconds += time.perf_counter() - started
            self.embedded_tokens += model_tokens(self.model, part)
            self.put(part, vecs)
            for t, v in zip(part, vecs):
                have[self.key(t)] = v
            if progress is not None:
                progress(min(s + batch, len(missing)), len(missing))
        out = np.empty((len(texts), self.model.dims), np.float32)
        for i, k in enumerate(keys):
            out[i] = have[k]
        return out


# -- scoring ----------------------------------------------------------------------------------------
def rank_of(ranked: Sequence[int], doc_id: int) -> int | None:
    """1-based rank of ``doc_id`` in ``ranked`` (None when absent)."""
    for n, d in enumerate(ranked, start=1):
        if d == doc_id:
            return n
    return None


def score(queries: Sequence[Query], ranked: Sequence[Sequence[int]]) -> dict[str, dict[str, float]]:
    """recall@1/5/10 and MRR (@10) per group: deep, head, all."""
    out = {}
    for group, keep in (("deep", lambda q: q.deep), ("head", lambda q: not q.deep), ("all", lambda q: True)):
        ranks = [rank_of(r[:10], q.doc_id) for q, r in zip(queries, ranked) if keep(q)]
        n = max(len(ranks), 1)
        out[group] = {
            "n": len(ranks),
            "recall@1": sum(1 for r in ranks if r is not None and r <= 1) / n,
            "recall@5": sum(1 for r in ranks if r is not None and r <= 5) / n,
            "recall@10": sum(1 for r in ranks if r is not None) / n,
            "mrr": sum(1.0 / r for r in ranks if r is not None) / n,
        }
    return out


def maxp_rank(query_vecs: np.ndarray, chunk_vecs: np.ndarray, chunk_docs: np.ndarray, k: int = 10) -> list[list[int]]:
    """Exact search, one score per document = its best chunk (what knn() ranks by): top-k doc ids."""
    order = np.argsort(chunk_docs, kind="stable")
    vecs, doc_of = chunk_vecs[order], chunk_docs[order]
    starts = np.flatnonzero(np.r_[True, np.diff(doc_of) != 0])
    docs = doc_of[starts]
    out: list[list[int]] = []
    for s in range(0, len(query_vecs), 256):
        best = np.maximum.reduceat(query_vecs[s:s + 256] @ vecs.T, starts, axis=1)   # (q, docs)
        top = np.argsort(-best, axis=1, kind="stable")[:, :k]
        out.extend(docs[row].tolist() for row in top)
    return out


# -- run context ------------------------------------------------------------------------------------
def percentile(ms: Sequence[float], p: float) -> float:
    return float(np.percentile(np.asarray(ms, dtype=np.float64), p)) if len(ms) else float("nan")


def machine() -> dict:
    """What the figures were measured on, and how busy the machine was."""
    info = {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()}
    try:
        info["cpu"] = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                           if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        import onnxruntime
        info["onnxruntime"] = onnxruntime.__version__
    except ImportError:
        pass
    return info


def loadavg() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def vm_hwm_mib() -> float | None:
    """Peak resident set size of this process (VmHWM), MiB."""
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def dir_size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def save_result(name: str, data: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    data = {"benchmark": name, "when": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine(), **data}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    tmp.replace(path)
    return path


def load_result(name: str) -> dict | None:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def model() -> Model:
    m = get_model(MODEL_NAME)
    m.embed(["warm up"])  # session created, graph built or loaded from the cache
    return m


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)

"""Retrieval quality on Manticore's manual, per chunking configuration.

    .venv/bin/python tests/benchmarks/bench_recall.py                      # the default configurations
    .venv/bin/python tests/benchmarks/bench_recall.py --configs fixed-128-0,sentence-512-32
    .venv/bin/python tests/benchmarks/bench_recall.py --grid               # all 20 (hours on 2 cores)
    .venv/bin/python tests/benchmarks/bench_recall.py --strip-headings     # headings blanked from the pages

Queries: the section headings that are unique across the manual (common.heading_queries);
a query hits when its page is among the top k pages. "deep" = the heading starts at or after
character 1,200 of its page, "head" = the rest. By default the pages are used as they are, headings
included, as in Manticore's write-up; ``--strip-headings`` blanks every heading line first.

Each configuration's chunks are planned by the engine's own planner (tesseradb.embed.chunking.plan_chunks
on the model's token offsets) and embedded by the engine's own model (Model.embed); the vectors
go through a persistent cache keyed by chunk text, so a chunk shared by several configurations
(or already stored by bench_ingest.py) is embedded once. Pages are ranked exactly, each by its
best chunk (what knn() ranks by; ``mean`` and ``truncate`` have one vector per page).
bench_ingest.py measures the same thing through the DB-API (HNSW, the real knn()) for truncate
and recursive 256/32, as a cross-check. Results merge into tests/benchmarks/results/recall.json
(or recall_stripped.json), configuration by configuration, so an interrupted run keeps what it did.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import Config, log  # noqa: E402

# What a 2-core machine can run in reasonable time, most telling first. recursive 512/0 has the
# very chunks that mean averages (max_tokens 512 is clamped to the 510-token window; mean splits
# with overlap 0), so it costs nothing once mean has run.
DEFAULT = ["truncate", "recursive-256-32", "mean", "recursive-512-0", "sentence-256-32", "recursive-128-32",
           "fixed-256-32", "recursive-512-32"]
GRID = (["truncate", "mean"] + [f"{s}-{m}-{o}" for s in ("fixed", "recursive", "sentence")
                                for m in (128, 256, 512) for o in (0, 32)])


def vectors_for(model, cache: common.EmbeddingCache, docs, offsets, config: Config
                ) -> tuple[np.ndarray, np.ndarray, int, int]:
    """(vectors, their doc ids, chunks embedded by the model, model tokens of those chunks)."""
    per_doc = [common.plan(model, p.text, config, offsets[p.doc_id]) for p in docs]
    texts = [t for chunks in per_doc for t in chunks]
    owners = np.array([p.doc_id for p, chunks in zip(docs, per_doc) for _ in chunks], np.int64)
    tokens = common.model_tokens(model, texts)
    vecs = cache.get(texts, progress=lambda d, n: log(f"  embedded {d}/{n} new chunks"))
    if config.strategy == "mean":
        out = np.empty((len(docs), model.dims), np.float32)
        for i, p in enumerate(docs):
            m = vecs[owners == p.doc_id].mean(axis=0)
            out[i] = m / max(float(np.linalg.norm(m)), 1e-12)
        return out, np.array([p.doc_id for p in docs], np.int64), len(texts), tokens
    return vecs, owners, len(texts), tokens


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", default=",".join(DEFAULT), help="comma-separated, e.g. truncate,recursive-256-32")
    ap.add_argument("--grid", action="store_true", help="all 20 configurations")
    ap.add_argument("--strip-headings", action="store_true", help="blank the heading lines of the pages first")
    args = ap.parse_args()
    configs = [Config.parse(c) for c in (GRID if args.grid else args.configs.split(",")) if c]

    name = "recall_stripped" if args.strip_headings else "recall"
    result = common.load_result(name) or {}
    result.setdefault("configs", {})
    docs = common.pages()
    queries = common.heading_queries(docs)
    if args.strip_headings:
        docs = [common.Page(p.doc_id, p.path, common.strip_heading_lines(p.text)) for p in docs]
    model = common.model()
    cache = common.EmbeddingCache(model)
    started = time.perf_counter()
    offsets = {p.doc_id: model.token_offsets(p.text) for p in docs}
    log(f"{len(docs)} pages, {sum(len(o) for o in offsets.values())} tokens (tokenized in "
        f"{time.perf_counter() - started:.1f} s); {len(queries)} queries "
        f"({sum(q.deep for q in queries)} deep, {sum(not q.deep for q in queries)} head)")
    query_vecs = cache.get([q.text for q in queries])
    result.update(pages=len(docs), tokens=sum(len(o) for o in offsets.values()), queries=len(queries),
                  deep=sum(q.deep for q in queries), head=sum(not q.deep for q in queries),
                  headings="stripped" if args.strip_headings else "as is")
    for config in configs:
        log(f"{config.name}: planning and embedding")
        before_s, before_t = cache.embed_seconds, cache.embedded_tokens
        started = time.perf_counter()
        vecs, owners, chunks, tokens = vectors_for(model, cache, docs, offsets, config)
        ranked = common.maxp_rank(query_vecs, vecs, owners)
        scores = common.score(queries, ranked)
        result["configs"][config.name] = {
            "strategy": config.strategy, "max_tokens": config.max_tokens, "overlap": config.overlap,
            "vectors": int(len(vecs)), "chunks_embedded": chunks, "model_tokens": tokens,
            "scores": scores, "seconds_this_run": time.perf_counter() - started,
            "embedded_now": {"tokens": cache.embedded_tokens - before_t, "seconds": cache.embed_seconds - before_s},
            "loadavg": common.loadavg(),
        }
        common.save_result(name, result)
        d, h = scores["deep"], scores["head"]
        log(f"{config.name}: {len(vecs)} vectors, {tokens} tokens | deep r@1 {d['recall@1']:.3f} r@5 "
            f"{d['recall@5']:.3f} r@10 {d['recall@10']:.3f} mrr {d['mrr']:.3f} | head r@5 {h['recall@5']:.3f} "
            f"mrr {h['mrr']:.3f}")
    log(f"wrote {common.RESULTS / (name + '.json')}")


if __name__ == "__main__":
    main()
    import sections  # docs/benchmarks.md: the sections this benchmark's results feed
    sections.write_sections("machine", "targets", "recall")

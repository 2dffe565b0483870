"""The shipped int8 model (all-MiniLM-L6-v2-int8) against float32: speed, recall, ingest.

    .venv/bin/python tests/benchmarks/bench_int8.py [--chunks 160] [--repeat 3] [--recall] [--ingest-every 3]

* speed: both models embed the same recursive 256/32 chunks of the manual, the order alternating,
  best of ``--repeat``; model tokens/s and the ratio.
* ``--recall``: the int8 model's recall on bench_recall.py's heading queries with recursive 256/32
  chunks (exact MaxP over every chunk, as bench_recall scores float32; float32's figure is taken from
  results/recall.json, made on the same chunks). Embeds the whole manual once (cached by fingerprint).
* ``--ingest-every N``: the engine loads every Nth page of the manual into bench_ingest.py's table
  (a truncate and a recursive 256/32 column) once with each model, in slices whose order alternates,
  and reports pages/s; with the DIY pipeline's pages/s recorded in results/ingest.json (same table,
  whole manual) it gives int8's ratio to DIY two ways: directly, and as (int8 / float32 measured
  here, side by side) x (float32 / DIY recorded).

Writes results/int8.json.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

from tesseradb.embed import get_model  # noqa: E402

INT8 = "all-MiniLM-L6-v2-int8"
REC = common.Config("recursive", 256, 32)


def speed(f32, i8, docs, n_chunks: int, repeat: int) -> dict:
    chunks = [c for p in docs[40:80] for c in common.plan(f32, p.text, REC)][:n_chunks]
    tokens = common.model_tokens(f32, chunks)
    models = {"float32": f32, "int8": i8}
    for m in models.values():
        m.embed(chunks[:4])
    times: dict[str, list[float]] = {n: [] for n in models}
    for r in range(repeat):
        for n in (list(models) if r % 2 == 0 else list(models)[::-1]):
            started = time.perf_counter()
            models[n].embed(chunks)
            times[n].append(time.perf_counter() - started)
    cos = (f32.embed(chunks) * i8.embed(chunks)).sum(axis=1)
    out = {"chunks": len(chunks), "tokens": tokens, "seconds": times,
           "tokens_per_s": {n: tokens / min(t) for n, t in times.items()},
           "cos_mean": float(cos.mean()), "cos_min": float(cos.min())}
    out["speedup"] = out["tokens_per_s"]["int8"] / out["tokens_per_s"]["float32"]
    common.log(f"speed: {out['tokens_per_s']}, x{out['speedup']:.2f}, cos mean {cos.mean():.4f}")
    return out


def recall(i8, docs) -> dict:
    queries = common.heading_queries(docs)
    per_doc = [(p.doc_id, common.plan(i8, p.text, REC)) for p in docs]
    texts = [t for _, ts in per_doc for t in ts]
    owners = np.array([d for d, ts in per_doc for _ in ts], np.int64)
    cache = common.EmbeddingCache(i8)
    started = time.perf_counter()
    chunk_vecs = cache.get(texts, progress=lambda d, t: common.log(f"int8 recall: {d}/{t} chunks"))
    ranked = common.maxp_rank(i8.embed([q.text for q in queries]), chunk_vecs, owners)
    out = {"vectors": len(texts), "scores": common.score(queries, ranked), "seconds": time.perf_counter() - started,
           "embed_seconds": cache.embed_seconds, "embedded_tokens": cache.embedded_tokens}
    recorded = (common.load_result("recall") or {}).get("configs", {}).get(REC.name)
    if recorded:
        out["float32_recorded"] = {k: recorded["scores"][k] for k in ("deep", "head") if k in recorded.get("scores", {})}
    common.log(f"int8 recursive 256/32: deep {out['scores']['deep']}")
    return out


def ingest(docs, every: int, slices: int = 4) -> dict:
    import tesseradb
    import bench_ingest
    pages = docs[::every]
    parts = [pages[i::slices] for i in range(slices)]
    seconds = {"float32": 0.0, "int8": 0.0}
    per_slice: list[dict] = []
    cons = {}
    for name, model in (("float32", common.MODEL_NAME), ("int8", INT8)):
        path = common.CACHE / f"int8-ingest-{name}.db"
        shutil.rmtree(str(path) + ".tessera", ignore_errors=True)
        path.unlink(missing_ok=True)
        cons[name] = tesseradb.connect(str(path))
        cons[name].cursor().execute(bench_ingest.CREATE.replace(f"'{common.MODEL_NAME}'", f"'{model}'"))
    for n, part in enumerate(parts):
        for name in (("float32", "int8") if n % 2 == 0 else ("int8", "float32")):
            started = time.perf_counter()
            cons[name].cursor().executemany(bench_ingest.INSERT, [(p.doc_id, p.path, p.text) for p in part])
            cons[name].commit()
            seconds[name] += time.perf_counter() - started
            per_slice.append({"slice": n + 1, "model": name, "seconds": time.perf_counter() - started,
                              "loadavg": common.loadavg()})
            common.log(f"ingest slice {n + 1}/{slices} {name}: {time.perf_counter() - started:.1f} s")
    for con in cons.values():
        con.close()
    out = {"pages": len(pages), "slices": slices, "seconds": seconds, "per_slice": per_slice,
           "pages_per_s": {n: len(pages) / s for n, s in seconds.items()}}
    out["int8_over_float32"] = out["pages_per_s"]["int8"] / out["pages_per_s"]["float32"]
    summary = (common.load_result("ingest") or {}).get("summary", {})
    diy, engine = summary.get("diy_pages_per_s"), summary.get("engine_pages_per_s")
    if diy and engine:
        out["recorded"] = {"diy_pages_per_s": diy, "float32_engine_pages_per_s": engine,
                           "engine_vs_diy_pages": summary.get("engine_vs_diy_pages")}
        out["int8_over_diy_via_ratio"] = out["int8_over_float32"] * engine / diy
        out["int8_over_diy_direct"] = out["pages_per_s"]["int8"] / diy  # other pages, other machine load
    common.log(f"ingest: {out}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=160)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--recall", action="store_true", help="score int8 on the heading queries (embeds the manual)")
    ap.add_argument("--ingest-every", type=int, default=0, metavar="N",
                    help="engine ingest of every Nth page with each model (0: skip)")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--out", default="int8", help="result name (runs made side by side write separate files)")
    args = ap.parse_args()
    docs = common.pages()
    f32, i8 = common.model(), get_model(INT8)
    i8.embed(["warm up"])
    out = (common.load_result(args.out) or {}) | {"loadavg_start": common.loadavg(), "int8_fingerprint": i8.fingerprint}
    if not args.no_speed:
        out["speed"] = speed(f32, i8, docs, args.chunks, args.repeat) | {"int8_fingerprint": i8.fingerprint}
    if args.recall:
        out["recall"] = recall(i8, docs) | {"int8_fingerprint": i8.fingerprint}
    if args.ingest_every:
        out["ingest"] = ingest(docs, args.ingest_every) | {"int8_fingerprint": i8.fingerprint}
    out["loadavg_end"] = common.loadavg()
    common.save_result(args.out, (common.load_result(args.out) or {}) | out)


if __name__ == "__main__":
    main()
    import sections  # docs/benchmarks.md: the sections this benchmark's results feed
    sections.write_sections("int8")

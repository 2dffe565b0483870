"""Ingest: the engine loading Manticore's manual vs the bare model vs a do-it-yourself pipeline.

    .venv/bin/python tests/benchmarks/bench_ingest.py            # needs the 'bench' extra for the DIY side
    .venv/bin/python tests/benchmarks/bench_ingest.py --slices 6 --bare-every 1 --no-diy

Three systems load the same 189 pages, interleaved slice by slice in a rotating order so that a
busy machine slows all three alike (the pages are dealt, largest first, into ``--slices`` slices of similar size):

* **engine** - ``executemany("INSERT INTO manual (id, title, body) VALUES (?, ?, ?)")`` + ``commit()``
  into a table with a ``truncate`` column and a ``recursive`` 256/32 column (both all-MiniLM-L6-v2,
  from='body'); then the FAISS indexes are built (the first knn() of each column) and the
  connection closed (index files written). All of that is the load time.
* **bare** - in the same process, on the same model object: ``model.embed()`` of exactly the chunk
  strings the engine embedded (the engine's own planner makes them; the stored vectors are checked
  against the bare ones afterwards). Chunk planning is done before the clock starts: it is part of
  the engine's overhead, not of the model's work. ``--bare-every 2`` runs it on every other slice
  only (the ratio then compares the engine and the model on those slices).
* **diy** - in a child process: langchain-text-splitters ``RecursiveCharacterTextSplitter``
  (256 tokens / 32 overlap, counted with the model's tokenizer), sentence-transformers
  all-MiniLM-L6-v2 on PyTorch CPU (from the same packaged weights; nothing is downloaded),
  Chroma ``PersistentClient`` (cosine HNSW), chunk hits folded to pages in Python.

Afterwards both sides answer every unique section heading of the manual (see common.py): the
engine through the DB-API (``knn(col, 10, ?)``), the DIY side with ``encode`` + ``query`` (100 chunk
hits folded to pages). Writes tests/benchmarks/results/ingest.json, keeps the loaded database
under the cache directory for bench_query.py, and puts the vectors into the embedding cache of
bench_recall.py.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import CACHE, Config, log  # noqa: E402

REC = Config("recursive", 256, 32)
TRUNC = Config("truncate")
DB_PATH = CACHE / "manual.db"
CHROMA_PATH = CACHE / "chroma-manual"
DIY_CHUNK_TOKENS, DIY_OVERLAP = 256, 32
DIY_FETCH = 100  # chunk hits asked of Chroma per query, folded to pages

CREATE = ("CREATE TABLE manual (title string, body text, "
          f"v_trunc float_vector knn_type='hnsw' model_name='{common.MODEL_NAME}' from='body', "
          f"v_rec float_vector_array knn_type='hnsw' model_name='{common.MODEL_NAME}' from='body' "
          f"chunk_strategy='recursive' max_tokens={REC.max_tokens} overlap_tokens={REC.overlap})")
INSERT = "INSERT INTO manual (id, title, body) VALUES (?, ?, ?)"
KNN = "SELECT id FROM manual WHERE knn({col}, 10, ?)"
COLUMNS = {"v_trunc": TRUNC, "v_rec": REC}


# == the engine and the bare model (this process) ===================================================
class EngineTimer:
    """Wraps tesseradb.sql.write.embed_texts and the model's embed to split the engine's time by part."""

    def __init__(self, model) -> None:
        from tesseradb.sql import write as dml
        self.per_column: dict[str, float] = {}
        self.model_seconds = 0.0
        self.active = False
        inner_texts, inner_embed = dml.embed_texts, model.embed

        def embed_texts(db, spec, texts, labels):
            started = time.perf_counter()
            try:
                return inner_texts(db, spec, texts, labels)
            finally:
                self.per_column[spec.column] = self.per_column.get(spec.column, 0.0) + time.perf_counter() - started

        def embed(texts, **kw):
            started = time.perf_counter()
            try:
                return inner_embed(texts, **kw)
            finally:
                if self.active:
                    self.model_seconds += time.perf_counter() - started

        dml.embed_texts = embed_texts
        model.embed = embed


def engine_slice(con, docs) -> float:
    started = time.perf_counter()
    con.cursor().executemany(INSERT, [(p.doc_id, p.path, p.text) for p in docs])
    con.commit()
    return time.perf_counter() - started


def bare_slice(model, pieces: dict[str, list[str]]) -> tuple[float, dict[str, np.ndarray]]:
    out, seconds = {}, 0.0
    for col, texts in pieces.items():  # the engine embeds column by column, all rows of the statement at once
        started = time.perf_counter()
        out[col] = model.embed(texts)
        seconds += time.perf_counter() - started
    return seconds, out


# == the DIY pipeline (child process) ==============================================================
def diy_worker() -> None:
    """Line protocol on stdin/stdout: one JSON command per line, one JSON answer per line."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    out = sys.stdout
    sys.stdout = sys.stderr  # libraries' prints must not break the protocol
    state: dict = {}

    def reply(obj: dict) -> None:
        out.write(json.dumps(obj) + "\n")
        out.flush()

    for line in sys.stdin:
        cmd = json.loads(line)
        op = cmd["op"]
        if op == "init":
            reply(_diy_init(state, cmd))
        elif op == "load":
            reply(_diy_load(state, cmd["docs"]))
        elif op == "query":
            reply(_diy_query(state, cmd["queries"]))
        elif op == "close":
            reply({"hwm_mib": common.vm_hwm_mib()})
            return


def _diy_init(state: dict, cmd: dict) -> dict:
    started = time.perf_counter()
    import chromadb
    import torch
    from chromadb.config import Settings
    from langchain_text_splitters import RecursiveCharacterTextSplitter
    from sentence_transformers import SentenceTransformer

    from tesseradb.embed import default
    st = SentenceTransformer(str(default.package_dir()), device="cpu")
    st.encode(["warm up"])
    splitter = RecursiveCharacterTextSplitter.from_huggingface_tokenizer(
        st.tokenizer, chunk_size=DIY_CHUNK_TOKENS, chunk_overlap=DIY_OVERLAP)
    shutil.rmtree(cmd["path"], ignore_errors=True)
    client = chromadb.PersistentClient(cmd["path"], settings=Settings(anonymized_telemetry=False))
    col = client.create_collection("manual", configuration={"hnsw": {"space": "cosine"}}, embedding_function=None)
    state.update(st=st, splitter=splitter, client=client, col=col, max_batch=client.get_max_batch_size(),
                 pages={p.doc_id: p.text for p in common.pages()}, next_id=0)
    import chromadb as _c
    import langchain_text_splitters as _l
    import sentence_transformers as _s
    return {"seconds": time.perf_counter() - started, "torch": torch.__version__, "torch_threads": torch.get_num_threads(),
            "sentence_transformers": _s.__version__, "chromadb": _c.__version__,
            "langchain_text_splitters": getattr(_l, "__version__", "?"), "max_seq_length": st.max_seq_length}


def _diy_load(state: dict, doc_ids: list[int]) -> dict:
    st, splitter, col = state["st"], state["splitter"], state["col"]
    t0 = time.perf_counter()
    chunks, pages = [], []
    for d in doc_ids:
        for piece in splitter.split_text(state["pages"][d]):
            chunks.append(piece)
            pages.append(d)
    t1 = time.perf_counter()
    vectors = st.encode(chunks, normalize_embeddings=True, convert_to_numpy=True)
    t2 = time.perf_counter()
    ids = [str(state["next_id"] + i) for i in range(len(chunks))]
    state["next_id"] += len(chunks)
    step = state["max_batch"]
    for s in range(0, len(chunks), step):
        col.add(ids=ids[s:s + step], embeddings=vectors[s:s + step], documents=chunks[s:s + step],
                metadatas=[{"page": p} for p in pages[s:s + step]])
    t3 = time.perf_counter()
    tok = st.tokenizer
    tokens = sum(min(len(tok.tokenize(c)), st.max_seq_length - 2) + 2 for c in chunks)
    return {"seconds": t3 - t0, "split": t1 - t0, "encode": t2 - t1, "add": t3 - t2, "chunks": len(chunks),
            "tokens": tokens}


def _diy_query(state: dict, queries: list[str]) -> dict:
    st, col = state["st"], state["col"]
    ranked, ms = [], []
    for q in queries:
        started = time.perf_counter()
        vec = st.encode([q], normalize_embeddings=True, convert_to_numpy=True)
        hits = col.query(query_embeddings=vec, n_results=DIY_FETCH, include=["metadatas", "distances"])
        best: dict[int, float] = {}
        for meta, dist in zip(hits["metadatas"][0], hits["distances"][0]):
            page = meta["page"]
            if page not in best or dist < best[page]:
                best[page] = dist
        ranked.append([p for p, _ in sorted(best.items(), key=lambda h: (h[1], h[0]))[:10]])
        ms.append((time.perf_counter() - started) * 1000)
    return {"ranked": ranked, "ms": ms, "count": col.count()}


class DiyProcess:
    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, __file__, "--diy-worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, cwd=str(common.REPO))

    def ask(self, **cmd) -> dict:
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit("the DIY worker died (see its stderr above)")
        return json.loads(line)

    def close(self) -> dict:
        got = self.ask(op="close")
        self.proc.wait(timeout=60)
        return got


# == the run =======================================================================================
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--slices", type=int, default=6, help="the pages are loaded in this many interleaved slices")
    ap.add_argument("--bare-every", type=int, default=1,
                    help="run the bare model on every Nth slice (1 = all; 2 halves its time)")
    ap.add_argument("--no-diy", action="store_true", help="skip the DIY pipeline (no 'bench' extra needed)")
    ap.add_argument("--no-queries", action="store_true", help="skip the recall queries")
    ap.add_argument("--pages", type=int, default=0, help="only every Nth page (smoke tests; 0 = all)")
    ap.add_argument("--out", default="ingest", help="result name under tests/benchmarks/results/")
    ap.add_argument("--diy-worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.diy_worker:
        return diy_worker()

    import tesseradb
    result: dict = {"loadavg_start": common.loadavg(), "slices": args.slices, "bare_every": args.bare_every}
    docs = common.pages()
    if args.pages:
        docs = docs[::args.pages]
    queries = common.heading_queries(docs)
    started = time.perf_counter()
    model = common.model()
    result["model_ready_seconds"] = time.perf_counter() - started
    result["hwm_before_load_mib"] = common.vm_hwm_mib()

    # deal the pages, largest first, in a snake over the slices, so the slices carry similar token counts
    by_size = sorted(docs, key=lambda p: -len(model.token_offsets(p.text)))
    snake = [i for _ in range(0, len(docs), 2 * args.slices) for i in [*range(args.slices), *range(args.slices)[::-1]]]
    slices = [sorted((p for p, s in zip(by_size, snake) if s == i), key=lambda p: p.doc_id) for i in range(args.slices)]
    planned = {c: {p.doc_id: common.plan(model, p.text, cfg) for p in docs} for c, cfg in COLUMNS.items()}
    # per slice: {column: chunk strings in row order}, exactly as the engine plans them
    pieces = [{c: [t for p in part for t in planned[c][p.doc_id]] for c in COLUMNS} for part in slices]
    tokens = [{c: common.model_tokens(model, t) for c, t in sl.items()} for sl in pieces]

    diy = None
    if not args.no_diy:
        diy = DiyProcess()
        result["diy_init"] = diy.ask(op="init", path=str(CHROMA_PATH))
        log(f"DIY worker ready: {result['diy_init']}")

    for path in (DB_PATH, Path(str(DB_PATH) + ".tessera"), Path(str(DB_PATH) + "-wal"), Path(str(DB_PATH) + "-shm")):
        shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
    timer = EngineTimer(model)
    con = tesseradb.connect(str(DB_PATH))
    con.cursor().execute(CREATE)
    con.commit()

    systems = ["engine", "bare", "diy"] if diy else ["engine", "bare"]
    per_slice = []
    bare_vectors: dict[str, list[np.ndarray]] = {"v_trunc": [], "v_rec": []}
    for i, part in enumerate(slices):
        order = systems[i % len(systems):] + systems[:i % len(systems)]
        row = {"pages": len(part), "tokens": tokens[i], "chunks": {c: len(t) for c, t in pieces[i].items()},
               "order": order, "loadavg": common.loadavg()}
        for system in order:
            if system == "engine":
                timer.active, timer.model_seconds, before = True, 0.0, dict(timer.per_column)
                row["engine"] = engine_slice(con, part)
                timer.active = False
                row["engine_model"] = timer.model_seconds
                row["engine_columns"] = {c: timer.per_column[c] - before.get(c, 0.0) for c in timer.per_column}
            elif system == "bare" and i % args.bare_every == 0:
                row["bare"], vecs = bare_slice(model, pieces[i])
                for c, v in vecs.items():
                    bare_vectors[c].append(v)
            elif system == "diy":
                row["diy"] = diy.ask(op="load", docs=[p.doc_id for p in part])
        per_slice.append(row)
        log(f"slice {i + 1}/{len(slices)}: " + json.dumps({k: row[k] for k in ("engine", "bare") if k in row})
            + (f" diy {row['diy']['seconds']:.1f}s" if "diy" in row else ""))
    result["per_slice"] = per_slice

    # the FAISS indexes: built on each column's first knn(), then saved by close()
    started = time.perf_counter()
    for col in ("v_trunc", "v_rec"):
        con.cursor().execute(KNN.format(col=col), ("warm up the index",)).fetchall()
    result["engine_index_build"] = time.perf_counter() - started
    started = time.perf_counter()
    con.close()
    result["engine_close"] = time.perf_counter() - started
    result["engine_hwm_mib"] = common.vm_hwm_mib()
    result["disk_bytes"] = {"sqlite": common.dir_size(DB_PATH),
                            "indexes": common.dir_size(Path(str(DB_PATH) + ".tessera"))}
    result["loadavg_after_load"] = common.loadavg()

    # what the engine stored is what the bare model made of the same chunks; seed bench_recall's cache
    con = tesseradb.connect(str(DB_PATH))
    cache = common.EmbeddingCache(model)
    bare_docs = [p.doc_id for i, part in enumerate(slices) if i % args.bare_every == 0 for p in part]
    check = {}
    for c in COLUMNS:
        stored = {d: np.asarray(v, np.float32).reshape(-1, model.dims)
                  for d, v in con.cursor().execute(f"SELECT id, {c} FROM manual").fetchall()}
        cache.put([t for d in sorted(stored) for t in planned[c][d]], np.vstack([stored[d] for d in sorted(stored)]))
        bare = np.vstack(bare_vectors[c]) if bare_vectors[c] else np.zeros((0, model.dims), np.float32)
        mine = np.vstack([stored[d] for d in bare_docs]) if bare_docs else bare
        same = mine.shape == bare.shape
        check[c] = {"vectors": int(sum(len(v) for v in stored.values())), "compared": int(len(bare)),
                    "same_count": bool(same and all(len(stored[d]) == len(planned[c][d]) for d in stored)),
                    "max_abs_diff": float(np.abs(mine - bare).max()) if same and len(bare) else None}
    result["stored_vs_bare"] = check
    result["vectors_stored"] = {c: check[c]["vectors"] for c in COLUMNS}
    log(f"stored vs bare: {check}")

    if not args.no_queries:
        for col, cfg in COLUMNS.items():
            ranked, ms = [], []
            cur = con.cursor()
            for q in queries:
                t = time.perf_counter()
                ranked.append([r[0] for r in cur.execute(KNN.format(col=col), (q.text,)).fetchall()])
                ms.append((time.perf_counter() - t) * 1000)
            result.setdefault("engine_recall", {})[cfg.name] = common.score(queries, ranked)
            result.setdefault("engine_query_ms", {})[cfg.name] = {
                "note": "first run of each heading in this process (query embedding included)",
                "p50": common.percentile(ms, 50), "p99": common.percentile(ms, 99), "n": len(ms)}
            log(f"engine {cfg.name}: {result['engine_recall'][cfg.name]['deep']}")
    con.close()

    if diy:
        if not args.no_queries:
            got = diy.ask(op="query", queries=[q.text for q in queries])
            result["diy_recall"] = common.score(queries, got["ranked"])
            result["diy_query_ms"] = {"p50": common.percentile(got["ms"], 50), "p99": common.percentile(got["ms"], 99),
                                      "n": len(got["ms"])}
            result["diy_vectors"] = got["count"]
            log(f"diy: {result['diy_recall']['deep']}")
        result["diy_hwm_mib"] = diy.close()["hwm_mib"]
        result["diy_disk_bytes"] = common.dir_size(CHROMA_PATH)

    summarize(result, len(docs))
    result["loadavg_end"] = common.loadavg()
    path = common.save_result(args.out, result)
    log(f"wrote {path}")
    print(json.dumps(result["summary"], indent=1))


def summarize(r: dict, n_pages: int) -> None:
    rows = r["per_slice"]
    bare_rows = [s for s in rows if "bare" in s]
    tok = lambda ss: sum(sum(s["tokens"].values()) for s in ss)  # noqa: E731
    eng_all = sum(s["engine"] for s in rows) + r["engine_index_build"] + r["engine_close"]
    eng_on_bare = sum(s["engine"] for s in bare_rows)
    bare = sum(s["bare"] for s in bare_rows)
    summary = {
        "pages": n_pages,
        "tokens": tok(rows),
        "engine_load_seconds": eng_all,
        "engine_slices_seconds": sum(s["engine"] for s in rows),
        "engine_index_build_seconds": r["engine_index_build"],
        "engine_close_seconds": r["engine_close"],
        "engine_model_seconds": sum(s["engine_model"] for s in rows),
        "engine_column_seconds": {c: sum(s["engine_columns"].get(c, 0.0) for s in rows) for c in ("v_trunc", "v_rec")},
        "engine_tokens_per_s": tok(rows) / eng_all,
        "engine_pages_per_s": n_pages / eng_all,
        "engine_chunks_per_s": sum(sum(s["chunks"].values()) for s in rows) / eng_all,
        # the ratio: same slices, same chunks; the engine's index build and close are spread by tokens
        "bare_tokens": tok(bare_rows),
        "bare_seconds": bare,
        "bare_tokens_per_s": tok(bare_rows) / bare if bare else None,
        "engine_tokens_per_s_same_slices": tok(bare_rows) / (eng_on_bare + (r["engine_index_build"] + r["engine_close"])
                                                              * tok(bare_rows) / tok(rows)) if bare else None,
    }
    if bare:
        summary["engine_vs_bare"] = summary["engine_tokens_per_s_same_slices"] / summary["bare_tokens_per_s"]
    diy_rows = [s["diy"] for s in rows if "diy" in s]
    if diy_rows:
        d = sum(s["seconds"] for s in diy_rows)
        summary.update({
            "diy_seconds": d, "diy_pages_per_s": n_pages / d, "diy_chunks": sum(s["chunks"] for s in diy_rows),
            "diy_tokens": sum(s["tokens"] for s in diy_rows), "diy_tokens_per_s": sum(s["tokens"] for s in diy_rows) / d,
            "diy_split_seconds": sum(s["split"] for s in diy_rows), "diy_encode_seconds": sum(s["encode"] for s in diy_rows),
            "diy_add_seconds": sum(s["add"] for s in diy_rows),
            # the engine's recursive column alone (its truncate column's chunking+embedding time taken out)
            "engine_rec_only_seconds": eng_all - summary["engine_column_seconds"]["v_trunc"],
        })
        summary["engine_vs_diy_pages"] = (n_pages / eng_all) / summary["diy_pages_per_s"]
        summary["engine_rec_only_vs_diy_pages"] = d / summary["engine_rec_only_seconds"]
    r["summary"] = summary


if __name__ == "__main__":
    main()
    import sections  # docs/benchmarks.md: the sections this benchmark's results feed
    sections.write_sections("machine", "targets", "recall", "ingest", "memory-disk", "engine-notes")

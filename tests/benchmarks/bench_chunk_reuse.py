"""Chunk reuse, MODIFY COLUMN and the passage functions, on the manual (docs/benchmarks.md#chunk-reuse).

    .venv/bin/python tests/benchmarks/bench_chunk_reuse.py                 # every stage
    .venv/bin/python tests/benchmarks/bench_chunk_reuse.py --stages load,passages,resync
    .venv/bin/python tests/benchmarks/bench_chunk_reuse.py --pages 60      # a subset (say so when quoting)

Stages (each adds its part to tests/benchmarks/results/chunk_reuse.json):

* ``load``: the manual into ``manual (title string, body text, v_rec recursive 256/32)`` in a fresh
  database under ``--dir``; time of executemany + commit (the index is built at commit). The time
  spent computing chunk keys and looking them up (``embed.reuse.chunk_key`` / ``stored_vectors``) is
  measured inside the load: the hashing-and-lookup overhead.
* ``passages``: k=10 text queries (section headings) with and without ``knn_chunk_text()``, each
  text embedded once first (the model's query cache), then the two forms timed alternately.
* ``resync``: 10 pages get a paragraph inserted, then all pages are written again with REPLACE
  (executemany + commit) on a copy of the loaded database: time against the load, chunks reused /
  embedded; the edited pages and 10 unchanged ones are checked bit for bit against the model run
  directly on their chunk texts.
* ``modify``: ``ALTER TABLE manual MODIFY COLUMN v_rec ...`` to 256/0 and to 128/32, each on its own
  copy of the loaded database (statement + commit, which rebuilds the index), against loading a
  fresh database whose column has those settings.
"""
from __future__ import annotations

import argparse
import tempfile
import re
import shutil
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import log, percentile  # noqa: E402

import tesseradb  # noqa: E402
from tesseradb.embed import chunking, reuse  # noqa: E402
from tesseradb.storage.chunk_table import ColumnLayout, create_chunk_table, write_chunks  # noqa: E402
from tesseradb.storage.rowstore import RowStore  # noqa: E402

MODEL = "Xenova/all-MiniLM-L6-v2"
SETTINGS = {"256/32": (256, 32), "256/0": (256, 0), "128/32": (128, 32)}
INSERT = "INSERT INTO manual (id, title, body) VALUES (?, ?, ?)"
REPLACE = "REPLACE INTO manual (id, title, body) VALUES (?, ?, ?)"
PARAGRAPH = ("\n\nNote added in the re-sync benchmark: this paragraph was inserted to change the page, "
             "as an editor would when a behaviour changes between releases.\n\n")


def column_sql(tokens: int, overlap: int) -> str:
    return (f"v_rec float_vector_array knn_type='hnsw' hnsw_similarity='cosine' model_name='{MODEL}' "
            f"from='body' chunk_strategy='recursive' max_tokens='{tokens}' overlap_tokens='{overlap}'")


def create_sql(tokens: int, overlap: int) -> str:
    return f"CREATE TABLE manual (title string, body text, {column_sql(tokens, overlap)})"


class KeyTimer:
    """Time spent in chunk keys and their lookups (wraps the module functions embed_pieces calls)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        for name in ("chunk_key", "stored_vectors"):
            setattr(reuse, name, self._timed(getattr(reuse, name)))

    def _timed(self, fn):
        def wrapper(*args, **kw):
            started = time.perf_counter()
            try:
                return fn(*args, **kw)
            finally:
                self.seconds += time.perf_counter() - started
        return wrapper


def reuse_counts(con) -> dict:
    reused = embedded = 0
    for level, _, message in con.warnings:
        match = re.search(r"([\d,]+) of ([\d,]+) chunks reused.*; ([\d,]+) embedded", message)
        if level == "Note" and match:
            reused += int(match.group(1).replace(",", ""))
            embedded += int(match.group(3).replace(",", ""))
    return {"reused": reused, "embedded": embedded}


def fresh_db(path: Path) -> None:
    for p in (path, Path(str(path) + ".tessera"), Path(str(path) + "-wal"), Path(str(path) + "-shm")):
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()


def copy_db(src: Path, dst: Path) -> None:
    fresh_db(dst)
    shutil.copy(src, dst)
    if Path(str(src) + ".tessera").exists():
        shutil.copytree(Path(str(src) + ".tessera"), Path(str(dst) + ".tessera"))


def load(path: Path, pages, tokens: int, overlap: int, timer: KeyTimer | None = None) -> dict:
    fresh_db(path)
    con = tesseradb.connect(str(path))
    con.cursor().execute(create_sql(tokens, overlap))
    con.commit()
    keys_before = timer.seconds if timer else 0.0
    started = time.perf_counter()
    con.cursor().executemany(INSERT, [(p.doc_id, p.path, p.text) for p in pages])
    counts = reuse_counts(con)
    con.commit()
    seconds = time.perf_counter() - started
    vectors = con.cursor().execute("SELECT SUM(LENGTH(v_rec)) FROM manual").fetchone()[0]
    con.close()
    out = {"seconds": seconds, "vectors": vectors, **counts, "loadavg": common.loadavg()}
    if timer:
        out["key_seconds"] = timer.seconds - keys_before
        out["key_share"] = out["key_seconds"] / seconds
    return out


def stage_load(args, pages, result) -> None:
    timer = KeyTimer()
    log(f"load: {len(pages)} pages into recursive 256/32")
    result["load"] = load(args.dir / "manual.db", pages, 256, 32, timer)
    log(f"load: {result['load']}")


def _timed(cur, sql: str, text: str, wall: list[float], cpu: list[float]) -> None:
    started, cpu_started = time.perf_counter(), time.process_time()
    cur.execute(sql, [text]).fetchall()
    wall.append((time.perf_counter() - started) * 1000)
    cpu.append((time.process_time() - cpu_started) * 1000)


def _summary(wall: list[float], cpu: list[float]) -> dict:
    return {"p50": percentile(wall, 50), "p99": percentile(wall, 99), "cpu_p50": percentile(cpu, 50),
            "cpu_mean": float(np.mean(cpu)), "n": len(wall)}


def stage_passages(args, pages, result) -> None:
    """Wall time and CPU time (process_time: all threads, the model's included) per query; on a shared
    machine the CPU time is the steadier figure."""
    con = tesseradb.connect(str(args.dir / "manual.db"))
    cur = con.cursor()
    texts = [q.text for q in common.heading_queries(pages)]
    rng = np.random.default_rng(12)
    texts = [texts[i] for i in rng.choice(len(texts), min(args.queries, len(texts)), replace=False)]
    forms = {"plain": "SELECT id FROM manual WHERE knn(v_rec, 10, ?)",
             "knn_chunk_text": "SELECT id, knn_chunk_text() FROM manual WHERE knn(v_rec, 10, ?)"}
    for sql in forms.values():
        cur.execute(sql, ["open the index"]).fetchall()
    model = common.model()
    times = {f"{name}{kind}": ([], []) for name in forms for kind in ("_uncached", "")}
    for n, t in enumerate(texts):                     # the query text embedded every time
        for name in (list(forms) if n % 2 == 0 else list(forms)[::-1]):
            model._queries.clear()                    # the model's query-text cache
            _timed(cur, forms[name], t, *times[f"{name}_uncached"])
    for n, t in enumerate(texts * args.repeats):      # each text's embedding cached from here on
        for name in (list(forms) if n % 2 == 0 else list(forms)[::-1]):
            _timed(cur, forms[name], t, *times[name])
    con.close()
    out = {name: _summary(*pair) for name, pair in times.items()}
    for kind in ("", "_uncached"):
        base, with_text = out[f"plain{kind}"], out[f"knn_chunk_text{kind}"]
        out[f"overhead_p50{kind}"] = with_text["p50"] / base["p50"] - 1
        out[f"overhead_cpu_p50{kind}"] = with_text["cpu_p50"] / base["cpu_p50"] - 1
    out["loadavg"] = common.loadavg()
    result["passages"] = out
    log(f"passages: {out}")


def edited_pages(pages, count: int = 10):
    step = max(1, len(pages) // count)
    chosen = {p.doc_id for p in pages[::step][:count]}
    out = []
    for p in pages:
        text = p.text
        if p.doc_id in chosen:
            cut = text.find("\n\n", len(text) // 2)
            cut = cut if cut >= 0 else len(text)
            text = text[:cut] + PARAGRAPH + text[cut:].lstrip("\n")
        out.append((p.doc_id, p.path, text))
    return out, chosen


def stage_resync(args, pages, result) -> None:
    path = args.dir / "resync.db"
    copy_db(args.dir / "manual.db", path)
    rows, chosen = edited_pages(pages)
    con = tesseradb.connect(str(path))
    started = time.perf_counter()
    con.cursor().executemany(REPLACE, rows)
    counts = reuse_counts(con)
    con.commit()
    seconds = time.perf_counter() - started
    checked = verify(con, [r for r in rows if r[0] in chosen] + [r for r in rows if r[0] not in chosen][:10])
    con.close()
    out = {"seconds": seconds, "pages": len(rows), "edited": sorted(chosen), **counts, "checked": checked,
           "loadavg": common.loadavg()}
    if "load" in result:
        out["share_of_load"] = seconds / result["load"]["seconds"]
    result["resync"] = out
    log(f"resync: {out}")


def verify(con, rows) -> dict:
    """Stored vectors of these pages against the model run directly on their chunk texts."""
    model = common.model()
    equal = 0
    for doc_id, _, text in rows:
        plan = chunking.plan_chunks(text, model.token_offsets(text), strategy="recursive", max_tokens=256,
                                    overlap_tokens=32, window=model.window)
        fresh = model.embed([text[c.start:c.end] for c in plan.chunks])
        (stored,) = con.cursor().execute("SELECT v_rec FROM manual WHERE id = ?", [doc_id]).fetchone()
        equal += bool(np.array_equal(np.asarray(stored, dtype=np.float32), fresh))
    return {"pages": len(rows), "bit_identical": equal}


def stage_modify(args, pages, result) -> None:
    out = result.setdefault("modify", {})
    for name in args.targets.split(","):
        tokens, overlap = SETTINGS[name]
        path = args.dir / f"modify-{name.replace('/', '-')}.db"
        copy_db(args.dir / "manual.db", path)
        con = tesseradb.connect(str(path))
        log(f"modify: 256/32 -> {name}")
        started = time.perf_counter()
        con.cursor().execute(f"ALTER TABLE manual MODIFY COLUMN {column_sql(tokens, overlap)}")
        statement = time.perf_counter() - started
        counts = reuse_counts(con)
        con.commit()
        seconds = time.perf_counter() - started
        vectors = con.cursor().execute("SELECT SUM(LENGTH(v_rec)) FROM manual").fetchone()[0]
        con.close()
        log(f"fresh load at {name}")
        fresh = load(args.dir / f"fresh-{name.replace('/', '-')}.db", pages, tokens, overlap)
        out[name] = {"seconds": seconds, "statement_seconds": statement, "vectors": vectors, **counts,
                     "fresh": fresh, "ratio_to_fresh": seconds / fresh["seconds"], "loadavg": common.loadavg()}
        log(f"modify {name}: {out[name]}")
        common.save_result(args.result, result)


def stage_keyindex(args, pages, result) -> None:
    """What the key column and its index add to writing chunk rows (the part of the keys' cost that the
    load stage's timer cannot see: SQLite's own work), CPU time for as many rows as the manual has."""
    n = (result.get("load") or {}).get("vectors") or 5414
    rows = [(i // 29, i % 29, i * 100, i * 100 + 120, reuse.chunk_key("bench", str(i))) for i in range(n)]
    out = {}
    for with_key in (False, True, False, True):
        path = args.dir / f"keyindex-{with_key}.db"
        fresh_db(path)
        store = RowStore(str(path))
        layout = ColumnLayout("t", "v", "_tessera_chunks_t_v", True, 384, "cosine", 16, 200)
        store.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)")
        create_chunk_table(store, layout)
        if not with_key:
            store.execute(f"DROP INDEX \"{layout.chunks}_key\"")
        started = time.process_time()
        store.begin()
        write_chunks(store, layout, rows if with_key else [r[:4] for r in rows])
        store.commit()
        out["with_key" if with_key else "without_key"] = time.process_time() - started
        store.close()
    out["rows"] = n
    result["keyindex"] = out
    log(f"keyindex: {out}")


STAGES = {"keyindex": stage_keyindex, "load": stage_load, "passages": stage_passages, "resync": stage_resync, "modify": stage_modify}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--stages", default="load,passages,resync,modify")
    parser.add_argument("--pages", type=int, default=0, help="only the first N pages (0: all)")
    parser.add_argument("--queries", type=int, default=150)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--targets", default="256/0,128/32")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "tessera-bench-reuse")
    parser.add_argument("--result", default="chunk_reuse", help="results/<name>.json to add to")
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    pages = common.pages()
    if args.pages:
        pages = pages[:args.pages]
    result = common.load_result(args.result) or {}
    result.update({"pages": len(pages), "machine": common.machine()})
    for stage in args.stages.split(","):
        STAGES[stage](args, pages, result)
        common.save_result(args.result, result)


if __name__ == "__main__":
    main()
    import sections  # docs/benchmarks.md: the sections this benchmark's results feed
    sections.write_sections("chunk-reuse")

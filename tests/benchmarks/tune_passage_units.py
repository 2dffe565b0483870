"""How passage_units' parameters were chosen (issue 32): a sweep on the TUNING questions only.

    TESSERA_BENCH_CORPUS=path/to/manticore_manual nice .venv/bin/python tests/benchmarks/tune_passage_units.py

It reads the tuning set of bench_passages.py and never a held-out one. On the kept database of
``tessera index``'s table without units (bench_passage_units.paths()), for each tuning question: the
first ``hybrid_match`` document, its chunks with the engine's score without units (similarity + BM25 /
the document's best, bench_passages._score), and each chunk's context line as stored. Then for each
unit kind (sentences, or the pieces joined into overlapping windows of 200 or 300 characters, or into
non-overlapping groups of at least 200), read with or without the context line, each number of
candidates (the best C chunks by the engine's score) and weight W: the chunk with the highest score
+ W x (the best cosine of the query's vector to its units) is the passage, and the questions whose
quote it holds are counted. The units are embedded here with the column's model (kept in a pickle
under the bench cache between runs); in the engine they are made when the row is embedded.

The sweep (results/passage_units_tuning.json; 96 questions, the engine without units: 65), best of
each kind: windows of 200 with the context line 71 (C 8 or 12, W 6; C 5 / W 4: 67, C 8 / W 4: 68,
C 8 / W 8: 69), without it 66; windows of 300 67 and 63; sentences 67 and 65; non-overlapping groups
of 200 67 and 65. The engine uses windows of 200, the context line, C 8, W 6
(engine/vectors/passage_units.py), chosen before any held-out figure of it was read.
"""
from __future__ import annotations

import itertools
import json
import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_passage_units  # noqa: E402
import bench_passages  # noqa: E402
import common  # noqa: E402

import tesseradb  # noqa: E402
from tesseradb.embed import units  # noqa: E402
from tesseradb.embed.chunk_context import embedded_text  # noqa: E402


def groups(text: str, size: int) -> list[str]:
    """Pieces joined into non-overlapping groups of at least ``size`` characters (a short tail joins the last)."""
    out, current = [], ""
    for piece in units.pieces(text):
        current = f"{current}\n{piece}" if current else piece
        if len(current) >= size:
            out.append(current)
            current = ""
    if current:
        if out and len(current) < size // 2:
            out[-1] += "\n" + current
        else:
            out.append(current)
    return out or [text]


KINDS = {"sentences": lambda t: units.pieces(t) or [t], "windows 200": lambda t: units.windows(t, 200), "windows 300": lambda t: units.windows(t, 300),
         "groups 200": lambda t: groups(t, 200)}
CANDIDATES = (3, 5, 8, 12)
WEIGHTS = (1, 2, 4, 6, 8, 12)


def first_documents(path: Path, quotes: list[dict], model) -> list[tuple | None]:
    import apsw
    con = tesseradb.connect(str(path), read_only=True)
    raw = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    table = next(r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                           "AND name LIKE '!_tessera!_chunks!_%' ESCAPE '!'"))
    out = []
    for q in quotes:
        rows = con.execute("SELECT id, knn_chunks(100000) FROM docs WHERE hybrid_match(?, chunks) LIMIT 1",
                           (q["question"],)).fetchall()
        if not rows:
            out.append(None)
            continue
        doc, listed = rows[0]
        chunks = json.loads(listed)
        context = {o + 1: c for o, c in raw.execute(f'SELECT ord, context FROM "{table}" WHERE doc_id = ?', (doc,))}
        score = bench_passages._score(chunks, bench_passages._bm25(str(path), q["question"], doc, (0.0, 1.0)), 1.0)
        out.append((q, chunks, context, score, model.embed_query(q["question"])))
    con.close()
    raw.close()
    return out


def main() -> None:
    before, _ = bench_passage_units.paths()
    quotes = bench_passages.sets(final=False)["tuning"]
    model = bench_passages._model()
    cache_file = common.CACHE / "passages" / "tune_units.pkl"
    cache = pickle.loads(cache_file.read_bytes()) if cache_file.exists() else {}

    def embed(texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in cache]
        if missing:
            cache.update(zip(missing, (v.astype(np.float16) for v in model.embed(missing))))
        return np.stack([cache[t].astype(np.float32) for t in texts])

    data = first_documents(before, quotes, model)
    best = lambda d, key: max(d[1], key=lambda c: (key(c), -c["chunk"]))      # noqa: E731
    base = sum(bench_passages._contains(best(d, lambda c: d[3][c["chunk"]])["text"], d[0]["quote"]) for d in data if d)
    result = {"questions": len(quotes), "engine_without_units": base, "sweep": {}}
    common.log(f"engine without units: {base} of {len(quotes)}")
    for kind, with_context in itertools.product(KINDS, (True, False)):
        fine = []
        for d in data:
            if d is None:
                fine.append(None)
                continue
            q, chunks, context, score, vector = d
            order = sorted(chunks, key=lambda c: (-score[c["chunk"]], c["chunk"]))[:max(CANDIDATES)]
            texts, owner = [], []
            for c in order:
                for u in KINDS[kind](c["text"]):
                    texts.append(embedded_text(context.get(c["chunk"]) if with_context else None, u))
                    owner.append(c["chunk"])
            cos: dict[int, float] = {}
            for chunk, s in zip(owner, (embed(texts) @ vector).tolist()):
                cos[chunk] = max(cos.get(chunk, -1.0), s)
            fine.append((order, cos))
        label = f"{kind}, {'with' if with_context else 'without'} the context line"
        result["sweep"][label] = {}
        for c_n, w in itertools.product(CANDIDATES, WEIGHTS):
            hits = sum(bench_passages._contains(max(f[0][:c_n], key=lambda c: (d[3][c["chunk"]] + w * f[1][c["chunk"]],
                                                                                 -c["chunk"]))["text"], d[0]["quote"])
                       for d, f in zip(data, fine) if d)
            result["sweep"][label][f"C {c_n} W {w}"] = hits
        cache_file.write_bytes(pickle.dumps(cache))
        common.log(f"{label}: best {max(result['sweep'][label].values())} ({json.dumps(result['sweep'][label])})")
    common.save_result("passage_units_tuning", result)


if __name__ == "__main__":
    main()

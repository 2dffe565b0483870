"""The section of bench_models.py: remote models against in-process, and the query prefix."""
from __future__ import annotations

import common
from report_base import PY


def section() -> list[str]:
    r = common.load_result("models")
    lines = ["## Remote models and query prefixes", "", f"`{PY}/bench_models.py` (issue 34; docs/models.md).", ""]
    if r is None:
        return lines + ["Not measured yet."]
    ing = r["ingest"]
    verdict = "**met**" if ing["ratio"] <= 1.3 else "**not met**"
    diff = f"{ing['max_abs_diff']:.1e}" if ing["max_abs_diff"] is not None else "n/a (the chunks differ)"
    lines += [
        f"Run `{r['command']}` at {r['when']}, load average {r['loadavg_start'][0]:.2f} at the start and "
        f"{r['loadavg_end'][0]:.2f} at the end.", "",
        f"Ingest of {r['pages']} pages of the manual ({r['chunks']:,} chunks, recursive 256/32) into a table whose "
        "model runs in-process and into one whose model is an OpenAI-compatible endpoint on the loopback "
        "(the same model behind the published embeddings API):", "",
        "| path | seconds | ratio | requests | texts per request |", "|---|---|---|---|---|",
        f"| in-process (`all-MiniLM-L6-v2`) | {ing['in_process_s']:.1f} | 1.00x | | |",
        f"| HTTP (`openai:all-MiniLM-L6-v2`, batch_size {r['batch_size']}) | {ing['http_s']:.1f} | "
        f"{ing['ratio']:.2f}x | {ing['requests']:,} | {ing['mean_batch']:.1f} |", "",
        f"Target: the HTTP path within 1.3x of in-process, same vectors: {verdict}; the largest difference between "
        f"the two tables' vectors: {diff}.", "",
        f"Recall@10 and MRR@10 over the in-process table's chunks, queries without and with the prefix "
        f"`{r['prefix']!r}`:", "",
        "| queries | n | recall@10 | MRR@10 | recall@10 with prefix | MRR@10 with prefix |", "|---|---|---|---|---|---|",
    ]
    for name, v in r["recall"].items():
        a, b = v["no_prefix"], v["prefix"]
        lines.append(f"| {name} | {v['n']} | {a['recall@10']:.3f} | {a['mrr']:.3f} | {b['recall@10']:.3f} | {b['mrr']:.3f} |")
    lines.append("")
    lines += [f"{note}" for note in r.get("page_notes", [])]
    return lines

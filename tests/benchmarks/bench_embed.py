"""Embedding throughput: plain vs fused graph, and batch sizes. On demand, not collected by pytest.

    python tests/benchmarks/bench_embed.py [--chunks 500] [--tokens 256] [--batches 1,4,8,16,32,64]

"tok/CPU-s" divides by the process CPU time (all threads, spinning off), a figure that other
processes on a busy machine disturb much less than wall-clock time.

Chunks are ~256-token spans of Manticore's manual (the folder TESSERA_BENCH_CORPUS names), cut on
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

from tesseradb.embed import default  # noqa: E402
import onnxruntime as ort  # noqa: E402

import common  # noqa: E402
from tesseradb.embed.model import MAX_ROWS, TOKEN_BUDGET, Model, cpu_count, session_options  # noqa: E402



def load_chunks(model: Model, count: int, tokens: int) -> list[str]:
    chunks: list[str] = []
    corpus = common.corpus()
    for path in sorted(corpus.rglob("*.md")):
        text = path.read_text(encoding="utf-8", errors="replace")
        offsets = model.token_offsets(text)
        for start in range(0, len(offsets) - tokens + 1, tokens):
            chunks.append(text[offsets[start][0]:offsets[start + tokens - 1][1]])
            if len(chunks) == count:
                return chunks
    if not chunks:
        raise SystemExit(f"no text found under {corpus}")
    return chunks


def run_once(model: Model, chunks: list[str], max_rows: int, token_budget: int) -> tuple[float, float]:
    """(wall seconds, process CPU seconds) for one model.embed over all chunks with this batching."""
    model.max_rows, model.token_budget = max_rows, token_budget
    wall, cpu = time.perf_counter(), time.process_time()
    model.embed(chunks)
    return time.perf_counter() - wall, time.process_time() - cpu


def variant_model(graph: bytes, threads: int) -> Model:
    model = Model(default.INFO, str(default.verify_model_files() / default.TOKENIZER), lambda: graph)
    options = session_options()
    options.intra_op_num_threads = threads
    # idle pool threads do not spin (session_options: model.ALLOW_SPINNING), so the CPU-time column
    # counts no waiting
    model._session = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])  # noqa: SLF001
    return model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=500)
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--batches", default="1,4,8,16,32,64", help="batch sizes for the fused graph")
    parser.add_argument("--plain-batches", default="32", help="batch sizes for the plain graph")
    parser.add_argument("--budgets", default="", help="extra token budgets to try with default batching")
    parser.add_argument("--threads", type=int, default=cpu_count(), help="intra-op threads")
    args = parser.parse_args()

    weights = (default.verify_model_files() / default.WEIGHTS).read_bytes()
    started = time.perf_counter()
    plain, _ = default.build_graph(weights, fused=False)
    plain_s = time.perf_counter() - started
    started = time.perf_counter()
    fused, variant = default.build_graph(weights, fused=True)
    fused_s = time.perf_counter() - started
    models = {"plain": variant_model(plain, args.threads), variant: variant_model(fused, args.threads)}
    chunks = load_chunks(models[variant], args.chunks, args.tokens)
    print(f"cpu_count={os.cpu_count()} threads={args.threads} load={os.getloadavg()[0]:.1f}  "
          f"chunks={len(chunks)} x ~{args.tokens} tokens, {args.repeat} interleaved rounds")
    print(f"graph build: plain {plain_s:.2f}s, {variant} {fused_s:.2f}s (load + assemble + fuse)\n")

    configs = [("plain", int(b), int(b) * 10**6) for b in args.plain_batches.split(",") if b]
    configs += [(variant, int(b), int(b) * 10**6) for b in args.batches.split(",") if b]
    configs += [(name, 0, 0) for name in models]  # 0: the defaults (token budget + bucketing)
    configs += [(variant, -int(b), int(b)) for b in args.budgets.split(",") if b]  # <0: budget only
    tokens = sum(len(models[variant].token_offsets(c)) + 2 for c in chunks)
    for model in models.values():
        model.embed(chunks[:8])  # warm up: session creation, first allocations
    # Rounds interleave the configurations so that noise from other processes hits all of them alike.
    times: dict[tuple[str, int], list[tuple[float, float]]] = {(n, b): [] for n, b, _ in configs}
    for _ in range(args.repeat):
        for name, rows, budget in configs:
            max_rows = rows if rows > 0 else MAX_ROWS
            times[name, rows].append(run_once(models[name], chunks, max_rows, budget or TOKEN_BUDGET))
    print(f"{'graph':<8}{'batch':>9}{'best tok/s':>12}{'median tok/s':>14}{'tok/CPU-s':>11}")
    for (name, rows), runs in times.items():
        label = "default" if rows == 0 else str(rows) if rows > 0 else f"tok<={-rows}"
        walls = [w for w, _ in runs]
        cpu = min(c for _, c in runs)
        print(f"{name:<8}{label:>9}{tokens / min(walls):>12.0f}{tokens / statistics.median(walls):>14.0f}"
              f"{tokens / cpu:>11.0f}")
    print(f"\ndefault batching: at most {TOKEN_BUDGET} padded tokens and {MAX_ROWS} rows per batch")

if __name__ == "__main__":
    main()

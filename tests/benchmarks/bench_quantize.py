"""What int8 weights would buy: onnxruntime dynamic quantization of the engine's fused graph.

    .venv/bin/python tests/benchmarks/bench_quantize.py [--chunks 160] [--repeat 3] [--recall]

The engine ships float32 only; this measures a candidate, it changes nothing. Two variants of the
cached fused graph are made with ``onnxruntime.quantization.quantize_dynamic``: every quantizable
operator (the fused Attention included), and MatMul only with per-channel weights. Each is timed
against float32 on the same recursive 256/32 chunks of the manual (best of ``--repeat``, the order
alternating), and its vectors are compared with float32's (cosine). ``--recall`` also scores each
variant on bench_recall.py's queries with recursive 256/32 chunks. Writes results/quantize.json.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

from tesseradb.embed import default  # noqa: E402
from tesseradb.embed.model import Model  # noqa: E402


def quantize(src: Path, dst: Path, **kw) -> float:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    import onnxruntime.quantization.quant_utils as qu
    q = sys.modules["onnxruntime.quantization.quantize"]
    # the fused graph holds com.microsoft operators, which ONNX shape inference does not know
    q.load_model_with_shape_infer = qu.load_model_with_shape_infer = lambda path: onnx.load(str(path))
    started = time.perf_counter()
    quantize_dynamic(str(src), str(dst), weight_type=QuantType.QInt8,
                     extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT}, **kw)
    return time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=160)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--recall", action="store_true",
                    help="also score recursive 256/32 on the manual's heading queries with each int8 variant "
                         "(embeds the whole manual once per variant; the embedding cache is not used)")
    args = ap.parse_args()
    base = common.model()
    src = default.load_graph().path
    tok = str(default.verify_model_files() / default.TOKENIZER)
    docs = common.pages()
    chunks = [c for p in docs[40:80] for c in common.plan(base, p.text, common.Config("recursive", 256, 32))]
    chunks = chunks[:args.chunks]
    tokens = common.model_tokens(base, chunks)
    out: dict = {"chunks": len(chunks), "tokens": tokens, "loadavg_start": common.loadavg(), "variants": {}}
    with tempfile.TemporaryDirectory() as tmp:
        variants = {"float32 (shipped)": (base, None)}
        for name, kw in (("int8, all operators", {"per_channel": False}),
                         ("int8, MatMul only, per channel", {"per_channel": True, "op_types_to_quantize": ["MatMul"]})):
            dst = Path(tmp) / f"{len(variants)}.onnx"
            seconds = quantize(src, dst, **kw)
            data = dst.read_bytes()
            variants[name] = (Model(default.INFO, tok, lambda data=data: data), seconds)
        times: dict[str, list[float]] = {n: [] for n in variants}
        for m, _ in variants.values():
            m.embed(chunks[:4])
        for r in range(args.repeat):
            names = list(variants) if r % 2 == 0 else list(variants)[::-1]
            for n in names:
                started = time.perf_counter()
                variants[n][0].embed(chunks)
                times[n].append(time.perf_counter() - started)
        ref = base.embed(chunks)
        for n, (m, qs) in variants.items():
            cos = (ref * m.embed(chunks)).sum(axis=1)
            out["variants"][n] = {"tokens_per_s": tokens / min(times[n]), "seconds": times[n],
                                  "speedup": min(times["float32 (shipped)"]) / min(times[n]),
                                  "cos_mean": float(cos.mean()), "cos_min": float(cos.min()), "quantize_seconds": qs}
            common.log(f"{n}: {out['variants'][n]['tokens_per_s']:.0f} tok/s, x{out['variants'][n]['speedup']:.2f}, "
                       f"cos mean {cos.mean():.4f} min {cos.min():.4f}")
        if args.recall:
            queries = common.heading_queries(docs)
            config = common.Config("recursive", 256, 32)
            per_doc = [(p.doc_id, common.plan(base, p.text, config)) for p in docs]
            texts = [t for _, ts in per_doc for t in ts]
            owners = np.array([d for d, ts in per_doc for _ in ts], np.int64)
            for n, (m, _) in variants.items():
                if m is base:
                    continue  # float32: bench_recall.py's figure
                started = time.perf_counter()
                ranked = common.maxp_rank(m.embed([q.text for q in queries]), m.embed(texts), owners)
                out["variants"][n]["recall_recursive_256_32"] = common.score(queries, ranked)
                out["variants"][n]["recall_seconds"] = time.perf_counter() - started
                common.log(f"{n}: recursive 256/32 deep {out['variants'][n]['recall_recursive_256_32']['deep']}")
    out["loadavg_end"] = common.loadavg()
    common.save_result("quantize", out)


if __name__ == "__main__":
    main()
    import sections  # docs/benchmarks.md: the sections this benchmark's results feed
    sections.write_sections("engine-notes")

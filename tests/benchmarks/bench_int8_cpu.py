"""The int8 model's CPU cost per token, recipe by recipe (issue 37 item 5), on the same texts.

    TESSERA_BENCH_CORPUS=$MANUAL nice .venv/bin/python tests/benchmarks/bench_int8_cpu.py [--chunks 300] [--rounds 2]

Recursive 256/32 chunks of every 7th page of the manual (the chunks the whole-manual load embeds),
embedded by ``Model.embed`` on one single-thread session (``threads=1, workers=1``: the batches run
one after another, so the process's CPU time is the model's) with each variant of the graph:

* float32, the shipped fused graph (the reference for the cosines);
* int8 version 1: ``quantize_dynamic`` of the fused graph, per-tensor weights, every operator (the
  embedding layer too), SkipLayerNormalization fused, batches of up to 2048 padded tokens;
* version 1 with the layer norms split (``bert_onnx.split_skip_layer_norm``);
* version 2's graph (per-channel weights, MatMul and Attention, layer norms split) in batches;
* version 2: one text per call;
* version 2 with each of version 3's rewrites alone (``int8_graph``): FastGelu; the attention as
  int8 products;
* version 3 as shipped: both rewrites, one text per call.

Rounds alternate the order; the figure is each variant's best round (its median is kept too).
Tokens per CPU second count the model's real tokens (padding excluded; the padded count is shown).
Writes results/int8_cpu.json and its section of docs/benchmarks.md.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

from tesseradb.embed import default, int8, int8_graph  # noqa: E402
from tesseradb.embed.model import MAX_ROWS, Model, plan_batches  # noqa: E402

REC = common.Config("recursive", 256, 32)


def v1_graph(fused_float: bytes, split: bool) -> bytes:
    """Version 1's recipe (per tensor, every operator), optionally with the layer norms split."""
    import tempfile

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from tesseradb.embed.bert_onnx import split_skip_layer_norm
    model = onnx.load_from_string(fused_float)
    if split:
        model = split_skip_layer_norm(model)
    model.opset_import.append(onnx.helper.make_opsetid("com.microsoft", 1))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "v1.onnx"
        quantize_dynamic(model, out, weight_type=QuantType.QInt8, per_channel=False,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
        return out.read_bytes()


def padded_tokens(model: Model, texts: list[str]) -> tuple[int, int]:
    lengths = sorted(len(e.ids) for e in model._embed_tokenizer.encode_batch(texts))
    batches = plan_batches(lengths, token_budget=model.token_budget, max_rows=model.max_rows)
    return sum(lengths), sum(len(b) * lengths[b.stop - 1] for b in batches)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    base = common.model()
    texts: list[str] = []
    for page in common.pages()[::7]:
        texts += common.plan(base, page.text, REC)
        if len(texts) >= args.chunks:
            break
    texts = texts[:args.chunks]
    tok = str(default.verify_model_files() / default.TOKENIZER)
    fused = default.load_graph().data
    v2 = int8.quantize_weights(onnx.load_from_string(fused))
    graphs = {
        "float32 (shipped), batches": (fused, MAX_ROWS),
        "int8 v1: per tensor, all operators, SkipLayerNorm fused, batches": (v1_graph(fused, False), MAX_ROWS),
        "int8 v1 + layer norms split, batches": (v1_graph(fused, True), MAX_ROWS),
        "int8 v2 graph (per channel, QAttention), batches": (v2, MAX_ROWS),
        "int8 v2: one text per call": (v2, int8.MAX_ROWS),
        "int8 v2 + FastGelu": (int8.quantize_weights(int8_graph.fast_gelu(onnx.load_from_string(fused))), 1),
        "int8 v2 + int8 attention": (int8.quantize_weights(int8_graph.int8_attention(onnx.load_from_string(fused))), 1),
        "int8 v3 (shipped): int8 attention + FastGelu, one text per call": (int8.load_graph().data, int8.MAX_ROWS),
    }
    models = {}
    for name, (graph, rows) in graphs.items():
        m = Model(int8.INFO, tok, lambda graph=graph: graph, max_rows=rows)
        m.threads, m.workers = 1, 1
        m.embed(texts[:2])
        models[name] = m
    cpu: dict[str, list[float]] = {n: [] for n in models}
    vectors: dict[str, np.ndarray] = {}
    out: dict = {"chunks": len(texts), "loadavg_start": common.loadavg(), "machine": common.machine(), "variants": {}}
    for r in range(args.rounds):
        for name in (list(models) if r % 2 == 0 else list(models)[::-1]):
            started = time.process_time()
            vectors[name] = models[name].embed(texts)
            cpu[name].append(time.process_time() - started)
            common.log(f"round {r + 1} {name}: {cpu[name][-1]:.2f} CPU s, load {common.loadavg()}")
    ref = vectors["float32 (shipped), batches"]
    for name, m in models.items():
        real, padded = padded_tokens(m, texts)
        cos = (ref * vectors[name]).sum(axis=1)
        out["variants"][name] = {"cpu_seconds": cpu[name], "tokens": real, "padded_tokens": padded,
                                 "tokens_per_cpu_s": real / min(cpu[name]),
                                 "tokens_per_cpu_s_median": real / statistics.median(cpu[name]),
                                 "cos_mean": float(cos.mean()), "cos_min": float(cos.min())}
    out["loadavg_end"] = common.loadavg()
    common.save_result("int8_cpu", out)
    for name, v in out["variants"].items():
        print(f"{name:70s} {v['tokens_per_cpu_s']:8,.0f} tok/CPU-s  cos {v['cos_mean']:.4f}/{v['cos_min']:.4f}")


if __name__ == "__main__":
    main()
    import sections  # docs/benchmarks.md: the section this benchmark's results feed
    sections.write_sections("int8-cpu")

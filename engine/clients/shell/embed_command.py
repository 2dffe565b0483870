"""``tessera embed SOURCE OUTPUT ...``: chunk and embed documents on a Ray cluster into Parquet shards
that ``LOAD DATA INFILE 'OUTPUT/*.parquet' INTO TABLE t`` stores without running the model
(``tesseradb.embed_to_parquet``; docs/distributed.md)."""
from __future__ import annotations

import argparse
import sys

import tesseradb


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tessera embed", description="Chunk and embed documents (Parquet, JSONL or CSV; local paths or any "
        "filesystem pyarrow reads, e.g. s3://) on a Ray cluster, writing Parquet shards for LOAD DATA.")
    p.add_argument("source", help="input file, directory or glob (.parquet, .jsonl, .csv)")
    p.add_argument("output", help="directory (or URI) the shards are written to")
    like = p.add_argument_group("the column's settings, read from a database (recommended)")
    like.add_argument("--database", metavar="DB", help="the tesseradb file holding the table")
    like.add_argument("--table", help="the table the shards will be loaded into")
    like.add_argument("--column", help="its model column (also names the vectors when the settings are given)")
    given = p.add_argument_group("or the settings, as in CREATE TABLE")
    given.add_argument("--model-name", metavar="NAME", help="e.g. all-MiniLM-L6-v2 or all-MiniLM-L6-v2-int8")
    given.add_argument("--from", dest="from_columns", metavar="COLS", help="source columns, comma-separated")
    given.add_argument("--chunk-strategy", default="truncate", metavar="S",
                       help="truncate, mean, fixed, recursive, sentence or markdown")
    given.add_argument("--max-tokens", type=int, default=0)
    given.add_argument("--overlap-tokens", type=int, default=0)
    given.add_argument("--max-chunks", type=int, default=0)
    given.add_argument("--option", dest="model_option", action="append", metavar="NAME=VALUE",
                       help="a model option as in CREATE TABLE (query_prefix, document_prefix, pooling, dims, "
                            "api_url, api_timeout, batch_size, tokenizer, api_key='env:NAME'); repeatable")
    run = p.add_argument_group("the run")
    run.add_argument("--api-key-env", metavar="NAME",
                     help="environment variable each worker reads a remote model's key from (a key written in "
                          "the column is never sent to workers or written into shards)")
    run.add_argument("--id-column", default="id", help="the input column holding each document's id (default id)")
    run.add_argument("--format", dest="fmt", choices=["parquet", "jsonl", "csv"], help="default: from the name")
    run.add_argument("--address", help="Ray cluster to join ('auto': the running one); default: start a local one")
    run.add_argument("--workers", type=int, help="worker actors (default: the cluster's CPUs less one)")
    run.add_argument("--cpus-per-worker", type=float, default=1.0, metavar="N")
    run.add_argument("--batch-rows", type=int, default=64, metavar="N", help="documents per worker call")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    options = {k: v for k, v in vars(args).items()
               if k not in ("source", "output", "model_option") and v is not None}
    if args.model_option:
        pairs = [o.partition("=") for o in args.model_option]
        bad = [o for o, (_, eq, _) in zip(args.model_option, pairs) if not eq]
        if bad:
            sys.stderr.write(f"tessera embed: --option '{bad[0]}' is not NAME=VALUE\n")
            return 2
        options["model_options"] = {k.strip(): v for k, _, v in pairs}
    if args.from_columns:
        options["from_columns"] = [c.strip() for c in args.from_columns.split(",") if c.strip()]
    try:
        summary = tesseradb.embed_to_parquet(args.source, args.output, **options)
    except tesseradb.Error as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    sys.stdout.write(f"{summary.documents} documents, {summary.chunks} chunks embedded into {summary.files} "
                     f"shard(s) in {summary.output} ({summary.seconds:.1f} s, {summary.workers} worker(s)); load "
                     f"them with LOAD DATA INFILE '{summary.output.rstrip('/')}/*.parquet' INTO TABLE ...\n")
    return 0

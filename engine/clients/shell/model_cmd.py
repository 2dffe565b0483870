"""``tessera model pull NAME[@REVISION]`` and ``tessera model list``: bringing a model, explicitly.

``pull`` fetches a Hugging Face model's files (the graph, the weights, the tokenizer, the
sentence-transformers files) with ``huggingface_hub`` into the Hugging Face cache and prints the
commit it resolved to and the file hashes it recorded; afterwards ``model_name='NAME'`` resolves
offline. It is the only way tesseradb downloads a model (docs/models.md#pulling-a-model). ``list``
prints the pulled models and their revisions.
"""
from __future__ import annotations

import argparse
import os
import sys

import tesseradb


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tessera model", description="Bring an embedding model to this machine.")
    sub = p.add_subparsers(dest="command", required=True)
    pull = sub.add_parser("pull", help="fetch NAME[@REVISION] from the Hugging Face hub into the local cache")
    pull.add_argument("name", metavar="NAME[@REVISION]", help="e.g. BAAI/bge-small-en-v1.5 or intfloat/e5-small-v2@main")
    pull.add_argument("--token-env", metavar="VAR", default="HF_TOKEN",
                      help="environment variable holding a Hugging Face token (default HF_TOKEN; gated models)")
    pull.add_argument("--endpoint", metavar="URL", default=None,
                      help="a Hugging Face hub mirror (default: $HF_ENDPOINT, else huggingface.co)")
    sub.add_parser("list", help="the models pulled so far, with their revisions")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    if args.command == "list":
        for record in tesseradb.pulled_models():
            print(f"{record.repo}\t{record.revision}\t{len(record.files)} files\t{record.folder}")
        return 0
    try:
        record = tesseradb.pull_model(args.name, token=os.environ.get(args.token_env) or None,
                                      endpoint=args.endpoint)
    except tesseradb.Error as exc:
        sys.stderr.write(f"tessera model pull: {exc}\n")
        return 1
    print(f"pulled {record.repo} at revision {record.revision} into {record.folder}")
    for path, digest in sorted(record.files.items()):
        print(f"  {digest}  {path}")
    print(f"use it with: model_name='{args.name}'")
    return 0

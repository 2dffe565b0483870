"""The notes collection the repository ships (sql_examples/data/notes, a few pages of it) exported to
JSONL or Parquet, loaded from the shell with a visible progress line; the loaded table answers knn
queries."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

NOTES = Path(__file__).resolve().parents[2] / "sql_examples" / "data" / "notes"
PAGES = [
    "runbooks/kill-query.md",
    "journal/2026-10-19.md",
    "dev/local-setup.md",
    "oncall/escalation.md",
    "runbooks/log-rotation.md",
]
SCRIPT = """
CREATE TABLE notes (path string, title text, body text,
  chunks float_vector_array knn_type='hnsw' hnsw_similarity='cosine'
    model_name='Xenova/all-MiniLM-L6-v2' from='title,body'
    chunk_strategy='recursive' max_tokens='256' overlap_tokens='32');
LOAD DATA INFILE '{file}' INTO TABLE notes;
SELECT COUNT(*) FROM notes;
SELECT path FROM notes WHERE knn(chunks, 1, 'how do I make the server reopen its log files for logrotate');
SELECT path FROM notes WHERE knn(chunks, 1, 'stop a running query by its id');
"""


def page_records() -> list[dict[str, str]]:
    records = []
    for rel in PAGES:
        text = (NOTES / rel).read_text(encoding="utf-8")
        title = next((line.lstrip("# ").strip() for line in text.splitlines() if line.startswith("#")), rel)
        records.append({"path": rel, "title": title, "body": text})
    return records


def export(records: list[dict[str, str]], path: Path) -> None:
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    else:
        pq.write_table(pa.Table.from_pylist(records), path)


@pytest.mark.parametrize("ext", ["jsonl", "parquet"])
def test_notes_pages_load_with_progress_and_answer_knn(run, tmp_path, ext):
    data = tmp_path / f"notes.{ext}"
    export(page_records(), data)
    out = run("notes.db", "-N", "--progress", "--progress-delay", "0",
              input=SCRIPT.format(file=data.name))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "5",
        "runbooks/log-rotation.md",
        "runbooks/kill-query.md",
    ]
    progress = [line for line in out.stderr.splitlines() if line.startswith("Embedding: ")]
    assert progress, out.stderr
    assert "chunks/s" in progress[-1] and "ETA" in progress[-1]
    done, total = progress[-1].split()[1].split("/")
    assert done == total                          # the last line shows every chunk embedded


def test_no_progress_line_without_the_option(run, tmp_path):
    data = tmp_path / "notes.jsonl"
    export(page_records()[:1], data)
    out = run("--progress-delay", "0", input=SCRIPT.format(file=data.name))
    assert out.returncode == 0, out.stderr
    assert "Embedding:" not in out.stderr

"""CI runs every sql_examples/*.sql through the installed shell in batch mode, as the README does."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "sql_examples").glob("*.sql"))
TESSERA = str(Path(sys.executable).parent / "tessera")

# What a reader should see in the output of some examples (regexes over the -t output).
EXPECT = {
    "quickstart.sql": [r"\|\s+1 \| Backup runbook\s+\|\s+[0-9.]+ \|\n\|\s+2 \| Web certificates",
                       r"\|\s+1 \| Backup runbook\s+\|\s+2 \|"],
    "chunking_demo.sql": [r"max_chunks=2 merged the overflow", r"\|\s+1 \| Running the database \|\s+3 \|"],
    "load_export.sql": [r"\|\s+2 \| Restoring a snapshot", r"\| Lunch\s+\| Fridays at noon\s+\|"],
    "load_mysql_clauses.sql": [r"\| Warning \| 1261 \| Row 3 doesn't contain data for all columns",
                               r"\|\s+1001 \| Ada Lovelace \|\s+3 \|\s+7\.5 \| gift wrap, please\s+\|",
                               r"\|\s+1003 \| Grace Hopper \|\s+1 \|\s+12 \| none\s+\|", r"\| orders \|\n\+-+\+\n\|\s+3 \|"],
    "documents.sql": [r"4 added, 0 changed, 0 unchanged, 0 removed, 0 skipped",
                      r"\| runbooks/backups\.md\s+\| Backups\s+\| \[\"ops\", \"storage\"\] \| \{\"owner\": \"infra\"",
                      r"\| path\s+\| knn_dist\(\) \|\n\+-+\+-+\+\n\| runbooks/certificates\.md",
                      r"0 added, 0 changed, 4 unchanged, 0 removed, 0 skipped",
                      r"SYNC 'sql_examples/data/vault/runbooks/\*\*/\*': 0 added, 0 changed, 2 unchanged, 0 removed",
                      r"\| files \|\n\+-+\+\n\|\s+4 \|", r"\| runbooks/certificates\.md \| "],
    "passage_units.sql": [r"\|\s+1 \|\s+4 \| Backups > Restores\s+\|", r"\|\s+1 \|\s+2 \| Backups > Operations \|",
                          r"passage_units='windows'"],
    "describe_probes.sql": [r"\| user_id \| int\s+\| primary key auto_increment \|",
                            r"\| name\s+\| varchar\(255\) \| not null default ''\s+\|",
                            r"\| v\s+\| float_vector \| knn\s+\|",
                            r"\| v\s+\| float_vector \| YES\s+\|\s+\| NULL\s+\| knn knn_type='hnsw' knn_dims='4'",
                            r"PRIMARY KEY \(`user_id`\),[\s|]+UNIQUE KEY `email` \(`email`\)",
                            r"\| people \|\s+0 \| PRIMARY\s+\|\s+1 \| user_id",
                            r"\| people\s+\| SQLite \| utf8mb4_0900_ai_ci \|"],
}


def test_there_are_examples():
    names = {p.name for p in EXAMPLES}
    assert {"quickstart.sql", "chunking_demo.sql", "load_export.sql"} <= names


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs_through_the_shell(example, tmp_path):
    shutil.copytree(ROOT / "sql_examples", tmp_path / "sql_examples")   # outputs land in tmp_path
    with open(example, encoding="utf-8") as script:
        out = subprocess.run([TESSERA, "-t"], stdin=script, capture_output=True, text=True,
                             cwd=tmp_path, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "ERROR" not in out.stderr, out.stderr
    assert "+--" in out.stdout and "|" in out.stdout, out.stdout
    for pattern in EXPECT.get(example.name, []):
        assert re.search(pattern, out.stdout), (pattern, out.stdout)


def test_readme_first_command_runs_from_the_repository_root():
    with open(ROOT / "sql_examples" / "quickstart.sql", encoding="utf-8") as script:
        out = subprocess.run([TESSERA, "-t"], stdin=script, capture_output=True, text=True, cwd=ROOT,
                             timeout=600)
    assert out.returncode == 0, out.stderr
    assert "Backup runbook" in out.stdout

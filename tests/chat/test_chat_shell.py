"""CALL CHAT in the tessera shell: in a terminal the answer streams and its sources follow; in batch
mode the row prints like any other (docs/chat.md#in-the-shell)."""
from __future__ import annotations

import re

from tests.chat.conftest import TABLE
from tests.shell.conftest import run, shell_env, terminal  # noqa: F401 - fixtures

SETUP = ("{table}; INSERT INTO docs (id, title, content) VALUES (1, 'Backup runbook', 'Snapshots of the "
         "primary run nightly and are kept for fourteen days.'), (2, 'Certificates', 'Rotate certificates "
         "every ninety days.'); CREATE CHAT MODEL a (model='openai:m', base_url='{url}');")


def test_a_terminal_streams_the_answer_then_lists_the_sources(terminal, standin, tmp_path, run):  # noqa: F811
    db = str(tmp_path / "c.db")
    done = run(db, "-e", SETUP.format(table=TABLE, url=standin.base_url))
    assert done.returncode == 0, done.stderr
    term = terminal(db)
    out = term.run("CALL CHAT('how long are snapshots kept', 'docs', 'a', 'conv');")
    assert standin.requests[-1]["json"]["stream"] is True
    assert re.search(r"\[ref:1\] says: Backup runbook Snapshots of the primary", out)
    assert re.search(r"Sources:\s+\[ref:1\] Backup runbook.*\(cited\)", out)
    assert "conversation conv; searched: how long are snapshots kept" in out
    assert "+---" not in out and re.search(r"1 row in set \(\d+\.\d\d sec\)", out)


def test_batch_mode_prints_the_row(standin, tmp_path, run):  # noqa: F811
    db = str(tmp_path / "c.db")
    script = SETUP.format(table=TABLE, url=standin.base_url) + " CALL CHAT('how long are snapshots kept', 'docs', 'a');"
    done = run(db, "-t", input=script)
    assert done.returncode == 0, done.stderr
    assert "| conversation_uuid" in done.stdout and "[ref:1] says:" in done.stdout
    assert "stream" not in standin.requests[-1]["json"]

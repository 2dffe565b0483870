"""tessera mcp on a folder of real markdown files (issues 23, 25, 26): sync(path) loads and keeps it
current, read(section=) returns one section by heading path, context() its outline. Driven by the
SDK's own client over stdio against the real model (the table ``tessera index`` creates)."""
from __future__ import annotations

import os

import pytest

import tesseradb
from tests.mcp.support import stdio

DDL = ("CREATE TABLE notes (path string UNIQUE, title text, body text, meta json, modified timestamp, "
       "chunks float_vector_array knn_type='hnsw' hnsw_similarity='cosine' model_name='Xenova/all-MiniLM-L6-v2' "
       "from='title,body' chunk_strategy='markdown' max_tokens='256' overlap_tokens='32')")
REPLICATION = """---
title: Replication guide
team: ops
---
# Replication

Every write is copied to the standby over TLS.

## Certificates

Certificates protect the replication link.

### Rotation

Request a new certificate from the internal authority, copy it to both hosts and restart
replication on the standby first.

```sh
# this is a comment in a code fence, not a heading
renew --all
```

### Expiry

Certificates expire after one year; an alert fires thirty days before.

## Lag

Lag above thirty seconds pages the on-call engineer.
"""
BACKUPS = "# Backups\n\nBackups run every night at two.\n\n## Restores\n\nRestores start from the newest snapshot.\n"
HOLIDAYS = "Holidays\n========\n\nThe office is closed between Christmas and New Year.\n\nBooking\n-------\n\nTwo weeks ahead.\n"


def section_of(text: str, heading_line: str, next_line: str | None) -> str:
    """The file's own text from a heading line up to the next heading of its level (or the end)."""
    start = text.index(heading_line)
    end = text.index(next_line, start) if next_line else len(text)
    return text[start:end].rstrip()


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("mcp-docs")
    vault = root / "vault"
    (vault / "guides").mkdir(parents=True)
    (vault / "guides" / "replication.md").write_text(REPLICATION)
    (vault / "backups.md").write_text(BACKUPS)
    (vault / "holidays.md").write_text(HOLIDAYS)
    (root / "outside.md").write_text("# Outside\n\nNever to be read by sync.\n")
    con = tesseradb.connect(str(root / "notes.db"), autocommit=True)
    con.execute(DDL)
    con.close()
    return root


@pytest.fixture(scope="module")
def writer(folder):
    client = stdio(str(folder / "notes.db"), "--allow-writes", "--allow-sync", str(folder / "vault"))
    yield client
    client.close()


@pytest.fixture(scope="module")
def synced(writer):
    answer = writer.ok("sync", {"table": "notes"})
    return answer


def doc_id(client, path: str) -> int:
    rows = client.ok("sql", {"query": f"SELECT id FROM notes WHERE path = '{path}'"})["rows"]
    assert len(rows) == 1, rows
    return rows[0][0]


def test_sync_loads_the_folder_and_reports_counts(synced, writer):
    assert synced["counts"] == {"added": 3, "changed": 0, "unchanged": 0, "removed": 0, "skipped": 0}
    assert synced["rowcount"] == 3
    rows = writer.ok("sql", {"query": "SELECT path, title FROM notes ORDER BY path"})["rows"]
    assert rows == [["backups.md", "Backups"], ["guides/replication.md", "Replication guide"],
                    ["holidays.md", "Holidays"]]


@pytest.mark.parametrize("wanted,path,line,until", [
    ("Replication > Certificates", "Replication > Certificates", "## Certificates", "## Lag"),
    ("certificates", "Replication > Certificates", "## Certificates", "## Lag"),        # case and a name alone
    ("Certificates > Rotation", "Replication > Certificates > Rotation", "### Rotation", "### Expiry"),
    ("Replication > Certificates > Expiry", "Replication > Certificates > Expiry", "### Expiry", "## Lag"),
    ("Lag", "Replication > Lag", "## Lag", None),
    ("Replication", "Replication", "# Replication", None),
])
def test_read_section_returns_exactly_that_section_and_its_heading_path(synced, writer, wanted, path, line, until):
    answer = writer.ok("read", {"table": "notes", "id": doc_id(writer, "guides/replication.md"), "section": wanted})
    assert answer["section"] == path
    assert answer["text"] == section_of(REPLICATION, line, until)
    assert answer["column"] == "body" and answer["truncated"] is False


def test_a_hash_line_in_a_code_fence_is_not_a_heading(synced, writer):
    answer = writer.ok("read", {"table": "notes", "id": doc_id(writer, "guides/replication.md"),
                                "section": "Rotation"})
    assert "renew --all" in answer["text"]
    error = writer.error("read", {"table": "notes", "id": doc_id(writer, "guides/replication.md"),
                                  "section": "this is a comment in a code fence, not a heading"})
    assert "has no section" in error


def test_setext_headings_are_sections_too(synced, writer):
    answer = writer.ok("read", {"table": "notes", "id": doc_id(writer, "holidays.md"), "section": "Booking"})
    assert answer["section"] == "Holidays > Booking"
    assert answer["text"] == "Booking\n-------\n\nTwo weeks ahead."


def test_an_unknown_section_is_a_tool_error_listing_the_headings(synced, writer):
    doc = doc_id(writer, "guides/replication.md")
    error = writer.error("read", {"table": "notes", "id": doc, "section": "Replication > Expiry"})
    assert error == (f"Error executing tool read: document {doc} has no section 'Replication > Expiry'; its headings: Replication; "
                     "Replication > Certificates; Replication > Certificates > Rotation; "
                     "Replication > Certificates > Expiry; Replication > Lag")
    assert writer.ok("describe")["tables"]                    # the server still answers


def test_context_outline_is_the_documents_headings(synced, writer):
    answer = writer.ok("context", {"table": "notes", "id": doc_id(writer, "backups.md")})
    assert answer["outline"] == ["Backups", "Backups > Restores"]


def test_hits_carry_the_path_and_filter_on_front_matter_keys(synced, writer):
    # issue 32: every hit is citable (path beside id and title) and front matter keys (in meta) filter
    hits = writer.ok("search", {"table": "notes", "query": "rotate the replication certificate", "limit": 3})["results"]
    assert hits[0]["path"] == "guides/replication.md" and hits[0]["title"] == "Replication guide"
    assert all(set(h) >= {"id", "path", "title", "score", "passages"} for h in hits)
    assert all(len(repr(h["score"])) <= 12 for h in hits)                  # float32, short: not 17 digits
    for passage in hits[0]["passages"]:
        assert passage["text"].strip() != "Replication guide"              # never the bare title
    for filters in ({"team": "ops"}, {"meta.team": "ops"}, {"meta.team": {"in": ["ops", "dev"]}}):
        found = writer.ok("search", {"table": "notes", "query": "backups at night", "filters": filters})["results"]
        assert [h["path"] for h in found] == ["guides/replication.md"], filters
    found = writer.ok("search", {"table": "notes", "query": "backups", "filters": {"team": {"ne": "ops"}}})["results"]
    assert "guides/replication.md" not in [h["path"] for h in found] and found
    similar = writer.ok("similar", {"table": "notes", "id": doc_id(writer, "backups.md"), "limit": 2})["results"]
    assert all("path" in h for h in similar)
    context = writer.ok("context", {"table": "notes", "id": doc_id(writer, "backups.md")})
    assert context["fields"]["path"] == "backups.md" and all("path" in h for h in context["similar"])
    # a key no document has matches nothing (a bare name is a front matter key when no column has it)
    assert writer.ok("search", {"table": "notes", "query": "x", "filters": {"nope": 1}})["results"] == []


def test_tool_descriptions_are_dedented(writer):
    for tool in writer.list_tools().tools:
        assert "\n " not in (tool.description or ""), tool.name


def test_a_subfolder_sync_keeps_one_row_per_file(synced, writer, folder):
    before = writer.ok("sql", {"query": "SELECT id, path FROM notes ORDER BY path"})["rows"]
    answer = writer.ok("sync", {"table": "notes", "path": "guides"})
    assert answer["counts"] == {"added": 0, "changed": 0, "unchanged": 1, "removed": 0, "skipped": 0}
    writer.ok("sync", {"table": "notes", "path": "."})
    assert writer.ok("sql", {"query": "SELECT id, path FROM notes ORDER BY path"})["rows"] == before


@pytest.mark.parametrize("path", ["..", "../outside.md", "/etc", "guides/../../outside.md", "no-such-folder"])
def test_sync_outside_the_allowed_folder_is_refused(synced, writer, path):
    before = writer.ok("sql", {"query": "SELECT COUNT(*) FROM notes"})["rows"]
    message = writer.error("sync", {"table": "notes", "path": path})
    assert "sync works only inside" in message or "does not exist inside" in message
    assert writer.ok("sql", {"query": "SELECT COUNT(*) FROM notes"})["rows"] == before


def test_sync_picks_up_added_changed_and_deleted_files(synced, writer, folder):
    vault = folder / "vault"
    (vault / "runbooks").mkdir()
    (vault / "runbooks" / "disk.md").write_text("# Disk\n\n## Alerts\n\nDisk alerts fire below twenty percent.\n")
    (vault / "backups.md").write_text(BACKUPS.replace("at two", "at three") + "\n## Retention\n\nSeven days.\n")
    (vault / "holidays.md").unlink()
    os.symlink(folder / "outside.md", vault / "leak.md")    # a link out of --allow-sync: not followed
    try:
        answer = writer.ok("sync", {"table": "notes", "path": "."})
    finally:
        os.unlink(vault / "leak.md")
    assert answer["counts"] == {"added": 1, "changed": 1, "unchanged": 1, "removed": 1, "skipped": 1}
    assert any("'leak.md' skipped" in n for n in answer["notes"]), answer["notes"]
    rows = writer.ok("sql", {"query": "SELECT path FROM notes ORDER BY path"})["rows"]
    assert rows == [["backups.md"], ["guides/replication.md"], ["runbooks/disk.md"]]
    assert "Never to be read" not in str(writer.ok("sql", {"query": "SELECT body FROM notes"})["rows"])
    changed = writer.ok("read", {"table": "notes", "id": doc_id(writer, "backups.md"), "section": "Retention"})
    assert changed == {**changed, "section": "Backups > Retention", "text": "## Retention\n\nSeven days."}
    added = writer.ok("read", {"table": "notes", "id": doc_id(writer, "runbooks/disk.md"), "section": "Alerts"})
    assert added["text"] == "## Alerts\n\nDisk alerts fire below twenty percent."


def test_a_read_only_server_refuses_sync(synced, folder):
    reader = stdio(str(folder / "notes.db"))
    try:
        assert "sync" not in {t.name for t in reader.list_tools().tools}
        before = reader.ok("sql", {"query": "SELECT path FROM notes ORDER BY path"})["rows"]
        message = reader.error("sync", {"table": "notes", "path": "."})
        assert "--allow-writes" in message and "--allow-sync" in message
        assert "ERROR 1290 (HY000)" in reader.error(
            "sql", {"query": f"LOAD DATA INFILE '{folder}/vault/**/*.md' SYNC INTO TABLE notes"})
        assert reader.ok("sql", {"query": "SELECT path FROM notes ORDER BY path"})["rows"] == before
        answer = reader.ok("read", {"table": "notes", "id": doc_id(reader, "backups.md"), "section": "Backups"})
        assert answer["section"] == "Backups"
    finally:
        reader.close()

"""LOAD DATA of document files: markdown, text, HTML and PDF, one row per file, front matter as columns."""
from __future__ import annotations

import datetime
import hashlib
import os
import subprocess
import sys
import textwrap

import pytest

import tesseradb

DOCS = "CREATE TABLE d (path string UNIQUE, title text, body text, meta json, modified timestamp, size int)"


def load(cur, pattern, table="d", sync=False, columns=""):
    cur.execute(f"LOAD DATA INFILE ? {'SYNC ' if sync else ''}INTO TABLE {table} {columns}", (str(pattern),))
    return cur.rowcount


def rows(cur, cols="path, title, body, meta", table="d"):
    return {r[0]: r[1:] for r in cur.execute(f"SELECT {cols} FROM {table} ORDER BY path").fetchall()}


def make_pdf(path, pages, title=None):
    """A PDF with one line of text on each page, made with pypdf."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject
    writer = PdfWriter()
    font = DictionaryObject({NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
                             NameObject("/BaseFont"): NameObject("/Helvetica")})
    for text in pages:
        page = writer.add_blank_page(612, 792)
        stream = DecodedStreamObject()
        stream.set_data(f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode())
        page.replace_contents(stream)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})})
    if title:
        writer.add_metadata({"/Title": title})
    writer.write(str(path))


def test_front_matter_of_every_shape(cur, tmp_path):
    (tmp_path / "none.md").write_text("Just text, no heading.\n")
    (tmp_path / "empty.md").write_text("---\n---\n# From the heading\n\nBody.\n")
    (tmp_path / "shapes.md").write_text(textwrap.dedent("""\
        ---
        title: Backups
        tags: [ops, storage]
        published: 2024-03-01
        reviewed: 2024-03-02 10:30:00+02:00
        owner: {team: infra, oncall: [ana, bo]}
        draft: false
        ---

        # A heading that is not the title

        Backups run nightly.
        """))
    cur.execute(DOCS)
    assert load(cur, tmp_path / "*.md") == 3
    got = rows(cur)
    assert got["none.md"] == ("none", "Just text, no heading.\n", {})
    assert got["empty.md"] == ("From the heading", "# From the heading\n\nBody.\n", {})
    assert got["shapes.md"] == ("Backups", "# A heading that is not the title\n\nBackups run nightly.\n",
                                {"tags": ["ops", "storage"], "published": "2024-03-01",
                                 "reviewed": "2024-03-02 08:30:00",
                                 "owner": {"team": "infra", "oncall": ["ana", "bo"]}, "draft": False})


def test_front_matter_keys_fill_columns_of_their_name_and_the_rest_goes_to_meta(cur, tmp_path):
    (tmp_path / "a.md").write_text("---\ntags: [ops]\npublished: 2024-03-01\nDraft: yes\nrating: 4\n"
                                   "colour: red\n---\nText.\n")
    cur.execute("CREATE TABLE d (path string UNIQUE, title text, body text, tags json, published timestamp, "
                "draft bool, rating int, meta json)")
    load(cur, tmp_path / "a.md")
    midnight = int(datetime.datetime(2024, 3, 1, tzinfo=datetime.timezone.utc).timestamp())
    assert cur.execute("SELECT tags, published, draft, rating, meta FROM d").fetchone() == \
        (["ops"], midnight, True, 4, {"colour": "red"})


def test_file_fields_path_size_sha256_and_modified(cur, tmp_path):
    sub = tmp_path / "guide" / "ops"
    sub.mkdir(parents=True)
    data = "# Restore\n\nStart from the newest snapshot.\n".encode()
    (sub / "restore.md").write_bytes(data)
    os.utime(sub / "restore.md", (1_700_000_000, 1_700_000_000))
    cur.execute("CREATE TABLE d (path string UNIQUE, title text, modified timestamp, size int, sha256 string)")
    load(cur, tmp_path / "**" / "*.md")
    assert cur.execute("SELECT path, title, modified = 1700000000, size, sha256 FROM d").fetchone() == \
        ("guide/ops/restore.md", "Restore", 1, len(data), hashlib.sha256(data).hexdigest())


def test_fields_without_a_column_are_named_in_one_note(con, tmp_path):
    cur = con.cursor()
    (tmp_path / "a.md").write_text("---\ntags: [x]\n---\nOne.\n")
    (tmp_path / "b.md").write_text("---\nauthor: bo\ntags: [y]\n---\nTwo.\n")
    cur.execute("CREATE TABLE d (path string UNIQUE, body text)")
    assert load(cur, tmp_path / "*.md") == 2
    notes = [w for w in con.warnings if "no column" in w[2]]
    assert notes == [("Note", 1000, "LOAD DATA: table 'd' has no column for 'title', 'modified', 'size', "
                                    "'sha256', 'tags', 'author'; not stored")]


def test_a_column_list_fills_only_those_columns(cur, tmp_path):
    (tmp_path / "a.md").write_text("---\ntitle: T\n---\nBody.\n")
    cur.execute(DOCS)
    load(cur, tmp_path / "a.md", columns="(path, title)")
    assert cur.execute("SELECT path, title, body, meta FROM d").fetchone() == ("a.md", "T", None, None)


def test_bom_crlf_and_an_empty_file(cur, tmp_path):
    bom = b"\xef\xbb\xbf---\r\ntitle: With BOM\r\n---\r\nline one\r\nline two\r\n"
    (tmp_path / "bom.md").write_bytes(bom)
    (tmp_path / "empty.md").write_bytes(b"")
    (tmp_path / "utf16.txt").write_bytes("Grüße aus UTF-16\n".encode("utf-16"))
    cur.execute(DOCS)
    assert load(cur, tmp_path / "*") == 3
    got = rows(cur, "path, title, body, size")
    assert got["bom.md"] == ("With BOM", "line one\nline two\n", len(bom))
    assert got["empty.md"] == ("empty", "", 0)
    assert got["utf16.txt"][:2] == ("utf16", "Grüße aus UTF-16\n")


def test_nothing_is_dropped_silently_binary_is_skipped_the_rest_loads_with_a_warning(con, tmp_path):
    # issue 32: only a binary file is skipped; Latin-1 text and broken front matter load, each with a
    # Warning naming the file (and the line)
    cur = con.cursor()
    (tmp_path / "good.md").write_text("# Good\n")
    (tmp_path / "latin1.md").write_bytes("# Caf\xe9\n\ncaf\xe9 au lait \u20ac 5\n".encode("cp1252"))
    (tmp_path / "binary.md").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "bad-yaml.md").write_text("---\ntags: [ops]\ntitle: [unclosed\n---\nbody\n")
    (tmp_path / "list-front.md").write_text("---\n- a\n- b\n---\nbody\n")
    cur.execute(DOCS)
    assert load(cur, tmp_path / "*.md") == 4
    warnings = sorted(w for w in con.warnings if w[0] == "Warning")
    got = rows(cur)
    assert sorted(got) == ["bad-yaml.md", "good.md", "latin1.md", "list-front.md"]
    assert got["latin1.md"][:2] == ("Café", "# Café\n\ncafé au lait € 5\n")
    assert got["bad-yaml.md"][1] == "---\ntags: [ops]\ntitle: [unclosed\n---\nbody\n"      # kept as text
    assert got["list-front.md"][1].startswith("---\n- a\n")
    assert sorted(code for _, code, _ in warnings) == [1262, 1366, 1366, 1366]
    text = "\n".join(m for _, _, m in warnings)
    assert f"'{tmp_path / 'latin1.md'}': not UTF-8 (byte 0xe9 on line 1); read as cp1252 (Windows-1252)" in text
    assert f"'{tmp_path / 'binary.md'}' skipped: a binary file" in text
    assert f"'{tmp_path / 'bad-yaml.md'}': its front matter is not valid YAML (line 3)" in text
    assert "loaded with the front matter kept as text" in text
    assert f"'{tmp_path / 'list-front.md'}': its front matter is a YAML list" in text


def test_utf16_with_a_bom_and_nul_bytes(con, tmp_path):
    cur = con.cursor()
    (tmp_path / "le.md").write_bytes("\ufeff# Grüße\n\nUTF-16 LE\n".encode("utf-16-le"))
    (tmp_path / "be.txt").write_bytes("\ufeffUTF-16 BE ✓\n".encode("utf-16-be"))
    (tmp_path / "nul.txt").write_bytes(b"text\0with a NUL\n")
    cur.execute(DOCS)
    assert load(cur, tmp_path / "*") == 2
    assert [m for level, _, m in con.warnings if level == "Warning"] == \
        [f"'{tmp_path / 'nul.txt'}' skipped: a binary file (it contains NUL bytes), not text"]
    got = rows(cur)
    assert got["le.md"][:2] == ("Grüße", "# Grüße\n\nUTF-16 LE\n") and got["be.txt"][1] == "UTF-16 BE ✓\n"


def test_a_value_that_does_not_fit_its_column_names_the_file_and_loads_nothing(cur, tmp_path):
    (tmp_path / "a.md").write_text("---\nrating: 4\n---\nA\n")
    (tmp_path / "b.md").write_text("---\nrating: lots\n---\nB\n")
    cur.execute("CREATE TABLE d (path string UNIQUE, rating int)")
    with pytest.raises(tesseradb.DataError, match=r"'.*b\.md', column 'rating': Incorrect integer value: 'lots'"):
        load(cur, tmp_path / "*.md")
    assert cur.execute("SELECT COUNT(*) FROM d").fetchone() == (0,)


def test_recursive_glob_survives_a_symlink_loop_and_ignores_other_files(cur, tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.md").write_text("# A\n")
    (tmp_path / "sub" / "b.txt").write_text("B\n")
    (tmp_path / "sub" / "picture.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "c.md").write_text("# hidden\n")
    os.symlink("..", tmp_path / "sub" / "loop")
    cur.execute(DOCS)
    assert load(cur, tmp_path / "**" / "*") == 2
    assert list(rows(cur)) == ["a.md", "sub/b.txt"]


def test_no_document_matches_is_file_not_found(cur, tmp_path):
    (tmp_path / "x.png").write_bytes(b"png")
    cur.execute(DOCS)
    with pytest.raises(tesseradb.OperationalError, match="not found") as info:
        load(cur, tmp_path / "*")
    assert info.value.errno == 29


def test_html_keeps_headings_drops_scripts_and_reads_tables(cur, tmp_path):
    (tmp_path / "page.html").write_text(textwrap.dedent("""\
        <!doctype html><html><head><title>Rotation guide</title>
        <style>h1 { color: red }</style><script>alert("never indexed")</script></head>
        <body><h1>Rotating certificates</h1><p>Request a <b>new</b> one.</p>
        <script>var tracking = 1;</script>
        <h2>Schedule</h2>
        <table><tr><th>env</th><th>every</th></tr><tr><td>prod</td><td>90 days</td></tr></table>
        </body></html>"""))
    (tmp_path / "untitled.htm").write_text("<body><h3>Only a heading</h3><p>x</p></body>")
    cur.execute(DOCS)
    load(cur, tmp_path / "*.htm*")
    got = rows(cur, "path, title, body")
    title, body = got["page.html"]
    assert title == "Rotation guide"
    assert body.startswith("# Rotating certificates\n\nRequest a **new** one.\n\n## Schedule\n")
    assert "| prod | 90 days |" in body
    assert "alert" not in body and "tracking" not in body and "color" not in body
    assert got["untitled.htm"][0] == "Only a heading"


def test_a_two_page_pdf(cur, tmp_path):
    make_pdf(tmp_path / "manual.pdf", ["Backups run nightly.", "Restores start from snapshots."], title="Ops manual")
    make_pdf(tmp_path / "untitled.pdf", ["Just one page."])
    cur.execute(DOCS)
    load(cur, tmp_path / "*.pdf")
    got = rows(cur, "path, title, body")
    assert got["manual.pdf"] == ("Ops manual", "Backups run nightly.\n\f\nRestores start from snapshots.")
    assert got["untitled.pdf"] == ("untitled", "Just one page.")


def test_a_damaged_pdf_is_skipped(con, tmp_path):
    cur = con.cursor()
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not really a pdf")
    (tmp_path / "ok.md").write_text("ok\n")
    cur.execute(DOCS)
    assert load(cur, tmp_path / "*") == 1
    assert any("broken.pdf' skipped: not a readable PDF" in w[2] for w in con.warnings)


PDF_WITHOUT_PYPDF = """
import sys
sys.modules["pypdf"] = None          # as if the pdf extra were not installed
import tesseradb
con = tesseradb.connect(":memory:")
cur = con.cursor()
cur.execute("CREATE TABLE d (path string UNIQUE, body text)")
cur.execute("LOAD DATA INFILE ? INTO TABLE d", (sys.argv[1] + "/*",))
print(cur.rowcount, con.warnings)
try:
    cur.execute("LOAD DATA INFILE ? INTO TABLE d", (sys.argv[1] + "/*.pdf",))
except tesseradb.Error as exc:
    print(exc)
"""


@pytest.mark.slow                   # a process of its own
def test_without_pypdf_pdfs_name_the_extra(tmp_path):
    make_pdf(tmp_path / "a.pdf", ["text"])
    (tmp_path / "b.md").write_text("b\n")
    out = subprocess.run([sys.executable, "-c", PDF_WITHOUT_PYPDF, str(tmp_path)], capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert out[0].startswith("1 [") and "a.pdf' skipped: reading PDF files needs pypdf: " \
        "pip install 'tesseradb[pdf]'" in out[0]
    assert out[1] == "ERROR 1235 (42000): LOAD DATA: reading PDF files needs pypdf: pip install 'tesseradb[pdf]'"


def test_a_50_mb_file(cur, tmp_path):
    line = "The quick brown fox jumps over the lazy dog; backups run nightly at two.\n"
    text = "# Big\n\n" + line * (50 * 1024 * 1024 // len(line))
    (tmp_path / "big.md").write_text(text)
    (tmp_path / "small.md").write_text("small\n")
    cur.execute(DOCS)
    assert load(cur, tmp_path / "*.md") == 2
    assert cur.execute("SELECT title, LENGTH(body), size FROM d WHERE path = 'big.md'").fetchone() == \
        ("Big", len(text), len(text))


def test_documents_are_embedded_into_a_model_column(cur, tmp_path):
    (tmp_path / "backups.md").write_text("---\ntitle: Backups\n---\nSnapshots are copied to the standby host "
                                         "every night.\n")
    (tmp_path / "tls.md").write_text("# Certificates\n\nRotate the TLS certificate every year.\n")
    cur.execute("CREATE TABLE d (path string UNIQUE, title text, body text, chunks float_vector_array "
                "knn_type='hnsw' hnsw_similarity='cosine' model_name='Xenova/all-MiniLM-L6-v2' "
                "from='title,body' chunk_strategy='sentence' max_tokens='64')")
    load(cur, tmp_path / "*.md")
    assert cur.execute("SELECT path FROM d WHERE knn(chunks, 1, 'renew the certificate')").fetchall() == \
        [("tls.md",)]


def test_txt_loads_as_a_document_and_data_formats_are_unchanged(cur, tmp_path):
    (tmp_path / "notes.txt").write_text("---\ntitle: Notes\n---\nplain text, with, commas\n")
    (tmp_path / "rows.csv").write_text("path,title\nx.md,X\n")
    cur.execute(DOCS)
    load(cur, tmp_path / "notes.txt")
    load(cur, tmp_path / "rows.csv")
    assert rows(cur, "path, title, body") == {"notes.txt": ("Notes", "plain text, with, commas\n"),
                                              "x.md": ("X", None)}


def test_sync_needs_document_files(cur, tmp_path):
    (tmp_path / "rows.csv").write_text("path,title\nx.md,X\n")
    cur.execute(DOCS)
    with pytest.raises(tesseradb.NotSupportedError, match="SYNC loads document files"):
        load(cur, tmp_path / "rows.csv", sync=True)


def test_infile_takes_a_bound_parameter_never_sql(cur, tmp_path):
    odd = tmp_path / "it's; DROP TABLE d; --"
    odd.mkdir()
    (odd / "a.md").write_text("# A\n")
    cur.execute(DOCS)
    assert load(cur, odd / "a.md") == 1
    assert rows(cur, "path, title") == {"a.md": ("A",)}
    with pytest.raises(tesseradb.ProgrammingError, match="bind the file name"):
        cur.execute("LOAD DATA INFILE ? INTO TABLE d")

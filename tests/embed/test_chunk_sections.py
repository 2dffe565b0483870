"""chunk_strategy='markdown' in SQL: heading paths, chunk_context, knn_chunk_section() and
knn_chunk_window(), and old chunk rows gaining their heading paths on open."""
from __future__ import annotations

import json

import apsw
import pytest

import tesseradb
from tesseradb.embed import get_model
from tesseradb.embed.markdown_chunks import parse_outline

MODEL = "Xenova/all-MiniLM-L6-v2"
BODY = """# Replication

Replication copies every write to the standby host over TLS.

## Certificates

### Rotation

To rotate the replication certificate, request a new one from the internal authority, copy it to both
hosts and restart replication on the standby first.

### Expiry

Certificates expire after one year; an alert fires thirty days before.

## Lag

Replication lag above thirty seconds pages the on-call engineer.
"""
OTHER = "# Kitchen\n\nThe kitchen closes at six; label your food in the fridge.\n"


def create(cur, strategy="markdown", extra=""):
    cur.execute(f"CREATE TABLE docs (title text, body text, v float_vector_array knn_type='hnsw' "
                f"hnsw_similarity='cosine' model_name='{MODEL}' from='title,body' chunk_strategy='{strategy}' "
                f"max_tokens='40' {extra})")
    cur.execute("INSERT INTO docs (id, title, body) VALUES (1, 'Replication', ?), (2, 'Office', ?)", [BODY, OTHER])


def source(title, body, sep="\n\n"):
    return title + sep + body


def test_markdown_chunks_carry_heading_paths_and_the_source_joins_with_a_blank_line(cur):
    create(cur)
    rows = cur.execute("SHOW CHUNKS FROM docs.v WHERE id = 1").fetchall()
    text = source("Replication", BODY)
    assert [d[0] for d in cur.description][-1] == "heading"
    for _, _, start, end, _, chunk_text, _ in rows:
        assert chunk_text == text[start:end]
    headings = [r[6] for r in rows]
    # the title before the first heading is no chunk of its own: it joins the first section (issue 32)
    assert headings[0] == "Replication" and rows[0][5].startswith("Replication\n\n# Replication\n\nReplication copies")
    assert all(r[5].strip() != "Replication" for r in rows)
    assert "Replication > Certificates > Rotation" in headings
    assert headings[-1] == "Replication > Lag"
    assert any(r[5].startswith("## Certificates\n\n### Rotation") for r in rows)   # heading-only part joined


def test_knn_chunk_heading_section_and_window(cur):
    create(cur)
    text = source("Replication", BODY)
    row = cur.execute("SELECT id, knn_chunk(), knn_chunk_heading(), knn_chunk_section(), knn_chunk_window(1, 1), "
                      "knn_chunk_text(), knn_chunks(2) FROM docs "
                      "WHERE knn(v, 1, 'how do I rotate the replication certificate')").fetchone()
    doc, ordinal, heading, section, window, chunk_text, ranked = row
    assert (doc, heading) == (1, "Replication > Certificates > Rotation")
    assert section == text[text.index("## Certificates"):text.index("### Expiry")].rstrip() \
        or section == text[text.index("### Rotation"):text.index("### Expiry")].rstrip()
    assert chunk_text in section
    spans = cur.execute("SHOW CHUNKS FROM docs.v WHERE id = 1").fetchall()
    near = spans[max(0, ordinal - 2):ordinal + 1]
    assert window == text[near[0][2]:near[-1][3]]               # one span: overlaps are not repeated
    assert json.loads(ranked)[0]["heading"] == heading
    # the section of "Replication > Certificates > Rotation" is its heading through the end of its text
    outline = parse_outline(text)
    rotation = next(h for h in outline.headings if h.title == "Rotation")
    assert text[rotation.start:rotation.section_end] in section


def test_section_cut_at_max_tokens_and_hybrid_queries(cur):
    create(cur)
    model = get_model(MODEL)
    full, cut = cur.execute("SELECT knn_chunk_section(), knn_chunk_section(5) FROM docs "
                            "WHERE knn(v, 1, 'replication lag paging')").fetchone()
    assert full.startswith(cut) and len(model.token_offsets(cut)) == 5
    rows = cur.execute("SELECT id, knn_chunk_heading(), knn_chunk_section(), knn_chunk_window(0, 0), knn_chunk_text() "
                       "FROM docs WHERE hybrid_match('kitchen fridge', v) LIMIT 2").fetchall()
    assert rows[0][:2] == (2, "Kitchen")   # one chunk, the whole text: its first text (past the title) is under Kitchen
    assert rows[0][3] == rows[0][4]                              # a window of no neighbours is the chunk


def test_section_and_window_with_parameters_and_errors(cur):
    create(cur)
    got = cur.execute("SELECT knn_chunk_window(?, ?), knn_chunk_section(?) FROM docs WHERE knn(v, 1, ?)",
                      [0, 0, 3, "kitchen"]).fetchone()
    assert got[0].startswith("Office") or got[0].startswith("# Kitchen")
    for sql, message in [
        ("SELECT knn_chunk_section() FROM docs", "KNN_CHUNK_SECTION() is only allowed in a query with knn()"),
        ("SELECT knn_chunk_window(1, 1) FROM docs", "KNN_CHUNK_WINDOW() is only allowed in a query with knn()"),
        ("SELECT knn_chunk_section(0) FROM docs WHERE knn(v, 1, 'x')", "KNN_CHUNK_SECTION() takes at most one"),
        ("SELECT knn_chunk_section(1, 2) FROM docs WHERE knn(v, 1, 'x')", "KNN_CHUNK_SECTION() takes at most one"),
        ("SELECT knn_chunk_window(1) FROM docs WHERE knn(v, 1, 'x')", "KNN_CHUNK_WINDOW(before, after) expects"),
        ("SELECT knn_chunk_window(-1, 'a') FROM docs WHERE knn(v, 1, 'x')", "KNN_CHUNK_WINDOW(before, after)"),
        ("SELECT knn_chunk_heading(1) FROM docs WHERE knn(v, 1, 'x')", "KNN_CHUNK_HEADING() takes no arguments"),
    ]:
        with pytest.raises(tesseradb.ProgrammingError) as info:
            cur.execute(sql)
        assert message in str(info.value) and str(info.value).startswith("ERROR 1064 (42000)")


def test_supplied_vectors_give_null(cur):
    cur.execute("CREATE TABLE t (title text, v float_vector_array knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')")
    cur.execute("INSERT INTO t (id, title, v) VALUES (1, '# a', [[0, 0], [1, 1]])")
    assert cur.execute("SELECT knn_chunk_heading(), knn_chunk_section(), knn_chunk_window(1, 1) FROM t "
                       "WHERE knn(v, 1, (1, 1))").fetchone() == (None, None, None)


def test_chunk_context_is_embedded_and_indexed_but_not_returned(cur):
    create(cur)
    model = get_model(MODEL)
    rows = cur.execute("CALL CHUNKS(?, 'markdown', 40)", [BODY]).fetchall()
    assert [d[0] for d in cur.description][-2:] == ["heading", "embedded"]
    for _, _, _, _, chunk_text, heading, embedded in rows:
        assert embedded == (f"{heading}\n{chunk_text}" if heading else chunk_text)
        assert len(model.token_offsets(embedded)) <= 40
    # what is stored is the embedding of the context line and the chunk
    text = source("Replication", BODY)
    chunks = cur.execute("SHOW CHUNKS FROM docs.v WHERE id = 1").fetchall()
    last = chunks[-1]
    context = "Replication > Lag"           # title 'Replication', path 'Replication > Lag': the repeat dropped
    got = cur.execute("SELECT knn_dist(), knn_chunk() FROM docs WHERE knn(v, 1, ?)",
                      [f"{context}\n{text[last[2]:last[3]]}"]).fetchone()
    assert got[0] < 1e-4 and got[1] == last[1]
    plain = cur.execute("SELECT knn_dist() FROM docs WHERE knn(v, 1, ?)", [text[last[2]:last[3]]]).fetchone()
    assert plain[0] > 1e-3                   # the chunk alone is not what was embedded
    # the chunk full-text index sees the context line: "certificates" finds the Rotation chunk by its heading
    hit = cur.execute("SELECT id, knn_chunk_heading() FROM docs WHERE hybrid_match('certificates rotation', v) "
                      "LIMIT 1").fetchone()
    assert hit == (1, "Replication > Certificates > Rotation")
    assert cur.execute("SELECT knn_chunk_text() FROM docs WHERE knn(v, 1, 'lag pages on-call')").fetchone()[0] \
        == text[last[2]:last[3]]


def test_chunk_context_ddl_show_create_and_modify(cur):
    create(cur)
    ddl = cur.execute("SHOW CREATE TABLE docs").fetchone()[1]
    assert "chunk_strategy='markdown'" in ddl and "chunk_context='heading'" in ddl
    cur.execute("DROP TABLE docs")
    cur.execute(ddl)
    assert cur.execute("SHOW CREATE TABLE docs").fetchone()[1] == ddl
    cur.execute("INSERT INTO docs (id, title, body) VALUES (1, 'Replication', ?)", [BODY])
    cur.execute(f"ALTER TABLE docs MODIFY COLUMN v float_vector_array knn_type='hnsw' hnsw_similarity='cosine' "
                f"model_name='{MODEL}' from='title,body' chunk_strategy='markdown' max_tokens='40' chunk_context='none'")
    assert "chunk_context='none'" in cur.execute("SHOW CREATE TABLE docs").fetchone()[1]
    rows = cur.execute("CALL CHUNKS(?, 'markdown', 40, 'none' AS chunk_context)", [BODY]).fetchall()
    assert all(r[4] == r[6] for r in rows)
    chunk = cur.execute("SHOW CHUNKS FROM docs.v WHERE id = 1").fetchall()[-1]
    text = source("Replication", BODY)
    assert cur.execute("SELECT knn_dist() FROM docs WHERE knn(v, 1, ?)", [text[chunk[2]:chunk[3]]]).fetchone()[0] < 1e-4
    # recursive stays Manticore's: no chunk_context printed unless set
    cur.execute(f"CREATE TABLE r (body text, v float_vector_array knn_type='hnsw' model_name='{MODEL}' from='body' "
                "chunk_strategy='recursive' max_tokens='32')")
    assert "chunk_context" not in cur.execute("SHOW CREATE TABLE r").fetchone()[1]


@pytest.mark.parametrize("definition, message", [
    ("v float_vector knn_type='hnsw' model_name='%s' from='body' chunk_strategy='markdown'",
     "chunk_strategy='markdown' produces several vectors per document and requires a float_vector_array attribute"),
    ("v float_vector_array knn_type='hnsw' model_name='%s' from='body' chunk_context='title'",
     "unknown chunk_context 'title'; expected none or heading"),
    ("v float_vector_array knn_type='hnsw' knn_dims='4' hnsw_similarity='l2' chunk_context='heading'",
     "require model_name"),
    ("v float_vector_array knn_type='hnsw' model_name='%s' from='body' chunk_strategy='markdown' overlap_tokens='4'",
     "overlap_tokens requires an explicit non-zero max_tokens"),
])
def test_ddl_errors(cur, definition, message):
    with pytest.raises(tesseradb.ProgrammingError) as info:
        cur.execute(f"CREATE TABLE bad (body text, {definition.replace('%s', MODEL)})")
    assert message in str(info.value)
    assert cur.execute("SHOW TABLES").fetchall() == []


def test_a_changed_heading_re_embeds_only_its_chunks(cur):
    create(cur)
    cur.execute("UPDATE docs SET body = ? WHERE id = 1", [BODY.replace("## Lag", "## Replication delay")])
    notes = [w for w in cur.execute("SHOW WARNINGS").fetchall() if "reused" in w[2]]
    assert notes, "unchanged chunks reuse their vectors"
    reused, total = [int(x.replace(",", "")) for x in notes[0][2].split(": ")[1].split(" chunks")[0].split(" of ")]
    assert 0 < reused < total                                 # the renamed section's chunk is embedded again
    assert cur.execute("SELECT knn_chunk_heading() FROM docs WHERE knn(v, 1, 'lag pages on-call engineer')") \
        .fetchone()[0] == "Replication > Replication delay"


def test_old_chunk_rows_gain_heading_paths_on_open(db_path):
    con = tesseradb.connect(db_path)
    cur = con.cursor()
    cur.execute(f"CREATE TABLE docs (body text, v float_vector_array knn_type='hnsw' model_name='{MODEL}' "
                "from='body' chunk_strategy='recursive' max_tokens='24')")
    cur.execute("INSERT INTO docs (id, body) VALUES (1, ?), (2, 'no headings here')", [BODY])
    con.commit()
    before = cur.execute("SHOW CHUNKS FROM docs.v").fetchall()
    con.close()
    # the previous release's layout: chunk tables without the location columns (and no chunk index yet)
    raw = apsw.Connection(db_path)
    chunks, fts = [r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND "
                                              "(name LIKE '\\_tessera\\_chunks\\_%' ESCAPE '\\' OR name LIKE "
                                              "'\\_tessera\\_ftsc\\_%' ESCAPE '\\') ORDER BY name")][:2]
    keys = raw.execute(f'SELECT chunk_id, text_key FROM "{chunks}" ORDER BY chunk_id').fetchall()
    blob = raw.execute("SELECT v FROM docs WHERE id = 1").fetchone()[0]
    for trigger in ("_ai", "_ad"):
        raw.execute(f'DROP TRIGGER "{fts}{trigger}"')
    raw.execute(f'DROP TABLE "{fts}"')
    for column in ("heading", "sec_start", "sec_end", "context"):
        raw.execute(f'ALTER TABLE "{chunks}" DROP COLUMN {column}')
    raw.close()
    con = tesseradb.connect(db_path)
    cur = con.cursor()
    after = cur.execute("SHOW CHUNKS FROM docs.v").fetchall()
    assert [r[:6] for r in after] == [r[:6] for r in before]          # nothing re-chunked
    assert [r[6] for r in after] == [r[6] for r in before]            # the heading paths new rows would get
    assert "Replication > Certificates > Rotation" in [r[6] for r in after]
    raw = apsw.Connection(db_path)
    assert raw.execute(f'SELECT chunk_id, text_key FROM "{chunks}" ORDER BY chunk_id').fetchall() == keys
    assert raw.execute("SELECT v FROM docs WHERE id = 1").fetchone()[0] == blob   # not re-embedded
    raw.close()
    assert cur.execute("SELECT knn_chunk_heading(), knn_chunk_section() FROM docs "
                       "WHERE knn(v, 1, 'certificates expire after one year')").fetchone()[0] \
        == "Replication > Certificates > Expiry"
    assert cur.execute("SELECT id FROM docs WHERE hybrid_match('expire', v) LIMIT 1").fetchone() == (1,)
    con.close()

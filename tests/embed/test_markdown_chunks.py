"""chunk_strategy='markdown' and heading paths, on hand-made markdown, with the real model's tokens."""
from __future__ import annotations

import pytest

from tesseradb.embed import get_model
from tesseradb.embed import chunking
from tesseradb.embed.chunk_context import cut_document
from tesseradb.embed.markdown_chunks import parse_outline, plan_markdown

FRONT = "---\ntitle: Ops handbook\ntags: [ops]\n---\n"
MANUAL = FRONT + """# Replication

Replication copies every write to the standby.

## Certificates

### Rotation

Request a new certificate from the internal authority, copy it to both hosts and restart the standby first.

```sh
# this is a comment, not a heading
openssl req -new -key server.key
```

### Expiry
Certificates expire after one year.

Monitoring
----------

| metric | limit |
|--------|-------|
| lag    | 5 s   |

# Backups

Nightly, kept for seven days.
"""


@pytest.fixture(scope="module")
def model():
    return get_model("all-MiniLM-L6-v2")


def plan(model, text, max_tokens, overlap=0, max_chunks=0, **kw):
    return plan_markdown(text, model.token_offsets(text), parse_outline(text), max_tokens=max_tokens,
                         overlap_tokens=overlap, max_chunks=max_chunks, window=model.window, **kw)


def spans(plan_):
    return [(c.start, c.end) for c in plan_.chunks]


def test_outline_finds_atx_and_setext_headings_and_not_the_hash_in_a_fence():
    outline = parse_outline(MANUAL)
    assert [h.title for h in outline.headings] == ["Replication", "Certificates", "Rotation", "Expiry", "Monitoring",
                                                   "Backups"]
    assert [h.level for h in outline.headings] == [1, 2, 3, 3, 2, 1]
    assert outline.headings[4].path == ("Replication", "Monitoring")
    assert MANUAL[outline.headings[4].start:outline.headings[4].end] == "Monitoring\n----------"
    assert outline.body_start == len(FRONT)
    # a section runs to the next heading of the same or a higher level
    rotation = outline.headings[2]
    assert MANUAL[rotation.start:rotation.section_end].rstrip().endswith("```")
    # (trailing whitespace left out)
    assert outline.headings[1].section_end == len(MANUAL[:outline.headings[4].start].rstrip())
    assert outline.headings[0].section_end == len(MANUAL[:outline.headings[5].start].rstrip())
    assert len(outline.blocks) == 2          # the fence and the table


def test_front_matter_needs_its_closing_line():
    assert parse_outline("---\nnot front matter\n\n# A\n").body_start == 0
    assert parse_outline("text\n---\ntitle: x\n---\n").body_start == 0


def _no_chunk_crosses_a_heading(text, plan_):
    outline = parse_outline(text)
    for c in plan_.chunks:
        for h in outline.headings:
            if c.start < h.start < c.end and h.section_end > c.end:
                # a chunk holds a section's start without its end only when nothing but heading lines
                # come before it (a heading-only part joined its first child)
                assert outline.first_text(c.start, h.start, text) >= h.start, (c, h)


@pytest.mark.parametrize("max_tokens, overlap", [(16, 4), (24, 0), (40, 8), (256, 32)])
def test_chunks_follow_sections(model, max_tokens, overlap):
    got = plan(model, MANUAL, max_tokens, overlap)
    _no_chunk_crosses_a_heading(MANUAL, got)
    assert all(c.start >= len(FRONT) for c in got.chunks)      # front matter is not chunk text
    for c in got.chunks:
        tokens = model.token_offsets(MANUAL[c.start:c.end])
        assert len(tokens) <= max_tokens
    if max_tokens == 256:                       # the whole body fits: one chunk, front matter left out
        assert spans(got) == [(len(FRONT), len(MANUAL))]


def test_a_section_that_fits_is_one_chunk_and_heading_only_parts_join_their_child(model):
    got = plan(model, MANUAL, 40)
    texts = [MANUAL[s:e] for s, e in spans(got)]
    # "## Certificates" has no text of its own: it joins "### Rotation"
    assert any(t.startswith("## Certificates\n\n### Rotation") for t in texts)
    assert "### Expiry\nCertificates expire after one year." in texts
    assert texts[-1] == "# Backups\n\nNightly, kept for seven days."


def test_a_fence_that_fits_is_not_split(model):
    got = plan(model, MANUAL, 40)
    fence = MANUAL.index("```sh")
    fence_end = MANUAL.index("```\n", fence + 3) + 3
    holding = [c for c in got.chunks if c.start <= fence < c.end or c.start < fence_end <= c.end]
    assert len(holding) == 1 and holding[0].start <= fence and holding[0].end >= fence_end


def test_a_long_section_without_sub_headings_is_cut_recursively_with_overlap_inside_it(model):
    sentence = "Replication lag grows when the standby disk is slow and the network is busy. "
    long_body = sentence * 360                  # about 5,000 tokens
    text = f"# Intro\n\nShort intro.\n\n# Lag\n\n{long_body}\n# After\n\nThe end."
    got = plan(model, text, 128, 16)
    outline = parse_outline(text)
    lag = outline.headings[1]
    inside = [c for c in got.chunks if lag.start <= c.start < lag.section_end]
    assert len(inside) > 30
    assert all(c.end <= lag.section_end for c in inside)        # nothing runs into "# After"
    assert any(b.start < a.end for a, b in zip(inside, inside[1:]))   # overlap between its pieces
    _no_chunk_crosses_a_heading(text, got)
    neighbours = list(zip(got.chunks, got.chunks[1:]))
    for a, b in neighbours:                     # overlap never crosses a heading
        if b.start < a.end:
            assert outline.heading_index(a.start) == outline.heading_index(b.start)
    assert all(len(model.token_offsets(text[c.start:c.end])) <= 128 for c in got.chunks)


def test_text_without_headings_is_cut_exactly_like_recursive(model):
    text = "Backups run nightly. Restores start from the newest snapshot.\n\n" * 40
    offsets = model.token_offsets(text)
    expected = chunking.plan_chunks(text, offsets, strategy="recursive", max_tokens=32, overlap_tokens=8,
                                    window=model.window)
    assert plan(model, text, 32, 8) == expected


def test_max_chunks_stretches_the_last_chunk(model):
    got = plan(model, MANUAL, 16, 0, 2)
    assert len(got.chunks) == 2 and got.merged_overflow
    assert got.chunks[-1].end == len(MANUAL)


def test_cjk_and_emoji_headings_and_text(model):
    text = "# 会議室 🚀\n\n会議室は予約制です。" * 1 + "\n\n## Café ☕\n\n" + "Le café est servi à huit heures. 🚀 " * 30
    got = cut_document(model, text, strategy="markdown", max_tokens=48, overlap_tokens=8, chunk_context="heading")
    where = got.located(text)
    assert where[0].heading == "会議室 🚀"
    assert {w.heading for w in where[1:]} == {"会議室 🚀 > Café ☕"}
    for c, w, piece in zip(got.plan.chunks, where, got.pieces(text, where)):
        assert piece == f"{w.context}\n{text[c.start:c.end]}"
        assert len(model.token_offsets(piece)) <= 48


def test_every_strategy_gets_heading_paths(model):
    got = cut_document(model, MANUAL, strategy="recursive", max_tokens=24, overlap_tokens=4)
    where = got.located(MANUAL)
    outline = parse_outline(MANUAL)
    for c, w in zip(got.plan.chunks, where):
        first = outline.first_text(c.start, c.end, MANUAL)
        assert w.heading == outline.path_text(outline.heading_index(first))
        assert w.context is None                # chunk_context='none' for recursive by default
    # a chunk starting at "## Certificates" (heading-only) and its child gets the child's path
    starts = {MANUAL[c.start:c.end].split("\n")[0]: w.heading for c, w in zip(got.plan.chunks, where)}
    assert "Replication > Certificates > Rotation" in starts.values()
    assert cut_document(model, "plain words only", strategy="fixed", max_tokens=2).located("plain words only") \
        [0].heading is None


def test_context_line_title_path_and_cap(model):
    text = "# Replication\n\n## Certificates\n\nRotate them yearly."
    got = cut_document(model, text, strategy="markdown", max_tokens=64, chunk_context="heading", title="Replication")
    (where,) = got.located(text)
    assert where.context == "Replication > Certificates"      # the leading heading equal to the title dropped
    long_title = "word " * 40
    got = cut_document(model, text, strategy="markdown", max_tokens=16, chunk_context="heading", title=long_title)
    for w, piece in zip(got.located(text), got.pieces(text, got.located(text))):
        assert len(model.token_offsets(w.context)) <= 4       # a quarter of M, cut from the left
        assert w.context.endswith("Certificates")
        assert len(model.token_offsets(piece)) <= 16

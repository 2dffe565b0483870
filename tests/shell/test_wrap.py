"""Passages in the shell: multi-line and long text stays inside its column; \\G indents continuations."""
from __future__ import annotations

from tesseradb.clients.shell import render

PASSAGE = ("The primary and the standby replicate over TLS; to rotate the certificate, request a new one.\n\n"
           "東京の天気は晴れです。東京の天気は晴れです。東京の天気は晴れです。 🚀 done")


def _frame_widths(text: str) -> set[int]:
    return {render.width(line) for line in text.splitlines()}


def test_newlines_stay_inside_the_table():
    out = render.table(["id", "text"], [None, None], [(1, PASSAGE), (2, "short")])
    assert len(_frame_widths(out)) == 1                   # every line, borders included, equally wide
    assert "|    |" in out                                # the blank line of the passage, inside the frame


def test_long_text_wraps_to_the_given_width_without_losing_characters():
    out = render.table(["id", "text"], [None, None], [(1, PASSAGE)], wrap_width=40)
    assert max(_frame_widths(out)) <= 40
    inner = [line.split("|")[2].strip() for line in out.splitlines() if line.startswith("|  1 ") or
             line.startswith("|    ")]
    assert "".join(inner).replace(" ", "") == PASSAGE.replace("\n", "").replace(" ", "")


def test_vertical_output_indents_continuation_lines():
    out = render.vertical(["id", "text"], [None, None], [(1, "first line\nsecond line")])
    assert "text: first line\n      second line" in out

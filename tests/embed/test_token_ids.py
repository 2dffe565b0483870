"""Chunks bring their token ids from their page's tokens (embed/token_ids.py): every id list handed
to the model is exactly what tokenizing the chunk's text gives, for real pages (this repository's
docs) and for texts made to be awkward (accents, CJK, emoji, punctuation runs, words longer than a
chunk, control characters); a chunk that does not qualify is tokenized as before; and the vectors
are the same either way."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tesseradb.embed.chunk_context import cut_document
from tesseradb.embed.token_ids import Tokenized

DOCS = sorted((Path(__file__).resolve().parents[2] / "docs").glob("*.md"))
AWKWARD = [
    "Crème brûlée, naïve façade — résumé déjà vu. ÅNGSTRÖM Ünïcödé ﬁligree ǅemal. " * 40,
    "東京都の日本語テキスト、句読点。中文字符和English混合！한국어 문장도 있습니다. " * 40,
    "emoji 🚀🚀 rocket👩‍👩‍👧 family 🇫🇷 flag, zero\u200bwidth and soft\u00adhyphen, tab\there\r\nnewline. " * 40,
    "punctuation!!!??? (((nested))) [[links]](http://x.y/z?q=1&r=2) a.b.c ... --- ___ *** <tag/> " * 40,
    ("qzxj" * 24 + " ") * 6 + "short words after it. " * 30,       # 96 pieces a word: more than a chunk
    ("x" * 300 + " tail words ") * 90,                  # a word too long for WordPiece: [UNK]
    "control\x01chars\x7f and combining e\u0301 a\u0308 accents, NBSP\u00a0between, ideographic\u3000space. " * 40,
    "snake_case_identifiers and camelCaseWords with numbers 3.14159 and 1,000,000 and v2.0-beta. " * 40,
]


def _pieces(model, text: str, strategy: str, context: str = "none"):
    cut = cut_document(model, text, strategy=strategy, max_tokens=64, overlap_tokens=8, chunk_context=context,
                       title="A title" if context == "heading" else None)
    return cut.pieces(text, cut.located(text), model)


def _check(model, pieces) -> int:
    given = [p for p in pieces if isinstance(p, Tokenized)]
    for piece in given:
        assert piece.ids.tolist() == model._tokenizer.encode(str(piece), add_special_tokens=False).ids, piece[:80]
        assert model._given(piece).ids.tolist() == model._embed_tokenizer.encode(str(piece)).ids
    return len(given)


@pytest.mark.parametrize("strategy", ["recursive", "markdown", "fixed", "sentence"])
def test_the_ids_of_real_chunks_are_the_tokenizers(model, strategy):
    total = given = 0
    for path in DOCS:
        pieces = _pieces(model, path.read_text(encoding="utf-8"), strategy)
        total += len(pieces)
        given += _check(model, pieces)
    assert total > 500
    assert given > 0.8 * total if strategy != "fixed" else given > 0      # fixed cuts inside words too


@pytest.mark.parametrize("text", AWKWARD, ids=range(len(AWKWARD)))
@pytest.mark.parametrize("strategy", ["recursive", "fixed"])
def test_the_ids_of_awkward_chunks_are_the_tokenizers(model, text, strategy):
    pieces = _pieces(model, text, strategy)
    assert len(pieces) >= 3
    _check(model, pieces)


def test_a_chunk_cut_inside_a_word_or_read_with_a_context_line_is_tokenized(model):
    long_word = _pieces(model, AWKWARD[4], "recursive")       # the long word's chunks are cut inside it
    assert not all(isinstance(p, Tokenized) for p in long_word) and any(isinstance(p, Tokenized) for p in long_word)
    text = DOCS[0].read_text(encoding="utf-8")
    assert not any(isinstance(p, Tokenized) for p in _pieces(model, text, "markdown", "heading")
                   if p.startswith("A title"))


def test_the_vectors_are_the_same_either_way(model):
    pieces = [p for text in AWKWARD[:5] for p in _pieces(model, text, "recursive")][:40]
    assert sum(isinstance(p, Tokenized) for p in pieces) > 20
    assert np.array_equal(model.embed(pieces), model.embed([str(p) for p in pieces]))

"""Model.token_offsets: character spans of every content token of the whole text."""
from __future__ import annotations


def surfaces(model, text):
    return [text[s:e] for s, e in model.token_offsets(text)]


def test_ascii_words_map_back_to_the_text(model):
    text = "The quick brown fox jumps over the lazy dog, again!"
    assert surfaces(model, text) == ["The", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog",
                                     ",", "again", "!"]
    # the tokenizer lower-cases: each surface, lower-cased, is the token it produced
    tokens = model._tokenizer.encode(text, add_special_tokens=False).tokens
    assert [s.lower() for s in surfaces(model, text)] == tokens


def test_word_pieces_are_adjacent_spans_of_one_word(model):
    text = "tokenization"
    offsets = model.token_offsets(text)
    assert len(offsets) > 1
    assert offsets[0][0] == 0 and offsets[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in zip(offsets, offsets[1:]))


def test_no_special_tokens_and_empty_text(model):
    assert model.token_offsets("") == []
    assert surfaces(model, "hello") == ["hello"]


def test_non_ascii_offsets_are_characters_not_bytes(model):
    text = "café 机器学习 🚀"
    assert model.token_offsets(text) == [(0, 4), (5, 6), (6, 7), (7, 8), (8, 9), (10, 11)]
    assert surfaces(model, text) == ["café", "机", "器", "学", "习", "🚀"]
    assert len(text) == 11 and len(text.encode()) > 11


def test_whole_text_is_tokenized_without_truncation(model):
    text = " ".join(["word"] * 3000) + " end"
    offsets = model.token_offsets(text)
    assert len(offsets) == 3001
    assert text[offsets[-1][0]:offsets[-1][1]] == "end"
    assert offsets[-1][1] == len(text)


def test_offsets_are_increasing_and_inside_the_text(model):
    text = "Mixed: naïve résumé — 東京 2024-05-01, e-mail: a.b@c.org 🚀🚀"
    offsets = model.token_offsets(text)
    assert all(0 <= s < e <= len(text) for s, e in offsets)
    assert all(a[1] <= b[0] for a, b in zip(offsets, offsets[1:]))
    assert "".join(text[s:e] for s, e in offsets) == "".join(text.split())


def test_a_long_text_gets_the_tokens_a_short_one_would(model):
    """A text of RELEASE_GIL_CHARS or more is tokenized through encode_batch (the GIL let go while it
    runs), a shorter one through encode: the same offsets, ids and word ids either way, accents, CJK,
    emoji and control characters included."""
    from tesseradb.embed.model import RELEASE_GIL_CHARS
    unit = "Café déjà vu: 机器学习 🚀 re-tokenization\tof\x07 'quoted' words, ok? "
    text = unit * (2 * RELEASE_GIL_CHARS // len(unit) + 1)
    assert len(text) >= RELEASE_GIL_CHARS > len(unit)
    whole = model._tokenizer.encode(text, add_special_tokens=False)
    assert model.token_offsets(text) == whole.offsets
    page = model.page_tokens(text)
    assert page.offsets == whole.offsets
    assert page.encoding.ids == whole.ids and page.encoding.word_ids == whole.word_ids
    assert model.count_tokens(text) == len(whole.ids)
    # a short piece of it, through encode, tokenizes as the long text does there
    short = model.token_offsets(unit)
    assert short == whole.offsets[:len(short)]

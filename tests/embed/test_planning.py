"""Long documents with few kept chunks are planned from a prefix of their tokens, with the same
chunks, counts and warnings as when every token is held."""
from __future__ import annotations

import random

import pytest

from tesseradb.embed import chunking, planning
from tesseradb.embed.model import whitespace_cut, whitespace_pieces

WORDS = ("replication cluster node table index query vector chunk Manticore naïve café "
         "über-long-identifier_with_underscores 3.14159 e-mail@example.com 東京 データ "
         "x" * 3).split() + ["a" * 140]  # a word over 100 characters is one [UNK] token


def document(n_chars: int, seed: int = 7) -> str:
    """Sentences, paragraphs, tabs, CRLF, accents, CJK and over-long words, deterministically."""
    rng, parts, size = random.Random(seed), [], 0
    while size < n_chars:
        sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 30)))
        sentence = sentence[0].upper() + sentence[1:] + rng.choice([". ", "? ", "! ", ".\n", ".\n\n", ".\t", ".\r\n"])
        parts.append(sentence)
        size += len(sentence)
    return "".join(parts)


TEXT = document(300_000)


def full_plan(model, text, **settings):
    return chunking.plan_chunks(text, model.token_offsets(text), window=model.window, **settings)


def test_count_tokens_in_pieces_equals_the_whole_count(model):
    assert model.count_tokens(TEXT) == len(model.token_offsets(TEXT))
    cut = whitespace_cut(TEXT, 123_457)
    assert model.count_tokens(TEXT, cut) == len(model.token_offsets(TEXT)) - len(model.token_offsets(TEXT[:cut]))


def test_whitespace_pieces_tile_the_text():
    spans = whitespace_pieces(TEXT, 0, 5000)
    assert spans[0][0] == 0 and spans[-1][1] == len(TEXT)
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    assert all(TEXT[e - 1] in " \t\n\r" for _, e in spans[:-1])
    assert whitespace_pieces("x" * 50, 0, 10) == [(0, 50)]  # no whitespace: one piece


@pytest.mark.parametrize("strategy,max_tokens,overlap,max_chunks", [
    ("fixed", 32, 8, 3), ("recursive", 256, 32, 4), ("recursive", 0, 0, 1), ("sentence", 64, 16, 5),
    ("sentence", 256, 0, 2), ("mean", 128, 0, 3), ("recursive", 48, 16, 400),
])
def test_prefix_plan_equals_the_full_plan(model, strategy, max_tokens, overlap, max_chunks):
    settings = dict(strategy=strategy, max_tokens=max_tokens, overlap_tokens=overlap, max_chunks=max_chunks)
    assert planning.plan_document(model, TEXT, **settings) == full_plan(model, TEXT, **settings)


def test_truncate_counts_without_offsets(model):
    plan = planning.plan_document(model, TEXT, strategy="truncate")
    assert plan == full_plan(model, TEXT, strategy="truncate")
    assert plan.dropped_tokens == plan.total_tokens - model.window > 50_000


def test_only_a_prefix_is_tokenized_with_offsets(model, monkeypatch):
    seen = []
    for name in ("token_offsets", "page_tokens"):        # what the planner tokenizes, either way
        original = getattr(model, name)
        monkeypatch.setattr(model, name, lambda text, original=original: seen.append(len(text)) or original(text))
    plan = planning.plan_document(model, TEXT * 10, strategy="recursive", max_tokens=256, overlap_tokens=32,
                                  max_chunks=3)
    assert plan.merged_overflow and len(plan.chunks) == 3 and plan.chunks[-1].end == len(TEXT) * 10
    assert max(seen) < 20_000  # of 3,000,000 characters
    planning.plan_document(model, TEXT * 10, strategy="recursive", max_tokens=256, max_chunks=0)
    assert max(seen) == len(TEXT) * 10  # every chunk kept: every token needed


def test_a_text_without_whitespace_is_planned_whole(model):
    text = "y" * 100_000
    settings = dict(strategy="fixed", max_tokens=16, overlap_tokens=0, max_chunks=2)
    assert planning.plan_document(model, text, **settings) == full_plan(model, text, **settings)


def test_a_long_text_is_cut_to_its_window_before_embedding(model, monkeypatch):
    """Only the head that holds the window's tokens is tokenized for the model; same vector."""
    from tesseradb.embed import model as model_module
    long = TEXT[:200_000]
    cut = model.embed([long])
    monkeypatch.setattr(model_module, "HEAD_CHARS_PER_TOKEN", 10**9)  # no cut: the whole text is encoded
    assert (model.embed([long]) == cut).all()
    assert len(model._head(long)) == len(long)
    monkeypatch.undo()
    assert len(model._head(long)) < 20_000


@pytest.mark.parametrize("strategy", ["recursive", "sentence"])
def test_a_long_word_after_an_early_space_is_planned(model, strategy):
    """The prefix search must grow past a cut stuck at an early space (it looped for ever on
    'new doc ' + 100,000 letters: the fuzzer's statement)."""
    text = "new doc " + "x" * 100_000
    settings = dict(strategy=strategy, max_tokens=32, overlap_tokens=0, max_chunks=4)
    assert planning.plan_document(model, text, **settings) == full_plan(model, text, **settings)

"""Chunks' token ids taken from their page's tokens, so that ``Model.embed`` does not tokenize them again.

The chunk planner tokenizes each whole page (:meth:`Model.page_tokens`) and cuts the chunks on those
tokens; ``Model.embed`` then tokenized every chunk's text again (on the whole manual: 1.3 CPU s).
A chunk's text tokenizes to exactly the page's tokens inside its span when the model is a BERT
WordPiece one (``BertNormalizer`` and ``BertPreTokenizer``: every normalizing step acts on one
character, and words are split at whitespace and punctuation alone, so a word's pieces depend on
the word only) and the span starts and ends at word (pre-token) boundaries: no token crosses an
edge and no word goes on across one (its pieces have the same word id; ``##`` pieces are part of
their word). Such a chunk's ids are kept with the plan (:func:`chunk_ids`, compact int32 arrays: not
the page's Encoding, which costs about a hundred bytes a token) and handed to the model with its
text (:class:`Tokenized`); the model uses them only when it reads the text as it is (no document
prefix, no context line), they fit its window (no truncation) and its special tokens wrap them as
its tokenizer's template does (:func:`template`). Otherwise the text is tokenized as before.
``tests/embed/test_token_ids.py`` compares the ids with the tokenizer's for real chunk texts.
"""
from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from tokenizers import Encoding, Tokenizer

    from tesseradb.embed.chunking import Chunk

PROBE = "Hello, wörld: a tokenizer's template — 東京 ok."


class PageTokens:
    """One page's content tokens: their offsets (what the planner reads) and, for :meth:`chunk_ids`,
    their ids and word ids, read once from the Encoding."""

    def __init__(self, encoding: Encoding):
        self.encoding = encoding
        self.offsets: list[tuple[int, int]] = list(encoding.offsets)

    def chunk_ids(self, chunks: Sequence[Chunk], limit: int) -> tuple[np.ndarray | None, ...]:
        """Per chunk, its token ids when its span starts and ends at word boundaries and holds 1 to
        ``limit`` tokens; else None. The Encoding is let go (the ids outlive it, the page's tokens do not)."""
        encoding, self.encoding = self.encoding, None
        if encoding is None or not chunks:
            return (None,) * len(chunks)
        ids = np.asarray(encoding.ids, np.int32)
        words = encoding.word_ids
        offsets, n = self.offsets, len(self.offsets)
        starts = [s for s, _ in offsets]
        out = []
        for chunk in chunks:
            i, j = bisect.bisect_left(starts, chunk.start), bisect.bisect_left(starts, chunk.end)
            whole = (0 < j - i <= limit and (i == 0 or offsets[i - 1][1] <= chunk.start)
                     and offsets[j - 1][1] <= chunk.end
                     and (i == 0 or words[i - 1] != words[i]) and (j == n or words[j] != words[j - 1]))
            out.append(ids[i:j].copy() if whole else None)
        return tuple(out)


class Tokenized(str):
    """A chunk's text with its content token ids (``ids``) under ``tokenizer``: what tokenizing the
    text with that tokenizer gives, without special tokens. It is the text everywhere else."""

    ids: np.ndarray
    tokenizer: object


def tokenized(text: str, ids: np.ndarray | None, tokenizer: object) -> str:
    if ids is None:
        return text
    piece = Tokenized(text)
    piece.ids, piece.tokenizer = ids, tokenizer
    return piece


def supported(tokenizer: Tokenizer) -> bool:
    """Whether a chunk cut at word boundaries tokenizes to the page's tokens inside it (see above)."""
    from tokenizers.models import WordPiece
    from tokenizers.normalizers import BertNormalizer
    from tokenizers.pre_tokenizers import BertPreTokenizer
    return (isinstance(tokenizer.model, WordPiece) and isinstance(tokenizer.pre_tokenizer, BertPreTokenizer)
            and (tokenizer.normalizer is None or isinstance(tokenizer.normalizer, BertNormalizer)))


class Template:
    """The special tokens the embedding tokenizer puts around a text's content tokens."""

    def __init__(self, before: list[int], after: list[int], type_id: int):
        self.before, self.after, self.type_id = np.asarray(before, np.int64), np.asarray(after, np.int64), type_id

    def wrap(self, ids: np.ndarray) -> _Ids:
        full = np.concatenate((self.before, ids.astype(np.int64), self.after))
        return _Ids(full, np.full(len(full), self.type_id, np.int64))


class _Ids:
    """What ``Model._run`` reads of an Encoding: ids and type ids."""
    __slots__ = ("ids", "type_ids")

    def __init__(self, ids: np.ndarray, type_ids: np.ndarray):
        self.ids, self.type_ids = ids, type_ids


def template(plain: Tokenizer, embedding: Tokenizer) -> Template | None:
    """The embedding tokenizer's special tokens around content ids, found on a probe text: None when
    the tokenizer is not a supported one or the probe's tokens are not ``before + content + after``
    with one type id (then every text is tokenized)."""
    if not supported(plain):
        return None
    content = plain.encode(PROBE, add_special_tokens=False).ids
    full = embedding.encode(PROBE)
    specials = embedding.encode("").ids
    if len(set(full.type_ids)) != 1 or len(full.ids) != len(content) + len(specials):
        return None
    for k in range(len(specials) + 1):
        if full.ids == specials[:k] + content + specials[k:]:
            return Template(specials[:k], specials[k:], full.type_ids[0])
    return None

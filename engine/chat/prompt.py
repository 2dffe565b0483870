"""What the chat model reads: the sources the engine's search found, packed within a budget, each
labelled with its row id as ``[ref:<id>]``, and the question (docs/chat.md#the-prompt).

Manticore sends the whole ``from=`` fields of the top documents, cut at ``max_document_length``. The
engine knows which part of each document matched, so a source here is the matched **section** when it
fits ``max_document_length`` (``context='section'``, the default), else the matched **passage** (the
chunk); cut at a word boundary when even that is longer. Sources are added best first until
``max_context_length`` characters are used (a last one may be cut to what is left, when at least
``MIN_SOURCE`` characters are). Pure functions: no model, no database.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MIN_SOURCE = 200          # characters: a source cut shorter than this is left out instead
SYSTEM = ("You answer questions about the user's documents using only the sources given with the question. "
          "Each source starts with its label, such as [ref:12]. Cite every statement with the label of the "
          "source it comes from, written exactly like that (for example [ref:12]). If the sources do not "
          "hold the answer, say that you do not know.")
REWRITE = ("Rewrite the user's last message as one standalone search query that can be understood without "
           "the conversation. Answer with the query only, on one line.")


@dataclass(frozen=True)
class Hit:
    """One document the search returned, with what matched in it."""
    id: int
    score: float | None
    passage: str | None
    section: str | None
    heading: str | None
    title: str | None = None          # a `path` or `title` column of the row, when the table has one
    row: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Source:
    hit: Hit
    text: str                         # what the prompt holds for it

    @property
    def label(self) -> str:
        parts = [p for p in (self.hit.title, self.hit.heading) if p]
        return f"[ref:{self.hit.id}]" + (" " + " - ".join(parts) if parts else "")


def cut(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at a word boundary (limit 0: whole)."""
    if limit <= 0 or len(text) <= limit:
        return text
    head = text[:limit]
    space = max(head.rfind(" "), head.rfind("\n"))
    return (head[:space] if space > limit // 2 else head).rstrip() + " ..."


def _text(hit: Hit, max_document_length: int, context: str) -> str:
    section, passage = (hit.section or "").strip(), (hit.passage or "").strip()
    if context == "section" and section and (max_document_length == 0 or len(section) <= max_document_length):
        return section
    return cut(passage or section, max_document_length)


def pack(hits: list[Hit], *, max_document_length: int, max_context_length: int, context: str) -> list[Source]:
    sources: list[Source] = []
    used = 0
    for hit in hits:
        text = _text(hit, max_document_length, context)
        if not text:
            continue
        room = max_context_length - used
        if len(text) > room:
            if room < MIN_SOURCE:
                break
            text = cut(text, room)
        sources.append(Source(hit, text))
        used += len(text)
    return sources


def user_message(question: str, sources: list[Source]) -> str:
    if not sources:
        return f"No source matched this question.\n\nQuestion: {question}"
    blocks = "\n\n".join(f"{s.label}\n{s.text}" for s in sources)
    return f"Sources:\n\n{blocks}\n\nQuestion: {question}"


def messages(question: str, sources: list[Source], history: list[tuple[str, str]],
             custom_prompt: str = "") -> list[dict[str, str]]:
    system = SYSTEM + ("\n\n" + custom_prompt.strip() if custom_prompt.strip() else "")
    past = [{"role": role, "content": content} for role, content in history]
    return [{"role": "system", "content": system}, *past, {"role": "user", "content": user_message(question, sources)}]


def rewrite_messages(question: str, history: list[tuple[str, str]]) -> list[dict[str, str]]:
    past = [{"role": role, "content": content} for role, content in history]
    return [{"role": "system", "content": REWRITE}, *past, {"role": "user", "content": question}]


def standalone_query(answer: str, question: str) -> str:
    """The model's rewrite, first line, unquoted; the question itself when the answer is empty."""
    line = next((l.strip() for l in answer.splitlines() if l.strip()), "")
    line = line.strip("\"'` ")
    return line[:500] if line else question


def cited(answer: str, sources: list[Source]) -> set[int]:
    """Which sources the answer cites by their label."""
    return {s.hit.id for s in sources if f"[ref:{s.hit.id}]" in answer}

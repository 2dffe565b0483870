"""CALL CHAT in the interactive shell (docs/chat.md#in-the-shell): the answer is printed as the model
writes it (Ctrl-C stops it), then its sources, one line each, instead of a one-row table that would
repeat the answer. Batch mode and ``-e`` print the row as any other statement's."""
from __future__ import annotations

import json
import re
from typing import TextIO

CALL_CHAT = re.compile(r"^\s*call\s+chat\s*\(", re.IGNORECASE)


def is_chat(sql: str) -> bool:
    return bool(CALL_CHAT.match(sql))


class Stream:
    """Writes each piece of the answer at once (it is called on the statement's worker thread)."""

    def __init__(self, out: TextIO):
        self.out, self.started = out, False

    def __call__(self, piece: str) -> None:
        self.started = True
        self.out.write(piece)
        self.out.flush()

    def end(self) -> None:
        if self.started:
            self.out.write("\n")
            self.out.flush()


def sources_text(names: list[str], row: tuple) -> str:
    """The sources under a streamed answer, and what the answer was (conversation, what was searched)."""
    values = dict(zip(names, row))
    lines = []
    for source in json.loads(values.get("sources") or "[]"):
        label = " - ".join(str(source[k]) for k in ("path", "title", "heading") if source.get(k))
        mark = "  (cited)" if source.get("cited") else ""
        lines.append(f"  [ref:{source.get('id')}] {label}{mark}")
    head = "\nSources:\n" if lines else "\nNo sources matched.\n"
    tail = f"\nconversation {values.get('conversation_uuid')}; searched: {values.get('search_query')}\n"
    return head + "\n".join(lines) + ("\n" if lines else "") + tail

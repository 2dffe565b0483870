"""Split a script into statements on the sqlglot tokenizer, so quotes and comments are respected."""
from __future__ import annotations

from dataclasses import dataclass

from sqlglot.tokens import TokenType

from .lexing import DEFAULT, Lexing


@dataclass(frozen=True)
class Piece:
    text: str      # the statement, without its terminating ';'
    line: int      # 1-based line where it starts in the script


def split(script: str, lexing: Lexing = DEFAULT) -> list[Piece]:
    """Statements of ``script`` in order (read with the session's ``lexing``); empty ones are dropped."""
    tokens = lexing.tokenize(script)
    pieces: list[Piece] = []
    first = None
    last = None
    for tok in tokens:
        if tok.token_type == TokenType.SEMICOLON:
            if first is not None:
                pieces.append(Piece(script[first.start:last.end + 1], first.line))
            first = last = None
            continue
        if first is None:
            first = tok
        last = tok
    if first is not None:
        pieces.append(Piece(script[first.start:last.end + 1], first.line))
    return pieces

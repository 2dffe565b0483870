"""Errors of the grammar layer: text that is not a statement we understand."""
from __future__ import annotations


class GrammarError(Exception):
    """A syntax error, with where it happened and the text around it."""

    def __init__(self, msg: str, line: int | None = None, col: int | None = None, context: str = ""):
        super().__init__(msg)
        self.msg = msg
        self.line = line
        self.col = col
        self.context = context

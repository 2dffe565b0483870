"""docs/shell.md documents every client command and every command-line option."""
from __future__ import annotations

from pathlib import Path

import pytest

from tesseradb.clients.shell.commands import COMMANDS, SCANNER_COMMANDS
from tesseradb.clients.shell.main import parser

DOC = (Path(__file__).resolve().parents[2] / "docs" / "shell.md").read_text()
NAMES = sorted(COMMANDS) + [name for name, _, _ in SCANNER_COMMANDS]
OPTIONS = [opt for action in parser()._actions for opt in action.option_strings]


@pytest.mark.parametrize("name", NAMES)
def test_every_command_has_a_heading(name):
    assert f"\n### {name}\n" in DOC


@pytest.mark.parametrize("option", OPTIONS)
def test_every_option_is_documented(option):
    assert f"`{option}" in DOC


def test_load_data_page_exists():
    page = Path(__file__).resolve().parents[2] / "docs" / "load_data.md"
    text = page.read_text()
    assert "## LOAD DATA INFILE" in text and "## SELECT ... INTO OUTFILE" in text

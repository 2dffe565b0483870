"""docs/http.md's curl examples run against a served database, in page order, and answer what the page
shows under them (a ```json block: compared as JSON, with ``took`` ignored and numbers to 4 decimals;
a ```text block: compared as text, with the timing ignored). Blocks whose first line is ``# syntax``
are only shown."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "http.md"
FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```", re.M | re.S)
DOC_ADDRESS = "127.0.0.1:9308"

pytestmark = pytest.mark.slow


def examples() -> list[tuple[str, str | None, str | None]]:
    """(command, kind of the block under it, its text) of every curl block."""
    fences = [(m.group(1), m.group(2), m.start(), m.end()) for m in FENCE.finditer(PAGE.read_text(encoding="utf-8"))]
    out = []
    for i, (lang, code, _, end) in enumerate(fences):
        if lang != "sh" or not code.lstrip().startswith("curl"):
            continue
        following = fences[i + 1] if i + 1 < len(fences) else None
        adjacent = following is not None and PAGE.read_text(encoding="utf-8")[end:following[2]].strip() == ""
        out.append((code, following[0] if adjacent else None, following[1] if adjacent else None))
    return out


def normal(value):
    if isinstance(value, dict):
        return {k: normal(v) for k, v in value.items() if k != "took"}
    if isinstance(value, list):
        return [normal(v) for v in value]
    if isinstance(value, float):
        return round(value, 4)
    return value


def test_the_page_has_examples():
    found = examples()
    assert len(found) >= 12 and all(kind in ("json", "text") for _, kind, _ in found)


def test_curl_examples(fresh):
    address = f"127.0.0.1:{fresh.handle.http_port}"
    for n, (command, kind, expected) in enumerate(examples(), start=1):
        done = subprocess.run(["bash", "-c", command.replace(DOC_ADDRESS, address)], capture_output=True,
                              text=True, timeout=600)
        where = f"docs/http.md curl example {n}:\n{command}\n--- got:\n{done.stdout}\n{done.stderr}"
        assert done.returncode == 0, where
        if kind == "json":
            assert normal(json.loads(done.stdout)) == normal(json.loads(expected)), where
        elif kind == "text":
            timing = re.compile(r"\(\d+\.\d+ sec\)")
            assert timing.sub("", done.stdout).strip() == timing.sub("", expected).strip(), where

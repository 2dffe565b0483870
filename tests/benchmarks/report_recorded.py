"""Sections whose figures were recorded from their runs: results/recorded_<name>.json holds the section as
data (its title, its commands, its tables cell by cell, its paragraphs) and this renders it.

These sections come from runs that wrote no results file of their own, or whose own file holds only
part of what the section reports (several runs, several scripts, figures read off a log): the
figures were taken from those runs, each paragraph names its command, load and date. A benchmark
that measures such a section again writes its figures into this file (or gets a renderer of its
own over its own results file, as report_sync.py) and calls ``sections.write_section(name)``.

results/recorded_<name>.json::

    {"title": "...", "recorded": "where the figures come from",
     "blocks": [{"text": ["line", ...]},                    # a paragraph or a list, its lines as on the page
                {"code": ["line", ...], "lang": "sh"},      # a fenced block
                {"table": {"header": [...], "align": [...], "rows": [[...], ...]}}]}
"""
from __future__ import annotations

import common


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def render_blocks(blocks: list[dict]) -> list[str]:
    out: list[str] = []
    for block in blocks:
        if "text" in block:
            out += block["text"]
        elif "code" in block:
            out += ["```" + block.get("lang", ""), *block["code"], "```"]
        else:
            t = block["table"]
            out += [_row(t["header"]), "|" + "|".join(t["align"]) + "|", *(_row(r) for r in t["rows"])]
        out.append("")
    return out


def section(name: str) -> list[str]:
    r = common.load_result(f"recorded_{name}")
    if not r:
        return []
    return [f"## {r['title']}", "", *render_blocks(r["blocks"])]


def blocks_of(lines: list[str]) -> list[dict]:
    """The blocks of a markdown section's body (the inverse of :func:`render_blocks`)."""
    blocks: list[dict] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
        elif line.startswith("```"):
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            blocks.append({"code": lines[i + 1:end], "lang": line[3:]})
            i = end + 1
        elif line.startswith("|") and i + 1 < len(lines) and set(lines[i + 1]) <= set("|-: "):
            end = i
            while end < len(lines) and lines[end].startswith("|"):
                end += 1
            cells = [row[2:-2].split(" | ") for row in lines[i:end]]
            align = lines[i + 1].strip("|").split("|")
            table = {"header": cells[0], "align": align, "rows": [c for k, c in enumerate(cells) if k > 1]}
            if render_blocks([{"table": table}])[:-1] != lines[i:end]:
                raise ValueError(f"table at {line!r} does not round-trip")
            blocks.append({"table": table})
            i = end
        else:
            end = i
            while end < len(lines) and lines[end].strip() and not lines[end].startswith("```"):
                end += 1
            blocks.append({"text": lines[i:end]})
            i = end
    return blocks

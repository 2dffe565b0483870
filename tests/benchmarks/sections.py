"""docs/benchmarks.md, one section per benchmark, each between its own markers, in page order.

Every section of the page is the output of one renderer (a function returning the section's markdown
lines) that reads only ``tests/benchmarks/results/*.json``; the page is the sections in the order of
:data:`SECTIONS`, each wrapped in ``<!-- name:start -->`` / ``<!-- name:end -->``. Nothing on the page
is written by hand, so re-rendering it from the results changes nothing
(``tests/docs/test_benchmarks_page.py`` checks that).

A benchmark script writes its results JSON, then its own section::

    sections.write_sections("sync")         # only the lines between <!-- sync:start --> and <!-- sync:end -->

and ``python tests/benchmarks/make_report.py`` (no arguments) rewrites the whole page from the results;
``--check`` writes nothing and prints what would change. tests/benchmarks/README.md says how to add a
section.
"""
from __future__ import annotations

import difflib
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import make_report  # noqa: E402
import report_chunk_reuse  # noqa: E402
import report_hybrid  # noqa: E402
import report_http  # noqa: E402
import report_hybrid_peers  # noqa: E402
import report_ingest  # noqa: E402
import report_insert_select  # noqa: E402
import report_int8  # noqa: E402
import report_int8_cpu  # noqa: E402
import report_int8_scan  # noqa: E402
import report_manual_minute  # noqa: E402
import report_markdown  # noqa: E402
import report_mcp  # noqa: E402
import report_models  # noqa: E402
import report_passages  # noqa: E402
import report_recall  # noqa: E402
import report_recorded  # noqa: E402
import report_server  # noqa: E402
import report_query_limit  # noqa: E402
import report_rabitq  # noqa: E402
import report_speed  # noqa: E402
import report_startup  # noqa: E402
import report_sync  # noqa: E402
import report_write_lock  # noqa: E402
import report_sync_lock  # noqa: E402

PAGE = common.REPO / "docs" / "benchmarks.md"

# (name, renderer), in page order; the name is the section's marker (and, for a recorded section,
# its results file: results/recorded_<name>.json, report_recorded.py)
SECTIONS: list[tuple[str, Callable[[], list[str]]]] = [
    ("intro", make_report.intro_section),
    ("machine", report_ingest.machine_section),
    ("targets", report_ingest.targets_section),
    ("recall", report_recall.recall_section),
    ("ingest", report_ingest.ingest_page_section),
    ("memory-disk", report_ingest.memory_disk_section),
    ("query", report_ingest.query_page_section),
    ("chunk-reuse", report_chunk_reuse.section),
    ("speed", report_speed.section),
    ("rabitq", report_rabitq.section),
    ("startup", report_startup.section),
    ("query-limit", report_query_limit.section),
    ("int8-scan", report_int8_scan.section),
    ("int8", report_int8.section),
    ("int8-cpu", report_int8_cpu.section),
    ("manual-minute", report_manual_minute.section),
    ("engine-notes", report_ingest.engine_notes_section),
    ("hybrid", lambda: report_hybrid.section(common.load_result("hybrid"))),
    ("markdown", report_markdown.section),
    ("passages", report_passages.section),
    ("server", report_server.section),
    ("integrations", lambda: report_recorded.section("integrations")),
    ("hybrid-peers", lambda: report_hybrid_peers.section(common.load_result("hybrid_peers"))),
    ("mcp", report_mcp.section),
    ("http", report_http.section),
    ("models", report_models.section),
    ("boundary", lambda: report_recorded.section("boundary")),
    ("sqllogictest", lambda: report_recorded.section("sqllogictest")),
    ("sync", report_sync.section),
    ("write-lock", report_write_lock.section),
    ("sync-lock", report_sync_lock.section),
    ("insert-select", report_insert_select.section),
    ("one-file", lambda: report_recorded.section("one_file")),
]
NAMES = [name for name, _ in SECTIONS]


def markers(name: str) -> tuple[str, str]:
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def render(name: str) -> str:
    """The section, markers included ("" when its results are missing)."""
    lines = dict(SECTIONS)[name]()
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    if not lines:
        return ""
    start, end = markers(name)
    return "\n".join([start, *lines, end])


def page() -> str:
    return "\n\n".join(block for block in (render(name) for name in NAMES) if block) + "\n"


def write_page() -> None:
    PAGE.write_text(page(), encoding="utf-8")


def write_section(name: str) -> None:
    """Rewrite one section between its markers; the whole page when they are not there yet."""
    if name not in NAMES:
        raise SystemExit(f"no section {name!r} in tests/benchmarks/sections.py (known: {', '.join(NAMES)})")
    text = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
    start, end = markers(name)
    if start in text and end in text:
        block = render(name)
        before, after = text[:text.index(start)], text[text.index(end) + len(end):]
        PAGE.write_text(before + block + after if block else before.rstrip("\n") + "\n" + after.lstrip("\n"),
                        encoding="utf-8")
    else:
        write_page()


def write_sections(*names: str) -> None:
    """What a benchmark script calls after writing its results: the sections they feed, rewritten."""
    for name in names:
        write_section(name)
    print(f"docs/benchmarks.md: rewrote {', '.join(names)}", file=sys.stderr)


def check() -> list[str]:
    """The unified diff between the page as committed and the page the results give (empty: the same)."""
    have = PAGE.read_text(encoding="utf-8").splitlines() if PAGE.exists() else []
    return list(difflib.unified_diff(have, page().splitlines(), "docs/benchmarks.md", "from the results",
                                     lineterm="", n=1))

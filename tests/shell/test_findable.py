"""Issue 32, item 7: `tessera -h` lists every subcommand the program dispatches, and `help` finds the
search functions (hybrid_match, the passage functions, SHOW CHUNKS)."""
from __future__ import annotations

import ast
import inspect
import re

from tesseradb.clients.shell import main as shell_main
from tesseradb.clients.shell.help_topics import lookup


def dispatched() -> set[str]:
    """The subcommand names ``main()`` dispatches on (``if argv[:1] == ["name"]``)."""
    tree = ast.parse(inspect.getsource(shell_main.main))
    return {c.elts[0].value for node in ast.walk(tree) if isinstance(node, ast.Compare)
            for c in node.comparators if isinstance(c, ast.List) and len(c.elts) == 1
            and isinstance(c.elts[0], ast.Constant)}


def test_help_lists_every_subcommand():
    text = shell_main.parser().format_help()
    listed = set(re.findall(r"^  tessera (\w+) ", text, re.M))
    assert dispatched() >= {"index", "mcp", "serve", "embed", "backup"}
    assert listed == dispatched()


def test_help_finds_the_search_functions():
    for topic, name in [("hybrid_match", "HYBRID_MATCH"), ("hybrid_match()", "HYBRID_MATCH"),
                        ("show chunks", "SHOW CHUNKS"), ("call chunks", "SHOW CHUNKS"), ("passages", "PASSAGES"),
                        ("knn_chunk_text", "PASSAGES"), ("knn_chunk_section()", "PASSAGES"),
                        ("KNN_CHUNK_WINDOW", "PASSAGES"), ("sho", "SHOW"), ("select", "SELECT")]:
        answer = lookup(topic)
        assert answer is not None and answer.startswith(f"Name: '{name}'"), topic
    assert "knn_chunk_heading()" in lookup("passages") and "hybrid_score()" in lookup("hybrid_match")
    assert "HYBRID_MATCH" in lookup("contents") and "PASSAGES" in lookup("contents")


def test_json_output_prints_float32_values_short():
    import numpy as np
    from tesseradb.clients.shell.formats import short_float
    assert short_float(float(np.float32(0.8123))) == 0.8123 and repr(short_float(float(np.float32(4.3)))) == "4.3"
    assert short_float(0.1) == 0.1 and short_float(1 / 3) == 1 / 3          # a true double is kept
    assert short_float(float("inf")) == float("inf")

"""DESIGN.md §3: imports point down and no module imports another in a circle (docs/architecture.md)."""
from __future__ import annotations

import graphlib

import pytest

from modules import imports, modules

MODULES = modules()


def graph() -> dict[str, set[str]]:
    """module -> the package modules it imports (third-party and stdlib left out)."""
    return {name: {m for m in imports(name, path) if m in MODULES and m != name}
            for name, path in MODULES.items()}


def test_the_package_has_the_modules_we_expect():
    # the graph below is only worth something if it sees the code
    assert {"tesseradb", "tesseradb.sql.executor", "tesseradb.storage.rowstore",
            "tesseradb.grammar.ddl", "tesseradb.clients.dbapi"} <= set(MODULES)
    assert len(MODULES) > 40


def test_the_import_graph_has_no_cycle():
    try:
        order = list(graphlib.TopologicalSorter(graph()).static_order())
    except graphlib.CycleError as exc:
        pytest.fail(f"import cycle: {' -> '.join(exc.args[1])}")
    assert set(order) == set(MODULES)


def test_a_cycle_would_be_found():
    """The check itself: a graph with a back edge is refused."""
    g = graph()
    g["tesseradb.results"] = g["tesseradb.results"] | {"tesseradb.sql.executor"}
    with pytest.raises(graphlib.CycleError):
        list(graphlib.TopologicalSorter(g).static_order())


# Layers, top to bottom (DESIGN.md §3, docs/architecture.md). A module may import its own layer's
# modules and those of lower layers only.
LAYERS = [
    ("clients", ("tesseradb", "tesseradb.clients", "tesseradb.integrations")),
    ("sql", ("tesseradb.sql",)),
    ("services", ("tesseradb.vectors", "tesseradb.io", "tesseradb.embed", "tesseradb.context",
                  "tesseradb.catalog")),
    ("values", ("tesseradb.results", "tesseradb.errors")),
    ("grammar", ("tesseradb.grammar",)),
    ("storage", ("tesseradb.storage",)),
]


def layer_of(module: str) -> int:
    best, level = -1, None
    for n, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, level = len(p), n
    assert level is not None, module
    return level


def test_imports_point_down():
    upward = [f"{m} ({LAYERS[layer_of(m)][0]}) imports {t} ({LAYERS[layer_of(t)][0]})"
              for m, targets in graph().items() for t in targets if layer_of(t) < layer_of(m)]
    assert upward == []


def test_grammar_and_storage_are_siblings():
    for m, targets in graph().items():
        if m.startswith("tesseradb.grammar"):
            assert not any(t.startswith("tesseradb.storage") for t in targets), m
        if m.startswith("tesseradb.storage"):
            assert not any(t.startswith("tesseradb.grammar") for t in targets), m


def test_the_clients_use_the_public_api_only():
    """The shell and the server are clients like any other: tesseradb's public names and errors."""
    allowed = ("tesseradb", "tesseradb.errors", "tesseradb.results")
    bad = [f"{m} imports {t}" for m, targets in graph().items()
           if m.startswith(("tesseradb.clients.shell", "tesseradb.clients.server"))
           for t in targets if not t.startswith(("tesseradb.clients.shell", "tesseradb.clients.server"))
           and t not in allowed]
    assert bad == []


def test_the_integrations_use_the_public_api_only():
    """The LangChain and LlamaIndex stores are programs on the public API, like the shell and the
    server: tesseradb's public names and errors, and their own package."""
    allowed = ("tesseradb", "tesseradb.errors", "tesseradb.results")
    found = [m for m in graph() if m.startswith("tesseradb.integrations")]
    assert {"tesseradb.integrations.store", "tesseradb.integrations.langchain.vectorstore",
            "tesseradb.integrations.llama_index.vector_store"} <= set(found)
    bad = [f"{m} imports {t}" for m, targets in graph().items() if m.startswith("tesseradb.integrations")
           for t in targets if not t.startswith("tesseradb.integrations") and t not in allowed]
    assert bad == []

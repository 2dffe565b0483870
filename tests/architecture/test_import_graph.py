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
            "tesseradb.grammar.ddl", "tesseradb.clients.dbapi", "tesseradb.sql.statements.insert",
            "tesseradb.sql.mysql.keys", "tesseradb.sql.search.select_plan",
            "tesseradb.catalog.vector_columns"} <= set(MODULES)
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
    ("chat", ("tesseradb.chat",)),
    ("io", ("tesseradb.io",)),
    ("vectors", ("tesseradb.vectors",)),
    ("embed", ("tesseradb.embed",)),
    ("context", ("tesseradb.context",)),
    ("catalog", ("tesseradb.catalog",)),
    ("values", ("tesseradb.results", "tesseradb.errors")),
    ("grammar", ("tesseradb.grammar",)),
    ("storage", ("tesseradb.storage",)),
]

# The rooms of the sql layer, top to bottom: the spine (executor, planner, the passes, the one write
# path, the database, the statement cache) around statements/ (handlers), mysql/ (MySQL's rules) and
# search/ (planning a SELECT that searches). Rules never call a handler.
SQL_ROOMS = [
    ("executor", ("tesseradb.sql.executor",)),
    ("planner", ("tesseradb.sql.planner",)),
    ("statements", ("tesseradb.sql.statements",)),
    ("passes", ("tesseradb.sql.passes",)),
    ("rules", ("tesseradb.sql.mysql", "tesseradb.sql.search")),
    ("write", ("tesseradb.sql.write",)),
    ("database", ("tesseradb.sql.database",)),
    ("bottom", ("tesseradb.sql.statement_cache", "tesseradb.sql.naming")),
    ("package", ("tesseradb.sql",)),
]


def level_of(module: str, layers: list[tuple[str, tuple[str, ...]]] = LAYERS) -> int | None:
    best, level = -1, None
    for n, (_, prefixes) in enumerate(layers):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, level = len(p), n
    return level


def layer_of(module: str) -> int:
    level = level_of(module)
    assert level is not None, module
    return level


def upward(g: dict[str, set[str]], layers: list[tuple[str, tuple[str, ...]]]) -> list[str]:
    """Every edge from a module to one of a higher layer (modules outside ``layers`` left out)."""
    out = []
    for m, targets in g.items():
        for t in targets:
            lm, lt = level_of(m, layers), level_of(t, layers)
            if lm is not None and lt is not None and lt < lm:
                out.append(f"{m} ({layers[lm][0]}) imports {t} ({layers[lt][0]})")
    return sorted(out)


def test_every_module_has_a_layer_and_every_sql_module_a_room():
    for m in MODULES:
        assert level_of(m) is not None, m
        if m.startswith("tesseradb.sql"):
            assert level_of(m, SQL_ROOMS) is not None, m


def test_imports_point_down():
    assert upward(graph(), LAYERS) == []


def test_inside_sql_imports_point_down():
    assert upward(graph(), SQL_ROOMS) == []


def test_mysql_rules_and_search_planning_do_not_import_each_other():
    bad = [f"{m} imports {t}" for m, targets in graph().items() for t in targets
           if (m.startswith("tesseradb.sql.mysql") and t.startswith("tesseradb.sql.search"))
           or (m.startswith("tesseradb.sql.search") and t.startswith("tesseradb.sql.mysql"))]
    assert bad == []


@pytest.mark.parametrize("low, high", [("tesseradb.catalog.tables", "tesseradb.vectors.search"),
                                       ("tesseradb.embed.rows", "tesseradb.vectors.search"),
                                       ("tesseradb.vectors.search", "tesseradb.io.formats"),
                                       ("tesseradb.sql.mysql.keys", "tesseradb.sql.statements.insert"),
                                       ("tesseradb.sql.search.match", "tesseradb.sql.statements.query"),
                                       ("tesseradb.sql.write", "tesseradb.sql.search.select_plan")])
def test_an_upward_edge_would_be_found(low, high):
    """The check itself: one added arrow up (between the service layers, or from a rule to a
    handler) is refused."""
    g = graph()
    g[low] = g[low] | {high}
    assert upward(g, LAYERS) + upward(g, SQL_ROOMS)


def test_grammar_and_storage_are_siblings():
    for m, targets in graph().items():
        if m.startswith("tesseradb.grammar"):
            assert not any(t.startswith("tesseradb.storage") for t in targets), m
        if m.startswith("tesseradb.storage"):
            assert not any(t.startswith("tesseradb.grammar") for t in targets), m


def test_the_clients_use_the_public_api_only():
    """The shell, the server and tessera mcp are clients like any other: tesseradb's public names and errors."""
    allowed = ("tesseradb", "tesseradb.errors", "tesseradb.results",
               "tesseradb.clients.network")     # what the network clients share (no engine in it)
    programs = ("tesseradb.clients.shell", "tesseradb.clients.server", "tesseradb.clients.mcp",
                "tesseradb.clients.http")
    bad = [f"{m} imports {t}" for m, targets in graph().items()
           if m.startswith(programs)
           for t in targets if not t.startswith(programs)
           and t not in allowed]
    assert bad == []


def test_the_integrations_use_the_public_api_only():
    """The LangChain and LlamaIndex stores are programs on the public API, like the shell and the
    server: tesseradb's public names and errors, and their own package."""
    allowed = ("tesseradb", "tesseradb.errors", "tesseradb.results",
               "tesseradb.clients.network",     # what the network clients share (no engine in it)
               "tesseradb.vectors.mmr")         # the one MMR: a pure function of NumPy arrays
    found = [m for m in graph() if m.startswith("tesseradb.integrations")]
    assert {"tesseradb.integrations.store", "tesseradb.integrations.langchain.vectorstore",
            "tesseradb.integrations.llama_index.vector_store"} <= set(found)
    bad = [f"{m} imports {t}" for m, targets in graph().items() if m.startswith("tesseradb.integrations")
           for t in targets if not t.startswith("tesseradb.integrations") and t not in allowed]
    assert bad == []

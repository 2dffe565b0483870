"""Issue 28: start-up pays for what it uses. `import tesseradb`, connect() and a plain SQL query
load none of the model and index stack (onnx, onnxruntime, tokenizers, faiss, pyarrow); the first
knn query loads what it needs. Each case runs in a fresh interpreter (this one has them loaded)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("onnx", "onnxruntime", "tokenizers", "faiss", "pyarrow")

PROBE = """
import json, sys
{code}
sys.__stdout__.write(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({heavy!r}))) + chr(10))
"""


def _loaded(code: str, tmp_path) -> list[str]:
    out = subprocess.run([sys.executable, "-c", PROBE.format(code=code, heavy=HEAVY)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("code", [
    "import tesseradb",
    "import tesseradb; tesseradb.connect(':memory:').execute('SELECT 1').fetchall()",
    "import tesseradb; c = tesseradb.connect('x.db'); c.execute('CREATE TABLE t (a int, b text)');"
    " c.execute('INSERT INTO t (a, b) VALUES (1, \\'x\\')'); c.commit();"
    " c.execute('SELECT a, b FROM t WHERE MATCH(\\'x\\')').fetchall(); c.close()",
    "import tesseradb; c = tesseradb.connect(':memory:');"
    " c.execute(\"CREATE TABLE d (body text, v float_vector_array knn_type='hnsw' hnsw_similarity='cosine' "
    "model_name='Xenova/all-MiniLM-L6-v2' from='body' chunk_strategy='recursive' max_tokens='64')\");"
    " c.execute('SHOW TABLES').fetchall(); c.execute('DESCRIBE d').fetchall()",
])
def test_plain_sql_loads_no_model_or_index_stack(code, tmp_path):
    assert _loaded(code, tmp_path) == []


def test_the_shell_starts_without_them(tmp_path):
    code = ("from tesseradb.clients.shell.main import main; import io, contextlib;"
            " contextlib.redirect_stdout(io.StringIO()).__enter__(); main(['-e', 'SELECT 1'])")
    assert _loaded(code, tmp_path) == []


def test_a_knn_query_loads_what_it_needs(tmp_path):
    code = ("import tesseradb; c = tesseradb.connect(':memory:');"
            " c.execute(\"CREATE TABLE d (body text, v float_vector_array knn_type='hnsw' hnsw_similarity='cosine' "
            "model_name='Xenova/all-MiniLM-L6-v2' from='body' chunk_strategy='recursive' max_tokens='64')\");"
            " c.execute(\"INSERT INTO d (id, body) VALUES (1, 'rotate the certificate')\");"
            " assert c.execute(\"SELECT id FROM d WHERE knn(v, 1, 'certificate')\").fetchall() == [(1,)]")
    assert {"onnxruntime", "tokenizers"} <= set(_loaded(code, tmp_path))     # (a tiny table is searched exactly)


# Issue 37: what a plain statement does not need loads on first use: numpy, the search planning, the
# model registry, the statement nodes beyond Query (grammar/nodes.py), sqlglot's dialects other than
# the two the engine translates between, the shell's wide-character tables.
LAZY = ("numpy", "wcwidth", "tesseradb.sql.search.select_plan", "tesseradb.sql.search.hybrid",
        "tesseradb.sql.search.match", "tesseradb.vectors.search", "tesseradb.embed.registry",
        "tesseradb.embed.model", "tesseradb.embed.rows", "tesseradb.grammar.nodes",
        "tesseradb.sql.mysql.information_schema", "tesseradb.io.globs")
SQLGLOT_DIALECTS = {"sqlglot.dialects.dialect", "sqlglot.dialects.mysql", "sqlglot.dialects.sqlite"}
# a bound, not a target: a module added to the plain path is a choice to make knowingly (each costs
# start-up time; see docs/benchmarks.md's start-up section)
MAX_ENGINE_MODULES = 80     # 68 in issue 37 (the shell's own modules not counted)

MODULES = """
import json, sys
{code}
sys.__stdout__.write(json.dumps(sorted(sys.modules)) + chr(10))
"""


def _modules(code: str, tmp_path) -> set[str]:
    out = subprocess.run([sys.executable, "-c", MODULES.format(code=code)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("code", [
    "import tesseradb; tesseradb.connect(':memory:').execute('SELECT 1').fetchall()",
    "import tesseradb; c = tesseradb.connect('x.db'); c.execute('SELECT a, b FROM t WHERE a = ?', (1,)).fetchall()",
    "from tesseradb.clients.shell.main import main; import io, contextlib;"
    " contextlib.redirect_stdout(io.StringIO()).__enter__(); main(['-e', 'SELECT 1'])",
])
def test_plain_sql_keeps_its_import_set_small(code, tmp_path):
    made = subprocess.run([sys.executable, "-c", "import tesseradb; c = tesseradb.connect('x.db');"
                           " c.execute('CREATE TABLE t (a int, b text)'); c.execute(\"INSERT INTO t VALUES (1, 'x')\");"
                           " c.commit()"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    loaded = _modules(code, tmp_path)
    engine = sorted(m for m in loaded if m.startswith("tesseradb.") and not m.startswith("tesseradb.clients.shell"))
    assert [m for m in LAZY if m in loaded] == []
    dialects = {m for m in loaded if m.startswith("sqlglot.dialects.")}
    assert dialects <= SQLGLOT_DIALECTS
    assert len(engine) <= MAX_ENGINE_MODULES, engine


def test_the_search_planning_loads_with_the_first_search(tmp_path):
    loaded = _modules("import tesseradb; c = tesseradb.connect(':memory:'); c.execute('CREATE TABLE t (b text)');"
                      " c.execute(\"INSERT INTO t (b) VALUES ('hello world')\");"
                      " assert c.execute(\"SELECT b FROM t WHERE MATCH('hello')\").fetchall() == [('hello world',)]",
                      tmp_path)
    assert {"tesseradb.sql.search.select_plan", "tesseradb.sql.search.match"} <= loaded

"""Issue 10: one `tesseradb` namespace, every runtime import declared, every package installed."""
from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
import textwrap

import pytest

from modules import PYPROJECT, ROOT, imports, modules

MODULES = modules()


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared() -> set[str]:
    names = {re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0] for d in PYPROJECT["project"]["dependencies"]}
    return {_normal(n) for n in names}


def test_every_folder_with_an_init_is_an_installed_package():
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    folders = {"engine": "tesseradb", "grammar": "tesseradb.grammar", "storage": "tesseradb.storage"}
    found = set()
    for folder, package in folders.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((package, *rel)))
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert listed - found == set()


# Modules that import an optional extra's packages (inside functions, or -- for the framework
# integrations, which subclass the framework's classes -- at the top of a module that nothing else in
# the package imports, with an ImportError that names the extra when it is missing), and that extra.
OPTIONAL_EXTRAS = {"tesseradb.io.distributed": "ray", "tesseradb.io.documents": "pdf",
                   "tesseradb.clients.shell.index_cmd": "watch",
                   # tessera mcp: cli.py imports these modules inside main(), naming the extra when missing
                   "tesseradb.clients.mcp.run": "mcp", "tesseradb.clients.mcp.server": "mcp",
                   "tesseradb.clients.mcp.web": "mcp",
                   "tesseradb.integrations.langchain._core": "langchain",
                   "tesseradb.integrations.llama_index._core": "llama-index"}


def declared_for(module: str) -> set[str]:
    extra = OPTIONAL_EXTRAS.get(module)
    if extra is None:
        return declared()
    names = {re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0] for d in PYPROJECT["project"]["optional-dependencies"][extra]}
    return declared() | {_normal(n) for n in names}


def test_every_third_party_import_is_a_declared_dependency():
    owners = importlib.metadata.packages_distributions()      # import name -> distributions
    missing = []
    for name, path in MODULES.items():
        for module in imports(name, path):
            top = module.split(".")[0]
            if not top or top == "tesseradb" or top in sys.stdlib_module_names or top == "__future__":
                continue
            dists = {_normal(d) for d in owners.get(top, [])}
            if not dists & declared_for(name):
                missing.append(f"{name} imports {module} ({sorted(dists) or 'no installed distribution'})")
    assert missing == []


def test_the_check_sees_an_undeclared_import(tmp_path):
    """The test above can fail: a module importing an undeclared package is reported."""
    owners = importlib.metadata.packages_distributions()
    assert not {_normal(d) for d in owners.get("pytest", [])} & declared()


def _python(code: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.slow                   # a process of its own
def test_generic_names_are_not_installed_at_top_level(tmp_path):
    for name in ("engine", "grammar", "storage"):
        done = _python(f"import {name}", tmp_path)
        assert done.returncode != 0 and "ModuleNotFoundError" in done.stderr, name


@pytest.mark.slow                   # a process of its own
def test_a_project_with_its_own_engine_storage_and_grammar_modules_still_works(tmp_path):
    for name in ("engine", "storage", "grammar"):
        (tmp_path / f"{name}.py").write_text(f"WHO = 'the user project {name}'\n")
    done = _python("""
        import engine, storage, grammar
        import tesseradb
        assert engine.WHO == 'the user project engine' and storage.WHO.endswith('storage')
        con = tesseradb.connect(':memory:')
        con.execute("CREATE TABLE t (a text, v float_vector knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')")
        con.execute("INSERT INTO t (id, a, v) VALUES (1, 'near', (0, 0)), (2, 'far', (5, 5))")
        print(con.execute("SELECT a FROM t WHERE knn(v, 1, (0.1, 0))").fetchall())
    """, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[('near',)]"


def test_the_public_api_is_pep_249():
    import tesseradb
    assert tesseradb.apilevel == "2.0" and tesseradb.paramstyle == "qmark"
    for name in ("connect", "Error", "Warning", "InterfaceError", "DatabaseError", "DataError",
                 "OperationalError", "IntegrityError", "InternalError", "ProgrammingError",
                 "NotSupportedError", "STRING", "BINARY", "NUMBER", "DATETIME", "ROWID"):
        assert hasattr(tesseradb, name), name

"""The tests stay where tests/README.md says (a folder per layer, none at the top of tests/), and the
rule of tests/conftest.py marks what starts a process or a server ``slow``, and nothing else."""
from __future__ import annotations

import importlib.util
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def _conftest():
    spec = importlib.util.spec_from_file_location("tests_root_conftest", TESTS / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_test_file_at_the_top_of_tests():
    assert sorted(p.name for p in TESTS.glob("test_*.py")) == []


def test_every_folder_of_tests_is_in_the_readme():
    readme = (TESTS / "README.md").read_text(encoding="utf-8")
    folders = sorted({p.parent.relative_to(TESTS).parts[0] for p in TESTS.rglob("test_*.py")})
    assert len(folders) > 10
    assert [f for f in folders if f"`{f}/`" not in readme] == []


def test_the_slow_rule_marks_processes_and_servers_only():
    conftest = _conftest()
    assert conftest.is_slow("server/test_pymysql.py", ["server"])
    assert conftest.is_slow("docs/test_docs_code.py", ["env"])
    assert conftest.is_slow("shell/test_batch.py", ["run", "tmp_path"])
    assert conftest.is_slow("embed/remote/test_http_layer.py", [])
    assert not conftest.is_slow("shell/test_units.py", ["tmp_path"])
    assert not conftest.is_slow("sql/test_ddl.py", ["con", "cur"])
    assert not conftest.is_slow("docs/test_sql_docs.py", [])
    for path in conftest.SLOW_PATHS:            # every listed folder or file exists
        assert (TESTS / path).exists(), path

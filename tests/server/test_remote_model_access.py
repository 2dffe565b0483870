"""Over the MySQL wire, a client can neither point the server at a URL of its choosing, nor read the
server's environment, nor load a model from a folder the operator did not allow (docs/models.md#over-a-server)."""
from __future__ import annotations

import shutil

import pymysql
import pytest

import tesseradb
from tesseradb import embed
from tests.embed import st_models
from tests.embed.remote.standin import StandIn
from tests.server.support import connect

KEY = "sk-wire-0123456789"


@pytest.fixture
def standin():
    model = embed.get_model("all-MiniLM-L6-v2")
    with StandIn(lambda texts: model.embed(texts), api_key=KEY) as s:
        yield s


def _remote_ddl(standin, key=KEY, table="p"):
    return (f"CREATE TABLE {table} (title TEXT, v FLOAT_VECTOR KNN_TYPE='hnsw' MODEL_NAME='openai/m' FROM='title' "
            f"API_KEY='{key}' API_URL='{standin.base}/v1/embeddings')")


def _error(port, sql):
    with connect(port) as c, c.cursor() as cur, pytest.raises(pymysql.err.MySQLError) as info:
        cur.execute(sql)
    return info.value.args


def test_without_allow_remote_a_client_cannot_make_the_server_call_its_url(db_file, standin):
    srv = tesseradb.serve(db_file, port=0, background=True)
    try:
        code, message = _error(srv.port, _remote_ddl(standin))
        assert code == 1290 and "--allow-remote" in message and KEY not in message
        assert standin.requests == []                      # not even the width probe went out
    finally:
        srv.stop()


def test_an_allowed_endpoint_embeds_and_the_key_is_never_shown(db_file, standin):
    srv = tesseradb.serve(db_file, port=0, background=True, allow_remote=(standin.base + "/v1/",))
    try:
        with connect(srv.port) as c, c.cursor() as cur:
            cur.execute(_remote_ddl(standin))
            cur.execute("INSERT INTO p (id, title) VALUES (1, 'rotate the certificate'), (2, 'cook pasta')")
            cur.execute("SELECT id FROM p WHERE knn(v, 1, 'renew a TLS certificate')")
            assert cur.fetchall() == ((1,),)
            cur.execute("SHOW CREATE TABLE p")
            create = cur.fetchall()[0][1]
            assert "api_key='<redacted>'" in create and KEY not in create
        code, message = _error(srv.port, _remote_ddl(standin, table="q").replace("/v1/embeddings", "/v2/embeddings"))
        assert code == 1290                               # another path of the same host is not allowed
    finally:
        srv.stop()


def test_env_keys_read_only_the_names_the_operator_lists(db_file, standin, monkeypatch):
    monkeypatch.setenv("TESSERA_WIRE_KEY", KEY)
    monkeypatch.setenv("TESSERA_OTHER_SECRET", KEY)
    srv = tesseradb.serve(db_file, port=0, background=True, allow_remote=(standin.base,),
                          allow_env=("TESSERA_WIRE_KEY",))
    try:
        with connect(srv.port) as c, c.cursor() as cur:
            cur.execute(_remote_ddl(standin, key="env:TESSERA_WIRE_KEY"))
            cur.execute("INSERT INTO p (id, title) VALUES (1, 'hello')")
        code, _ = _error(srv.port, _remote_ddl(standin, key="env:TESSERA_OTHER_SECRET", table="q"))
        assert code == 1290
    finally:
        srv.stop()


def test_a_table_made_in_process_still_needs_the_operators_allowance(db_file, standin):
    con = tesseradb.connect(db_file)
    con.execute(_remote_ddl(standin))
    con.commit()
    con.close()
    srv = tesseradb.serve(db_file, port=0, background=True)
    try:
        code, _ = _error(srv.port, "INSERT INTO p (id, title) VALUES (1, 'hello')")
        assert code == 1290
        with connect(srv.port) as c, c.cursor() as cur:
            cur.execute("SELECT COUNT(*) FROM p")
            assert cur.fetchall() == ((0,),)
    finally:
        srv.stop()


def test_a_model_folder_is_refused_outside_secure_file_priv(db_file, tmp_path):
    outside = st_models.build(tmp_path / "outside" / "model")
    allowed = tmp_path / "allowed"
    shutil.copytree(outside, allowed / "model")
    srv = tesseradb.serve(db_file, port=0, background=True, secure_file_priv=str(allowed))
    try:
        ddl = "CREATE TABLE {t} (body TEXT, v FLOAT_VECTOR KNN_TYPE='hnsw' MODEL_NAME='{m}' FROM='body')"
        code, message = _error(srv.port, ddl.format(t="a", m=outside))
        assert code == 1290 and str(outside) not in message
        with connect(srv.port) as c, c.cursor() as cur:
            cur.execute(ddl.format(t="b", m="model"))                 # relative: inside the folder
            cur.execute(ddl.format(t="c", m=allowed / "model"))
            cur.execute(ddl.format(t="d", m="all-MiniLM-L6-v2"))      # built-in names stay usable
            cur.execute("INSERT INTO b (id, body) VALUES (1, 'the cat sat on the mat')")
    finally:
        srv.stop()
    srv = tesseradb.serve(db_file, port=0, background=True)           # secure_file_priv '': no folder at all
    try:
        code, _ = _error(srv.port, ddl.format(t="e", m=allowed / "model"))
        assert code == 1290
    finally:
        srv.stop()


def test_show_processlist_shows_a_running_statement_with_its_key_redacted(db_file, standin):
    import threading
    import time
    standin.faults = [{"delay": 3.0}]                  # the width probe of CREATE TABLE takes a while
    srv = tesseradb.serve(db_file, port=0, background=True, allow_remote=(standin.base,))
    try:
        done = threading.Event()

        def create():
            with connect(srv.port) as c, c.cursor() as cur:
                cur.execute(_remote_ddl(standin))
            done.set()
        worker = threading.Thread(target=create)
        worker.start()
        seen = []
        with connect(srv.port) as c, c.cursor() as cur:
            while not done.is_set() and not any("CREATE TABLE" in str(r[7]) for r in seen):
                cur.execute("SHOW FULL PROCESSLIST")
                seen = list(cur.fetchall())
                time.sleep(0.05)
        worker.join()
        running = [str(r[7]) for r in seen if "CREATE TABLE" in str(r[7])]
        assert running and "api_key='<redacted>'" in running[0].lower() and KEY not in running[0]
    finally:
        srv.stop()

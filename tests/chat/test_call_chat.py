"""CALL CHAT over the engine's own search (docs/chat.md), against the loopback stand-in of an
OpenAI-compatible chat endpoint: what the prompt holds, the citations, conversations, failures."""
from __future__ import annotations

import json
import re
import threading
import time

import pytest

import tesseradb
from tesseradb import errors
from tests.chat.standin import ChatStandIn

QUESTION = "How long are nightly snapshots kept?"


def ask(con, *args):
    cur = con.cursor()
    cur.execute("CALL CHAT(" + ", ".join("?" for _ in args) + ")", args)
    assert [d[0] for d in cur.description] == ["conversation_uuid", "user_query", "search_query", "response", "sources"]
    row = cur.fetchone()
    return dict(zip([d[0] for d in cur.description], row))


def labels(request) -> list[int]:
    return [int(n) for n in re.findall(r"^\[ref:(\d+)\]", request["json"]["messages"][-1]["content"], re.MULTILINE)]


def test_the_prompt_holds_what_hybrid_match_ranks_first(chat, standin):
    answer = ask(chat, QUESTION, "docs", "assistant")
    ranked = [r[0] for r in chat.cursor().execute(
        "SELECT id FROM docs WHERE hybrid_match(?, embedding) LIMIT 5", (QUESTION,)).fetchall()]
    sent = standin.requests[-1]
    assert labels(sent) == ranked            # every hit, best first, each with its row id
    assert ranked[0] == 3
    prompt = sent["json"]["messages"][-1]["content"]
    assert "kept for fourteen days" in prompt and prompt.endswith(f"Question: {QUESTION}")
    assert sent["json"]["model"] == "gpt-4o-mini"
    assert answer["user_query"] == answer["search_query"] == QUESTION
    assert answer["response"].startswith("[ref:3]")


def test_sources_are_rows_and_citations_map_to_them(chat):
    answer = ask(chat, QUESTION, "docs", "assistant")
    sources = json.loads(answer["sources"])
    rows = {r[0]: r for r in chat.cursor().execute("SELECT id, title, content FROM docs").fetchall()}
    for source in sources:
        assert (source["title"], source["content"]) == rows[source["id"]][1:]
        assert "embedding" not in source            # vector columns are left out, as Manticore does
        assert isinstance(source["hybrid_score"], float)
    cited = {int(n) for n in re.findall(r"\[ref:(\d+)\]", answer["response"])}
    assert cited and cited <= set(rows)
    assert {s["id"] for s in sources if s["cited"]} == cited


def test_knn_retrieval_on_request(notes_db, standin):
    con = tesseradb.connect(notes_db, autocommit=True)
    con.cursor().execute(f"CREATE CHAT MODEL k (model='openai:m', base_url='{standin.base_url}', retrieval='knn', "
                         "retrieval_limit=2)")
    answer = ask(con, "when do replication certificates expire", "docs", "k", "", "embedding")
    ranked = [r[0] for r in con.cursor().execute(
        "SELECT id FROM docs WHERE knn(embedding, 2, 'when do replication certificates expire')").fetchall()]
    assert labels(standin.requests[-1]) == ranked and ranked[0] == 4
    assert all("knn_dist" in s for s in json.loads(answer["sources"]))


def test_the_budget_bounds_the_prompt(notes_db, standin):
    con = tesseradb.connect(notes_db, autocommit=True)
    con.cursor().execute(f"CREATE CHAT MODEL small (model='openai:m', base_url='{standin.base_url}', "
                         "max_document_length=100, max_context_length=250)")
    ask(con, QUESTION, "docs", "small")
    prompt = standin.requests[-1]["json"]["messages"][-1]["content"]
    blocks = re.split(r"^\[ref:\d+\][^\n]*\n", prompt.split("\n\nQuestion:")[0], flags=re.MULTILINE)[1:]
    assert 1 <= len(blocks) < 4
    assert all(len(b.strip()) <= 104 for b in blocks)           # 100 characters, cut at a word, plus " ..."
    assert sum(len(b.strip()) for b in blocks) <= 250 + 4 * len(blocks)


def test_a_conversation_sends_its_history_and_rewrites_follow_ups(chat, standin):
    first = ask(chat, QUESTION, "docs", "assistant", "conv-1")
    assert first["conversation_uuid"] == "conv-1"
    second = ask(chat, "and how do I restore one?", "docs", "assistant", "conv-1")
    rewrite, final = standin.requests[-2]["json"], standin.requests[-1]["json"]
    assert rewrite["messages"][0]["content"].startswith("Rewrite the user's last message")
    assert second["search_query"] == "standalone: and how do I restore one?"
    assert [m["role"] for m in final["messages"]] == ["system", "user", "assistant", "user"]
    assert final["messages"][1]["content"] == QUESTION
    assert final["messages"][2]["content"] == first["response"]
    other = ask(chat, QUESTION, "docs", "assistant")                  # no uuid: a new conversation
    assert other["conversation_uuid"] not in ("", "conv-1") and len(standin.requests[-1]["json"]["messages"]) == 2


def test_history_is_bounded(notes_db, standin):
    con = tesseradb.connect(notes_db, autocommit=True)
    con.cursor().execute(f"CREATE CHAT MODEL b (model='openai:m', base_url='{standin.base_url}', history_messages=4)")
    for n in range(5):
        ask(con, f"question {n} about snapshots", "docs", "b", "c")
    assert len(standin.requests[-1]["json"]["messages"]) == 1 + 4 + 1      # system, the last 4, the question


def test_models_and_histories_survive_a_restart(chat, notes_db, standin):
    ask(chat, QUESTION, "docs", "assistant", "keep")
    chat.close()
    again = tesseradb.connect(notes_db, autocommit=True)
    assert [r[0] for r in again.cursor().execute("SHOW CHAT MODELS").fetchall()] == ["assistant"]
    ask(again, "and restoring?", "docs", "assistant", "keep")
    assert [m["role"] for m in standin.requests[-1]["json"]["messages"]] == ["system", "user", "assistant", "user"]


def test_read_only_keeps_the_history_in_memory(chat, notes_db, standin):
    chat.close()
    ro = tesseradb.connect(notes_db, read_only=True)
    ask(ro, QUESTION, "docs", "assistant", "ro")
    ask(ro, "and restoring?", "docs", "assistant", "ro")
    assert [m["role"] for m in standin.requests[-1]["json"]["messages"]] == ["system", "user", "assistant", "user"]


def test_the_write_lock_is_not_held_while_the_model_runs(chat, notes_db, standin):
    standin.delay(2.0)
    done = {}
    thread = threading.Thread(target=lambda: done.update(ask(chat, QUESTION, "docs", "assistant")))
    thread.start()
    time.sleep(0.8)                                        # the model is "thinking"
    other = tesseradb.connect(notes_db, autocommit=True, timeout=0.5)
    other.cursor().execute("INSERT INTO docs (id, title, content) VALUES (9, 'x', 'written meanwhile')")
    other.close()
    thread.join()
    assert done["response"].startswith("[ref:")


@pytest.mark.parametrize("script, words", [
    (lambda s: [s.fail(500) for _ in range(4)], "HTTP 500"),
    (lambda s: s.fail(400, {"error": {"message": "model not found"}}), "model not found"),
    (lambda s: s.raw(b'{"id": "x", "object": "chat.completion"}'), "no choices"),
    (lambda s: s.raw(b"<html>gateway</html>"), "not JSON"),
])
def test_failures_are_clear_errors_and_write_nothing(chat, standin, script, words):
    script(standin)
    with pytest.raises(errors.OperationalError, match=words):
        ask(chat, QUESTION, "docs", "assistant", "failing")
    assert chat.cursor().execute("SELECT count(*) FROM docs").fetchone() == (4,)
    ask(chat, QUESTION, "docs", "assistant", "failing")            # the first turn again: nothing was kept
    assert len(standin.requests[-1]["json"]["messages"]) == 2


def test_429_is_retried_after_retry_after(chat, standin):
    standin.fail(429, headers={"Retry-After": "1"})
    started = time.monotonic()
    assert ask(chat, QUESTION, "docs", "assistant")["response"].startswith("[ref:")
    assert time.monotonic() - started >= 1.0 and len(standin.requests) == 2


def test_a_timeout_is_an_error(notes_db, standin):
    con = tesseradb.connect(notes_db, autocommit=True)
    con.cursor().execute(f"CREATE CHAT MODEL slow (model='openai:m', base_url='{standin.base_url}', timeout=1)")
    for _ in range(4):
        standin.delay(1.6)
    with pytest.raises(errors.OperationalError, match="timeout=1"):
        ask(con, QUESTION, "docs", "slow")


def test_a_key_is_sent_and_never_shown(notes_db):
    with ChatStandIn(key="sk-secret-123") as server:
        con = tesseradb.connect(notes_db, autocommit=True)
        cur = con.cursor()
        cur.execute(f"CREATE CHAT MODEL keyed (model='openai:m', api_key='sk-secret-123', base_url='{server.base_url}')")
        assert ask(con, QUESTION, "docs", "keyed")["response"].startswith("[ref:")
        shown = [cur.execute("SHOW CHAT MODELS").fetchall(), cur.execute("DESCRIBE CHAT MODEL keyed").fetchall()]
        assert "sk-secret-123" not in repr(shown) and ("api_key", "HIDDEN") in shown[1]
        with pytest.raises(errors.Error) as raised:
            cur.execute("CREATE CHAT MODEL bad (model='openai:m', api_key='sk-secret-123', base_url=)")
        assert "sk-secret-123" not in str(raised.value)
        cur.execute(f"CREATE CHAT MODEL wrong (model='openai:m', api_key='sk-wrong-999', base_url='{server.base_url}')")
        with pytest.raises(errors.OperationalError, match="HTTP 401") as raised:
            ask(con, QUESTION, "docs", "wrong")
        assert "sk-wrong-999" not in str(raised.value)


def test_env_key(notes_db, monkeypatch):
    monkeypatch.setenv("TESSERA_TEST_CHAT_KEY", "from-env-456")
    with ChatStandIn(key="from-env-456") as server:
        con = tesseradb.connect(notes_db, autocommit=True)
        con.cursor().execute(f"CREATE CHAT MODEL e (model='openai:m', api_key='env:TESSERA_TEST_CHAT_KEY', "
                             f"base_url='{server.base_url}')")
        assert ask(con, QUESTION, "docs", "e")["response"].startswith("[ref:")
        assert ("api_key", "HIDDEN") in con.cursor().execute("DESCRIBE CHAT MODEL e").fetchall()


def test_from_python_with_a_stream(chat, standin):
    pieces = []
    answer = chat.chat(QUESTION, "docs", "assistant", conversation="py", on_token=pieces.append)
    assert isinstance(answer, tesseradb.ChatAnswer) and answer.conversation_uuid == "py"
    assert len(pieces) > 3 and "".join(pieces) == answer.response
    assert standin.requests[-1]["json"]["stream"] is True
    assert answer.cited and all(s["id"] in {1, 2, 3, 4} for s in answer.sources)
    plain = chat.chat("and restoring?", "docs", "assistant", conversation="py")
    assert "stream" not in standin.requests[-1]["json"] and plain.search_query == "standalone: and restoring?"


def test_interrupting_a_stream_stops_it(chat, standin):
    pieces = []

    def slow(piece):
        pieces.append(piece)
        if len(pieces) == 2:
            chat.interrupt()

    with pytest.raises(errors.Error, match="interrupted"):
        chat.chat(QUESTION, "docs", "assistant", conversation="stop", on_token=slow)
    assert len(pieces) == 2
    again = chat.chat(QUESTION, "docs", "assistant", conversation="stop")
    assert len(standin.requests[-1]["json"]["messages"]) == 2 and again.response      # nothing was kept

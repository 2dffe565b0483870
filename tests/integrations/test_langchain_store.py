"""The LangChain store beyond the standard suite: filters applied before k (also inside MMR and hybrid),
hostile keys and values, deletes, two stores on one file, passages, scores, the retriever, async."""
from __future__ import annotations

import asyncio
import json

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding

import tesseradb
from tesseradb.integrations.filters import FilterError
from tesseradb.integrations.langchain import TesseraEmbeddings, TesseraRetriever, TesseraVectorStore

RUNBOOK = [
    Document(id="rot", page_content="Send USR1 to the daemon and it reopens its log files.",
             metadata={"team": "ops", "year": 2021, "tags": ["logs"]}),
    Document(id="cert", page_content="The replication certificate expires every year; request a new one.",
             metadata={"team": "ops", "year": 2023, "tags": ["tls", "replication"]}),
    Document(id="lunch", page_content="Lunch is served on Fridays at noon in the kitchen.",
             metadata={"team": "office", "year": 2022, "tags": []}),
    Document(id="cats", page_content="Cats sleep most of the day and purr when content.",
             metadata={"team": "office", "year": 2020, "pets": True}),
    Document(id="kittens", page_content="Kittens sleep a lot during the day and purr.",
             metadata={"team": "office", "year": 2020, "pets": True}),
    Document(id="dogs", page_content="Dogs need a walk twice a day and love to fetch.",
             metadata={"team": "office", "year": 2024, "pets": True}),
]


@pytest.fixture
def store(tmp_path):
    s = TesseraVectorStore(str(tmp_path / "rag.db"))
    s.add_documents(RUNBOOK)
    yield s
    s.close()


def ids(docs):
    return [d.id for d in docs]


@pytest.mark.parametrize("flt, expected", [
    ({"team": "ops"}, {"rot", "cert"}),
    ({"team": {"$eq": "ops"}}, {"rot", "cert"}),
    ({"team": {"$ne": "ops"}}, {"lunch", "cats", "kittens", "dogs"}),
    ({"year": {"$gt": 2022}}, {"cert", "dogs"}),
    ({"year": {"$gte": 2022}}, {"cert", "lunch", "dogs"}),
    ({"year": {"$lt": 2021}}, {"cats", "kittens"}),
    ({"year": {"$lte": 2021}}, {"cats", "kittens", "rot"}),
    ({"year": {"$in": [2021, 2024]}}, {"rot", "dogs"}),
    ({"year": {"$nin": [2020, 2021, 2022]}}, {"cert", "dogs"}),
    ({"pets": True}, {"cats", "kittens", "dogs"}),
    ({"pets": {"$ne": True}}, {"rot", "cert", "lunch"}),          # a missing key is "not equal"
    ({"$and": [{"team": "office"}, {"year": {"$gt": 2020}}]}, {"lunch", "dogs"}),
    ({"$or": [{"team": "ops"}, {"year": 2024}]}, {"rot", "cert", "dogs"}),
    ({"team": "office", "year": 2020}, {"cats", "kittens"}),        # several keys: AND
    ({"year": {"$gt": 2020, "$lt": 2023}}, {"rot", "lunch"}),
    ({"year": "2021"}, set()),                                      # typed: a string is not a number
])
def test_filters_select_exactly_the_matching_documents(store, flt, expected):
    found = store.similarity_search("anything at all", k=10, filter=flt)
    assert set(ids(found)) == expected
    mmr = store.max_marginal_relevance_search("anything at all", k=10, fetch_k=10, filter=flt)
    assert set(ids(mmr)) == expected
    hybrid = store.hybrid_search("day", k=10, filter=flt)
    assert set(ids(hybrid)) <= expected


def test_bad_filters_are_clear_errors(store):
    for flt in ({"year": {"$regex": "x"}}, {"$not": {"a": 1}}, {"year": {"$in": 2021}},
                {"a": {"$gt": [1]}}, {"a": {"$eq": {"nested": 1}}}, {"$or": []}):
        with pytest.raises(FilterError):
            store.similarity_search("x", k=2, filter=flt)


def test_hostile_keys_and_values_are_only_data(tmp_path):
    s = TesseraVectorStore(str(tmp_path / "h.db"))
    hostile = ["x') OR 1=1 --", 'a"b', ".team[0]", "*", "' OR '1'='1", "`metadata`", "k; DROP TABLE documents"]
    s.add_texts(["first", "second", "third"],
                [{hostile[0]: "v", 'a"b': hostile[4]}, {".team[0]": 1, "*": "star", "$team": 2}, {"team": "ops"}],
                ids=["one", "two'; DELETE FROM documents; --", "three"])
    assert len(s.similarity_search("x", k=10, filter={hostile[0]: "v"})) == 1
    assert ids(s.similarity_search("x", k=10, filter={'a"b': hostile[4]})) == ["one"]
    assert ids(s.similarity_search("x", k=10, filter={".team[0]": 1})) == ["two'; DELETE FROM documents; --"]
    with pytest.raises(FilterError):          # a key that starts with $ reads as an operator
        s.similarity_search("x", k=10, filter={"$team": 2})
    assert ids(s.similarity_search("x", k=10, filter={"*": "star"})) == ["two'; DELETE FROM documents; --"]
    for key in hostile[4:]:
        assert s.similarity_search("x", k=10, filter={key: hostile[4]}) == []
        assert s.similarity_search("x", k=10, filter={"team": key}) == []
        assert s.similarity_search("x", k=10, filter={key: {"$ne": "zzz"}}) != []   # nobody has the key
    assert s.get_by_ids(["two'; DELETE FROM documents; --"])[0].metadata == {".team[0]": 1, "*": "star", "$team": 2}
    assert s.connection.execute("SELECT COUNT(*) FROM documents").fetchone()[0] == 3
    with pytest.raises(ValueError):
        TesseraVectorStore(str(tmp_path / "h.db"), table="documents; DROP TABLE documents")
    s.close()


def test_a_filter_matching_3_of_10000_documents_returns_those_3(tmp_path):
    s = TesseraVectorStore(str(tmp_path / "big.db"), embedding=DeterministicFakeEmbedding(size=16))
    rare = {17, 4711, 9998}
    s.add_texts([f"document number {n}" for n in range(10_000)],
                [{"kind": "rare" if n in rare else "common", "n": n} for n in range(10_000)],
                ids=[str(n) for n in range(10_000)])
    assert set(ids(s.similarity_search("document number 5", k=3, filter={"kind": "rare"}))) == {"17", "4711", "9998"}
    assert set(ids(s.similarity_search("document number 5", k=10, filter={"kind": "rare"}))) == {"17", "4711", "9998"}
    assert set(ids(s.max_marginal_relevance_search("document number 5", k=3, fetch_k=3,
                                                   filter={"kind": "rare"}))) == {"17", "4711", "9998"}
    assert set(ids(s.hybrid_search("document", k=3, filter={"kind": "rare"}))) == {"17", "4711", "9998"}
    s.close()


def test_deletes_are_visible_to_the_next_search_and_to_another_store(tmp_path):
    path = str(tmp_path / "d.db")
    a, b = TesseraVectorStore(path), TesseraVectorStore(path)
    a.add_documents(RUNBOOK)
    assert "rot" in ids(b.similarity_search("USR1 log files", k=2))
    a.delete(["rot", "no-such-id"])
    assert "rot" not in ids(a.similarity_search("USR1 log files", k=6))
    assert "rot" not in ids(b.similarity_search("USR1 log files", k=6))
    assert b.get_by_ids(["rot", "cert"])[0].id == "cert"
    b.delete()
    assert a.similarity_search("anything", k=3) == []
    a.close(), b.close()


def test_two_stores_on_one_file_keep_their_tables(tmp_path):
    path = str(tmp_path / "two.db")
    notes = TesseraVectorStore(path, table="notes")
    fake = TesseraVectorStore(path, table="fake", embedding=DeterministicFakeEmbedding(size=8))
    notes.add_texts(["the backup runs at night"], ids=["n1"])
    fake.add_texts(["the backup runs at night"], ids=["f1"])
    assert ids(notes.similarity_search("backup", k=5)) == ["n1"]
    assert ids(fake.similarity_search("backup", k=5)) == ["f1"]
    con = tesseradb.connect(path)
    shared = TesseraVectorStore(con, table="notes")        # a Connection works as well as a path
    assert ids(shared.similarity_search("backup", k=5)) == ["n1"]
    notes.close(), fake.close(), con.close()


def test_metadata_round_trips_and_clashing_keys_go_to_json(tmp_path):
    s = TesseraVectorStore(str(tmp_path / "m.db"), create_table=(
        "CREATE TABLE documents (doc_key string, content text, metadata json, year int, team string, "
        "embedding float_vector_array knn_type='hnsw' hnsw_similarity='cosine' "
        "model_name='Xenova/all-MiniLM-L6-v2' from='content')"))
    meta = {"id": 7, "content": "not the text", "year": 2024, "team": "ops", "nested": {"a": [1, 2.5, None]},
            "flag": False, "ratio": 1.0, "ünï": "çødé 東京"}
    s.add_texts(["hello"], [meta], ids=["h"])
    assert s.get_by_ids(["h"])[0].metadata == meta
    assert s.get_by_ids(["h"])[0].page_content == "hello"
    row = s.connection.execute("SELECT year, team, metadata FROM documents").fetchone()
    assert row[0] == 2024 and row[1] == "ops" and "year" not in row[2] and row[2]["id"] == 7
    assert ids(s.similarity_search("hello", k=1, filter={"year": {"$gte": 2024}, "team": "ops"})) == ["h"]
    assert s.similarity_search("hello", k=1, filter={"year": {"$lt": 2024}}) == []
    with pytest.raises(ValueError):
        s.add_texts(["bad"], [{"x": float("nan")}])
    s.close()


def test_scores_distances_and_relevance(store):
    with_score = store.similarity_search_with_score("How do I renew the replication certificate?", k=3)
    assert with_score[0][0].id == "cert"
    distances = [d for _, d in with_score]
    assert distances == sorted(distances) and 0 <= distances[0] < 1
    relevance = store.similarity_search_with_relevance_scores("How do I renew the replication certificate?", k=3)
    assert [d.id for d, _ in relevance] == [d.id for d, _ in with_score]
    assert all(0 <= r <= 1 for _, r in relevance) and relevance[0][1] == pytest.approx(1 - distances[0] / 2)
    vector = TesseraEmbeddings().embed_query("How do I renew the replication certificate?")
    assert ids(store.similarity_search_by_vector(vector, k=3)) == [d.id for d, _ in with_score]


def test_mmr_trades_relevance_for_diversity(store):
    plain = ids(store.similarity_search("cats and kittens sleeping all day", k=2))
    diverse = ids(store.max_marginal_relevance_search("cats and kittens sleeping all day", k=2, fetch_k=6,
                                                      lambda_mult=0.3))
    assert set(plain) == {"cats", "kittens"}
    assert diverse[0] in {"cats", "kittens"} and diverse[1] not in {"cats", "kittens"}
    assert ids(store.max_marginal_relevance_search("cats and kittens sleeping all day", k=2, fetch_k=6,
                                                   lambda_mult=1.0)) == plain


def test_hybrid_finds_the_rare_word_and_the_retriever_knows_hybrid(store):
    found = store.hybrid_search_with_score("USR1", k=2)
    assert found[0][0].id == "rot" and found[0][1] > 0
    retriever = store.as_retriever(search_type="hybrid", search_kwargs={"k": 1, "filter": {"team": "ops"}})
    assert isinstance(retriever, TesseraRetriever)
    assert ids(retriever.invoke("USR1")) == ["rot"]
    assert ids(store.search("USR1", "hybrid", k=1)) == ["rot"]
    mmr = store.as_retriever(search_type="mmr", search_kwargs={"k": 2, "filter": {"pets": True}})
    assert set(ids(mmr.invoke("sleeping cats"))) <= {"cats", "kittens", "dogs"}


def test_passages_on_request(tmp_path):
    page = ("# Operations\n\n" + "Backups run every night at two and are kept for seven days.\n" * 6
            + "\n## Certificates\n\nTo rotate the replication certificate, request a new one from the "
            "internal authority, copy it to both hosts and restart replication on the standby first.\n")
    plain = TesseraVectorStore(str(tmp_path / "p.db"), max_tokens=48, overlap_tokens=8, passages=False)
    plain.add_texts([page], [{"source": "ops.md"}], ids=["ops"])
    assert plain.similarity_search("rotate the replication certificate", k=1)[0].page_content == page
    with_passages = TesseraVectorStore(str(tmp_path / "p.db"), passages=True)
    doc = with_passages.similarity_search("rotate the replication certificate", k=1)[0]
    details = doc.metadata["tessera"]
    assert doc.page_content == page[details["start"]:details["end"]] and "rotate" in doc.page_content
    assert details["chunk"] > 1 and details["heading"] == "Certificates" and details["score"] < 0.5
    assert doc.metadata["source"] == "ops.md"
    asked, distance = plain.similarity_search_with_score("rotate the replication certificate", k=1, passages=True)[0]
    assert asked == doc and distance == details["score"]
    assert len(repr(distance)) <= 12          # float32, short (issue 32): not 17 digits
    assert plain.hybrid_search("replication certificate", k=1, passages=True)[0].page_content == doc.page_content
    # issue 32: by default a document longer than one chunk comes back as its passage (right-sized for a
    # prompt), a one-chunk document exactly as added; the section and the whole document on request
    default = TesseraVectorStore(str(tmp_path / "p.db"))
    default.add_texts(["Short note: the kitchen closes at six."], [{"source": "k.md"}], ids=["kitchen"])
    assert default.similarity_search("rotate the replication certificate", k=1)[0] == doc
    short = default.similarity_search("when does the kitchen close", k=1)[0]
    assert short.page_content == "Short note: the kitchen closes at six." and short.metadata == {"source": "k.md"}
    assert short.id == "kitchen"
    section = default.similarity_search("rotate the replication certificate", k=1, passages="section")[0]
    assert doc.page_content in section.page_content and section.page_content in page      # knn_chunk_section()
    if section.page_content != page:        # a section that is the whole document comes back as added
        assert section.metadata["tessera"]["chunk"] == doc.metadata["tessera"]["chunk"]
    assert default.similarity_search("rotate the replication certificate", k=1, passages=False)[0].page_content == page
    with pytest.raises(ValueError, match="passages must be one of"):
        default.similarity_search("x", k=1, passages="paragraph")
    plain.close(), with_passages.close(), default.close()


def test_async_variants(store):
    async def run():
        found = await store.asimilarity_search("renew the certificate", k=1, filter={"team": "ops"})
        mmr = await store.amax_marginal_relevance_search("pets", k=2, filter={"pets": True})
        hybrid = await store.as_retriever(search_type="hybrid", search_kwargs={"k": 1}).ainvoke("USR1")
        new = await store.aadd_texts(["Async writes work too."], ids=["async"])
        got = await store.aget_by_ids(new)
        await store.adelete(["async"])
        return found, mmr, hybrid, got, await store.aget_by_ids(new)
    found, mmr, hybrid, got, gone = asyncio.run(run())
    assert ids(found) == ["cert"] and set(ids(mmr)) <= {"cats", "kittens", "dogs"} and ids(hybrid) == ["rot"]
    assert ids(got) == ["async"] and gone == []


def test_from_texts_and_a_store_reopened(tmp_path):
    path = str(tmp_path / "f.db")
    s = TesseraVectorStore.from_texts(["alpha text", "beta text"], metadatas=[{"n": 1}, {"n": 2}],
                                      ids=["a", "b"], database=path)
    s.close()
    again = TesseraVectorStore(path)
    assert [(d.id, d.metadata) for d in again.get_by_ids(["b", "a"])] == [("b", {"n": 2}), ("a", {"n": 1})]
    assert json.loads(json.dumps(again.similarity_search("alpha", k=1)[0].metadata)) == {"n": 1}
    again.close()


def test_a_table_with_passage_units_returns_the_passage_that_answers(tmp_path):
    """passage_units='windows' (docs/passages.md#passage_units) through the store's own create_table:
    the store's text search takes the same engine path, so its passage is the chunk that answers."""
    from tests.vectors.test_passage_units import ANSWER, NOTES, QUESTION
    create = ("CREATE TABLE documents (doc_key string, content text, metadata json, embedding float_vector_array "
              "knn_type='hnsw' model_name='Xenova/all-MiniLM-L6-v2' from='content' chunk_strategy='markdown' "
              "max_tokens='64' overlap_tokens='8' passage_units='windows')")
    store = TesseraVectorStore(str(tmp_path / "u.db"), create_table=create)
    store.add_texts([f"# {title}\n\n{body}" for title, body in NOTES], [{"source": t} for t, _ in NOTES],
                    ids=["backups", "certs"])
    doc = store.similarity_search(QUESTION, k=1)[0]
    assert doc.id == "backups" and ANSWER in doc.page_content and len(doc.page_content) < len(NOTES[0][1])
    store.close()

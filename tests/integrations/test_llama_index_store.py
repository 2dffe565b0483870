"""The LlamaIndex store against the real llama-index-core: what its vector-store tests check (add,
query, filters, delete by ref_doc_id and by node ids, hybrid, MMR, persistence across reopen) and the
nodes' relationships kept."""
from __future__ import annotations

import asyncio

import pytest
from llama_index.core import Document, StorageContext, VectorStoreIndex
from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
from llama_index.core.vector_stores.types import (FilterCondition, FilterOperator, MetadataFilter, MetadataFilters,
                                                  VectorStoreQuery, VectorStoreQueryMode)

from tesseradb.integrations.llama_index import TesseraEmbedding, TesseraVectorStore

TEXTS = {
    "rot": ("Send USR1 to the daemon and it reopens its log files.", {"team": "ops", "year": 2021, "tags": ["logs"]}),
    "cert": ("The replication certificate expires every year; request a new one.",
             {"team": "ops", "year": 2023, "tags": ["tls", "replication"]}),
    "lunch": ("Lunch is served on Fridays at noon in the kitchen.", {"team": "office", "year": 2022, "tags": []}),
    "cats": ("Cats sleep most of the day and purr when content.", {"team": "office", "year": 2020, "tags": ["pets"]}),
    "kittens": ("Kittens sleep a lot during the day and purr.", {"team": "office", "year": 2020, "tags": ["pets"]}),
    "dogs": ("Dogs need a walk twice a day and love to fetch.",
             {"team": "Office", "year": 2024, "tags": ["pets", "walks"], "note": ""}),
}


@pytest.fixture(scope="module")
def embed_model():
    return TesseraEmbedding()


def nodes(embed_model=None):
    out = []
    for n, (node_id, (text, meta)) in enumerate(TEXTS.items()):
        node = TextNode(id_=node_id, text=text, metadata=dict(meta))
        node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=f"doc-{n % 2}")
        if embed_model is not None:
            node.embedding = embed_model.get_text_embedding(text)
        out.append(node)
    return out


MODES: dict[int, str] = {}       # store -> how its nodes came: with embeddings or without


@pytest.fixture(params=["supplied", "engine"])
def store(request, tmp_path, embed_model):
    """The same nodes, once with embeddings (the float_vector column) and once without (the engine
    chunks and embeds them)."""
    s = TesseraVectorStore(str(tmp_path / "li.db"))
    s.add(nodes(embed_model if request.param == "supplied" else None))
    MODES[id(s)] = request.param
    yield s
    s.close()


def ask(store, embed_model, text, k=6, **kw):
    embedding = embed_model.get_query_embedding(text) if MODES[id(store)] == "supplied" else None
    result = store.query(VectorStoreQuery(query_embedding=embedding, query_str=text, similarity_top_k=k, **kw))
    return result


def ids(result):
    return [n.node_id for n in result.nodes]


def test_query_returns_nodes_text_scores_and_ids(store, embed_model):
    result = ask(store, embed_model, "How do I renew the replication certificate?", k=2)
    assert result.ids == ids(result) and result.ids[0] == "cert"
    assert result.nodes[0].get_content() == TEXTS["cert"][0]
    assert result.nodes[0].metadata == TEXTS["cert"][1]
    assert result.similarities[0] > result.similarities[1] and result.similarities[0] <= 1


F, O = MetadataFilter, FilterOperator


@pytest.mark.parametrize("filters, expected", [
    ([F(key="team", value="ops")], {"rot", "cert"}),
    ([F(key="team", value="ops", operator=O.NE)], {"lunch", "cats", "kittens", "dogs"}),
    ([F(key="year", value=2022, operator=O.GT)], {"cert", "dogs"}),
    ([F(key="year", value=2022, operator=O.GTE)], {"cert", "lunch", "dogs"}),
    ([F(key="year", value=2021, operator=O.LT)], {"cats", "kittens"}),
    ([F(key="year", value=2021, operator=O.LTE)], {"cats", "kittens", "rot"}),
    ([F(key="year", value=[2021, 2024], operator=O.IN)], {"rot", "dogs"}),
    ([F(key="team", value=["ops", "office"], operator=O.NIN)], {"dogs"}),
    ([F(key="tags", value="pets", operator=O.CONTAINS)], {"cats", "kittens", "dogs"}),
    ([F(key="tags", value=["tls", "walks"], operator=O.ANY)], {"cert", "dogs"}),
    ([F(key="tags", value=["pets", "walks"], operator=O.ALL)], {"dogs"}),
    ([F(key="team", value="ffi", operator=O.TEXT_MATCH)], {"lunch", "cats", "kittens", "dogs"}),
    ([F(key="team", value="OFF", operator=O.TEXT_MATCH_INSENSITIVE)], {"lunch", "cats", "kittens", "dogs"}),
    ([F(key="team", value="Off", operator=O.TEXT_MATCH)], {"dogs"}),
    ([F(key="tags", value=None, operator=O.IS_EMPTY)], {"lunch"}),
    ([F(key="note", value=None, operator=O.IS_EMPTY)], {"rot", "cert", "lunch", "cats", "kittens", "dogs"}),
])
def test_every_filter_operator(store, embed_model, filters, expected):
    assert set(ids(ask(store, embed_model, "anything", filters=MetadataFilters(filters=filters)))) == expected


def test_and_or_not_and_nesting(store, embed_model):
    office_2020 = MetadataFilters(filters=[F(key="team", value="office"), F(key="year", value=2020)])
    either = MetadataFilters(filters=[F(key="team", value="ops"), F(key="year", value=2024)],
                             condition=FilterCondition.OR)
    neither = MetadataFilters(filters=[F(key="team", value="ops"), F(key="year", value=2020)],
                              condition=FilterCondition.NOT)
    nested = MetadataFilters(filters=[F(key="tags", value="pets", operator=O.CONTAINS), either])
    assert set(ids(ask(store, embed_model, "x", filters=office_2020))) == {"cats", "kittens"}
    assert set(ids(ask(store, embed_model, "x", filters=either))) == {"rot", "cert", "dogs"}
    assert set(ids(ask(store, embed_model, "x", filters=neither))) == {"lunch", "dogs"}
    assert set(ids(ask(store, embed_model, "x", filters=nested))) == {"dogs"}


def test_filters_apply_before_k(store, embed_model):
    rare = MetadataFilters(filters=[F(key="year", value=2024)])
    assert ids(ask(store, embed_model, "certificate replication renewal", k=1, filters=rare)) == ["dogs"]


def test_node_and_doc_id_restrictions(store, embed_model):
    assert set(ids(ask(store, embed_model, "x", node_ids=["cats", "dogs", "nope"]))) == {"cats", "dogs"}
    assert set(ids(ask(store, embed_model, "x", doc_ids=["doc-1"]))) == {"cert", "cats", "dogs"}


def test_deletes(store, embed_model):
    store.delete("doc-0")                       # ref_doc_id: rot, lunch, kittens
    assert set(ids(ask(store, embed_model, "x"))) == {"cert", "cats", "dogs"}
    store.delete_nodes(["cats"])
    assert set(ids(ask(store, embed_model, "x"))) == {"cert", "dogs"}
    store.delete_nodes(filters=MetadataFilters(filters=[F(key="team", value="ops")]))
    assert ids(ask(store, embed_model, "x")) == ["dogs"]
    assert [n.node_id for n in store.get_nodes(["dogs", "cats"])] == ["dogs"]
    store.clear()
    assert ask(store, embed_model, "x").nodes == []


def test_hybrid_alpha_weights_the_sides(store, embed_model):
    embedding = embed_model.get_query_embedding("USR1") if MODES[id(store)] == "supplied" else None

    def hybrid(alpha):
        return ids(store.query(VectorStoreQuery(query_embedding=embedding, query_str="USR1", similarity_top_k=3,
                                                mode=VectorStoreQueryMode.HYBRID, alpha=alpha)))
    assert hybrid(None)[0] == "rot" and hybrid(0.0)[0] == "rot" and hybrid(0.5)[0] == "rot"
    text_only = hybrid(0.0)
    assert len(text_only) == 3            # the zero-weight dense side still fills the list, ranked last
    result = store.query(VectorStoreQuery(query_embedding=embedding, query_str="USR1", similarity_top_k=3,
                                          mode=VectorStoreQueryMode.HYBRID, alpha=0.0))
    assert result.similarities == sorted(result.similarities, reverse=True)


def test_mmr_diversifies(store, embed_model):
    plain = ids(ask(store, embed_model, "cats and kittens sleeping all day", k=2))
    diverse = ids(ask(store, embed_model, "cats and kittens sleeping all day", k=2,
                      mode=VectorStoreQueryMode.MMR, mmr_threshold=0.3))
    assert set(plain) == {"cats", "kittens"} and diverse[0] in plain and diverse[1] not in plain
    pets_only = ask(store, embed_model, "cats", k=3, mode=VectorStoreQueryMode.MMR,
                    filters=MetadataFilters(filters=[F(key="year", value=2024)]))
    assert ids(pets_only) == ["dogs"]


def test_persistence_and_relationships_across_reopen(tmp_path, embed_model):
    path = str(tmp_path / "keep.db")
    first = TesseraVectorStore(path)
    a, b = TextNode(id_="a", text="The backup job runs at two."), TextNode(id_="b", text="Restores use snapshots.")
    a.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id="runbook", metadata={"v": 1})
    a.relationships[NodeRelationship.NEXT] = RelatedNodeInfo(node_id="b")
    b.relationships[NodeRelationship.PREVIOUS] = RelatedNodeInfo(node_id="a")
    b.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id="runbook")
    first.add([a, b])
    first.close()
    again = TesseraVectorStore(path)
    found = again.query(VectorStoreQuery(query_str="when does the backup run", similarity_top_k=2)).nodes
    assert [n.node_id for n in found] == ["a", "b"]
    assert found[0].ref_doc_id == "runbook" and found[0].relationships[NodeRelationship.SOURCE].metadata == {"v": 1}
    assert found[0].next_node.node_id == "b" and found[1].prev_node.node_id == "a"
    again.delete("runbook")
    assert again.get_nodes(["a", "b"]) == []
    again.close()


def test_vector_store_index_end_to_end_and_async(tmp_path, embed_model):
    path = str(tmp_path / "index.db")
    store = TesseraVectorStore(path)
    docs = [Document(text=text, metadata=meta, id_=key) for key, (text, meta) in TEXTS.items()]
    index = VectorStoreIndex.from_documents(docs, storage_context=StorageContext.from_defaults(vector_store=store),
                                            embed_model=embed_model)
    hits = index.as_retriever(similarity_top_k=1).retrieve("renew the replication certificate")
    assert hits[0].node.ref_doc_id == "cert" and hits[0].node.metadata["team"] == "ops"
    store.close()
    reopened = VectorStoreIndex.from_vector_store(TesseraVectorStore(path), embed_model=embed_model)
    retriever = reopened.as_retriever(similarity_top_k=2, filters=MetadataFilters(filters=[F(key="team", value="ops")]))
    assert {h.node.ref_doc_id for h in asyncio.run(retriever.aretrieve("log files"))} == {"rot", "cert"}
    reopened.delete_ref_doc("rot")
    assert [h.node.ref_doc_id for h in reopened.as_retriever(similarity_top_k=1).retrieve("USR1 log files")] != ["rot"]


def test_one_add_with_and_without_embeddings(tmp_path, embed_model):
    store = TesseraVectorStore(str(tmp_path / "mixed.db"))
    given = TextNode(id_="given", text="The backup job runs at two.",
                     embedding=embed_model.get_text_embedding("The backup job runs at two."))
    store.add([given, TextNode(id_="engine", text="Restores start from the newest snapshot.")])
    by_text = store.query(VectorStoreQuery(query_str="newest snapshot restore", similarity_top_k=5))
    by_vector = store.query(VectorStoreQuery(query_embedding=embed_model.get_query_embedding("backup job"),
                                             similarity_top_k=5))
    assert by_text.ids == ["engine"] and by_vector.ids == ["given"]
    store.close()


def test_a_long_node_comes_back_as_its_passage_and_front_matter_keys_filter(tmp_path):
    # issue 32: by default a node longer than one chunk is answered with the matched passage (right-sized
    # for a prompt; its details under the one reserved key 'tessera', node_id unchanged), a short one
    # exactly as added; front matter keys (a list of tags, an ISO date) filter like any metadata
    page = ("# Operations\n\n" + "Backups run every night at two and are kept for seven days.\n" * 8
            + "\n## Certificates\n\nTo rotate the replication certificate, request a new one from the "
            "internal authority, copy it to both hosts and restart replication on the standby first.\n")
    s = TesseraVectorStore(str(tmp_path / "p.db"), max_tokens=48, overlap_tokens=8)
    s.add([TextNode(id_="ops", text=page, metadata={"tags": ["ops", "tls"], "date": "2026-10-19"}),
           TextNode(id_="kitchen", text="The kitchen closes at six.", metadata={"tags": ["office"],
                                                                               "date": "2025-01-02"})])
    query = VectorStoreQuery(query_str="rotate the replication certificate", similarity_top_k=2)
    hit = s.query(query).nodes[0]
    assert hit.node_id == "ops" and hit.get_content() in page and len(hit.get_content()) < len(page) / 2
    assert "rotate" in hit.get_content() and hit.metadata["tessera"]["chunk"] > 1
    assert hit.metadata["tags"] == ["ops", "tls"]
    whole = s.query(query, passages=False).nodes[0]
    assert whole.get_content() == page and "tessera" not in whole.metadata
    short = s.query(VectorStoreQuery(query_str="when does the kitchen close", similarity_top_k=1)).nodes[0]
    assert short.node_id == "kitchen" and short.get_content() == "The kitchen closes at six."
    assert short.metadata == {"tags": ["office"], "date": "2025-01-02"}
    for filters, expected in [
        (MetadataFilters(filters=[MetadataFilter(key="tags", operator=FilterOperator.CONTAINS, value="tls")]), ["ops"]),
        (MetadataFilters(filters=[MetadataFilter(key="date", operator=FilterOperator.GTE, value="2026-01-01")]), ["ops"]),
        (MetadataFilters(filters=[MetadataFilter(key="date", operator=FilterOperator.LT, value="2026-01-01")]),
         ["kitchen"]),
    ]:
        found = s.query(VectorStoreQuery(query_str="certificate", similarity_top_k=2, filters=filters))
        assert [n.node_id for n in found.nodes] == expected
    s.close()

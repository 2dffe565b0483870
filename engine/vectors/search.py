"""knn(col, k, query [, {ef=N}]): resolve the arguments, then find the k nearest documents.

Committed vectors are searched in the column's FAISS index; vectors written by the open transaction
(not yet in the index) are searched exactly and merged, so a transaction sees its own writes.
"""
from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

import numpy as np
from sqlglot import exp

from tesseradb.storage.chunk_table import ColumnLayout, read_vectors

from tesseradb import embed, errors
from tesseradb.errors import UserError
from tesseradb.catalog.values import literal, to_vectors

from tesseradb.catalog.tables import Table
from tesseradb.vectors import knn_rank
from tesseradb.context import Context
from tesseradb.embed.rows import check_text
from tesseradb.vectors.knn_options import (MANTICORE_DEFAULT_LIMIT, KnnOptions, parse_options, resolve_k,
                                           split_arguments)

@dataclass
class KnnRequest:
    table: Table
    alias: str
    column: str
    k: int
    query: np.ndarray | None                 # (n, dims): one vector, or a document's vectors
    exclude_doc: int | None = None
    ef: int | None = None
    filter_sql: str | None = None            # SELECT of the allowed document ids
    bound: dict[str, Any] = field(default_factory=dict)
    options: KnnOptions = field(default_factory=KnnOptions)
    passages: Any = None                     # passages.Needs: what knn_chunk*() read, or None
    scores: dict[int, float] | None = None   # knn_score() of the last run, when it ranks otherwise
    text: str | None = None                  # the query's text, when it was one: its words help pick passages
    distances: bool = True                   # False: the caller shows no hit's distance (``ranked``)
    _layout: ColumnLayout | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_call(cls, db: Context, call: exp.Anonymous, tables: dict[str, Table],
                  bound: dict[str, Any], default_k: int = MANTICORE_DEFAULT_LIMIT) -> "KnnRequest":
        """``default_k``: k when the call has none (the query's LIMIT + OFFSET, see knn_options)."""
        return KnnCall(call, tables).request(db, bound, default_k)

    @property
    def layout(self) -> ColumnLayout:
        """The searched column's layout (the table does not change while a statement runs)."""
        if self._layout is None:
            self._layout = self.table.layout(self.column)
        return self._layout


class KnnCall:
    """What a ``knn(...)`` call says before its parameters are bound: the arguments, the searched table
    and column, and (read on first use) the column's layout and local model. A cached plan keeps one
    (select_plan's remaker) for every execute until the catalog changes, which drops the plan."""

    def __init__(self, call: exp.Anonymous, tables: dict[str, Table]) -> None:
        self.args = args = split_arguments(call)
        self.alias, self.table = _owner(args.column, tables)
        self.spec = self.table.vectors.get(args.column.name.lower())
        if self.spec is None:
            raise UserError(f"KNN index not enabled for attribute '{args.column.name}'", errors.SqlSyntaxError)
        self.layout: ColumnLayout | None = None
        self.model: Any = None          # a local model, once resolved (a remote one is asked each time)
        # k and the options as read once, when no parameter of the call's can change them
        self.fixed: tuple[int | None, KnnOptions] | None = None
        self.constant = not any(n is not None and n.find(exp.Placeholder) is not None for n in (args.k, args.options))
        # the query's parameter name when the query is one (``?``): read without ``literal``
        self.query_name = str(args.query.this) if isinstance(args.query, exp.Placeholder) else None

    def request(self, db: Context, bound: dict[str, Any], default_k: int = MANTICORE_DEFAULT_LIMIT) -> KnnRequest:
        args, spec = self.args, self.spec
        positional, options = self.fixed if self.fixed is not None else self._read_k_options(bound)
        k = resolve_k(positional, options, default_k)
        req = KnnRequest(self.table, self.alias, spec.column, k, None, ef=options.ef, bound=bound, options=options)
        if self.layout is None:     # the column index's own object: column_index finds it by identity
            self.layout = db.column_index(self.table, spec.column).layout    # (Table.layout makes a new one)
        req._layout = self.layout
        read = (True, bound[self.query_name]) if self.query_name is not None else literal(args.query, bound)
        req.query, req.exclude_doc = _query_vectors(db, self.table, spec, args.query, bound, self, read)
        req.text = read[1] if isinstance(read[1], str) else None
        if req.exclude_doc is not None and args.k is None:     # as in Manticore: knn(col, k, doc_id)
            raise UserError("knn() expects (column, [k,] query [, {options}]); a document id needs k",
                            errors.SqlSyntaxError)
        return req


    def _read_k_options(self, bound: dict[str, Any]) -> tuple[int | None, KnnOptions]:
        args = self.args
        positional = None if args.k is None else _int_arg(args.k, bound, "k")
        if positional is not None and positional <= 0:
            raise UserError("k parameter must be positive", errors.SqlSyntaxError)
        options = parse_options(args.options, bound) if args.options is not None else _NO_OPTIONS
        if self.constant:
            self.fixed = (positional, options)
        return positional, options


_NO_OPTIONS = KnnOptions()          # frozen: one instance serves every call without options


def _owner(col: exp.Column, tables: dict[str, Table]) -> tuple[str, Table]:
    for alias, table in tables.items():
        if (not col.table or col.table.lower() == alias) and table.column(col.name) is not None:
            return alias, table
    raise errors.missing_search_column(col.name, "knn")


def _int_arg(node: exp.Expression, bound: dict[str, Any], what: str) -> int:
    ok, value = literal(node, bound)
    if not ok or isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise UserError(f"{what} parameter must be an integer", errors.SqlSyntaxError)
    return int(value)


def _query_vectors(db: Context, table: Table, spec, node: exp.Expression, bound: dict[str, Any],
                   held: KnnCall | None = None, read: tuple[bool, Any] | None = None) -> tuple[np.ndarray, int | None]:
    """``read``: ``literal(node, bound)``, when the caller has it already."""
    ok, value = literal(node, bound) if read is None else read
    if not ok:
        raise UserError("knn() query must be a text, a vector in parentheses, a document id or ?",
                        errors.SqlSyntaxError)
    if isinstance(value, str):
        check_text(value, "knn() query")
        if not spec.model_name:
            raise UserError("Embeddings generation string specified, but embeddings are not loaded",
                            errors.SqlSyntaxError)
        model = held.model if held is not None and held.model is not None else _model(db, spec, held)
        return model.embed_query(value).reshape(1, -1).astype(np.float32, copy=False), None
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return _document_vectors(db, table, spec, int(value)), int(value)
    if isinstance(value, (list, tuple, np.ndarray)):
        flat = np.asarray(value, dtype=object).ravel().tolist() if isinstance(value, np.ndarray) else value
        if flat and isinstance(flat[0], (list, tuple)):
            raise UserError("the knn() query vector must be a single vector, e.g. (0.1, 0.2, 0.3)",
                            errors.SqlSyntaxError)
        vec = to_vectors(list(flat), is_array=False, dims=None, normalize=spec.similarity == "cosine",
                         row=1, column=spec.column)
        if vec.shape[1] != spec.dims:
            raise UserError(f"KNN index '{spec.column}' requires a vector of {spec.dims} entries; "
                            f"{vec.shape[1]} entries specified", errors.SqlSyntaxError)
        return vec, None
    raise UserError("knn() query must be a text, a vector in parentheses, a document id or ?", errors.SqlSyntaxError)


def _model(db: Context, spec, held: KnnCall | None) -> Any:
    """The column's model: a local one is kept by the call's plan (``held``); a remote one is resolved
    each time (the operator's allow-list is asked on every use)."""
    if held is not None and held.model is not None:
        return held.model
    model = embed.spec_model(spec, db.remote_access)
    if held is not None and not embed.is_remote(spec.model_name):
        held.model = model
    return model


def _document_vectors(db: Context, table: Table, spec, doc_id: int) -> np.ndarray:
    layout = table.layout(spec.column)
    _, _, vectors = read_vectors(db.store, layout, "WHERE c.doc_id = ?", (doc_id,))
    return vectors


# -- running --------------------------------------------------------------------------------
def _allowed(db: Context, req: KnnRequest) -> np.ndarray | None:
    if req.filter_sql is None:
        return None
    return np.fromiter((r[0] for r in db.store.execute(req.filter_sql, req.bound)), dtype=np.int64)


def _pending(db: Context, chunks: str) -> tuple[list[int], set[int]]:
    """(chunk ids added, doc ids touched) by the open transaction in one chunk table."""
    if not db.store.in_transaction or not db.has_pending():
        return [], set()
    added, touched = [], set()
    for chunk_id, doc_id, was_added in db.store.execute(
            "SELECT chunk_id, doc_id, added FROM temp._tessera_pending WHERE chunks = ?", (chunks,)):
        touched.add(doc_id)
        if was_added:
            added.append(chunk_id)
    return added, touched


def distances(vectors: np.ndarray, query: np.ndarray, metric: str) -> np.ndarray:
    if metric == "l2":
        diff = vectors - query
        return np.einsum("ij,ij->i", diff, diff)
    return 1.0 - vectors @ query


def _exact(db: Context, req: KnnRequest, where: str, params: tuple) -> dict[int, tuple[float, int]]:
    layout = req.layout
    chunk_ids, doc_ids, vectors = read_vectors(db.store, layout, where, params)
    best: dict[int, tuple[float, int]] = {}
    for q in req.query:
        d = distances(vectors, q, layout.metric) if len(vectors) else np.zeros(0)
        for doc, dist, chunk in zip(doc_ids.tolist(), d.tolist(), chunk_ids.tolist()):
            if doc not in best or dist < best[doc][0]:
                best[doc] = (dist, chunk)
    return best


_F32_MAX = float(np.finfo(np.float32).max)


def _as_float32(d: float) -> float:
    return float(np.float32(d)) if abs(d) <= _F32_MAX else float(d)


_BY_DIST_DOC = itemgetter(1, 0)
_DOC, _DIST, _CHUNK = itemgetter(0), itemgetter(1), itemgetter(2)


def _collapse(best: dict[int, tuple[float, int]], k: int) -> list[tuple[int, float, int]]:
    # distances are float32 arithmetic (FAISS or numpy on float32 vectors): report them as float32
    # values whichever path found them, so equal distances compare equal and print alike
    dists = [h[0] for h in best.values()]
    if dists and max(map(abs, dists)) <= _F32_MAX:     # all of them at once (array 'f' rounds as float32 does)
        narrow = array("f", dists).tolist()
    else:
        narrow = [_as_float32(d) for d in dists]
    ranked = sorted(zip(best, narrow, [h[1] for h in best.values()]), key=_BY_DIST_DOC)
    return ranked[:k]


def run_knn(db: Context, req: KnnRequest) -> list[tuple[int, float, int]]:
    """The k nearest documents as (doc_id, distance, chunk_id), nearest first; with {length_penalty}
    or {mmr}, the k best of more candidates in that ranking (``req.scores``: doc -> knn_score())."""
    if knn_rank.active(req):
        req.distances = True        # a ranking scores by the distances as shown
        hits, req.scores = knn_rank.rank(db, req, _nearest)
        return hits
    return _nearest(db, req)


def _nearest(db: Context, req: KnnRequest) -> list[tuple[int, float, int]]:
    query, options = req.query, req.options
    if query is None or len(query) == 0:
        return []
    if (req.filter_sql is None and len(query) == 1 and not options.fullscan
            and not (db.store.in_transaction and db.has_pending())):
        # the common knn(): one query vector, no filter, nothing of the open transaction's to merge.
        # The index's hits are distinct documents ranked already: no merging dict (_general is the
        # same search for every other case; tests/vectors/test_knn_fast_path.py compares the two)
        index = db.column_index(req.table, req.column, req.layout).catch_up()
        return (narrowed if req.distances else ranked)(
            index.search(query[0], req.k + (req.exclude_doc is not None), exclude_doc=req.exclude_doc, ef=req.ef,
                         rescore=options.rescore, oversampling=options.oversampling), req.k)
    return _general(db, req)


def narrowed(hits: list[tuple[int, float, int]], k: int) -> list[tuple[int, float, int]]:
    """``_collapse`` of hits that are distinct documents already (an index search's). No comprehension:
    right after a model run each one's frame costs a few us (Python 3.11)."""
    dists = list(map(_DIST, hits))
    if dists and max(map(abs, dists)) <= _F32_MAX:
        narrow = array("f", dists).tolist()
    else:
        narrow = [_as_float32(d) for d in dists]
    return sorted(zip(map(_DOC, hits), narrow, map(_CHUNK, hits)), key=_BY_DIST_DOC)[:k]


_GAP, _TINY = 2.0 ** -22, 2.0 ** -148     # twice float32's relative spacing; its smallest spacing


def ranked(hits: list[tuple[int, float, int]], k: int) -> list[tuple[int, float, int]]:
    """``narrowed``'s order of an index search's hits without its float32 distances, for a caller that
    shows none (``KnnRequest.distances``): the hits as they come (distance, then id) when each
    is farther than its predecessor by more than float32 rounding can close (then no two round to the
    same float32, and narrowing changes no order), else ``narrowed``'s. Right after a model run it
    saves ~9 us (the float32 array and the sort are cold; tests/vectors/test_knn_ranked.py)."""
    prev = None
    for hit in hits:
        d = hit[1]
        if prev is not None and not d - prev > (d if d > -prev else -prev) * _GAP + _TINY:
            return narrowed(hits, k)        # a near-tie, NaN or an infinity: narrowing decides
        prev = d
    return hits[:k]


def _general(db: Context, req: KnnRequest) -> list[tuple[int, float, int]]:
    """The search merged from the index, the open transaction's own chunks and a filter."""
    allowed = _allowed(db, req)
    layout = req.layout
    added, touched = _pending(db, layout.chunks)
    idx = db.column_index(req.table, req.column, layout)
    best: dict[int, tuple[float, int]] = {}
    if req.options.fullscan or (touched and idx.index is None):
        best = _exact(db, req, "", ())         # {fullscan=1}, or the index is not loaded yet
    else:
        index = idx.index if touched else idx.catch_up()
        extra = len(touched) + (1 if req.exclude_doc is not None else 0)
        prefiltered = allowed if req.options.prefilter else None      # {prefilter=0}: filter afterwards
        for q in req.query:
            for doc, dist, chunk in index.search(q, req.k + extra, allowed_docs=prefiltered,
                                                 exclude_doc=req.exclude_doc, ef=req.ef,
                                                 rescore=req.options.rescore, oversampling=req.options.oversampling):
                if doc not in touched and (doc not in best or dist < best[doc][0]):
                    best[doc] = (dist, chunk)
        if added:
            marks = ",".join("?" * len(added))
            for doc, hit in _exact(db, req, f"WHERE c.chunk_id IN ({marks})", tuple(added)).items():
                if doc not in best or hit[0] < best[doc][0]:
                    best[doc] = hit
    best.pop(req.exclude_doc, None)
    if allowed is not None:
        if not req.options.prefilter:          # the k nearest of all documents, then the filter
            best = {doc: (dist, chunk) for doc, dist, chunk in _collapse(best, req.k)}
        allow = set(allowed.tolist())
        best = {d: h for d, h in best.items() if d in allow}
    return _collapse(best, req.k)


def explain_knn(db: Context, req: KnnRequest) -> list[tuple[str, str]]:
    allowed = _allowed(db, req)
    index = db.column_index(req.table, req.column).catch_up() if not db.store.in_transaction else \
        db.column_index(req.table, req.column).index
    plan = index.explain(req.k, allowed_docs=allowed, ef=req.ef, rescore=req.options.rescore,
                         oversampling=req.options.oversampling) if index is not None else {"path": "exact"}
    detail = ", ".join(f"{k}={v}" for k, v in plan.items())
    filt = "all documents" if allowed is None else f"{len(allowed)} documents pass the filter"
    return [("knn", f"{req.table.name}.{req.column}: k={req.k}, {filt}"), ("knn", detail)]

"""Validation of vector column definitions (CREATE TABLE and ALTER TABLE ... ADD COLUMN).

Pure: the caller passes the table's columns as ``(name, type, options)`` with the canonical
lower-case type name and the options as written (names lower-cased, values unquoted), and a
``resolve_model`` callback. :func:`validate_columns` raises :class:`tesseradb.errors.UserError`
with Manticore's message texts (see ``docs/vector_columns.md`` for every rule and its order)
and returns a :class:`VectorSpec` for every KNN-indexed vector column. :func:`render_options`
writes a spec back as the option text that SHOW CREATE TABLE prints.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from tesseradb import errors
from tesseradb.errors import UserError

VECTOR_TYPES = ("float_vector", "float_vector_array")     # the one definition (catalog/types.py imports it)
STRING_TYPES = ("text", "string")
CHUNK_STRATEGIES = ("truncate", "mean", "fixed", "recursive", "sentence", "markdown")
MULTI_VECTOR_STRATEGIES = ("fixed", "recursive", "sentence", "markdown")
#: chunk_context: what the model and the chunk full-text index see before each chunk (docs/chunking.md)
CHUNK_CONTEXTS = ("none", "heading")
SIMILARITIES = ("l2", "ip", "cosine")

CHUNK_OPTIONS = ("chunk_strategy", "max_tokens", "overlap_tokens", "max_chunks", "chunk_context", "passage_units")
#: passage_units: vectors of each chunk's small pieces, made when the row is embedded, that help a text
#: query choose a found document's passage (docs/passages.md#passage_units)
PASSAGE_UNITS = ("none", "windows")
CHUNK_NUMBERS = ("max_tokens", "overlap_tokens", "max_chunks")
#: Options that mean something only on a KNN-indexed vector column, in the order they are named.
KNN_OPTIONS = ("knn_dims", "hnsw_similarity", "hnsw_m", "hnsw_ef_construction", "model_name", "from",
               "quantization", "rabitq_bits")
#: Manticore's settings of remote models (api_*), and of local ones that do nothing here (cache_path, use_gpu).
REMOTE_MODEL_OPTIONS = ("api_key", "api_url", "api_timeout", "cache_path", "use_gpu")
#: What the model reads and gives (docs/models.md#column-options): kept with the column, checked by the
#: embedding layer (tesseradb.embed.options), part of the model's identity.
MODEL_OPTIONS = ("query_prefix", "document_prefix", "pooling", "dims", "batch_size", "tokenizer",
                 "api_key", "api_url", "api_timeout")
#: Options that change nothing on a local model (Manticore ignores them too): a warning says so.
LOCAL_IGNORED = ("api_key", "api_url", "api_timeout", "batch_size", "tokenizer", "cache_path", "use_gpu")
#: Manticore's storage options of any column: checked, then ignored (SQLite stores every column).
STORAGE_OPTIONS = ("engine",)
KNOWN_OPTIONS = ("knn_type",) + KNN_OPTIONS + CHUNK_OPTIONS + tuple(dict.fromkeys(REMOTE_MODEL_OPTIONS + MODEL_OPTIONS)) \
    + STORAGE_OPTIONS
ENGINES = ("columnar", "rowwise")
#: quantization='...' (case-insensitive) -> what the catalog keeps; 1bitsimple is served by 1bit.
QUANTIZATIONS = {"none": None, "8bit": "8bit", "1bit": "1bit", "1bitsimple": "1bit"}
REDACTED_KEY = "<redacted>"    # tesseradb.embed.remote.secrets.REDACTED: a key is never shown back
#: quantization='rabitq' rabitq_bits='N' (FAISS's multi-bit RaBitQ; docs/vector_index.md#quantization):
#: the catalog keeps 'rabitq<N>'; 4 bits when rabitq_bits is not given
RABITQ, DEFAULT_RABITQ_BITS = "rabitq", 4
API_TIMEOUT_ERROR = ("API_TIMEOUT must be a non-negative integer (0 means use default, "
                     "positive value is timeout in seconds)")

DEFAULT_HNSW_M = 16
DEFAULT_HNSW_EF_CONSTRUCTION = 200
MAX_INT = 2147483647
#: Accepted range of every numeric option.
NUMBER_RANGES = {
    "knn_dims": (1, MAX_INT),
    "hnsw_m": (2, 1024),
    "hnsw_ef_construction": (1, MAX_INT),
    "max_tokens": (0, MAX_INT),
    "overlap_tokens": (0, MAX_INT),
    "max_chunks": (0, MAX_INT),
    "rabitq_bits": (1, 8),
}

_CHUNK_NAMES = "chunk_strategy, max_tokens, overlap_tokens and max_chunks"
_NUMBER = re.compile(r"[+-]?[0-9]+")
_FROM_SEPARATORS = re.compile(r"[\s,]+")


@dataclass(frozen=True)
class VectorSpec:
    """Everything the engine needs to know about one KNN-indexed vector column."""

    column: str
    is_array: bool
    knn_type: str
    dims: int
    similarity: str
    hnsw_m: int
    hnsw_ef_construction: int
    model_name: str | None
    model_fingerprint: str | None
    from_columns: tuple[str, ...]
    chunk_strategy: str
    max_tokens: int
    overlap_tokens: int
    max_chunks: int
    quantization: str | None = None          # None, '8bit', '1bit' or 'rabitq1'..'rabitq8' (the index's codes; see storage)
    # model_name and from exactly as written (SHOW CREATE TABLE prints them); the engine uses the
    # canonical model_name/model_fingerprint and the resolved from_columns above
    model_text: str | None = field(default=None, compare=False)
    from_text: str | None = field(default=None, compare=False)
    chunk_context: str = "none"              # 'none' or 'heading' (default 'heading' for markdown)
    # the model options given (name, value as written), in MODEL_OPTIONS order: prefixes, pooling, dims,
    # the remote endpoint's settings (the api_key stored, never shown: render_options redacts it)
    model_options: tuple[tuple[str, str], ...] = ()
    passage_units: str = "none"              # 'none' or 'windows' (embed/units.py)


#: resolve_model(name, model options) -> (canonical name, fingerprint, dims)
ResolveModel = Callable[[str, "dict[str, str]"], "tuple[str, str, int]"]


def validate_columns(
    table: str,
    columns: Sequence[tuple[str, str, Mapping[str, str]]],
    *,
    resolve_model: ResolveModel,
    is_remote: Callable[[str], bool] | None = None,
) -> dict[str, VectorSpec]:
    """Check every column's options; return the spec of each KNN-indexed vector column.

    ``resolve_model(name, model_options)`` returns ``(canonical name, fingerprint, dims)`` and raises
    its own exception for an unknown model, which propagates. ``is_remote(name)``: options that
    change nothing on a local model (api_key, ...) are not kept for one (a warning says so); without
    it every model is taken as local. The first failing check raises
    :class:`UserError`.
    """
    normalized = [(name, type_.lower(), _normalize(options)) for name, type_, options in columns]
    for name, _, options in normalized:
        _check_option_names(table, name, options)
    types = {name.lower(): (name, type_) for name, type_, _ in normalized}
    specs: dict[str, VectorSpec] = {}
    for name, type_, options in normalized:
        spec = _validate_column(name, type_, options, types, resolve_model, is_remote)
        if spec is not None:
            specs[name] = spec
    return specs


def render_options(spec: VectorSpec) -> str:
    """The option text of SHOW CREATE TABLE: every implicit option written out, re-runnable."""
    parts = [("knn_type", spec.knn_type)]
    if spec.model_name is None:
        parts.append(("knn_dims", str(spec.dims)))
    parts += [
        ("hnsw_similarity", spec.similarity),
        ("hnsw_m", str(spec.hnsw_m)),
        ("hnsw_ef_construction", str(spec.hnsw_ef_construction)),
    ]
    if spec.quantization is not None and spec.quantization.startswith(RABITQ):
        parts += [("quantization", RABITQ), ("rabitq_bits", spec.quantization[len(RABITQ):])]
    elif spec.quantization is not None:
        parts.append(("quantization", spec.quantization))
    if spec.model_name is not None:
        written_from = spec.from_text if spec.from_text is not None else ",".join(spec.from_columns)
        parts += [("model_name", spec.model_text or spec.model_name), ("from", written_from)]
        parts.append(("chunk_strategy", spec.chunk_strategy))
        # truncate takes no numbers, and overlap needs a non-zero max_tokens (rules 5 and 7)
        if spec.chunk_strategy != "truncate":
            parts.append(("max_tokens", str(spec.max_tokens)))
            if spec.max_tokens:
                parts.append(("overlap_tokens", str(spec.overlap_tokens)))
            parts.append(("max_chunks", str(spec.max_chunks)))
        if spec.chunk_strategy == "markdown" or spec.chunk_context != "none":
            parts.append(("chunk_context", spec.chunk_context))
        if spec.passage_units != "none":
            parts.append(("passage_units", spec.passage_units))
        parts += [(k, REDACTED_KEY if k == "api_key" and not v.startswith("env:") else v)
                  for k, v in spec.model_options]
    return " ".join(f"{key}={quote(value)}" for key, value in parts)


def quote(value: str) -> str:
    """A MySQL single-quoted string literal (backslash and quote escaped)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


# --------------------------------------------------------------------------- checks


def _normalize(options: Mapping[str, str]) -> dict[str, str]:
    """Lower-case the option names; a blank model_name counts as none (as in Manticore)."""
    out = {str(key).lower(): str(value) for key, value in options.items()}
    if "model_name" in out and not out["model_name"].strip():
        del out["model_name"]
    return out


def _check_option_names(table: str, column: str, options: Mapping[str, str]) -> None:
    for key in options:
        if key not in KNOWN_OPTIONS:
            raise UserError(
                f"unknown option '{key}' for column '{column}' of table '{table}'; "
                f"expected one of {', '.join(KNOWN_OPTIONS)}",
                errors.SqlSyntaxError,
            )


def _validate_column(
    name: str,
    type_: str,
    options: dict[str, str],
    types: Mapping[str, tuple[str, str]],
    resolve_model: ResolveModel,
    is_remote: Callable[[str], bool] | None = None,
) -> VectorSpec | None:
    _check_knn_type(type_, options)
    _check_chunk_rules(type_, options)
    _check_stray_options(type_, options)
    _check_storage_options(options)
    numbers = {key: _parse_number(key, options[key]) for key in NUMBER_RANGES if key in options}
    if "knn_type" not in options:
        return None
    similarity = _check_similarity(options)
    quantization = _check_quantization(options, numbers.get("rabitq_bits"))
    if "model_name" not in options:
        if "from" in options:
            raise UserError("from requires model_name", errors.SqlSyntaxError)
        return VectorSpec(
            column=name, is_array=type_ == "float_vector_array", knn_type="hnsw",
            dims=numbers["knn_dims"], similarity=similarity,
            hnsw_m=numbers.get("hnsw_m", DEFAULT_HNSW_M),
            hnsw_ef_construction=numbers.get("hnsw_ef_construction", DEFAULT_HNSW_EF_CONSTRUCTION),
            model_name=None, model_fingerprint=None, from_columns=(),
            chunk_strategy="truncate", max_tokens=0, overlap_tokens=0, max_chunks=0, quantization=quantization,
        )
    _check_remote_options(options)
    local = is_remote is None or not is_remote(options["model_name"])
    model_options = tuple((key, options[key]) for key in MODEL_OPTIONS
                          if key in options and not (local and key in LOCAL_IGNORED))
    model_name, fingerprint, dims = resolve_model(options["model_name"], dict(model_options))
    sources = _check_sources(name, options, types)
    return VectorSpec(
        column=name, is_array=type_ == "float_vector_array", knn_type="hnsw",
        dims=int(dims), similarity=similarity,
        hnsw_m=numbers.get("hnsw_m", DEFAULT_HNSW_M),
        hnsw_ef_construction=numbers.get("hnsw_ef_construction", DEFAULT_HNSW_EF_CONSTRUCTION),
        model_name=model_name, model_fingerprint=fingerprint, from_columns=sources,
        chunk_strategy=options.get("chunk_strategy", "truncate").lower(),
        max_tokens=numbers.get("max_tokens", 0),
        overlap_tokens=numbers.get("overlap_tokens", 0),
        max_chunks=numbers.get("max_chunks", 0),
        quantization=quantization, model_text=options["model_name"], from_text=options.get("from"),
        chunk_context=_chunk_context(options), model_options=model_options,
        passage_units=options.get("passage_units", "none").strip().lower(),
    )


def _check_knn_type(type_: str, options: Mapping[str, str]) -> None:
    if "knn_type" not in options:
        return
    if type_ not in VECTOR_TYPES:
        raise UserError("knn_type='hnsw' can only be used with float_vector and float_vector_array attributes",
                        errors.SqlSyntaxError)
    if options["knn_type"].strip().lower() != "hnsw":
        raise UserError(f"Unknown KNN type '{options['knn_type'].upper()}'", errors.SqlSyntaxError)


def _check_chunk_rules(type_: str, options: Mapping[str, str]) -> None:
    """Manticore's seven chunk rules (plus the strategy's value), first failure wins."""
    if not any(key in options for key in CHUNK_OPTIONS):
        return
    if type_ not in VECTOR_TYPES:
        raise UserError(f"{_CHUNK_NAMES} can only be used with float_vector and float_vector_array attributes",
                        errors.SqlSyntaxError)
    if "knn_type" not in options:
        raise UserError(f"{_CHUNK_NAMES} require knn_type='hnsw'", errors.SqlSyntaxError)
    if "model_name" not in options:
        raise UserError(f"{_CHUNK_NAMES} require model_name; explicitly supplied vectors are never chunked",
                        errors.SqlSyntaxError)
    strategy = options.get("chunk_strategy")
    if strategy is not None and strategy.strip().lower() not in CHUNK_STRATEGIES:
        raise UserError(
            f"unknown chunk_strategy '{strategy}'; expected truncate, mean, fixed, recursive, sentence or markdown",
            errors.SqlSyntaxError,
        )
    context = options.get("chunk_context")
    if context is not None and context.strip().lower() not in CHUNK_CONTEXTS:
        raise UserError(f"unknown chunk_context '{context}'; expected none or heading", errors.SqlSyntaxError)
    _check_passage_units(options)
    has_numbers = any(key in options for key in CHUNK_NUMBERS)
    if has_numbers and strategy is None:
        raise UserError("max_tokens, overlap_tokens and max_chunks require chunk_strategy", errors.SqlSyntaxError)
    strategy = (strategy or "truncate").strip().lower()
    if strategy == "truncate" and has_numbers:
        raise UserError("chunk_strategy='truncate' ignores max_tokens, overlap_tokens and max_chunks",
                        errors.SqlSyntaxError)
    if strategy in MULTI_VECTOR_STRATEGIES and type_ == "float_vector":
        raise UserError(
            f"chunk_strategy='{strategy}' produces several vectors per document "
            "and requires a float_vector_array attribute",
            errors.SqlSyntaxError,
        )
    if "overlap_tokens" in options and _is_zero_or_missing(options.get("max_tokens")):
        raise UserError("overlap_tokens requires an explicit non-zero max_tokens", errors.SqlSyntaxError)


def _check_passage_units(options: Mapping[str, str]) -> None:
    units = options.get("passage_units")
    if units is None:
        return
    if units.strip().lower() not in PASSAGE_UNITS:
        raise UserError(f"unknown passage_units '{units}'; expected none or windows", errors.SqlSyntaxError)
    strategy = options.get("chunk_strategy", "truncate").strip().lower()
    if units.strip().lower() != "none" and strategy not in MULTI_VECTOR_STRATEGIES:
        raise UserError(f"passage_units='{units.strip().lower()}' requires a chunk_strategy that cuts a document into "
                        "several chunks (fixed, recursive, sentence or markdown)", errors.SqlSyntaxError)


def _chunk_context(options: Mapping[str, str]) -> str:
    """'heading' by default for markdown, 'none' for the others (Manticore's strategies stay Manticore's)."""
    default = "heading" if options.get("chunk_strategy", "").strip().lower() == "markdown" else "none"
    return options.get("chunk_context", default).strip().lower()


def _is_zero_or_missing(value: str | None) -> bool:
    """True when max_tokens is absent or a valid number equal to 0 (a malformed value is left
    to the number check that follows, which names it)."""
    if value is None:
        return True
    text = value.strip()
    return bool(_NUMBER.fullmatch(text)) and int(text) == 0


def _check_stray_options(type_: str, options: Mapping[str, str]) -> None:
    """KNN options on a column that cannot use them are errors, never silently ignored."""
    stray = next((key for key in KNN_OPTIONS + REMOTE_MODEL_OPTIONS + MODEL_OPTIONS if key in options), None)
    if stray is None:
        return
    if type_ not in VECTOR_TYPES:
        raise UserError(f"{stray} can only be used with float_vector and float_vector_array attributes",
                        errors.SqlSyntaxError)
    if "knn_type" not in options:
        raise UserError(f"{stray} requires knn_type='hnsw'", errors.SqlSyntaxError)


def _parse_number(key: str, value: str) -> int:
    text = value.strip()
    if not _NUMBER.fullmatch(text):
        raise UserError(f'invalid number "{value}", 0 assumed', errors.SqlSyntaxError)
    number = int(text)
    low, high = NUMBER_RANGES[key]
    if not low <= number <= high:
        raise UserError(f"{key}: '{value}' is out of range ({low}..{high})", errors.SqlSyntaxError)
    return number


def _check_similarity(options: Mapping[str, str]) -> str:
    """Similarity and dims: knn_dims never with a model; both required without one."""
    similarity = options.get("hnsw_similarity")
    if similarity is not None and similarity.strip().lower() not in SIMILARITIES:
        raise UserError(f"Unknown knn similarity '{similarity.upper()}'", errors.SqlSyntaxError)
    if "model_name" in options:
        if "knn_dims" in options:
            raise UserError("knn_dims can't be used together with model_name", errors.SqlSyntaxError)
        return (similarity or "cosine").strip().lower()
    if "knn_dims" not in options or similarity is None:
        raise UserError("knn_dims and hnsw_similarity are required if knn_type='hnsw'", errors.SqlSyntaxError)
    return similarity.strip().lower()


def _check_sources(column: str, options: Mapping[str, str], types: Mapping[str, tuple[str, str]]) -> tuple[str, ...]:
    """The ``from`` columns: required, existing, of type text or string. ``from=''`` (written, and
    empty) means every text and string column in table order, as in Manticore."""
    if "from" not in options:
        raise UserError(f"'from' setting empty for KNN attribute '{column}'", errors.SqlSyntaxError)
    names = [part for part in _FROM_SEPARATORS.split(options["from"]) if part]
    if not names:
        names = [declared for declared, type_ in types.values() if type_ in STRING_TYPES]
    if not names:
        raise UserError(f"'from' setting empty for KNN attribute '{column}': the table has no text or string column",
                        errors.SqlSyntaxError)
    sources = []
    for source in names:
        declared = types.get(source.lower())
        if declared is None:
            if source.lower() == "id":  # the implicit primary key
                raise UserError(f"embedding source attribute '{source}' is not a string", errors.SqlSyntaxError)
            raise UserError(f"embedding source '{source}' not found", errors.SqlSyntaxError)
        if declared[1] not in STRING_TYPES:
            raise UserError(f"embedding source attribute '{source}' is not a string", errors.SqlSyntaxError)
        sources.append(declared[0])
    return tuple(sources)


def _check_quantization(options: Mapping[str, str], bits: int | None) -> str | None:
    value = options.get("quantization")
    key = value.strip().lower() if value is not None else None
    if bits is not None and key != RABITQ:
        raise UserError("rabitq_bits requires quantization='rabitq'", errors.SqlSyntaxError)
    if key is None:
        return None
    if key == "4bit":       # Manticore's answer (its tests expect it): the name stays Manticore's
        raise UserError("4-bit quantization is no longer supported", errors.SqlSyntaxError)
    if key == RABITQ:
        return f"{RABITQ}{bits or DEFAULT_RABITQ_BITS}"
    if key not in QUANTIZATIONS:
        raise UserError(f"Unknown quantization '{value}'", errors.SqlSyntaxError)
    return QUANTIZATIONS[key]


def _check_storage_options(options: Mapping[str, str]) -> None:
    engine = options.get("engine")
    if engine is not None and engine.strip().lower() not in ENGINES:
        raise UserError(f"unknown engine: {engine}", errors.SqlSyntaxError)


def _check_remote_options(options: Mapping[str, str]) -> None:
    timeout = options.get("api_timeout")
    if timeout is not None and not (timeout.strip().isdigit()):
        raise UserError(API_TIMEOUT_ERROR, errors.SqlSyntaxError)


def check_table_options(options: Sequence[tuple[str, str]]) -> None:
    """Table options after CREATE TABLE's column list: Manticore's ``engine='columnar'|'rowwise'``."""
    for key, value in options:
        if key not in STORAGE_OPTIONS:
            raise UserError(f"unknown table option '{key}'; expected one of {', '.join(STORAGE_OPTIONS)}",
                            errors.SqlSyntaxError)
        _check_storage_options({key: value})


def ignored_options(columns: Sequence[tuple[str, str, Mapping[str, str]]],
                    is_remote: Callable[[str], bool] = lambda name: False) -> list[str]:
    """Warnings for accepted options that change nothing here: remote-model settings on a local model."""
    notes = []
    for name, _, options in columns:
        lowered = {str(k).lower(): v for k, v in options.items()}
        if "model_name" in lowered and is_remote(str(lowered["model_name"])):
            continue
        for key in LOCAL_IGNORED:
            if key in lowered:
                notes.append(f"{key} is ignored for column '{name}': its model is local "
                             "(as Manticore ignores it for local models)")
    return notes

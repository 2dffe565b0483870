"""engine.vector_options: every rule, its message and its place in the order; render round-trip."""
from __future__ import annotations

import re

import pytest

from tesseradb.errors import SqlSyntaxError, UserError
from tesseradb.catalog.vector_columns import (
    KNOWN_OPTIONS,
    VectorSpec,
    quote,
    render_options,
    validate_columns,
)

MODEL = "Xenova/all-MiniLM-L6-v2"
MODELS = {
    MODEL.lower(): (MODEL, "fp-minilm", 384),
    "minilm": (MODEL, "fp-minilm", 384),
    "team's/model": ("team's/model", "fp-quote", 8),
}


class UnknownModel(Exception):
    pass


def resolve(name: str, options: dict | None = None) -> tuple[str, str, int]:
    try:
        return MODELS[name.lower()]
    except KeyError:
        raise UnknownModel(f"unknown model '{name}'") from None


_OPTION = re.compile(r"""(\w+)\s*=\s*(?:'((?:[^'\\]|\\.)*)'|([^\s']+))""")


def parse_options(text: str) -> dict[str, str]:
    """A simple key='value' splitter (unquoted numbers too), as the grammar hands options over."""
    options = {}
    for key, quoted, bare in _OPTION.findall(text):
        value = re.sub(r"\\(.)", r"\1", quoted) if bare == "" else bare
        options[key.lower()] = value
    assert _OPTION.sub("", text).strip() == "", f"unparsed option text in {text!r}"
    return options


def parse_column(definition: str) -> tuple[str, str, dict[str, str]]:
    name, type_, *rest = definition.split(None, 2)
    return name, type_, parse_options(rest[0] if rest else "")


BASE = ["title text", "body text", "tag string", "n int", "j json"]


def validate(*definitions: str, base: list[str] = BASE) -> dict[str, VectorSpec]:
    columns = [parse_column(d) for d in base + list(definitions)]
    return validate_columns("t", columns, resolve_model=resolve)


def error_of(*definitions: str, base: list[str] = BASE) -> str:
    with pytest.raises(UserError) as info:
        validate(*definitions, base=base)
    assert info.value.kind is SqlSyntaxError
    return info.value.msg


KNN = "knn_type='hnsw'"
ARRAY_MODEL = f"c float_vector_array {KNN} model_name='{MODEL}' from='title'"
VECTOR_MODEL = f"v float_vector {KNN} model_name='{MODEL}' from='title'"
CHUNK_ONLY = "chunk_strategy, max_tokens, overlap_tokens and max_chunks"

ERRORS = [
    # option names
    (f"v float_vector {KNN} knn_dims='4' hnsw_similarity='l2' quantisation='8bit'",
     "unknown option 'quantisation' for column 'v' of table 't'; expected one of "
     + ", ".join(KNOWN_OPTIONS)),
    ("n int storage='columnar'",
     "unknown option 'storage' for column 'n' of table 't'; expected one of " + ", ".join(KNOWN_OPTIONS)),
    # Manticore's engine, quantization and remote-model options
    ("n int engine='heap'", "unknown engine: heap"),
    (f"v float_vector {KNN} knn_dims='4' hnsw_similarity='l2' quantization='4bit'",
     "4-bit quantization is no longer supported"),
    (f"v float_vector {KNN} knn_dims='4' hnsw_similarity='l2' quantization='2bit'", "Unknown quantization '2bit'"),
    ("n int quantization='8bit'", "quantization can only be used with float_vector and float_vector_array attributes"),
    ("v float_vector quantization='8bit'", "quantization requires knn_type='hnsw'"),
    ("n int api_key='x'", "api_key can only be used with float_vector and float_vector_array attributes"),
    (f"{VECTOR_MODEL} api_timeout='-1'", "API_TIMEOUT must be a non-negative integer (0 means use default, "
     "positive value is timeout in seconds)"),
    (f"{VECTOR_MODEL} api_timeout='soon'", "API_TIMEOUT must be a non-negative integer (0 means use default, "
     "positive value is timeout in seconds)"),
    # knn_type
    (f"n int {KNN}", "knn_type='hnsw' can only be used with float_vector and float_vector_array attributes"),
    (f"s text {KNN}", "knn_type='hnsw' can only be used with float_vector and float_vector_array attributes"),
    ("v float_vector knn_type='ivf' knn_dims='4' hnsw_similarity='l2'", "Unknown KNN type 'IVF'"),
    ("v float_vector knn_type='' knn_dims='4' hnsw_similarity='l2'", "Unknown KNN type ''"),
    # the seven chunk rules (MANTICORE_NOTES §8 cases 1-7) and the strategy's value (case 8)
    ("x int chunk_strategy='sentence'",
     f"{CHUNK_ONLY} can only be used with float_vector and float_vector_array attributes"),
    ("x text max_tokens='5'",
     f"{CHUNK_ONLY} can only be used with float_vector and float_vector_array attributes"),
    ("v float_vector_array chunk_strategy='sentence'", f"{CHUNK_ONLY} require knn_type='hnsw'"),
    (f"v float_vector_array {KNN} knn_dims='4' hnsw_similarity='cosine' chunk_strategy='sentence'",
     f"{CHUNK_ONLY} require model_name; explicitly supplied vectors are never chunked"),
    (f"{ARRAY_MODEL} max_tokens='128'", "max_tokens, overlap_tokens and max_chunks require chunk_strategy"),
    (f"{ARRAY_MODEL} max_chunks='3'", "max_tokens, overlap_tokens and max_chunks require chunk_strategy"),
    (f"{ARRAY_MODEL} chunk_strategy='truncate' max_tokens='128'",
     "chunk_strategy='truncate' ignores max_tokens, overlap_tokens and max_chunks"),
    (f"{ARRAY_MODEL} chunk_strategy='TRUNCATE' max_chunks='0'",
     "chunk_strategy='truncate' ignores max_tokens, overlap_tokens and max_chunks"),
    (f"{VECTOR_MODEL} chunk_strategy='sentence' max_tokens='128'",
     "chunk_strategy='sentence' produces several vectors per document and requires a float_vector_array attribute"),
    (f"{VECTOR_MODEL} chunk_strategy='Fixed'",
     "chunk_strategy='fixed' produces several vectors per document and requires a float_vector_array attribute"),
    (f"{VECTOR_MODEL} chunk_strategy='recursive'",
     "chunk_strategy='recursive' produces several vectors per document and requires a float_vector_array attribute"),
    (f"{ARRAY_MODEL} chunk_strategy='fixed' overlap_tokens='16'",
     "overlap_tokens requires an explicit non-zero max_tokens"),
    (f"{ARRAY_MODEL} chunk_strategy='fixed' max_tokens='0' overlap_tokens='16'",
     "overlap_tokens requires an explicit non-zero max_tokens"),
    (f"{ARRAY_MODEL} chunk_strategy='mean' overlap_tokens='0'",
     "overlap_tokens requires an explicit non-zero max_tokens"),
    (f"{ARRAY_MODEL} chunk_strategy='paragraph'",
     "unknown chunk_strategy 'paragraph'; expected truncate, mean, fixed, recursive, sentence or markdown"),
    (f"{ARRAY_MODEL} chunk_strategy=''",
     "unknown chunk_strategy ''; expected truncate, mean, fixed, recursive, sentence or markdown"),
    # numbers (case 9): rejected, never "0 assumed"
    (f"{ARRAY_MODEL} chunk_strategy='fixed' max_tokens='abc'", 'invalid number "abc", 0 assumed'),
    (f"{ARRAY_MODEL} chunk_strategy='fixed' max_tokens='1.5'", 'invalid number "1.5", 0 assumed'),
    (f"{ARRAY_MODEL} chunk_strategy='fixed' max_tokens=''", 'invalid number "", 0 assumed'),
    (f"{ARRAY_MODEL} chunk_strategy='fixed' max_tokens='-1'", "max_tokens: '-1' is out of range (0..2147483647)"),
    (f"{ARRAY_MODEL} chunk_strategy='fixed' max_tokens='2147483648'",
     "max_tokens: '2147483648' is out of range (0..2147483647)"),
    (f"{ARRAY_MODEL} chunk_strategy='fixed' max_tokens='8' overlap_tokens='-3'",
     "overlap_tokens: '-3' is out of range (0..2147483647)"),
    (f"{ARRAY_MODEL} chunk_strategy='fixed' max_chunks='x'", 'invalid number "x", 0 assumed'),
    (f"v float_vector {KNN} knn_dims='abc' hnsw_similarity='l2'", 'invalid number "abc", 0 assumed'),
    (f"v float_vector {KNN} knn_dims='0' hnsw_similarity='l2'", "knn_dims: '0' is out of range (1..2147483647)"),
    (f"v float_vector {KNN} knn_dims='4' hnsw_similarity='l2' hnsw_m='1'", "hnsw_m: '1' is out of range (2..1024)"),
    (f"v float_vector {KNN} knn_dims='4' hnsw_similarity='l2' hnsw_m='4096'",
     "hnsw_m: '4096' is out of range (2..1024)"),
    (f"v float_vector {KNN} knn_dims='4' hnsw_similarity='l2' hnsw_ef_construction='0'",
     "hnsw_ef_construction: '0' is out of range (1..2147483647)"),
    (f"v float_vector {KNN} knn_dims='4' hnsw_similarity='l2' hnsw_ef_construction='many'", 'invalid number "many", 0 assumed'),
    # dims and similarity (cases 32, 40)
    (f"v float_vector {KNN} model_name='{MODEL}' from='title' knn_dims='384'",
     "knn_dims can't be used together with model_name"),
    (f"v float_vector {KNN}", "knn_dims and hnsw_similarity are required if knn_type='hnsw'"),
    (f"v float_vector {KNN} knn_dims='4'", "knn_dims and hnsw_similarity are required if knn_type='hnsw'"),
    (f"v float_vector {KNN} hnsw_similarity='l2'", "knn_dims and hnsw_similarity are required if knn_type='hnsw'"),
    (f"v float_vector {KNN} from='title'", "knn_dims and hnsw_similarity are required if knn_type='hnsw'"),
    (f"v float_vector {KNN} model_name='' from='title'",
     "knn_dims and hnsw_similarity are required if knn_type='hnsw'"),
    (f"v float_vector {KNN} knn_dims='4' hnsw_similarity='invalid_metric'",
     "Unknown knn similarity 'INVALID_METRIC'"),
    (f"v float_vector {KNN} model_name='{MODEL}' from='title' hnsw_similarity='dot'", "Unknown knn similarity 'DOT'"),
    # from (cases 16, 33)
    (f"c float_vector_array {KNN} model_name='{MODEL}'", "'from' setting empty for KNN attribute 'c'"),
    (f"v float_vector {KNN} model_name='{MODEL}' from='non_existent_field'",
     "embedding source 'non_existent_field' not found"),
    (f"v float_vector {KNN} model_name='{MODEL}' from='title,nope'", "embedding source 'nope' not found"),
    (f"vec1 float_vector {KNN} model_name='{MODEL}' from='vec1'", "embedding source attribute 'vec1' is not a string"),
    (f"v float_vector {KNN} model_name='{MODEL}' from='title n'", "embedding source attribute 'n' is not a string"),
    (f"v float_vector {KNN} model_name='{MODEL}' from='j'", "embedding source attribute 'j' is not a string"),
    (f"v float_vector {KNN} model_name='{MODEL}' from='id'", "embedding source attribute 'id' is not a string"),
    # options that only a KNN vector column can use
    (f"n int model_name='{MODEL}'", "model_name can only be used with float_vector and float_vector_array attributes"),
    ("tag string hnsw_m='16'", "hnsw_m can only be used with float_vector and float_vector_array attributes"),
    ("v float_vector knn_dims='4'", "knn_dims requires knn_type='hnsw'"),
    (f"v float_vector model_name='{MODEL}' from='title'", "model_name requires knn_type='hnsw'"),
    (f"v float_vector_array {KNN} knn_dims='4' hnsw_similarity='l2' from='title'", "from requires model_name"),
]


@pytest.mark.parametrize("definition,message", ERRORS, ids=[m[:60] for _, m in ERRORS])
def test_error_messages(definition, message):
    assert error_of(definition) == message


RULE_ORDER = [
    # rule 2 (no knn_type) before rule 5 (truncate with numbers)
    (f"c float_vector_array model_name='{MODEL}' from='title' chunk_strategy='truncate' max_tokens='5'",
     f"{CHUNK_ONLY} require knn_type='hnsw'"),
    # knn_type on a non-vector column before rule 1; non-vector before the knn_type value
    (f"n int {KNN} chunk_strategy='mean'",
     "knn_type='hnsw' can only be used with float_vector and float_vector_array attributes"),
    ("n int knn_type='ivf'", "knn_type='hnsw' can only be used with float_vector and float_vector_array attributes"),
    # unknown knn type before the chunk rules
    ("v float_vector_array knn_type='ivf' chunk_strategy='sentence'", "Unknown KNN type 'IVF'"),
    # rule 1 before the stray-option check and the unknown strategy
    (f"n int model_name='{MODEL}' chunk_strategy='paragraph'",
     f"{CHUNK_ONLY} can only be used with float_vector and float_vector_array attributes"),
    # rule 3 before the unknown strategy
    (f"c float_vector_array {KNN} knn_dims='4' hnsw_similarity='l2' chunk_strategy='paragraph'",
     f"{CHUNK_ONLY} require model_name; explicitly supplied vectors are never chunked"),
    # the unknown strategy before rules 6 and 7
    (f"{VECTOR_MODEL} chunk_strategy='paragraph' overlap_tokens='3'",
     "unknown chunk_strategy 'paragraph'; expected truncate, mean, fixed, recursive, sentence or markdown"),
    # rule 4 before rule 7
    (f"{ARRAY_MODEL} overlap_tokens='5'", "max_tokens, overlap_tokens and max_chunks require chunk_strategy"),
    # rule 5 before rule 7
    (f"{ARRAY_MODEL} chunk_strategy='truncate' overlap_tokens='5'",
     "chunk_strategy='truncate' ignores max_tokens, overlap_tokens and max_chunks"),
    # rule 6 before rule 7
    (f"{VECTOR_MODEL} chunk_strategy='fixed' overlap_tokens='5'",
     "chunk_strategy='fixed' produces several vectors per document and requires a float_vector_array attribute"),
    # the chunk rules before the number check
    (f"{ARRAY_MODEL} chunk_strategy='truncate' max_tokens='abc'",
     "chunk_strategy='truncate' ignores max_tokens, overlap_tokens and max_chunks"),
    # rule 7 leaves a malformed max_tokens to the number check
    (f"{ARRAY_MODEL} chunk_strategy='fixed' max_tokens='abc' overlap_tokens='5'", 'invalid number "abc", 0 assumed'),
    # numbers before similarity and dims
    (f"v float_vector {KNN} knn_dims='abc' hnsw_similarity='bogus'", 'invalid number "abc", 0 assumed'),
    (f"v float_vector {KNN} model_name='{MODEL}' from='title' knn_dims='x'", 'invalid number "x", 0 assumed'),
    # an unknown similarity before knn_dims-with-model
    (f"v float_vector {KNN} model_name='{MODEL}' from='title' knn_dims='4' hnsw_similarity='bad'",
     "Unknown knn similarity 'BAD'"),
    # the knn_dims/model conflict before from
    (f"v float_vector {KNN} model_name='{MODEL}' knn_dims='4'", "knn_dims can't be used together with model_name"),
    # a missing source before a non-string one, in the order listed
    (f"v float_vector {KNN} model_name='{MODEL}' from='n,nope'", "embedding source attribute 'n' is not a string"),
    (f"v float_vector {KNN} model_name='{MODEL}' from='nope,n'", "embedding source 'nope' not found"),
]


@pytest.mark.parametrize("definition,message", RULE_ORDER, ids=[f"order{i}" for i in range(len(RULE_ORDER))])
def test_rule_order(definition, message):
    assert error_of(definition) == message


def test_unknown_option_on_a_later_column_wins_over_earlier_errors():
    assert error_of(f"n2 int {KNN}", "v float_vector bogus='1'").startswith("unknown option 'bogus'")


def test_columns_are_checked_in_order():
    assert error_of("v float_vector knn_type='ivf'", f"w float_vector {KNN}") == "Unknown KNN type 'IVF'"
    assert error_of(f"w float_vector {KNN}", "v float_vector knn_type='ivf'") == \
        "knn_dims and hnsw_similarity are required if knn_type='hnsw'"


def test_unknown_model_propagates_from_resolve_model():
    with pytest.raises(UnknownModel):
        validate(f"v float_vector {KNN} model_name='nope/model' from='title'")


def test_model_is_resolved_before_from_is_checked():
    with pytest.raises(UnknownModel):
        validate(f"v float_vector {KNN} model_name='nope/model'")


def test_model_name_is_passed_as_written():
    seen = []

    def spy(name, options=None):
        seen.append(name)
        return resolve(name)

    columns = [parse_column(d) for d in BASE + [f"v float_vector {KNN} model_name='MiniLM' from='title'"]]
    specs = validate_columns("t", columns, resolve_model=spy)
    assert seen == ["MiniLM"]
    assert specs["v"].model_name == MODEL  # the canonical name resolve_model returned


# --------------------------------------------------------------------------- accepted definitions


def spec(**changes) -> VectorSpec:
    base = dict(column="c", is_array=True, knn_type="hnsw", dims=384, similarity="cosine", hnsw_m=16,
                hnsw_ef_construction=200, model_name=MODEL, model_fingerprint="fp-minilm",
                from_columns=("title",), chunk_strategy="truncate", max_tokens=0, overlap_tokens=0,
                max_chunks=0)
    base.update(changes)
    return VectorSpec(**base)


ACCEPTED = [
    # explicit vectors
    (f"v float_vector {KNN} knn_dims='4' hnsw_similarity='cosine'",
     spec(column="v", is_array=False, dims=4, model_name=None, model_fingerprint=None, from_columns=())),
    (f"v float_vector_array {KNN} knn_dims='3' hnsw_similarity='L2' hnsw_m='32' hnsw_ef_construction='400'",
     spec(column="v", dims=3, similarity="l2", hnsw_m=32, hnsw_ef_construction=400, model_name=None,
          model_fingerprint=None, from_columns=())),
    (f"v float_vector {KNN} knn_dims=8 hnsw_similarity=ip",  # unquoted numbers and values
     spec(column="v", is_array=False, dims=8, similarity="ip", model_name=None, model_fingerprint=None,
          from_columns=())),
    # model-backed, defaults: cosine, truncate
    (VECTOR_MODEL, spec(column="v", is_array=False)),
    (ARRAY_MODEL, spec()),  # truncate on an array: a 1-element array
    (f"{ARRAY_MODEL} chunk_strategy='truncate'", spec()),
    (f"{ARRAY_MODEL} hnsw_similarity='L2'", spec(similarity="l2")),
    # mean on either column type (case 11)
    (f"{VECTOR_MODEL} chunk_strategy='mean'", spec(column="v", is_array=False, chunk_strategy="mean")),
    (f"{ARRAY_MODEL} chunk_strategy='mean' max_tokens='64' overlap_tokens='8' max_chunks='4'",
     spec(chunk_strategy="mean", max_tokens=64, overlap_tokens=8, max_chunks=4)),
    (f"{VECTOR_MODEL} chunk_strategy='MEAN' max_tokens='64'",
     spec(column="v", is_array=False, chunk_strategy="mean", max_tokens=64)),
    # case 10 and the other multi-vector strategies
    (f"{ARRAY_MODEL} chunk_strategy='fixed' max_tokens='100' overlap_tokens='50'",
     spec(chunk_strategy="fixed", max_tokens=100, overlap_tokens=50)),
    (f"{ARRAY_MODEL} chunk_strategy='Recursive' max_tokens='256' overlap_tokens='32' max_chunks='0'",
     spec(chunk_strategy="recursive", max_tokens=256, overlap_tokens=32)),
    (f"{ARRAY_MODEL} chunk_strategy='sentence' max_tokens='64' overlap_tokens='8' max_chunks='16'",
     spec(chunk_strategy="sentence", max_tokens=64, overlap_tokens=8, max_chunks=16)),
    (f"{ARRAY_MODEL} chunk_strategy='sentence'", spec(chunk_strategy="sentence")),
    (f"{ARRAY_MODEL} chunk_strategy='fixed' max_chunks='3'", spec(chunk_strategy="fixed", max_chunks=3)),
    # overlap above max_tokens, max_tokens above the model's window: stored as given
    (f"{ARRAY_MODEL} chunk_strategy='fixed' max_tokens='10' overlap_tokens='50'",
     spec(chunk_strategy="fixed", max_tokens=10, overlap_tokens=50)),
    (f"{ARRAY_MODEL} chunk_strategy='recursive' max_tokens='100000'",
     spec(chunk_strategy="recursive", max_tokens=100000)),
    (f"{ARRAY_MODEL} chunk_strategy='fixed' max_tokens='+7'", spec(chunk_strategy="fixed", max_tokens=7)),
    # from: comma / space / tab separated, order kept, duplicates kept
    (f"c float_vector_array {KNN} model_name='{MODEL}' from='title, body'", spec(from_columns=("title", "body"))),
    (f"c float_vector_array {KNN} model_name='{MODEL}' from='body title'", spec(from_columns=("body", "title"))),
    (f"c float_vector_array {KNN} model_name='{MODEL}' from='body\ttag'", spec(from_columns=("body", "tag"))),
    (f"c float_vector_array {KNN} model_name='{MODEL}' from=',title,,body,'", spec(from_columns=("title", "body"))),
    (f"c float_vector_array {KNN} model_name='{MODEL}' from='tag'", spec(from_columns=("tag",))),
    # from='' (and a from of separators only): every text and string column, in table order
    (f"c float_vector_array {KNN} model_name='{MODEL}' from=''", spec(from_columns=("title", "body", "tag"))),
    (f"c float_vector_array {KNN} model_name='{MODEL}' from=' , '", spec(from_columns=("title", "body", "tag"))),
    # Manticore's engine / quantization / remote-model options
    (f"{ARRAY_MODEL} engine='columnar'", spec()),
    (f"{ARRAY_MODEL} quantization='8BIT'", spec(quantization="8bit")),
    (f"{ARRAY_MODEL} quantization='1bitsimple'", spec(quantization="1bit")),
    (f"{ARRAY_MODEL} quantization='none'", spec()),
    (f"{ARRAY_MODEL} api_key='k' api_url='http://localhost' api_timeout='0' cache_path='/tmp' use_gpu='0'", spec()),
    # names of options and values of knn_type / similarity / strategy are case-insensitive
    (f"c float_vector_array KNN_TYPE='HNSW' MODEL_NAME='{MODEL}' FROM='title' CHUNK_STRATEGY='Sentence' "
     "HNSW_SIMILARITY='Cosine'", spec(chunk_strategy="sentence")),
]


@pytest.mark.parametrize("definition,expected", ACCEPTED, ids=[f"ok{i}" for i in range(len(ACCEPTED))])
def test_accepted(definition, expected):
    specs = validate(definition)
    assert specs == {expected.column: expected}


def test_vector_columns_without_knn_type_get_no_spec():
    assert validate("v float_vector", "w float_vector_array") == {}


def test_plain_tables_get_no_spec():
    assert validate() == {}
    assert validate_columns("t", [], resolve_model=resolve) == {}


def test_several_vector_columns():
    specs = validate(VECTOR_MODEL, ARRAY_MODEL + " chunk_strategy='sentence'",
                     f"e float_vector {KNN} knn_dims='2' hnsw_similarity='l2'", "plain float_vector")
    assert list(specs) == ["v", "c", "e"]
    assert specs["c"].chunk_strategy == "sentence"
    assert specs["e"].dims == 2 and specs["e"].model_name is None


def test_from_keeps_the_declared_column_names():
    base = ["Title text", "Body string"]
    specs = validate(f"c float_vector_array {KNN} model_name='{MODEL}' from='title,BODY'", base=base)
    assert specs["c"].from_columns == ("Title", "Body")
    specs = validate(f"c float_vector_array {KNN} model_name='{MODEL}' from='Body Title'", base=base)
    assert specs["c"].from_columns == ("Body", "Title")


def test_option_names_are_case_insensitive_even_if_the_caller_did_not_lower_them():
    columns = [("title", "text", {}),
               ("v", "FLOAT_VECTOR", {"KNN_TYPE": "Hnsw", "Model_Name": MODEL, "From": "title"})]
    assert validate_columns("t", columns, resolve_model=resolve)["v"] == spec(column="v", is_array=False)


def test_options_may_arrive_as_numbers():
    columns = [("v", "float_vector", {"knn_type": "hnsw", "knn_dims": 4, "hnsw_similarity": "l2"})]
    assert validate_columns("t", columns, resolve_model=resolve)["v"].dims == 4


def test_plain_vector_columns_still_have_their_options_checked():
    assert error_of("v float_vector chunk_strategy='mean'") == f"{CHUNK_ONLY} require knn_type='hnsw'"


def test_user_error_becomes_error_1064():
    with pytest.raises(UserError) as info:
        validate("v float_vector knn_type='ivf'")
    error = info.value.kind(info.value.msg)
    assert (error.errno, error.sqlstate) == (1064, "42000")
    assert str(error) == "ERROR 1064 (42000): Unknown KNN type 'IVF'"


# --------------------------------------------------------------------------- render_options


def test_render_explicit_vectors():
    specs = validate(f"v float_vector {KNN} knn_dims='4' hnsw_similarity='COSINE'")
    assert render_options(specs["v"]) == \
        "knn_type='hnsw' knn_dims='4' hnsw_similarity='cosine' hnsw_m='16' hnsw_ef_construction='200'"


def test_render_model_column_writes_every_implicit_option():
    specs = validate(f"{ARRAY_MODEL.replace('title', 'title body')} chunk_strategy='fixed' "
                     "max_tokens='100' overlap_tokens='50'")
    assert render_options(specs["c"]) == (
        f"knn_type='hnsw' hnsw_similarity='cosine' hnsw_m='16' hnsw_ef_construction='200' "
        f"model_name='{MODEL}' from='title body' chunk_strategy='fixed' max_tokens='100' "
        "overlap_tokens='50' max_chunks='0'")


def test_render_keeps_model_name_and_from_as_written():
    specs = validate(f"c float_vector_array {KNN} model_name='MiniLM' from='' quantization='8bit'")
    assert specs["c"].model_name == MODEL and specs["c"].from_columns == ("title", "body", "tag")
    assert render_options(specs["c"]) == (
        "knn_type='hnsw' hnsw_similarity='cosine' hnsw_m='16' hnsw_ef_construction='200' quantization='8bit' "
        "model_name='MiniLM' from='' chunk_strategy='truncate'")


def test_render_truncate_writes_no_numbers():
    # rule 5 would reject truncate with numbers, so the re-runnable text leaves them out
    assert render_options(validate(ARRAY_MODEL)["c"]).endswith("from='title' chunk_strategy='truncate'")


def test_render_without_max_tokens_leaves_out_overlap():
    # rule 7 would reject overlap_tokens next to max_tokens='0'
    text = render_options(validate(f"{ARRAY_MODEL} chunk_strategy='sentence'")["c"])
    assert text.endswith("chunk_strategy='sentence' max_tokens='0' max_chunks='0'")


def test_quote_escapes():
    assert quote("it's") == "'it\\'s'"
    assert quote("a\\b") == "'a\\\\b'"


ROUND_TRIP = [d for d, _ in ACCEPTED] + [
    f"q float_vector_array {KNN} model_name=\"team's/model\" from='title'",
    f"q float_vector_array {KNN} model_name='minilm' from='body' chunk_strategy='mean' max_chunks='2'",
    f"{ARRAY_MODEL} chunk_strategy='fixed' max_tokens='5' max_chunks='9'",
]


def _definition(text: str) -> str:
    # the test splitter reads single quotes only; rewrite the one double-quoted value
    return text.replace('"team\'s/model"', "'team\\'s/model'")


@pytest.mark.parametrize("definition", ROUND_TRIP, ids=[f"rt{i}" for i in range(len(ROUND_TRIP))])
def test_render_round_trip(definition):
    first = validate(_definition(definition))
    ((column, original),) = first.items()
    type_ = "float_vector_array" if original.is_array else "float_vector"
    rendered = f"{column} {type_} {render_options(original)}"
    again = validate(rendered)
    assert again == first
    assert render_options(again[column]) == render_options(original)

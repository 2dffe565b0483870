"""The bounds of every answer: an agent's context window is small and its requests are untrusted."""
from __future__ import annotations

MAX_DOCUMENTS = 50          # search / similar: documents per answer
MAX_CHUNKS_PER_DOC = 10     # search: passages per document
MAX_PASSAGE_CHARS = 2_000   # one passage's text
MAX_READ_CHARS = 20_000     # read(): one document, section or window
MAX_FIELD_CHARS = 500       # metadata values in search / context answers
MAX_SQL_ROWS = 200          # sql(): rows returned
MAX_CELL_CHARS = 2_000      # sql(): one value
MAX_SQL_ANSWER_CHARS = 100_000  # sql(): the values of one answer, all rows and columns together
MAX_SQL_BYTES = 8 << 20     # sql(): the values the engine reads for one SELECT (max_result_bytes)
MAX_SECTION_SCAN = 2_000_000    # read(section=), context(): headings are looked for in this much text
WORKERS = 4                 # worker threads, each with its own connections
MAX_QUERY_CHARS = 10_000    # a search text
MAX_SQL_CHARS = 100_000     # one sql() statement
MAX_FILTERS = 20
MAX_IN_VALUES = 100
MAX_WINDOW = 10             # read(window=): neighbours on each side
MAX_WRITE_DOCUMENTS = 100   # add(): documents per call


def cap(text, limit: int) -> tuple[object, bool]:
    """(text cut to ``limit`` characters, whether it was cut); non-text values pass unchanged."""
    if isinstance(text, str) and len(text) > limit:
        return text[:limit], True
    return text, False

"""``tessera index DB DIR [--table T] [--watch]``: a folder of documents as a table, kept current.

Creates the table when it is missing (printing the CREATE TABLE it ran), then runs
``LOAD DATA INFILE 'DIR/**/*' SYNC INTO TABLE T`` (docs/load_data.md#sync). ``--watch`` syncs again
whenever document files change (watchfiles, debounced). Each sync runs on a worker thread while the
main thread waits, so Ctrl-C interrupts a running sync at once: it is rolled back, and the table is
as the previous sync left it."""
from __future__ import annotations

import argparse
import glob
import os
import signal
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TextIO

import tesseradb
from tesseradb.clients.shell.progress import Progress

# The chunking of the table `tessera index` creates: 'markdown' once that strategy exists (issue 23).
CHUNK_STRATEGY = "markdown"      # headings bound the chunks and prefix what is embedded (docs/chunking.md)
DEFAULT_TABLE = "docs"
DOCUMENT_EXTENSIONS = (".md", ".markdown", ".txt", ".html", ".htm", ".pdf")
WAKE_MS = 500                    # --watch: the watcher wakes this often when nothing changes
WATCH_EXTRA = "tessera index --watch needs watchfiles: pip install 'tesseradb[watch]'"


PASSAGE_UNITS = ("windows", "none")     # --passage-units: the column option (docs/passages.md#passage_units)


def create_table_sql(table: str, passage_units: str = "windows") -> str:
    return (f"CREATE TABLE {_ident(table)} (path string UNIQUE, title text, body text, meta json, modified datetime,\n"
            "  chunks float_vector_array knn_type='hnsw' hnsw_similarity='cosine'\n"
            "    model_name='Xenova/all-MiniLM-L6-v2' from='title,body'\n"
            f"    chunk_strategy='{CHUNK_STRATEGY}' max_tokens='256' overlap_tokens='32' passage_units='{passage_units}')")


def example_query(table: str) -> str:
    """The one query the first run suggests: hybrid search, the passage that answers, its path."""
    return (f"SELECT path, title, knn_chunk_heading(), knn_chunk_text() FROM {_ident(table)} "
            "WHERE hybrid_match('your question', chunks) LIMIT 5;")


def _ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tessera index", description="Load a folder of markdown, text, HTML and PDF files into a "
        "table (one row per file, front matter as columns) and keep it in sync.")
    p.add_argument("database", help="database file (created if missing)")
    p.add_argument("directory", help="the folder of documents (searched recursively)")
    p.add_argument("--table", default=DEFAULT_TABLE, help=f"the table (default {DEFAULT_TABLE}; created if missing)")
    p.add_argument("--watch", action="store_true", help="sync again whenever a document changes (Ctrl-C stops)")
    p.add_argument("--debounce", type=float, default=1.0, metavar="SECONDS",
                   help="with --watch: wait until files have been quiet this long (default 1)")
    p.add_argument("--passage-units", choices=PASSAGE_UNITS, default="windows",
                   help="when the table is created: windows (default) embeds each chunk's sentences too, so "
                   "passages answer better, at ~3.4x the model time of loading; none loads faster")
    p.add_argument("--no-progress", action="store_true", help="never show embedding progress")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    out, err = sys.stdout, sys.stderr
    if not os.path.isdir(args.directory):
        err.write(f"tessera index: '{args.directory}' is not a directory\n")
        return 2
    if args.watch:
        try:
            import watchfiles  # noqa: F401 - the extra is installed
        except ImportError:
            err.write(f"tessera index: {WATCH_EXTRA}\n")
            return 2
    try:
        con = tesseradb.connect(args.database, autocommit=True)
    except tesseradb.Error as exc:
        err.write(f"{exc}\n")
        return 1
    signal.signal(signal.SIGTERM, _stop_like_ctrl_c)     # a service manager's stop: close, index saved
    progress = Progress(err, enabled=not args.no_progress and err.isatty())
    con.set_progress(progress.update)
    indexer = Indexer(con, args.table, os.path.join(glob.escape(args.directory), "**", "*"), out, err, progress,
                      passage_units=args.passage_units)
    try:
        if not indexer.run(indexer.ensure_table):
            return 1
        if not args.watch:
            ok = indexer.run(indexer.sync)
            indexer.suggest(args.database)
            return 0 if ok else 1
        return _watch(indexer, args.directory, args.debounce, out, args.database)
    except KeyboardInterrupt:
        return 130 if indexer.interrupted else 0
    finally:
        indexer.close()
        con.close()


def _stop_like_ctrl_c(signum, frame) -> None:
    """SIGTERM ends the command as Ctrl-C does: a running sync is rolled back, the connection is
    closed, which saves the vector index (the default action would kill the process first)."""
    raise KeyboardInterrupt


def _watch(indexer: "Indexer", directory: str, debounce: float, out: TextIO, database: str) -> int:
    """Sync, then again whenever documents change. The first sync runs once the watcher is running (its
    first wake-up), so a file saved during that sync or just after "watching" is printed is not missed."""
    import watchfiles
    watching = False
    for changes in watchfiles.watch(directory, watch_filter=_is_document, debounce=int(debounce * 1000),
                                    raise_interrupt=False, yield_on_timeout=True, rust_timeout=WAKE_MS):
        if not watching:
            indexer.run(indexer.sync)
            indexer.suggest(database)
            out.write(f"watching {directory} (Ctrl-C stops)\n")
            out.flush()
            watching = True
        elif changes:
            indexer.run(indexer.sync)          # a failed sync changed nothing; the next change retries
    return 0


def _is_document(change, path: str) -> bool:
    name = os.path.basename(path)
    return not name.startswith(".") and os.path.splitext(name)[1].lower() in DOCUMENT_EXTENSIONS


class Indexer:
    def __init__(self, con, table: str, pattern: str, out: TextIO, err: TextIO, progress: Progress,
                 passage_units: str = "windows"):
        self.con, self.table, self.pattern, self.passage_units = con, table, pattern, passage_units
        self.out, self.err, self.progress = out, err, progress
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tessera-index")
        self.interrupted = False
        self.created = False

    def run(self, step) -> bool:
        """Run one step on the worker; Ctrl-C interrupts it (rolled back) and stops the command."""
        future: Future = self.worker.submit(step)
        try:
            return future.result()
        except KeyboardInterrupt:
            self.con.interrupt()
            self.interrupted = not future.result()      # the step reports the error it ended with
            self.progress.finish()
            self.err.write("^C -- sync interrupted and rolled back; the table is as the last sync left it\n"
                           if self.interrupted else "^C -- the sync had finished; stopping\n")
            raise

    def ensure_table(self) -> bool:
        cur = self.con.cursor()
        names = {r[0].lower() for r in cur.execute("SHOW TABLES").fetchall()}
        if self.table.lower() in names:
            return True
        sql = create_table_sql(self.table, self.passage_units)
        try:
            cur.execute(sql)
        except tesseradb.Error as exc:
            self.err.write(f"{exc}\n")
            return False
        self.out.write(sql + ";\n")
        self.out.flush()
        self.created = True
        return True

    def suggest(self, database: str) -> None:
        """After the run that created the table: one query to try (docs/shell.md#tessera-index)."""
        if self.created:
            self.out.write(f"try: tessera {database} -e \"{example_query(self.table)}\"\n")
            self.out.flush()

    def sync(self) -> bool:
        started = time.perf_counter()
        self.progress.start()
        try:
            self.con.cursor().execute(f"LOAD DATA INFILE ? SYNC INTO TABLE {_ident(self.table)}", (self.pattern,))
        except tesseradb.Error as exc:
            self.progress.finish()
            self.err.write(f"{exc}\n")
            return False
        self.progress.finish()
        summary, files = "", ""
        for level, code, message in self.con.warnings:
            if message.startswith("LOAD DATA SYNC"):
                summary = message.split(": ", 1)[1]
            elif message.startswith("Synced files: "):
                files = message.split(": ", 1)[1]
            elif level == "Warning":                  # files skipped or read with a fallback, with the reason
                self.err.write(f"{level} ({code}): {message}\n")
        self.out.write(f"{self.table}: {summary} ({time.perf_counter() - started:.1f} s)"
                       + (f": {files}" if files else "") + "\n")
        self.out.flush()
        self.err.flush()
        return True

    def close(self) -> None:
        self.worker.shutdown(wait=True)

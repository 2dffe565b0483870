"""The docs/benchmarks.md section of bench_query_limit.py (results/query_limit.json and, for the whole
manual, query_limit_manual.json); sections.py calls :func:`section`."""
from __future__ import annotations

import statistics

import common

PY = ".venv/bin/python tests/benchmarks"
TARGETS = {"knn / model": 1.2, "hybrid / knn": 1.3, "wire / in-process knn": 1.25}


def _load(x: list[float] | None) -> str:
    return " / ".join(f"{v:.1f}" for v in x) if x else "?"


def _segments(r: dict) -> str:
    seg = r.get("fts_segments")
    return (" FTS5 segments in the file (the text side reads each): " + ", ".join(f"{v} in `{k}`" for k, v in seg.items())
            + ".") if seg else ""


def _run(r: dict, label: str, command: str) -> list[str]:
    p, q = r["p50_ms"], r["ratios"]
    out = [f"**{label}** (`{command}`; {r['pages']} pages, {r['rounds']} rounds; load average {_load(r['loadavg_start'])} "
           f"at the start, {_load(r['loadavg_end'])} at the end). p50: model {p['model']:.2f} ms, knn {p['knn']:.2f} ms, "
           f"hybrid_match {p['hybrid']:.2f} ms, knn over the wire {p['knn over the wire']:.2f} ms"
           + _extras(r) + "." + _segments(r), "",
           "| ratio of p50s, one run | turns call by call | | in alternating blocks | | target |",
           "|---|---:|---|---:|---|---:|"]
    blocks = r.get("blocks_ratios")
    for name, target in TARGETS.items():
        row = f"| {name} | {q[name]:.3f} | {_verdict(q[name], target)} |"
        row += f" {blocks[name]:.3f} | {_verdict(blocks[name], target)} |" if blocks else " – | |"
        out.append(row + f" <= {target} |")
    pair = r.get("wire_pair_ratio")
    if pair is not None:
        target = TARGETS["wire / in-process knn"]
        out.append(f"| wire / in-process knn, the two alone in turns | {pair:.3f} | {_verdict(pair, target)} | – | | <= {target} |")
    if blocks:
        b = r["blocks_p50_ms"]
        out += ["", f"In alternating blocks of {r.get('block', 12)} calls per side (the first of each block not "
                f"counted), p50: model {b['model']:.2f} ms, knn {b['knn']:.2f} ms, hybrid_match {b['hybrid']:.2f} ms, "
                f"knn over the wire {b['knn over the wire']:.2f} ms. Call by call, the server's process starts each "
                "call with the caches the client process's own model run left (two copies of the ~90 MB model "
                "and of the vectors share one 32 MB L3 here); in blocks each side runs as it does on its own."]
    if pair is not None:
        w = r["wire_pair_p50_ms"]
        out += ["", f"knn and knn over the wire alone, in turns call by call (each call starting with what the other "
                f"process's call left in the caches), p50: knn {w['knn']:.2f} ms, knn over the wire "
                f"{w['knn over the wire']:.2f} ms. Among the four sides three run in the client's process: the "
                "server's process starts every call after the client's, the in-process knn only a third of its "
                "calls (\"Over the wire\" below)."]
    runs = r.get("history", [])
    if len(runs) > 1:
        out += ["", f"The last {len(runs)} runs of this command (this one last), medians of their ratios: "
                + ", ".join(f"{name} {statistics.median(h['ratios'][name] for h in runs):.3f} "
                            f"({min(h['ratios'][name] for h in runs):.3f}-{max(h['ratios'][name] for h in runs):.3f})"
                            for name in TARGETS)
                + _history_blocks(runs) + _history_pair(runs)
                + "; load average at their starts " + ", ".join(f"{h['loadavg_start'][0]:.1f}" for h in runs) + "."]
    out += ["", "cProfile of the engine's first-time queries, top entries by own time:", "",
            "| query | function | calls | own s | share |", "|---|---|---:|---:|---:|"]
    for query, rows in r["profiles"].items():
        for row in rows[:8]:
            out.append(f"| {query} | `{row['function']}` | {row['calls']} | {row['own_s']:.3f} | {100 * row['share']:.1f}% |")
    return out + [""]


def _history_blocks(runs: list[dict]) -> str:
    runs = [h for h in runs if "blocks_ratios" in h]
    if not runs:
        return ""
    return (f"; in blocks ({len(runs)} of them): " + ", ".join(
        f"{name} {statistics.median(h['blocks_ratios'][name] for h in runs):.3f} "
        f"({min(h['blocks_ratios'][name] for h in runs):.3f}-{max(h['blocks_ratios'][name] for h in runs):.3f})"
        for name in TARGETS))


def _history_pair(runs: list[dict]) -> str:
    pairs = [h["wire_pair_ratio"] for h in runs if "wire_pair_ratio" in h]
    if not pairs:
        return ""
    return (f"; wire / in-process knn with the two alone in turns ({len(pairs)} of them) "
            f"{statistics.median(pairs):.3f} ({min(pairs):.3f}-{max(pairs):.3f})")


def _verdict(value: float, target: float) -> str:
    return "**met**" if value <= target else "**not met**"


def _extras(r: dict) -> str:
    """What else the run measured: time outside the model, the text side, and the two comparisons."""
    out = ""
    outside = r.get("outside_model_p50_ms")
    if outside:
        out += (f"; time outside the model's onnxruntime run, p50: model side {outside['model']:.2f} ms, "
                f"knn {outside['knn']:.2f} ms, hybrid_match {outside['hybrid']:.2f} ms")
    inside = r.get("inside_model_p50_ms")
    if inside:
        out += (f"; time in the model's onnxruntime run itself, p50: model side {inside['model']:.2f} ms, "
                f"knn {inside['knn']:.2f} ms, hybrid_match {inside['hybrid']:.2f} ms")
    text = r.get("text_side_ms")
    if text:
        out += (f"; hybrid_match's text side itself {text['wall_p50']:.2f} ms wall, {text['cpu_p50']:.2f} ms CPU "
                f"(p90 wall {text['wall_p90']:.2f} ms, {text['runs']} runs)")
    beside = r.get("text_side_beside_model")
    if beside:
        out += (f", beside the model in {beside[0]} of {beside[1]} calls (`hybrid.spare_core`: fewer runnable "
                "threads on the machine than cores at that moment)")
    spin = r.get("spinning_p50_ms")
    if spin:
        fast = r["spinning_min_ms"]
        out += (f". Then the model in turns (blocks of {r.get('block', 12)} calls) with itself on a session whose "
                f"idle pool threads spin (onnxruntime's default): p50 {spin['model']:.2f} vs "
                f"{spin['model, spinning pool']:.2f} ms spinning, fastest call {fast['model']:.2f} vs "
                f"{fast['model, spinning pool']:.2f} ms")
    where = r.get("text_side_p50_ms")
    if where:
        out += (f". Then hybrid_match in turns with its text side in a worker thread beside the model and "
                f"inline before it: p50 {where['worker thread']:.2f} vs {where['inline']:.2f} ms")
    return out


NOTES = [
    "What the profiles showed, the causes, and what changed:", "",
    "- **hybrid_match's text side** took the top chunks by BM25 with `ORDER BY rank LIMIT m` and doubled `m` "
    "until 50 documents showed up; every round scored every matching chunk again. On a question whose "
    "words fill one long page (the changelog's \"Version ...\" headings match ~830 chunks) that was 4 rounds, "
    "longer than the model, so the query waited on the worker thread (the `acquire` entry of the hybrid "
    "profile). One grouped pass (`MIN(rank)` per document) gives the same documents, scores and chunks; its "
    "own time is the text-side figure above.",
    "- **onnxruntime's idle pool threads spun** after each run (its default). On 2 cores a spinning thread "
    "holds the second core while the query's own work (the vector scan, the text side, the server's reply) "
    "and every other process wait. They now block (`session.intra_op.allow_spinning = 0`); the model's turns "
    "with itself above compare the two settings. Spinning wins only on a quiet machine (its "
    "fastest calls are faster).",
    "- A lone query text is tokenized with `encode()` on the calling thread, not `encode_batch`, which "
    "hands even one text to the tokenizer's thread pool and waits for it.",
    "- **knn on the whole manual** scans every chunk exactly (`fvec_inner_products_ny` in its profile). That "
    "is the plan's choice, not a filter or a threshold gone wrong: 10 documents of ~27 chunks each need "
    "~270 chunks from the graph at efSearch 540, more distance computations than a scan of the table's "
    "5,097 chunks. Timed in pieces right after a model run (issue 37, session 41; load 5-11), the index "
    "search took 0.70 ms p50: the scan itself 0.26-0.31 ms (7.8 MB of float32 at about the L3 cache's "
    "speed; 0.22 ms back to back, so the model's run does not push it out of the cache much), the rest "
    "numpy on small arrays run cold: sorting the 5,097 chunks' doc ids to group them per query, "
    "gathering the distances of the live positions, fetching FAISS's storage through SWIG twice, the "
    "rescoring of ~10 chunks near the cut. The grouping, the positions and the storage view are now kept "
    "until the next write (`VectorIndex._derived`): 0.55 ms, with results identical to the last bit (every "
    "heading query, k 10 and 50, with and without deleted chunks). A compact first pass (FAISS's fp16 or "
    "8-bit scalar-quantizer codes, a quarter to a half of the bytes, then the float rescoring) was "
    "measured and not built. Right after a model run its scans (`IndexScalarQuantizer`, top 256 chunks) took "
    "0.25-0.28 ms (8-bit uniform), 0.28-0.33 (fp16) against the float32 scan's 0.26 at load 5 and 0.38 at "
    "load 17 (0.22 back to back): decoding costs about what the smaller reads save, and at most ~0.1 ms "
    "is to be had under heavy load, before the wider float rescoring that the codes' error bound "
    "(half a code step times the query's L1 norm, ~0.015 in cosine distance) would need to stay exact, "
    "and a second copy of the codes to keep in step with every write. With the query vector cached (no model run), "
    "a knn statement right after the model costs ~1.0-1.3 ms in all at load ~10: the search ~0.6, "
    "planning it again with the new parameter ~0.13, the hits' TEMP table ~0.08, the statement's "
    "bracket (catalog check, passes, commit) ~0.1, SQLite's join and the rows the rest.",
    "- The check that a statement names none of the engine's own tables walked the whole parsed tree on "
    "every execute; it runs once per cached statement now.",
    "- **Over the wire**, first pass (issue 37, session 41): statements ran on a worker thread beside one "
    "shared event loop (two thread hand-offs per query, 0.15-0.23 ms) and the server tokenized every text "
    "with sqlglot to route it (~0.27 ms of CPU). Now every client has a thread and event loop of its own "
    "and runs its statements inline, a text that can only be one engine statement is not tokenized "
    "(`statements.read`, checked against the tokens by a property test), and a plain knn text is its own "
    "value; the server's CPU per query fell from 6.7-7.7 to 6.25-7.2 ms (paired runs, load 7-8).",
    "- **Over the wire**, second pass (issue 37, session 43). py-spy on the server (`py-spy record --native "
    "-r 200 --pid`; whole manual, 600 first-time knn texts in turns with the same statement in-process, "
    "load 2): of its client thread's samples, onnxruntime's run 52% (22% of them `pthread_cond_signal`, "
    "waking its pool thread for each parallel step: ~20 futex wakes per run, as in-process), `epoll_wait` "
    "for the next query 12.5%, the socket's `send` 8%, FAISS's scan 4.4%, then mysql-mimic's row writing, "
    "the routing and the engine's statement code below 1% each. Without native frames at 1000 Hz "
    "(`--nonblocking`) `transport.write` holds 31%: the thread is preempted right after its `send` wakes the "
    "client, which has its answer by then. strace: one `recvfrom`, one `sendto` (38 us p50 under strace) and "
    "two `epoll_wait` per query. Thread CPU per hop (perf_counter and thread_time stamped in both "
    "processes; whole manual, first-time texts, knn and knn over the wire alone in turns, load 2-5): the "
    "server outside the engine reads and routes in 0.07-0.09 ms, spends 0.10-0.18 ms in the DB-API call "
    "before run_select and 0.08-0.11 after it (in-process the same call costs ~0.14 ms in all), writes the "
    "result in 0.14-0.19 ms with its one `send`, and its event loop takes 0.05-0.13 ms (wall) from "
    "`epoll_wait`'s return to the command; PyMySQL takes 0.19-0.30 ms of the client's CPU; each process "
    "wakes the other in ~0.05-0.08 ms. Warm (the same text again, its vector cached: no model run) knn "
    "over the wire is ~1.0 ms against 0.58-0.65 in-process and `SELECT 1` 0.26-0.29 against 0.05: right "
    "after a model run (its ~90 MB of weights stream through the caches) the same Python costs about "
    "twice as much. **The engine inside the server is not slower**: with the two sides alone in turns its "
    "run_select took 4.09 ms against 4.46 in-process (model 3.14 vs 3.38; load 2). It was +0.19 ms (its "
    "model run +0.16) only when a model side ran in the client's process before each server call, as in "
    "the four-side turns; the server's statement is a cache hit (the lifted text is the in-process "
    "statement: no parse in its profile), its model session the same (no spinning, as many threads), and "
    "its own settings, autocommit's commit after each read and max_execution_time's progress handler, "
    "cost nothing measurable (in-process with the server's settings: 0.51-0.63 ms p50 warm, every "
    "variant within the noise). Changed: the server routes a text without tokenizing it whatever its "
    "single-quoted strings say (124 of the 1,370 heading questions held 'version', 'mysql', 'schema', "
    "'user'... and went to sqlglot: a text with such words, warm, 1.068 -> 0.958 ms p50 over the wire); "
    "the knn text as PyMySQL sends it is lifted into a parameter by one regular expression (19.4 -> 3.7 us "
    "warm; a property test checks it lifts what the scanner lifts); result rows whose values already have "
    "their wire type go out as the engine returned them. Side by side with the previous server (the "
    "same engine; `bench_wire_hops.py --every 1 --rounds 500 --old c74decd`, which stamps every hop in "
    "both processes; first-time texts, load 2.8-3.5): p50 over the wire 6.56 ms against 6.72 (in-process "
    "5.52: x1.188 against x1.217), mean 7.43 against 7.69; the server's CPU in the DB-API call before "
    "run_select 0.108 against 0.166 ms, after it 0.096 against 0.102; reading and routing 0.08, writing "
    "0.15, `epoll_wait`'s return to the command 0.12 ms wall, the client's PyMySQL 0.21-0.22 ms of CPU, "
    "the client's send to the server's wake-up 0.05 ms. Tried and dropped: uvloop for the clients' event loops (warm "
    "1.015 / 0.989 ms p50 with asyncio's loop, 1.099 / 1.075 with uvloop; `SELECT 1` the same) and one "
    "idle-timeout timer per connection instead of one per read (`SELECT 1` 0.286 / 0.284 ms before, "
    "0.295 / 0.295 after, 2,000 rounds each). The "
    "benchmark now also runs knn and knn over the wire alone in turns (the table's extra row): among the "
    "four sides three run in the client's process, so the server's process starts every call after the "
    "client's model run while the in-process knn does so a third of the time; alone in turns each side "
    "starts after the other process's run, the same disturbance for both, and still harsher than a "
    "server answering queries back to back (the alternating blocks, the issue's own protocol). Its "
    "ratio moved more than the others in this session's 11 runs of the whole manual (0.96-1.58 at load "
    "2.6-5, against 1.10-1.51 for the four-side turns and 0.99-1.33 in blocks). What "
    "is left is two processes: PyMySQL's Python, the server's packet and event-loop Python and two "
    "wake-ups through the scheduler, each run with caches the model has just emptied.",
    "- **Over the wire**, third pass (issue 37, session 45). py-spy on the server (`py-spy record --native "
    "-r 250 --pid`; whole manual, 800 first-time knn texts in turns with the same statement in-process, "
    "load 5-6), the client thread's samples outside its wait for the next command: the engine's DB-API "
    "call 86.5% (the model's run most of it, `pthread_cond_signal` waking its pool 16% of all samples), "
    "`send` 6.5%, writing the result 4.0%, reading, routing and the session 1.9%, the event loop's own "
    "Python 0.9%; after the changes below: the engine 90.2%, `send` 3.7%, writing 2.0%, reading and "
    "routing 2.8%, no event-loop Python. Changed: (1) `tessera serve` sets max_execution_time (60 s) "
    "for every client, and a SELECT with a time limit took the executor's general path (statement "
    "bracket, session passes, planner) instead of the cached plan's: the cached path now arms the "
    "session's limit itself (a hint or statement_timeout still takes the general path; error 3024 on "
    "either); warm knn in-process with the server's setting 0.292 ms p50 against 0.258 without "
    "(3,000 calls each). (2) After the handshake a plain-TCP client's thread reads and writes its socket "
    "itself (`clients/server/direct_socket.py`: `recv`, `poll` while nothing has come, `send`) instead "
    "of waiting through asyncio's transport callback, StreamReader future and task wake-up (two turns "
    "of the loop); mysql-mimic still reads and writes the packets, TLS stays on asyncio, KILL and the "
    "server's stop wake the `poll` through a socket pair. A loopback round trip of one small packet: "
    "45 against 18 us warm, ~200 against ~75-100 us with 64 MB read between calls (load 3-5). (3) A result "
    "shape's header packets are made once per connection, the end-of-rows packet once per row count and "
    "status, a COM_QUERY without query attributes is decoded directly. Side by side with the previous "
    "server on the same engine (`bench_wire_hops.py --every 1 --rounds 500 --old DIR`, DIR this "
    "session's engine with the server, executor.py, statements/query.py and mysql/time_limit.py as "
    "they were; first-time texts, load 5.5): the server's CPU before run_select 0.107 -> 0.063 ms, after "
    "it 0.092 -> 0.071, writing 0.138 -> 0.125 (its `send` 0.038), after writing 0.019 -> 0.010; from "
    "the wait's return to the command 0.098 -> 0.049 ms wall; p50 5.686 -> 5.552 ms (in-process 5.186). "
    "Warm (`--mode warm --rounds 2000`, load 3.3, against the server with (1) and (2)): after run_select "
    "0.047 -> 0.040, writing 0.097 -> 0.083 ms. Nothing tried this time was dropped; "
    "what is left per query is PyMySQL's Python in the client (0.18-0.28 ms of its CPU), the DB-API's "
    "reading of the interpolated text (the literal lifted back into a parameter, ~0.05 ms cold), the "
    "routing's regular expressions (~0.03 ms cold) and the kernel's loopback `send` (~0.03-0.04 ms).",
    "- **The text side's worker thread** hides the text side behind the model only when a core is free: "
    "the model's run takes every core, a third thread competes with it, and each hand-off (the queue's "
    "`put`, the result's `acquire` in the hybrid profile) waits for the scheduler on a loaded machine. It "
    "ran beside the model while the 1-minute load average left a core free; that average lags by a minute "
    "and counts a busy caller itself, so a stream of queries on an otherwise idle 2-core machine held it "
    "near 1, where the choice flipped from query to query (hybrid / knn 1.19-1.41 over the quiet runs "
    "above). Now the machine's runnable threads at that moment decide (`hybrid.spare_core`, "
    "engine/sql/search/cores.py: `/proc/loadavg`'s count, this thread included, below the cores; the "
    "load average where the system gives no count); the run above says how often it chose the worker. "
    "Paired in one process (issue 37, session 43; whole manual, 150 rounds of model, knn and four "
    "hybrid_match variants in turns; load 1.36 -> 1.33, the other helpers idle between bursts): the old "
    "rule ran the worker in 0 of 150 calls, p50 5.02 ms (1.366 x knn's 3.68), the new one in 147 of "
    "150, p50 4.32 ms (1.176 x knn); at load 2.3-2.8 (other processes running) both chose inline "
    "(0 of 150): 6.00 / 5.96 ms (every 6th page), 10.16 / 10.22 ms (whole manual).",
    "- **hybrid_match's fused rows**: every fused document (~90 of the two sides' 50 each) went into its "
    "TEMP table through three statements and an `executemany`, for a query that shows 10. With a LIMIT and "
    "nothing that reorders or filters after fusion (`SideSpec.shown_first`) only the rows scoring at least "
    "the last shown one go in (ties kept: the query's ORDER BY score, id picks the same rows), in one "
    "execute with the create and the empty (engine/sql/search/temp_rows.py, shared with knn's hits); "
    "fusion builds a `Fused` per document, not per hit. Inline, paired: 4.99 vs 5.06 ms with every row "
    "(load 1.35). A test compares LIMIT/OFFSET windows with the whole fused list ordered alike.",
    "- **knn's engine work, piece by piece** (issue 37, session 43: `perf_counter` around each step of a "
    "knn statement whose query vector is cached, run right after a bare model run, 400 statements, whole "
    "manual, load 1.8; p50 in us): 775 in all; the float32 scan 299; `near_positions` 48; the float64 "
    "rescoring and ranking of the ~10 chunks near the cut (`_rank`) 47; the rest of the index search "
    "(query check, read lock, plan copy, scale) 51; `_nearest` and `_collapse` 38; planning from the "
    "cached plan 57 (the vector from the query cache 9); the hits' TEMP fill 31; the SELECT and its rows "
    "~50; `start_statement` 30 (`PRAGMA schema_version`, the check for other connections' DDL, 24); the "
    "session passes 21; the statement bracket ~31; the connection and cursor ~38. In the same process the "
    "first-time statement's time minus the bare model's (0.76 ms) equals the cached one's (0.79 ms): "
    "running the model inside the statement adds nothing. py-spy (`record -r 2000`, 6,000 such statements, "
    "load ~3) agrees: `fvec_inner_products_ny` 33% of the statement's samples, the rest spread over ~40 "
    "steps, no other leaf above 9%. Changed: a cached statement that wanted no session pass is not asked again until "
    "the catalog changes (`StatementCache.wants_no_session_pass`; paired, 400 pairs, load 2: 1.139 -> "
    "1.120 ms). **Why 1.2 x is still missed**: 1.2 x a 3.3 ms model leaves 0.66 ms, and the scan alone takes "
    "0.21-0.30 ms right after the model (7.8 MB read back from memory at 22-37 GB/s: the float32 model's "
    "~90 MB of weights pass through the 32 MB L3 on every run; 0.14-0.21 ms back to back), leaving ~0.4 ms "
    "for everything else, which takes ~0.45-0.6 ms spread over the steps above. Reaching it needs the "
    "statement path rebuilt around a cached knn plan (or a model that leaves the vectors in the cache: the "
    "int8 model's graph is 23 MB), not a fix of one cause.",
    "- **knn's engine work, fewer steps** (issue 37, session 43). py-spy (`record -r 3000`, 4,000 knn "
    "statements each right after a bare model run, query vector cached, whole manual, load 3-5): the "
    "scan 35-43% of the statement's samples, SQLite's three calls 9.8% (p50 `PRAGMA schema_version` 17 us, "
    "the hits' TEMP fill 27 us, the SELECT's first step 22 us), no other leaf above 2.1%; the same "
    "statement warm (back to back, no model between) takes 0.32 ms, 0.16 of it the scan: right after the "
    "model every Python step runs about three times slower (its code and objects come back from memory), "
    "so every step removed counts three times. Changed: the common knn() (one query vector, no filter, "
    "nothing of the open transaction's to merge) hands the index's hits on without the merging dict "
    "(`_nearest` -> `narrowed`; every other case is `_general`, as before); the index scans every live "
    "vector from sizes kept until the next write (`_live_sizes`, no `Plan` copied); the query's scale "
    "comes from the dot product that checked its length; the read lock is a plain context manager that "
    "wakes waiters only when a writer waits; k and the options of a call without parameters in them are "
    "read once per cached plan; the hits' `knn_score()` column in one call; a cached plan binds a tuple of "
    "parameters without `Mapping`'s ABC check; `WriteQueue.release` takes no lock when no turn is held. "
    "tests/vectors/test_knn_fast_path.py runs every query by the short and the general path and compares "
    "the rows to the last bit. Paired in one process (every change undone by re-installing the previous "
    "functions, in turns after a bare model run on a fresh text, 400-500 rounds, whole manual): engine "
    "work with the query vector cached 907 -> 843 us and 965 -> 899 us p50 (load 4.4, 3.4); first-time "
    "knn / model in the same turns 1.199 -> 1.195 and 1.208 -> 1.182. Tried and dropped: starting the "
    "query's model run in a worker thread as the statement starts, so that the statement's prelude "
    "(bracket, catalog check, planning: ~0.15 ms right after a model run) runs beside it: 5.55 against "
    "5.46 ms and 5.44 against 5.20 ms inline (load 2.7-2.9; the model's run already takes both cores, and "
    "the wake-up at the end is on the statement's path). **Still missed, by how much**: in alternating "
    "blocks the knn's own model run is ~0.1 ms slower than the bare model's (the scan's 7.8 MB push the "
    "model's weights out of the L3 between runs: 4.42 against 4.32 ms inside onnxruntime, load 5.5) and "
    "the engine adds 0.78 ms more outside it; 1.2 x a 3.3 ms model allows 0.66 ms in all. The scan "
    "(0.25-0.30 ms cold, memory-bound at ~26 GB/s) and SQLite's three calls (~0.07 ms) leave ~0.3 ms for "
    "the Python of ~30 steps that take ~0.4 ms cold. What would close it is a scan of fewer bytes with "
    "an exact bound (a bf16 or fp16 copy kept beside FAISS's storage, rescoring within its error: "
    "FAISS's fp16 scalar quantizer decodes no faster than it saves, see below), not more of these steps.",
    "- **knn's scan, an 8-bit first pass** (issue 37, session 44; `storage/int8_scan.py`, docs/vector_index.md). "
    "On a cosine or ip index of at least 2,048 live chunks the common knn() reads the live vectors first as "
    "8-bit codes (one step for all, unsigned with a zero point of 128, a constant of a one-thread onnxruntime "
    "session that MLAS packs once: `DynamicQuantizeLinear` codes the query, `MatMulInteger` multiplies exactly), "
    "bounds the error (|q.x - s| <= sqrt(dims) |q| step/2 + a/2 max ||x||_1) and rescores in float64 only the "
    "chunks that can lie within the float32 scan's error of the cut (94 of 5,097 at the median for k 10, p90 "
    "274): the results are the float32 scan's to the last bit (tests/storage/test_int8_scan.py, with a "
    "hypothesis test of the bound against onnxruntime's own quantization; tests/vectors/test_int8_knn.py). The "
    "codes are built by the 64th search after a write (~9 ms of numpy and 2-5 ms for the session on the "
    "manual, what ~100 searches save; measured below with 16) and kept until the next. Paired in one process (whole manual, old and new path in turns after a "
    "bare model run on a fresh text, 400 rounds, 7 runs, load 2.9-3.6): the index's scan step p50 0.51 / 0.63 "
    "/ 0.74 / 0.71 / 0.455 / 0.579 / 0.587 -> 0.50 / 0.53 / 0.60 / 0.50 / 0.441 / 0.492 / 0.471 ms; the "
    "first-time knn statement 0.035-0.369 ms faster (median 0.131); in alternating blocks of 12 in the same "
    "process (396 calls a side) knn / model 1.191 -> 1.165 (medians of the 7 runs; lower in 6 of 7). "
    "bench_query_limit on the whole manual afterwards (load 2.7-3.0): 1.151 / 1.144 / 1.138 call by call, "
    "1.339 / 1.162 / 1.275 in blocks (only 13 blocks a side: the paired blocks above are the steadier "
    "figure); with the codes built by the 64th search (load 1.6-2.2) 1.195 / 1.188 call by call, 1.182 / "
    "1.192 in blocks. Why not the 4 x the bytes promise: right after a model run the pass takes 0.19-0.22 ms "
    "against the float32 scan's 0.33-0.45, its 2 MB read at ~15 GB/s plus onnxruntime's fixed cost run cold "
    "(a 64-row session: 0.097 ms cold, 0.012 warm), and rescoring ~94 chunks in float64 costs 0.10-0.11 ms "
    "against 0.06 for the scan's ~10. Where it loses it is not taken: k 50 on the manual leaves ~800 chunks "
    "(0.76 against 0.55 ms), so a shortlist whose recent searches left more than 1 in 20 chunks takes the "
    "float32 scan (the pass retried every 8th search); at 1,487 chunks (every 6th page) the pass alone took "
    "0.13-0.14 ms against the scan's 0.15-0.19, hence the 2,048 floor. Tried and dropped: a step per vector "
    "and the bound computed inside the session (60 chunks left instead of 94, but 9 nodes instead of 2: "
    "0.23-0.24 ms against 0.19-0.22 cold). py-spy (`record -r 3000 --native`, 2,500 first-time knn "
    "statements each after a bare model run, whole manual) found the session's graph built with onnx.helper, "
    "whose `import onnx` (0.85 s, its ml_dtypes) fell on the search that built the codes: the graph is now "
    "stored as the bytes onnx.helper serializes (a test compares them), its codes a placeholder each "
    "session replaces (`SessionOptions.add_initializer`: still a constant packed once, 46 us warm). "
    "Profiled again (load 4.0-4.9), of the statement's samples outside the model's run: the index search "
    "61%, the pass's session run 27.6% (its MLAS kernel ~14%, the rest onnxruntime's and the binding's "
    "own work), the float64 rescoring of what is left 14.9%, the candidates 5.1%, float32 kernels 8.5% "
    "(searches that left more than 128 chunks, and those before the codes are built).",
    "- **knn's engine work, the statement path rebuilt** (issue 37, session 44). A cached knn() SELECT of "
    "its table's own rows (the table alone in FROM, knn() alone in WHERE, a select list of the table's "
    "expressions and `knn_dist()` / `knn_score()`, a literal LIMIT/OFFSET at most: "
    "engine/sql/search/knn_direct.py) reads the hits' rows by id with one cached statement "
    "(`WHERE id IN (?, ...)`) and puts them in the hits' order: no TEMP fill, no join, no ORDER BY. Every "
    "SELECT whose plan is cached runs without the statement bracket (`executor._direct`; a time limit, a "
    "row bound, a session pass or an OPTION sends it the general way) and checks the catalog after its "
    "read, not before: SQLite's data version (`Connection.data_version()`, a file control, no statement) "
    "is brought up to date by any read, so a statement whose read finds the version the last "
    "`PRAGMA schema_version` saw knows nothing was committed since, by any connection; otherwise it runs "
    "again by the general path, which checks first (tests/vectors/test_knn_direct.py: another "
    "connection's insert, delete, ALTER, DROP and re-CREATE are seen; both paths' rows, value types and "
    "columns are equal for 11 shapes and 3 metrics). A statement is one call into SQLite now. The "
    "connection remembers texts that need no normalizing or literal lifting, `public_errors` is a class "
    "(a generator's context manager was two more frames), a SELECT outside a transaction skips the "
    "autocommit bookkeeping. Right after a bare model run (p50, load 4): `SELECT 1` 22 us, "
    "`PRAGMA schema_version` 44, one row by id 47, ten rows by id 69 as `IN (?, ...)` and 90 as "
    "`IN carray(?)` (apsw's array binding: dropped for up to 64 ids). The cached statement in pieces "
    "(`perf_counter` around each function, 500 statements after a bare model run, load ~3.5): 604 us in "
    "all, the index search 406 (storage/), the rows by id 70, binding and the knn request 54, the "
    "executor's short bracket 28, the connection 39. Paired in one process (main's `Connection._run`, "
    "`_end_statement`, generator `public_errors` and the general bracket re-installed for the old side, "
    "in turns after a bare model run on a fresh text, whole manual): engine work with the query vector "
    "cached 742 -> 643, 728 -> 630 and 769 -> 661 us p50 (500 pairs each, load 2.4-4.0; paired median "
    "difference 96-100 us), `SELECT id, title, knn_dist()` 839 -> 740 and 739 -> 622; hybrid_match "
    "4363 -> 4285 (300 pairs); first-time knn / model in the same turns 1.214 -> 1.244, "
    "1.141 -> 1.101, 1.212 -> 1.183, 1.227 -> 1.184 (the model's own p50 moved 3.8-7.2 ms with the "
    "load: a first-time ratio moves by more than the change); in alternating blocks of 12 in one process "
    "(bare model, knn by main's path, knn by the new one; first-time texts, 396 calls a side, 3 runs, "
    "load 4.8-5.1, the model's p50 7.5-8.0 ms at that load) knn / model 1.122 -> 1.092, 1.167 -> 1.138, "
    "1.109 -> 1.089, the knn call 0.16-0.22 ms faster. Every cached SELECT gets the short bracket: "
    "MAX_EXECUTION_TIME (hint or session), statement_timeout, sql_select_limit and max_result_bytes "
    "still send it the general way (tests/vectors/test_knn_direct.py). Not done: for `SELECT id` alone the hits "
    "are the rows (the index holds only the table's documents), but the read by id is also the "
    "statement's catalog check, and a `PRAGMA schema_version` in its place costs two thirds of it.",
    "- **hybrid_match's statement path, the direct form** (issue 37, session 44). A cached hybrid_match() "
    "SELECT of its table's own rows (the table alone in FROM, hybrid_match() alone in WHERE, the table's "
    "expressions and `hybrid_score()` / `weight()` / `knn_dist()` shown, no rerank or passages, a literal "
    "LIMIT/OFFSET at most: engine/sql/search/hybrid_direct.py) reads the shown fused documents' rows by id "
    "with knn_direct's cached statement and sorts them as the general ORDER BY does (score descending, "
    "id): no TEMP fill, no join (tests/vectors/test_hybrid_direct.py compares both paths: 8 shapes x 4 "
    "texts, ties, LIMIT/OFFSET windows, another connection's writes and DROP). It saves little: the step "
    "after fusion alone, right after a bare model run, 0.101 -> 0.086 ms p50 (500 pairs in turns, load "
    "2.9-3.4); whole statements in turns with knn, each after a bare model run on a fresh text (400 rounds "
    "each): 10.47 -> 10.37 ms (load 4.0-4.3) and 6.95 -> 6.94 ms (load 3.0-3.2), hybrid / knn 1.434 -> "
    "1.420 and 1.291 -> 1.290. What hybrid_match adds to knn, cProfile of 200 first-time statements after "
    "a bare model run (per statement, the profiler's overhead included): the text side 1.45 ms (FTS5's "
    "`rank` over ~830 matching chunks, above), the knn side 0.93 (k is the window, 50: on the manual the "
    "8-bit first pass is not worth it there and the float32 scan runs; `knn(v, 50)` / `knn(v, 10)` 1.026 "
    "in the same turns), fusion 0.2, the read by id 0.07. So the ratio hangs on whether the text side "
    "runs beside the model (a free core) or before it: bench_query_limit --every 1 --rounds 150, three "
    "runs after the change, hybrid / knn call by call 1.341 / 1.315 / 1.283, in blocks 1.366 / 1.313 / "
    "1.365 (load 3.7, 2.9, 2.6); three more when the machine went quiet (load 0.4-0.7, the model's p50 "
    "2.9-3.3 ms): call by call 1.288 / 1.282 / 1.289, in blocks 1.280 / 1.337 / 1.255 (the last run kept "
    "above; its text side ran beside the model in 146 of 150 calls). With the model at ~3 ms, what "
    "hybrid_match does outside the model's run, 1.57 ms p50 against knn's 0.89 (the window-50 knn side, "
    "fusion, waiting for the text side's thread, the side set-up), is most of the ratio's 0.28. Timed "
    "piece by piece (`perf_counter` wrappers, 300 statements after a bare model run, load 0.7): the model "
    "inside hybrid_match 3.46 ms against 3.07 inside knn (the text side's thread beside it), the knn side "
    "(k 50) 0.72, fusion 0.084, the read by id 0.058, the side set-up ~0.3 (of it `spare_core` 0.052 and "
    "LIMIT worked out twice per statement, 0.032). Removed: /proc/loadavg is opened once and read with one "
    "`pread` (three system calls before), a literal LIMIT/OFFSET is worked out once per plan: paired in "
    "one process (main's two functions in turns with the new ones, 500 statements a side after a bare "
    "model run) 6.39 -> 6.26 and 6.40 -> 6.30 ms p50, paired median difference 0.054 and 0.052 ms "
    "(load 0.5-2.8). bench_query_limit --every 1 --rounds 150 after it, two runs at load 3.2-3.5 (the "
    "last kept above; the text side ran on the caller's thread in all 150 calls, no core spare): hybrid / "
    "knn call by call 1.265 / 1.289, in blocks 1.439 / 1.453. Tried, not kept: starting the text side "
    "after the model run, beside the knn side's scan (the model ran 0.39 ms slower with the text side's "
    "thread beside it): 0.044 and 0.057 ms p50 faster paired (400 and 600 statements a side, load ~3), "
    "the same rows, too little to change where the design says the side runs without a quiet-machine "
    "measurement.",
    "- Tried for the scan and dropped (right after a model run, p50): numpy's `xb @ q` (OpenBLAS sgemv) 0.47 "
    "ms with one thread, 6.2 ms with its default threads, against FAISS's 0.24; onnxruntime's MatMul 0.45 "
    "(one thread) and 0.29 ms (two) against 0.21; the scan split in two halves over a second thread 0.28 "
    "against 0.21 (the hand-off costs more than the half saves); scanning only chunks whose group can still "
    "reach the top 10 (bound: the group's centroid similarity plus its radius) keeps 99.6% of the chunks "
    "with a group per document, 92% with groups of two chunks (384-d radii are 0.4-0.8): no pruning to "
    "have. hybrid_match's text side is FTS5 itself: for a heading query (p50 826 matching chunks) matching "
    "costs 0.21 ms and `rank` (BM25 of each matching chunk) 0.9 ms more; the join to the chunk "
    "table and the grouping ~0.05 ms.",
    "- Tried and dropped: a spin limit (`session.intra_op.spin_duration_us`) and "
    "`session.force_spinning_stop` (between spinning and not).",
    "- **hybrid_match, issue 37 session 45.** The text side's unfiltered query joins FTS5's scan to the chunk "
    "table directly (`CROSS JOIN`, FTS5 outer) instead of copying the matches into a `MATERIALIZED` subquery "
    "first (`rank` is a column an aggregate may read; `bm25()` needed the copy): 0.825 -> 0.725 ms p50 on "
    "the whole manual, the same documents, scores and chunks for 3,826 texts and windows (heading queries, "
    "the questions, headings with a tag; load ~3). What is left of it is FTS5: `MIN(rank)` alone 0.58 ms, "
    "the match without `rank` 0.17. Beside the model, the worker thread also reads the text into the FTS5 "
    "query, and the knn side's index is caught up with SQLite before that thread takes the connection, so "
    "after the model the caller runs the knn side's scan while the text side may still run and waits for "
    "it only then (engine/sql/search/hybrid_sides.py; a filter, the open transaction's own vectors or a "
    "quantized index's rescoring still wait first). The plan keeps the call's table, column and local "
    "model. Fusion sums each document's score and builds a fused row only for the rows the LIMIT can "
    "show: 61 -> 45 us. Timed by `perf_counter` marks right after a model run (load ~6): the set-up before "
    "the model's run 0.23 -> 0.16 ms p50 (knn's 0.056); after it, the knn side's scan (k 50) 0.53-0.58 ms, "
    "fusion 0.072, the read by id 0.075 (the index's search right after a model run: k 10 0.50, k 50 0.65 "
    "ms). bench_query_limit --every 1 --rounds 150, main at the session's start (these files) and the "
    "change in turns, six pairs at load 4.9-8.0, where no core was spare and the text side ran on the "
    "caller's thread in (nearly) every call of both: hybrid_match's time outside the model's run minus "
    "knn's, median 1.73 -> 1.60 ms; hybrid / knn in blocks 1.655 / 1.534 / 1.205 / 1.329 / 1.635 / 1.907 "
    "-> 1.483 / 0.993 / 1.244 / 1.329 / 1.330 / 1.255 (medians 1.585 -> 1.292), call by call 1.330 / "
    "1.401 / 1.362 / 1.407 / 1.628 / 1.304 -> 1.204 / 1.384 / 1.244 / 1.452 / 1.268 / 1.370 (medians "
    "1.382 -> 1.319): at that load a ratio moves by more than the change. Tried, not kept (forced beside "
    "the model, in blocks of 12 in one process with knn, load 5.5-6.1): starting the text side's thread "
    "after the model, beside the knn side's scan, hybrid / knn 2.21, 1.86, 1.36 against 1.69, 1.28, 1.17 "
    "started before it (a thread woken after the model waits for a core on a loaded machine); the worker "
    "thread at nice +5, +10 or +19 (left to the model's idle moments): no consistent direction at load "
    "3-6, and the model inside hybrid_match stayed ~0.16 ms slower than inside knn at +19; grouping the "
    "matching chunks in numpy (`SELECT rowid, rank` and a chunk-to-document array) 1.02 against 0.96 ms "
    "in SQLite; FTS5's `rank` with default BM25 arguments, 0.72 against 0.70 ms (so the configured "
    "weights cost nothing).",
    "- **The benchmark's own file** (session 46): the databases under the cache folder are built once and "
    "reused; the whole manual's had been written by an older engine and its chunk full-text index held 19 "
    "FTS5 segments (every 6th page: 7), where the same build today (10 commits of 20 pages) leaves 4 (2): the "
    "text side reads every segment for each word, so hybrid_match measured the old file's history (text "
    "side's SQL 0.72 -> 0.52 ms median on that file merged into one segment, same rows). Both files were "
    "rebuilt by this engine; each run records the segment counts beside its figures. A full-text index "
    "rebuilt by REPAIR TABLE (or the upgrade at open) is now merged into one segment (storage/fulltext.py; "
    "0.66 -> 0.53 ms for the text side's SQL). Merging as writes go (Manticore's auto_optimize) is not done.",
    "",
    "On this shared machine the load average moves by 10 within minutes and the model's p50 with it: a "
    "ratio from one run carries that run's noise.", ""]


def section() -> list[str]:
    sub, whole = common.load_result("query_limit"), common.load_result("query_limit_manual")
    if not sub and not whole:
        return []
    out = ["## Queries at the model's limit (issue 37)", "",
           "First-time query texts (the manual's section headings, each used once in the run: the engine caches "
           "query vectors), the sides taking turns round by round so that load falls on all alike. On this shared "
           "2-core machine the model's own time grows with the load, which narrows every ratio: read them with "
           "the load average beside them.", ""]
    if sub:
        out += _run(sub, f"Every {sub['every']}th page", f"{PY}/bench_query_limit.py --every {sub['every']} --rounds {sub['rounds']}")
    if whole:
        out += _run(whole, "The whole manual", f"{PY}/bench_query_limit.py --every 1 --rounds {whole['rounds']}")
    else:
        out += ["The whole manual: not measured in this session (its database takes the manual's full load with "
                "the model, over 15 minutes on the shared machine at the time).", ""]
    return out + NOTES

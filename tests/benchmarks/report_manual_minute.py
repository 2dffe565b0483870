"""The docs/benchmarks.md section of bench_manual_minute.py (results/manual_minute.json); sections.py
calls :func:`section`."""
from __future__ import annotations

import common

PY = ".venv/bin/python tests/benchmarks"
ANCHOR = "## The manual in a minute (issue 37)"
COMMAND = f"TESSERA_BENCH_CORPUS=$MANUAL nice {PY}/bench_manual_minute.py"
TARGET_SECONDS = 60.0


def _load(x: list[float] | None) -> str:
    return " / ".join(f"{v:.1f}" for v in x) if x else "?"


def _verdict(ok: bool) -> str:
    return "**met**" if ok else "**not met**"


def section() -> list[str]:
    r = common.load_result("manual_minute")
    if not r:
        return []
    s, rounds = r["summary"], r["rounds"]
    what = "the whole manual" if r["every"] == 1 else f"every {r['every']}th page of the manual"
    loads = [x["engine"]["load_start"][0] for x in rounds] + [x["engine"]["load_end"][0] for x in rounds]
    quiet = max(loads) <= r["cpus"] + 0.5
    wall_ok = s["engine_best_seconds"] <= 60
    if wall_ok:
        wall_verdict = _verdict(True)
    elif quiet:
        wall_verdict = _verdict(False)
    else:
        wall_verdict = ("**not shown here** (the machine was not quiet: load "
                        f"{min(loads):.1f}-{max(loads):.1f} on {r['cpus']} cores); by CPU time "
                        + ("within it" if s["engine_cpu_per_core"] <= 60 else "not within it"))
    if quiet:
        share_verdict = _verdict(max(s["share_wall"], s["share_cpu"]) <= 0.05)
    else:       # the load moved between the engine's turn and the model's: only CPU time compares them
        share_verdict = (f"{_verdict(s['share_cpu'] <= 0.05)} by CPU time (the wall times followed the other work "
                         "on the machine)")
    out = [
        ANCHOR, "",
        f"`{' '.join([COMMAND, *r.get('args', [])])}`", "",
        f"`LOAD DATA INFILE '<copy>/**/*.md' INTO TABLE manual` of {what} "
        f"({r['pages']} pages; a copy without SOURCE.md) into `(path string, title string, body text, v float_vector_array "
        f"... model_name='{r['model']}' from='body' chunk_strategy='recursive' max_tokens='256' overlap_tokens='32')`, "
        "then commit, the first knn() (the FAISS index) and close: that is the engine's time. The bare model is the "
        "same model object embedding exactly the texts of each `Model.embed` call the statement made (the same "
        f"batches), in the same process, its first use (its sessions) made before either side runs; the two take "
        "turns, the order alternating by round: engine, bare, bare, engine, ... (the first round also pays the engine's first LOAD DATA in the "
        "process: its imports). The bulk batches ran on "
        f"{r['workers']} single-thread sessions at once (`embed/runner.py`). CPU time is user + sys of the process "
        "(all threads). Engine share = engine / bare - 1.", "",
        "| target | measured | | load average at the start (1/5/15 min) |",
        "|---|---|---|---|",
        f"| the whole manual with the int8 model in <= 60 s on this 2-core machine when it is quiet | "
        f"{s['engine_best_seconds']:.1f} s wall (median {s['engine_seconds']:.1f}); CPU time {s['engine_cpu']:.1f} s, "
        f"{s['engine_cpu_per_core']:.1f} s per core | {wall_verdict} | {_load(rounds[0]['engine']['load_start'])} |",
        f"| the engine's own share <= 5% of the model's time | CPU **{100 * s['share_cpu']:.1f}%**, "
        f"wall {100 * s['share_wall']:.1f}% (medians over {len(rounds)} round(s)) | {share_verdict} | |",
        "",
    ]
    if "own_wall" in s:
        out += _own(r, s, rounds)
    out += ["| round | order | engine s | engine CPU s | bare s | bare CPU s | share (wall) | share (CPU) | "
            "load: engine start -> end | load: bare start -> end |",
            "|---:|---|---:|---:|---:|---:|---:|---:|---|---|"]
    for n, x in enumerate(rounds, start=1):
        e, b = x["engine"], x["bare"]
        out.append(f"| {n} | {', '.join(x['order'])} | {e['seconds']:.1f} | {e['cpu']:.1f} | {b['seconds']:.1f} | "
                   f"{b['cpu']:.1f} | {100 * x['share_wall']:.1f}% | {100 * x['share_cpu']:.1f}% | "
                   f"{_load(e['load_start'])} -> {_load(e['load_end'])} | {_load(b['load_start'])} -> {_load(b['load_end'])} |")
    if "own_wall" in s:
        out += _parts(rounds)
    elif "own_cpu" in s:
        out += ["", "The engine's own CPU time, apart from the model's batches: each side's CPU time less the CPU "
                "time of its `Model._run` batches (onnxruntime and pooling, timed on the threads that run them), "
                "the engine's less the bare side's (the model's tokenizing of the chunks, which both do): "
                + ", ".join(f"round {n}: **{x['own_cpu']:.1f} s** ({100 * x['share_own_cpu']:.1f}% of the bare model's "
                            f"CPU time; the batches {x['engine']['batch_cpu']:.1f} vs {x['bare']['batch_cpu']:.1f} s)"
                            for n, x in enumerate(rounds, start=1) if "own_cpu" in x)
                + f"; median **{100 * s['share_own_cpu']:.1f}%**. The same batches took different CPU times on the "
                "two sides: that difference, which the load of the machine moves, is in the CPU share above and "
                "not in this one."]
    c = r["check"]
    out += ["", f"{r['chunks_embedded']:,} chunk texts embedded ({r['tokens']:,} model tokens) in "
            f"{len(rounds[0]['calls'])} `Model.embed` call(s); stored vs bare: {c['rows']} rows, {c.get('chunks', 0):,} chunks, "
            f"same chunks {c['same_chunks']}, max |stored - bare| {c.get('max_abs_diff')}."]
    cores = max(1, r["workers"])
    per_cpu_s = r["tokens"] / s["bare_cpu"]
    needed = r["tokens"] * (1 + s["share_cpu"]) / (TARGET_SECONDS * cores)
    out += ["", f"By CPU time, which the other work on the machine moves much less than wall time: the bare model ran "
            f"**{per_cpu_s:,.0f} model tokens per CPU second** (median); the engine's {s['engine_cpu']:.1f} CPU s are "
            f"**{s['engine_cpu'] / cores:.1f} s on {cores} free cores** if its work were spread evenly over them. "
            f"{TARGET_SECONDS:.0f} s on {cores} cores needs about {needed:,.0f} tokens per CPU second at this engine share "
            "(the model's recipe, measured step by step: [the int8 model's CPU per token]"
            "(#the-int8-models-cpu-per-token-issue-37))."]
    prof = r.get("profile")
    if prof and "sampler" in prof:
        out += _sampled(r, prof)
    elif prof:
        total = prof["total_seconds"]
        out += ["", f"Where the engine's time goes: cProfile of one more load ({r.get('profile_pages', r['pages'])} pages), "
                f"its clock the process's CPU time ({total:.1f} s under the profiler). The worker threads' batches "
                "count inside `Model.embed`, where the main thread waits for them. The profiler's own cost falls "
                "on code that makes many small Python calls (markdown-it, the chunk planner): their shares here "
                "are several times what they cost without it; the engine share above is measured without it.", "",
                "| part | seconds | share |", "|---|---:|---:|"]
        out += [f"| {part} | {sec:.2f} | {100 * sec / total:.1f}% |" for part, sec in prof["parts"].items()]
        out += ["", "Top entries by own time:", "", "| entry | calls | own s | cumulative s | part |", "|---|---:|---:|---:|---|"]
        out += [f"| `{e['where']}` | {e['calls']:,} | {e['tottime']:.2f} | {e['cumtime']:.2f} | {e['part'].split(' (')[0]} |"
                for e in prof["top"][:15]]
    out += CHANGES
    out += ["", *[f"- {note}" for note in r.get("notes", [])]] if r.get("notes") else []
    return out + _subset(common.load_result("manual_minute_subset"))


def _own(r: dict, s: dict, rounds: list[dict]) -> list[str]:
    """The engine's own measures beside the plain shares (not the target's measure: what it is made of)."""
    return [
        "The plain shares above put the engine's own work and the model's round-to-round variance in one figure. "
        "Apart (medians over the rounds; each round's figures below):", "",
        "| measure | median | rounds |", "|---|---:|---|",
        f"| the engine's own wall time: its load's wall time outside its `Model.embed` calls, / the bare wall time | "
        f"**{100 * s['share_own_wall']:.1f}%** ({s['own_wall']:.2f} s) | "
        + " / ".join(f"{100 * x['share_own_wall']:.1f}%" for x in rounds) + " |",
        f"| the engine's model calls' wall time less the bare wall time (the same batches) | "
        f"{s['model_wall_inflation']:+.2f} s | " + " / ".join(f"{x['model_wall_inflation']:+.2f}" for x in rounds) + " |",
        f"| the engine's own CPU time: outside the model's batches, less the bare side's, / the bare CPU time | "
        f"**{100 * s['share_own_cpu']:.1f}%** ({s['own_cpu']:.2f} s) | "
        + " / ".join(f"{100 * x['share_own_cpu']:.1f}%" for x in rounds) + " |",
        f"| the model's batches' CPU time, engine less bare (the same batches) | {s['batch_inflation_cpu']:+.2f} s | "
        + " / ".join(f"{x['batch_inflation_cpu']:+.2f}" for x in rounds) + " |",
        f"| the medians' ratio: median engine wall / median bare wall - 1 | {100 * s['share_wall_of_medians']:.1f}% | |",
        "", "The wall share is the engine's own wall time plus its model calls' excess over the bare wall time. "
        "The own CPU time is the engine's work wherever it ran (overlapped with the model's batches or not); the "
        "own wall time is the part of the load in which no model call ran (one core or both doing the engine's "
        "work). The rounds alternate engine, bare, bare, engine, ... so that a drift of the machine falls on both "
        "sides.", ""]


def _parts(rounds: list[dict]) -> list[str]:
    """Each round's own wall time by part, its model calls, and Python's garbage collections."""
    names = list(rounds[0]["own_wall_parts"])
    out = ["", "The engine's own wall time by part, seconds (and the model calls: engine / bare wall s; their "
           "batches' CPU s; Python's garbage collections' CPU s on the engine's side, in the batches):", "",
           "| round | " + " | ".join(names) + " | model calls (wall) | batches (CPU) | gc |",
           "|---:|" + "---:|" * (len(names) + 3)]
    for n, x in enumerate(rounds, start=1):
        e, b = x["engine"], x["bare"]
        out.append(f"| {n} | " + " | ".join(f"{x['own_wall_parts'][k]:.2f}" for k in names)
                   + f" | {e['model_seconds']:.1f} / {b['seconds']:.1f} | {e['batch_cpu']:.1f} / {b['batch_cpu']:.1f} "
                   f"| {e.get('gc_cpu', 0):.2f} ({e.get('gc_cpu_in_batches', 0):.2f}) |")
    return out


def _sampled(r: dict, prof: dict) -> list[str]:
    """The py-spy profile of one more load (bench_manual_minute.profile_load)."""
    total, load = prof["seconds"], prof["load"]
    threads = ", ".join(f"{name} {sec:.1f} s" for name, sec in prof["threads"].items())
    out = ["", f"Where the time goes: `{prof['sampler']}` of one more load ({r.get('profile_pages', r['pages'])} pages) "
           f"in a child process whose model was warmed up before py-spy attached; it took {load['seconds']:.1f} s "
           f"wall and {load['cpu']:.1f} CPU s under the sampler (load {_load(load['load_start'])}). "
           f"{total:.1f} thread-seconds sampled ({threads}); {prof['waiting_seconds']:.1f} s more were threads "
           "waiting for another (a Condition or Event wait py-spy did not see as idle), left out. A sample goes "
           "to the part of its innermost frame that names one.", "",
           "| part | seconds | share |", "|---|---:|---:|"]
    out += [f"| {part} | {sec:.2f} | {100 * sec / total:.1f}% |" for part, sec in prof["parts"].items()]
    out += ["", "Top entries by own samples (innermost frame):", "", "| entry | seconds | share | part |",
            "|---|---:|---:|---|"]
    out += [f"| `{e['where']}` | {e['seconds']:.2f} | {100 * e['seconds'] / total:.1f}% | {e['part'].split(' (')[0]} |"
            for e in prof["top"]]
    return out


# What the engine changed for this target, and what is left (session 43, measured by hand on this machine)
CHANGES = [
    "", "What the engine's own share was made of, and what changed (session 43). Measured with a stand-in model "
    "that returns vectors at no cost (so the process's CPU time is the engine's, plus the tokenizing of the "
    "chunks inside `Model.embed`), whole manual: the engine's own CPU was 4.6-4.9 s, and its wall time outside "
    "the model about 4.1 s: 1.1-1.9 s before the model started (reading the first megabyte of pages and cutting "
    "them), 1.8 s between the two `Model.embed` calls (cutting the other two thirds under the lock while a "
    "core idled), 1.3 s after them (rows, chunk rows, the FAISS graph at COMMIT).", "",
    "- **Titles**: `io/documents.first_heading` parsed each whole page with markdown-it for its first heading "
    "(0.36 CPU s for the manual, and LOAD DATA's first pass reads its first pages twice). It now parses the "
    "page's first 4 KB first: CommonMark's blocks up to a line depend on the lines before it only, so a heading "
    "found there is the page's first (a `[` in it, which a link reference further down could resolve, sends "
    "it to the whole parse as before): 0.09 s, the same 189 titles.",
    "- **Read-ahead** (`sql/statements/embed_first_load.ReadAhead`): while the model embeds the first pass "
    "(its 2 worker threads on the 2 cores, the statement's thread waiting), one more thread reads the next "
    "documents and cuts their texts into `Database.prepared` (up to 4M characters); under the lock the "
    "statement finds the cuts and runs the model at once: the gap between the two `Model.embed` calls went "
    "from 1.8 s to 0.15-0.3 s.",
    "- **Head**: the first pass starts the model on its shortest documents (128K characters or just more) "
    "while the read-ahead cuts its other documents, then embeds those from their cuts: the model starts "
    "0.2 s into the statement instead of 1.1 s. Each text's cut and vector are the same whichever call makes "
    "them (stored vs bare above: max |stored - bare| 0.0).",
    "", "What changed in session 44 (h44m), measured with the same stand-in model (vectors at no cost; each "
    "figure the engine's CPU time for the whole manual, other helpers working, load 3-4):",
    "- **Chunk full-text entries from the writer** (`storage/chunk_table.write_chunks`, `storage/fulltext."
    "ChunkTextIndex`): the trigger's `substr()` read the page's body again for every chunk (quadratic in a "
    "page's length). The rows' writer now gives the chunks their ids and adds their entries first, cut in "
    "Python from the text it holds; the trigger skips a chunk that has an entry and still indexes any other "
    "(a number in a text column, a row written by another tool). A file with the previous trigger gets the "
    "new one when opened (same entries: nothing rebuilt); until then its trigger alone indexes. Chunk rows "
    "with their full-text: 0.49-0.57 -> 0.12-0.15 CPU s.",
    "- **Tokenizing once** (`embed/token_ids.py`): a chunk cut at word boundaries (no token or word across "
    "its edges) with at most the window's tokens brings its ids from the page's tokens, which the planner "
    "made; `Model.embed` wraps them in the tokenizer's special tokens instead of tokenizing the chunk again "
    "(a BERT WordPiece tokenizer, no document prefix, no context line; any other chunk is tokenized as "
    "before). The bare side gets the chunks as plain text and tokenizes them, as a user's call would. "
    "Paired runs: engine CPU 4.3-4.7 / 3.3-3.4 s with it, 5.0-5.6 / 4.6-5.2 s without.",
    "- **Planner**: the tokenizer's offsets are used as they are (no copy) and a window ends at its last "
    "token's end when the ends never decrease: `plan_chunks` over the manual 0.37 -> 0.22 CPU s.",
    "", "Left as they are: the FAISS HNSW graph built at COMMIT (1.0-1.7 CPU s, 0.8 s wall on a quiet "
    "machine). Building it while the model embeds cannot lower the wall much: the quiet run above kept both "
    "cores busy (56.0 CPU s per core in 56.5 s), so the graph would take its CPU from the model's batches, "
    "and at COMMIT it already runs on both cores (OpenMP); what the overlap could win is the ~0.5 s the "
    "cores idle. Not tried. Noticed: on the loaded machine FAISS's OpenMP add was slower on 2 threads than on "
    "1 (5,000 random 384-d vectors: 3.0 s vs 1.3 s wall, load 4). The markdown outline (0.39 CPU s: "
    "markdown-it's block rules alone already) and the planner's other 0.2 s. The overlap costs the model some "
    "CPU: its batches share the cores with the read-ahead for a few seconds.",
    "", "What session 45 (h45m) found and changed, measured on the shared machine (other helpers working, load 3-9):",
    "- **The measure**: 4 rounds by default, in the order engine, bare, bare, engine, ...; each round's wall share "
    "taken apart into the engine's own wall time (outside its `Model.embed` calls, by part) and its model calls' "
    "wall time against the bare wall time, beside the plain shares (the target's measure, unchanged).",
    "- **The batches' CPU inflation is the machine's drift, not the engine's threads**: 500 of the manual's chunk "
    "texts embedded by the bare model (its 2 workers), alone, beside a thread cutting pages without pause (8-9 CPU "
    "s of tokenizing, outline and planning per run, far more than the load's read-ahead), and beside the same "
    "thread at nice 19; 4 runs each, interleaved (load 5-9): the batches' CPU time had the same median, 10.42 s, "
    "in all three (runs 10.38-11.03, 10.08-11.35, 10.10-11.15 s). Python's garbage collections: 0.07-0.17 CPU s "
    "a load, none inside the batches.",
    "- **The GIL** (`embed/model.py`, `Model._content`): the chunk planner tokenized each page with the "
    "tokenizer's `encode`, which holds the GIL until it returns (the manual's 440K-character page: about 0.4 s); "
    "the model's worker threads need the GIL between batches, so beside the read-ahead both could sit done with "
    "their batches while a page was tokenized, a core idle on a quiet machine. A text of 4,096 characters or "
    "more now goes through `encode_batch`, which lets go of the GIL while it runs (the same Encoding). A probe "
    "thread (sleep 1 ms, measure the overshoot) during a LOAD DATA of the whole manual with a stand-in model, 3 "
    "runs each, load 3-4: waits over 20 ms 32 / 18 / 19 totalling 2.13 / 0.91 / 1.05 s (longest 218-387 ms) "
    "before, 2 / 3 / 5 totalling 0.07 / 0.11 / 0.27 s (longest 36-67 ms) after. Its effect on the wall time "
    "needs a quiet machine (it gives back a core that idled); with the model beside a thread tokenizing the "
    "manual, the loaded machine's noise (embed wall 12-33 s for the same work) hid it.",
    "- **A document parsed once** (`sql/statements/load_documents._parsed`): under the lock the statement "
    "read and parsed every file again (the first pass had parsed the first megabyte's and the read-ahead the "
    "next ones): 242 parses for the manual's 189 files, 0.09 CPU s for 189, on the statement's thread while "
    "the cores waited for the model's last call. A file whose bytes (size, modification time, sha256) are the "
    "ones parsed before the lock now takes that document: 189 parses.",
    "- The engine's own CPU for the whole manual by part (stand-in model, thread CPU, load 4-5): the FAISS graph "
    "at COMMIT 1.7-1.9 CPU s (2.1-2.4 s wall: OpenMP's two threads spin under load); tokenizing the pages 1.15 s "
    "(+0.15 s for their offsets as Python lists), against 1.33 s for the bare side's tokenizing of the chunks (a "
    "wash); the markdown outline 0.5-0.6 s; `plan_chunks` 0.22 s; the titles (`first_heading`, 242 calls) 0.08 s.",
    "- Tried, not kept: tokenizing ASCII pages without the BERT normalizer (lower-cased first, the same tokens on "
    "180 of 189 pages) saves 0.25 of 1.1 CPU s: too little for a second tokenizer. `sys.setswitchinterval` 0.5 ms "
    "during the load (a waiting worker gets the GIL sooner from Python code): the probe's mean wait 3.3 vs 2.0 ms "
    "in one pair of runs and 1.8 vs 2.2 in the other, under load 5: no clear gain for a process-wide setting. FAISS "
    "single-threaded at COMMIT: 5,097 random 384-d vectors, load 4: 1 thread 1.0 s wall / 1.0 CPU s, 2 threads "
    "1.9 / 1.9 (1.8 / 1.1 with OMP_WAIT_POLICY=PASSIVE); left at 2 threads, which the quiet machine measured at "
    "0.8 s wall (session 44): the quiet run's COMMIT part above says which is right.",
    "", "Runs of session 44 (h44m) after these changes, each whole manual, 2 rounds, other helpers working: "
    "at load 4.0-5.4 the engine's own CPU outside the model's batches was 3.2 / 3.1 s (2.7%), CPU share 0.0% / "
    "4.0%; at load 3.2-4.8, 3.4 / 3.3 s (3.2% / 3.1%), CPU share 7.4% / 5.3%; the table above is the last run "
    "(load 0.5 at its start, 2.9-3.2 during its rounds: other helpers started again). Stored vs bare: "
    "max |stored - bare| 0.0 each time. Session 43's quiet run (the lead, load "
    "1.4-2.2): own CPU 4.4 / 4.0 s (4.1% / 3.7%), CPU share 5.8% / 1.8%, wall 58.5 / 56.5 s, wall share 7.9% "
    "/ 3.9%. The wall share on a quiet machine is left to the next quiet run.",
    "", "Runs of session 43, each whole manual, 2 rounds, other helpers working: at load 0.7 -> 2.0 (before "
    "the query session was warmed up and the batches timed) the engine took 56.6 and 53.7 s, the bare model "
    "52.4 and 52.5 s: CPU share 5.2% and 0.7%, wall share 8.0% and 2.3% (the first round pays the first "
    "LOAD DATA's imports and the query session); the table above is the last run. The wall share on a quiet "
    "machine is left to the next quiet run: here the wall times follow the other work.",
]


def _subset(r: dict | None) -> list[str]:
    """A shorter run (``--every N --out manual_minute_subset``): its rounds, for the code it measured."""
    if not r:
        return []
    s = r["summary"]
    own = "own_wall" in s
    out = ["", f"A shorter run: `{' '.join([COMMAND, *r.get('args', [])])}` ({r['pages']} pages, "
           f"{r['chunks_embedded']:,} chunk texts; stored vs bare: same chunks {r['check']['same_chunks']}, "
           f"max |stored - bare| {r['check'].get('max_abs_diff')}); engine share by CPU time "
           f"**{100 * s['share_cpu']:.1f}%**, by wall time {100 * s['share_wall']:.1f}% (medians)"
           + (f"; the engine's own wall time {100 * s['share_own_wall']:.1f}% of the bare wall time, its own CPU "
              f"time {100 * s['share_own_cpu']:.1f}% of the bare CPU time, its batches' CPU time "
              f"{s['batch_inflation_cpu']:+.2f} s against the bare batches' (medians)" if own else "") + ":", "",
           "| round | order | engine s | engine CPU s | bare s | bare CPU s | share (wall) | share (CPU) | "
           + ("own wall s | model calls s (engine / bare) | own CPU s | batches CPU s (engine / bare) | " if own else "")
           + "load: engine start -> end |",
           "|---:|---|---:|---:|---:|---:|---:|---:|" + ("---:|---:|---:|---:|" if own else "") + "---|"]
    for n, x in enumerate(r["rounds"], start=1):
        e, b = x["engine"], x["bare"]
        mine = (f"{x['own_wall']:.2f} | {e['model_seconds']:.1f} / {b['seconds']:.1f} | {x['own_cpu']:.2f} | "
                f"{e['batch_cpu']:.1f} / {b['batch_cpu']:.1f} | ") if own else ""
        out.append(f"| {n} | {', '.join(x['order'])} | {e['seconds']:.1f} | {e['cpu']:.1f} | {b['seconds']:.1f} | "
                   f"{b['cpu']:.1f} | {100 * x['share_wall']:.1f}% | {100 * x['share_cpu']:.1f}% | {mine}"
                   f"{_load(e['load_start'])} -> {_load(e['load_end'])} |")
    return out + ["", *[f"- {note}" for note in r.get("notes", [])]] if r.get("notes") else out

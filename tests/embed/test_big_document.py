"""A 20 MB document in a column with max_chunks: the same chunks and warning as if every token were
held, while only a prefix is tokenized with offsets and the process stays small (issue 17)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from tesseradb.embed import chunking

UNIT = ("Replication copies every table from the donor node to the joining node.\n\n"
        "A cluster keeps one write set per transaction; the joining node applies them in order. ") * 40
MAX_CHUNKS = 3


def expected_warning(model, repeats: int) -> str:
    """What full tokenization gives: tokens never cross whitespace, so UNIT * n has n times its tokens,
    and the first chunks of UNIT * 3 are those of any longer repetition."""
    per_unit = len(model.token_offsets(UNIT))
    small = UNIT * 3
    offsets = model.token_offsets(small)
    plan = chunking.plan_chunks(small, offsets, strategy="recursive", max_tokens=256, overlap_tokens=32,
                                max_chunks=MAX_CHUNKS, window=model.window)
    first_of_last = sum(1 for s, _ in offsets if s < plan.chunks[-1].start)
    total = per_unit * repeats
    return (f"row 1 (id 1), column 'v': max_chunks={MAX_CHUNKS} merged the overflow into the last chunk; "
            f"the model saw {first_of_last + model.window} of {total} tokens")


SCRIPT = textwrap.dedent("""
    import json, sys, threading, time
    import tesseradb
    from tesseradb import embed

    def rss():
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024

    unit, repeats, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    embed.get_model("all-MiniLM-L6-v2").embed(["warm up"])
    text = unit * repeats
    peak, done = [rss()], threading.Event()
    before = peak[0]

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], rss())
            time.sleep(0.005)

    threading.Thread(target=sample, daemon=True).start()
    con = tesseradb.connect(path)
    cur = con.cursor()
    cur.execute("CREATE TABLE big (body text, v float_vector_array knn_type='hnsw' model_name='all-MiniLM-L6-v2' "
                "from='body' chunk_strategy='recursive' max_tokens=256 overlap_tokens=32 max_chunks=3)")
    cur.execute("INSERT INTO big (id, body) VALUES (1, ?)", (text,))
    warnings = [w[2] for w in cur.execute("SHOW WARNINGS").fetchall()]
    con.commit()
    hit = cur.execute("SELECT id FROM big WHERE knn(v, 1, 'write sets of a joining node')").fetchall()
    n = cur.execute("SELECT LENGTH(v) FROM big").fetchone()[0]
    con.close()
    done.set()
    print(json.dumps({"chars": len(text), "warnings": warnings, "vectors": n, "hit": hit, "growth_mib": peak[0] - before}))
""")


@pytest.mark.slow                   # a process of its own
def test_a_20_mb_document_with_max_chunks(model, tmp_path):
    repeats = (20 << 20) // len(UNIT) + 1
    out = subprocess.run([sys.executable, "-c", SCRIPT, UNIT, str(repeats), str(tmp_path / "big.db")],
                         capture_output=True, text=True, check=True).stdout
    got = json.loads(out.strip().splitlines()[-1])
    assert got["chars"] >= 20 << 20
    assert got["vectors"] == MAX_CHUNKS and got["hit"] == [[1]]
    assert got["warnings"] == [expected_warning(model, repeats)]
    assert got["growth_mib"] < 300, got

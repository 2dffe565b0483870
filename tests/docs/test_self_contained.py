"""The repository stands on its own (issue 31): nothing in it names a path of the machine it was
built on, and no test, doc example or sql_examples script reads beside the checkout.

Checked over the files git tracks (the tree walked, skipping virtualenvs and caches, when git is
not there): no path under the build machine's work root, no reference to the corpora folder that
lies beside a checkout there, no path of this checkout or of the home folder it runs under, and in
benchmark results and their page no scratch path under /tmp (benchmarks take scratch folders from
``tempfile`` and write them as ``$SCRATCH``)."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SKIP_DIRS = {".git", ".venv", ".venv-plain", "__pycache__", ".pytest_cache", ".hypothesis", "node_modules"}
# the pieces are joined here so that this file does not match itself
WORK_ROOT = re.compile("(?<![\\w.$~-])" + "/wo" + "rk/")
BESIDE = re.compile("(\\.\\./)?" + "shared/" + "corpora")
SCRATCH = re.compile("/t" + "mp/")


def tracked_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
        names = [n for n in out.stdout.decode().split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        names = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
                 if p.is_file() and not SKIP_DIRS & set(p.relative_to(ROOT).parts)]
    return [ROOT / n for n in names if (ROOT / n).is_file()]


def text_of(path: Path) -> str | None:
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        return None                 # binary (images, Parquet)
    return data.decode("utf-8", errors="replace")


def offending(path: Path, text: str) -> list[str]:
    found = []
    rel = path.relative_to(ROOT).as_posix()
    checks = [WORK_ROOT, BESIDE]
    if rel.startswith("tests/benchmarks/results/") or rel == "docs/benchmarks.md":
        checks.append(SCRATCH)
    own = [str(ROOT)] if len(ROOT.parts) > 2 else []
    home = str(Path.home())
    if len(Path(home).parts) > 2:               # a real home folder (/home/x, /root is too short to tell)
        own.append(home + "/")
    for n, line in enumerate(text.splitlines(), start=1):
        if any(c.search(line) for c in checks) or any(o in line for o in own):
            found.append(f"{rel}:{n}: {line.strip()[:160]}")
    return found


def test_no_path_of_a_machine_in_the_repository():
    files = tracked_files()
    assert len(files) > 100                     # the walk found the repository
    bad = [hit for f in files if f.resolve() != Path(__file__).resolve()
           for hit in offending(f, text_of(f) or "")]
    assert not bad, "paths of a machine in the repository:\n" + "\n".join(bad)


def test_the_check_sees_such_a_path(tmp_path):
    page = ROOT / "docs" / "benchmarks.md"
    assert offending(page, "root = '/wo" + "rk/x'") and offending(page, "../shared/" + "corpora/m")
    assert offending(page, "--db /t" + "mp/x.db") and offending(page, f"see {ROOT}/docs")
    assert not offending(ROOT / "docs" / "load_data.md", "LOAD DATA INFILE '/t" + "mp/x.csv'")


def test_examples_read_the_notes_the_repository_ships():
    notes = sorted((ROOT / "sql_examples" / "data" / "notes").rglob("*.md"))
    assert len(notes) >= 12
    texts = [n.read_text(encoding="utf-8") for n in notes]
    assert all(t.startswith("---\ntitle: ") for t in texts)          # front matter on every note
    assert max(len(t.split()) for t in texts) > 2500                # and one long page

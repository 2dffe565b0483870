#!/usr/bin/env bash
# The benchmark corpus: Manticore Search's English manual (189 markdown pages), on a machine with
# internet. Not run by the tests; the benchmarks read the folder it writes through TESSERA_BENCH_CORPUS.
#
#   bash scripts/get_bench_corpus.sh DEST [COMMIT]
#   export TESSERA_BENCH_CORPUS=DEST
#
# It fetches COMMIT (default: ce6929959788b14bc849afdc1cb4bb763a7ce7f0, the commit the published
# figures of docs/benchmarks.md were measured on: the branch of pull request #4847 "Chunked
# auto-embeddings", which documents CHUNK_STRATEGY / MAX_TOKENS) of
# https://github.com/manticoresoftware/manticoresearch with a shallow, sparse clone, and copies the
# *.md files of manual/english/ to DEST with their relative paths (images and other files left out),
# and writes DEST/SOURCE.md naming the commit. The manual is GPL-3.0-or-later material: it is read at
# run time and never copied into this repository.
set -euo pipefail
if [ $# -lt 1 ]; then
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
dest="$1"
commit="${2:-ce6929959788b14bc849afdc1cb4bb763a7ce7f0}"
repo="https://github.com/manticoresoftware/manticoresearch.git"
if [ -e "$dest" ] && [ -n "$(ls -A "$dest" 2>/dev/null)" ]; then
    echo "get_bench_corpus: $dest exists and is not empty" >&2
    exit 1
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git -C "$work" init -q
git -C "$work" remote add origin "$repo"
git -C "$work" config core.sparseCheckout true
echo "manual/english/" > "$work/.git/info/sparse-checkout"
git -C "$work" fetch -q --depth 1 --filter=blob:none origin "$commit"
git -C "$work" checkout -q FETCH_HEAD
mkdir -p "$dest"
dest="$(cd "$dest" && pwd)"
(cd "$work/manual/english" && find . -name '*.md' -exec cp --parents {} "$dest/" \;)
cat > "$dest/SOURCE.md" <<SOURCE
# Source of this corpus

- Repository: $repo
- Commit: \`$commit\`
- Path in the repository: \`manual/english/\` (only the \`*.md\` files; relative paths kept)
- Licence: GPL-3.0-or-later (the repository's licence); benchmark data only, never committed.
SOURCE
echo "get_bench_corpus: $(find "$dest" -name '*.md' ! -name SOURCE.md | wc -l) pages in $dest" >&2
echo "export TESSERA_BENCH_CORPUS=$dest"

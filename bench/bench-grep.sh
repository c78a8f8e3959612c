#!/usr/bin/env bash
# Grep against ripgrep (make bench-grep): installs rg from Debian if missing,
# copies Go's own source tree as the corpus, builds hashlined and the
# benchmark driver, and runs rg, our in-process engine and Grep through the
# real server alternately, printing medians and ratios to rg. Extra arguments
# go to the driver, e.g. -rounds 11, -only 'func main', -md BENCHMARKS.md
# (rewrite the grep section of that file from this run; a relative path is
# from the repository's root).
#
# BENCH_GREP_DIR (default $TMPDIR/hashline-bench-grep) keeps the corpus copy
# and the binaries between runs.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v rg >/dev/null 2>&1; then
  echo "bench-grep: installing ripgrep" >&2
  if [ "$(id -u)" = 0 ]; then
    apt-get update && apt-get install -y ripgrep
  elif command -v sudo >/dev/null 2>&1; then
    sudo apt-get update && sudo apt-get install -y ripgrep
  else
    echo "bench-grep: ripgrep is missing and cannot be installed without root; install the ripgrep package" >&2
    exit 1
  fi
fi

work=${BENCH_GREP_DIR:-${TMPDIR:-/tmp}/hashline-bench-grep}
src="$(go env GOROOT)/src"
stamp="$(go env GOVERSION) $src"
mkdir -p "$work"
if [ ! -d "$work/corpus" ] || [ "$(cat "$work/corpus.stamp" 2>/dev/null)" != "$stamp" ]; then
  echo "bench-grep: copying $src to $work/corpus" >&2
  rm -rf "$work/corpus" "$work/corpus.stamp" "$work/corpus.pruned"
  cp -R "$src" "$work/corpus"
  echo "$stamp" >"$work/corpus.stamp"
fi

go build -o "$work/hashlined" ./cmd/hashlined
# The driver is in the bench module (bench/), which has its own go.mod.
go -C bench build -o "$work/bench-grep" ./bench-grep
exec "$work/bench-grep" -corpus "$work/corpus" -hashlined "$work/hashlined" -rg "$(command -v rg)" "$@"

#!/usr/bin/env bash
# Run the test suite RUNS times in a row under CPU load (two busy loops), from a fresh clone whose path contains
# "specdash", with the given Python (which must have specdash's test dependencies installed, e.g. a venv made with
# `pip install -c constraints.txt -e '.[test]'`). Proves the suite does not depend on machine speed, on where it is
# checked out, or on the Python version.
#
#   tools/suite_under_load.sh PYTHON [RUNS]      e.g. tools/suite_under_load.sh /tmp/venv310/bin/python 3
#
# Prints one line per run (exit status, passed/failed counts, seconds) and exits non-zero if any run failed; the whole
# output of a failed run is kept in SUITE_OUT_DIR when that is set (default: only its FAILED lines are printed).
# The busy loops are started here and stopped by their PIDs (never by name).
set -uo pipefail
python=${1:?usage: tools/suite_under_load.sh PYTHON [RUNS]}
runs=${2:-3}
repo=$(cd "$(dirname "$0")/.." && pwd)
# as an activated virtual environment: the interpreter's own directory first on PATH (its python3 and entry points)
PATH="$(dirname "$python"):$PATH"
export PATH
work=$(mktemp -d /tmp/specdash-load.XXXXXX)
clone="$work/specdash checkout"
git clone -q "$repo" "$clone"
loops=()
for _ in 1 2; do
    "$python" -c 'while True: pass' &
    loops+=($!)
done
trap 'kill "${loops[@]}" 2>/dev/null; rm -rf "$work"' EXIT
failed=0
for i in $(seq 1 "$runs"); do
    start=$(date +%s)
    out=$(cd "$clone" && PYTHONPATH="$clone" "$python" -m pytest -q -p no:cacheprovider 2>&1)
    rc=$?
    summary=$(printf '%s\n' "$out" | grep -E '^[0-9]+ (passed|failed)|passed|failed' | tail -1)
    warnings=$(printf '%s\n' "$out" | grep -c 'Event loop is closed')
    echo "run $i/$runs: rc $rc, $summary, $(( $(date +%s) - start )) s, 'Event loop is closed' lines: $warnings"
    if [ "$rc" -ne 0 ]; then
        failed=1
        printf '%s\n' "$out" | grep -E '^(FAILED|ERROR)' | head -20
        if [ -n "${SUITE_OUT_DIR:-}" ]; then
            mkdir -p "$SUITE_OUT_DIR" && printf '%s\n' "$out" > "$SUITE_OUT_DIR/run-$i.out"
            echo "whole output: $SUITE_OUT_DIR/run-$i.out"
        fi
    fi
done
"$python" --version
exit "$failed"

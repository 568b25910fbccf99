#!/usr/bin/env bash
# Build the wheel, install it with its dependencies into a fresh virtual environment (no system site packages, not
# the checkout), and use it as a user would: version, locate, the shipped session's summary, and a headless replay
# of it with each theme shipped in the package; the shipped example config loads. Run from anywhere; prints what
# it did; exit non-zero on a failure.
# Usage: tools/wheel_check.sh [WORK_DIR]   (default: a new temporary folder, removed at the end)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:-}"
if [ -z "$work" ]; then
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
unset PYTHONPATH  # the installed wheel, not the checkout, must answer
quiet_pip() {  # pip, less its warnings about configured package folders that do not exist on this machine
    "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
}
quiet_pip python -m pip wheel -q --no-deps "$repo" -w "$work/dist"
wheel="$(ls "$work"/dist/specdash-*.whl)"
echo "wheel: $(basename "$wheel")"
python -m zipfile -l "$wheel" | awk '{print $1}' | grep -E '^specdash/themes/.*\.yaml$' | sed 's/^/  /'
python -m venv "$work/venv"
quiet_pip "$work/venv/bin/python" -m pip install -q -c "$repo/constraints.txt" "$wheel"
cd "$work"  # away from the checkout: nothing of it on sys.path
bin="$work/venv/bin"
"$bin/specdash" --version
SPECDASH_STATE_DIR="$work/state" "$bin/specdash" locate --json >/dev/null
"$bin/specdash" replay "$repo/sessions/demo-eagle3-field-reports.yaml.gz" --summary | head -n 3
"$bin/specdash" config --example > "$work/config.yaml"  # the example ships in the wheel and loads
SPECDASH_CONFIG="$work/config.yaml" "$bin/specdash" config
"$bin/python" -c 'import specdash, sys; sys.exit(0 if specdash.__file__.startswith(sys.prefix) else
    f"specdash imported from {specdash.__file__}, not the venv")'
SPECDASH_STATE_DIR="$work/state" XDG_CONFIG_HOME="$work/config" \
    "$bin/python" "$repo/tools/headless_replay.py" "$repo/sessions/demo-eagle3-field-reports.yaml.gz"
echo "wheel check: ok"

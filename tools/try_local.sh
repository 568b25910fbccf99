#!/usr/bin/env bash
# Try specdash's live loop (launch, watch, benchmark, sweep, kill, restart) on a machine without a GPU.
#
#   tools/try_local.sh [SCENARIO] [CONNECT OPTIONS...]   the console on 'local', with SGLang's test double
#   tools/try_local.sh --print-env [SCENARIO]            the environment only, for: eval "$(tools/try_local.sh --print-env)"
#
# SCENARIO: a name in tests/double/scenarios (default, fast, slow_startup, crash_orphan, stubborn, era_2026) or a
# path to a scenario file; default "default". The environment is tests/double/harness.py's double_env: the double
# first on PYTHONPATH (python3 -m sglang.launch_server runs it), tests/double/bin and tests/fakes/bin (a fake
# nvidia-smi with 2 H100s) first on PATH, and a fresh state folder (SPECDASH_TRY_DIR, default a new temp folder):
# nothing touches your real state, GPUs or servers. Needs the checkout installed (README: pip install -e .).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"
print_env=0
if [ "${1:-}" = "--print-env" ]; then
    print_env=1
    shift
fi
scenario=default
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
    scenario="$1"
    shift
fi
dir="${SPECDASH_TRY_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/specdash-try.XXXXXX")}"
env_lines="$("$python" "$repo/tests/double/harness.py" --print-env "$dir" "$scenario")"
if [ "$print_env" = 1 ]; then
    printf '%s\n' "$env_lines"
    exit 0
fi
eval "$env_lines"
port="$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
cat <<EOF
specdash with SGLang's test double (scenario: $scenario; state in $dir).
In the console: F3, replace the command (ctrl+a selects it all) with this one, then l to launch:

  python3 -m sglang.launch_server --model-path /models/Llama-3.1-8B-Instruct --host 127.0.0.1 --port $port \\
    --speculative-algorithm EAGLE3 --speculative-draft-model-path /models/EAGLE3-LLaMA3.1-8B \\
    --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 8

F4 then b benchmarks it, S sweeps the depth; x stops the server (press it before q: a server keeps running after q).
EOF
status=0
"$python" -m specdash connect local "$@" || status=$?
echo "GPU processes left (stop a server you launched with: kill -TERM -PGID):"
"$python" -m specdash ps local || true
exit "$status"
